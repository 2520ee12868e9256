"""``StreamSet.step`` against a loop of ``DetokStream.step`` and ``step_batch``, rounds alternating.

``bench_streamset.py`` times each implementation on its own, one after the other, so on a shared
machine a ratio of two medians also measures how the other work on the machine changed between
them. Here the implementations take turns instead: each round runs every implementation once on
its own fresh streams (the same round as ``bench_streamset.py``: N live streams, 16 calls of one
id a stream, or 16 x N ``step`` calls), the order rotating from round to round, and the ratio
reported is the median over rounds of each round's own ratio. Each implementation's texts are
checked against ``decode`` first, as in ``bench_streamset.py``, whose round this reuses::

    python benches/core/streamset_ratio.py               # 1,000 and 64 streams, 300 rounds
    python benches/core/streamset_ratio.py --streams 1000 --rounds 600
    python benches/core/streamset_ratio.py --quick       # 64 streams, 5 rounds (seconds)
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_streamset import IMPLS, STEPS, check, runner, sequences
from support import load_detokenizer, load_tokenizer, report

NAME = "qwen3"
#: The implementations compared, the first being the one the ratios are over.
COMPARED = (IMPLS[0], "tokstream step_batch", "tokstream step loop")


def measure(n_streams: int, rounds: int) -> dict[str, Any]:
    """Per-stream-and-id medians of each implementation and the median per-round ratios."""
    seqs = sequences(n_streams)
    tok, detok = load_tokenizer(NAME), load_detokenizer(NAME)
    for impl in COMPARED:
        check(tok, detok, impl, seqs)
    parts = {impl: runner(detok, impl, seqs) for impl in COMPARED}
    times: dict[str, list[float]] = {impl: [] for impl in COMPARED}
    clock = time.perf_counter
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for r in range(rounds):
            k = r % len(COMPARED)
            for impl in COMPARED[k:] + COMPARED[:k]:
                setup, run, _ = parts[impl]
                live = setup()
                start = clock()
                out = run(live)
                times[impl].append((clock() - start) / (n_streams * STEPS))
                del out, live
    finally:
        if gc_was:
            gc.enable()
    base = times[COMPARED[0]]
    return {
        "streams": n_streams,
        "rounds": rounds,
        "median_ns": {impl: statistics.median(t) * 1e9 for impl, t in times.items()},
        "min_ns": {impl: min(t) * 1e9 for impl, t in times.items()},
        "ratio": {
            impl: statistics.median(b / a for a, b in zip(base, t, strict=True))
            for impl, t in times.items()
        },
    }


def markdown(results: list[dict[str, Any]]) -> str:
    """One row per set size and implementation."""
    lines = [
        "| streams | implementation | median per stream and id | min | ratio (median of rounds) |",
        "|---:|---|---:|---:|---:|",
    ]
    for res in results:
        for impl in COMPARED:
            lines.append(
                f"| {res['streams']:,} | {impl} | {res['median_ns'][impl]:.1f} ns "
                f"| {res['min_ns'][impl]:.1f} ns | {res['ratio'][impl]:.2f}x |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Runs the comparison and prints it as Markdown (and JSON with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, nargs="+", help="N per run (default: 1000 64)")
    parser.add_argument("--rounds", type=int, help="rounds per N (default: 300)")
    parser.add_argument("--quick", action="store_true", help="64 streams, 5 rounds")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    streams = args.streams or ([64] if args.quick else [1_000, 64])
    rounds = args.rounds or (5 if args.quick else 300)
    start = os.getloadavg()[0]
    results = [measure(n, rounds) for n in streams]
    conditions = f"{NAME}, {STEPS} calls of one id a stream a round"
    conditions += "; every text checked against decode"
    report(markdown(results), conditions, results, start, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
