"""Turns a pytest-benchmark JSON file into the markdown tables of BENCHMARKS.md.

Per group: the median time of a round, per call and per token (from ``extra_info["calls"]`` and
``extra_info["tokens"]``), and each row's per-token median over its tokstream counterpart (the
row named by ``extra_info["versus"]``, else the group's baseline: the row marked
``extra_info["baseline"]``, else the one whose ``impl`` is ``"tokstream"``). Memory groups get a
table of their own.

>>> main([".benchmarks/run.json"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

KINDS = ("step-1", "step-4", "step-16", "batch", "prompt", "memory")


def fmt_time(seconds: float) -> str:
    """Formats a duration with three significant figures in ns, µs or ms."""
    for unit, scale in (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3)):
        if seconds < scale * 1000:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds:.3g} s"


def fmt_ratio(slow: float, fast: float) -> str:
    """Formats ``slow / fast``: two decimals below 10, one below 1,000, none above."""
    ratio = slow / fast
    if ratio < 10:
        return f"{ratio:.2f}x"
    return f"{ratio:.1f}x" if ratio < 1000 else f"{ratio:,.0f}x"


def loads(values: Sequence[float] | None) -> str:
    """Formats a load-average triple."""
    return "n/a" if not values else " ".join(f"{v:.2f}" for v in values)


def kind_rank(group: str) -> int:
    """Orders groups: per-token, per-chunk, batch, prompt, memory, then anything else."""
    kind = group.split(" ", 1)[0]
    return KINDS.index(kind) if kind in KINDS else len(KINDS)


def grouped(benchmarks: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Groups rows by ``group``, groups ordered by kind, then by first appearance."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for bench in benchmarks:
        groups.setdefault(bench.get("group") or "(none)", []).append(bench)
    order = sorted(enumerate(groups), key=lambda p: (kind_rank(p[1]), p[0]))
    return {name: groups[name] for _, name in order}


def impl(bench: dict[str, Any]) -> str:
    """The row's implementation label (``extra_info["impl"]``, else the test name)."""
    return str(bench["extra_info"].get("impl", bench["name"]))


def per_token(bench: dict[str, Any]) -> float:
    """Median seconds per token of a row."""
    return float(bench["stats"]["median"]) / int(bench["extra_info"].get("tokens", 1))


def reference_row(rows: list[dict[str, Any]], bench: dict[str, Any]) -> dict[str, Any] | None:
    """The row ``bench`` is compared with, or None for a baseline (or when there is none)."""
    info = bench["extra_info"]
    if info.get("baseline"):
        return None
    by_impl = {impl(r): r for r in rows}
    if "versus" in info:
        return by_impl.get(str(info["versus"]))
    marked = [r for r in rows if r["extra_info"].get("baseline")]
    if marked:
        return marked[0]
    base = by_impl.get("tokstream")
    return None if base is bench else base


def timing_table(groups: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The per-group table of medians and ratios."""
    lines = [
        "| group | implementation | median / round | rounds | per call | per token | ratio |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for group, rows in groups.items():
        if any("rss_per_stream" in r["extra_info"] for r in rows):
            continue
        for bench in rows:
            info, stats = bench["extra_info"], bench["stats"]
            median = float(stats["median"])
            base = reference_row(rows, bench)
            if base is None:
                ratio = "baseline"
            else:
                ratio = (
                    f"{impl(bench)} / {impl(base)} = {fmt_ratio(per_token(bench), per_token(base))}"
                )
            lines.append(
                f"| {group} | {impl(bench)} | {fmt_time(median)} | {stats['rounds']} "
                f"| {fmt_time(median / int(info.get('calls', 1)))} "
                f"| {fmt_time(per_token(bench))} | {ratio} |"
            )
    return lines


def step_pivot(groups: dict[str, list[dict[str, Any]]]) -> list[str]:
    """One line per step group: per-token medians side by side and the two speed-ups."""
    lines = [
        "| tokenizer | engine | ids/call | tokens | tokstream | DecodeStream | reference "
        "| DecodeStream / tokstream | reference / tokstream | DecodeStream 1 id/call / tokstream |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for group, rows in groups.items():
        if not group.startswith("step-"):
            continue
        by_impl = {impl(r): r for r in rows}
        if not {"tokstream", "DecodeStream", "reference"} <= by_impl.keys():
            continue
        ts, ds, ref = by_impl["tokstream"], by_impl["DecodeStream"], by_impl["reference"]
        info = ts["extra_info"]
        # One id a call is how DecodeStream is used in serving loops; compare chunks with it too.
        single = {impl(r): r for r in groups.get(f"step-1 {info['tokenizer']}", [])}
        ds1 = single.get("DecodeStream")
        vs_single = fmt_ratio(per_token(ds1), per_token(ts)) if ds1 else "n/a"
        lines.append(
            f"| {info['tokenizer']} | {info['engine']} | {info['chunk']} | {info['tokens']} "
            f"| {fmt_time(per_token(ts))} | {fmt_time(per_token(ds))} "
            f"| {fmt_time(per_token(ref))} | {fmt_ratio(per_token(ds), per_token(ts))} "
            f"| {fmt_ratio(per_token(ref), per_token(ts))} | {vs_single} |"
        )
    return lines


def memory_table(groups: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Resident memory of live streams, from the memory bench's ``extra_info``."""
    lines = [
        "| group | implementation | streams | RSS growth | per stream | per stream (in session) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for group, rows in groups.items():
        for bench in rows:
            info = bench["extra_info"]
            if "rss_per_stream" not in info:
                continue
            lines.append(
                f"| {group} | {impl(bench)} | {info['streams']} "
                f"| {info['rss_delta'] / 2**20:.2f} MiB | {info['rss_per_stream']:.0f} B "
                f"| {info.get('rss_per_stream_in_session', float('nan')):.0f} B |"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    """Prints the markdown tables for one ``--benchmark-json`` file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", type=Path, help="file written by --benchmark-json")
    args = parser.parse_args(argv)
    data = json.loads(args.json.read_text())
    groups = grouped(data["benchmarks"])
    info = data.get("machine_info", {})
    print(
        f"Python {info.get('python_version')}, tokenizers {info.get('tokenizers_version')}, "
        f"tokstream {info.get('tokstream_version')}; {info.get('cpu_model')}, "
        f"{info.get('nproc')} cores; load average (1, 5, 15 min) at start "
        f"{loads(info.get('loadavg_start'))}, at end {loads(info.get('loadavg_end'))}\n"
    )
    sections = [
        ("Streaming steps, per token", step_pivot(groups)),
        ("All groups", timing_table(groups)),
        ("Memory of live streams", memory_table(groups)),
    ]
    for title, lines in sections:
        if len(lines) > 2:
            print(f"### {title}\n")
            print("\n".join(lines))
            print()


if __name__ == "__main__":
    main()
