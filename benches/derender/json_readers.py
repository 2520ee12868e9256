"""The derender body's JSON readers per call, side by side, at the body sizes a derender sees.

Three chat bodies of ``bench_derender.py``'s generation (qwen3): a stream chunk of one id with
the state of the chunk before it, a chunk of 16 ids with logprobs (5 alternatives) and its
state, and a whole response of 4,096 ids. ``examples/json_readers.rs`` times on each, in turns:
``Derenderer::handle_json`` (the whole answer, with today's reader), the hand reader alone,
serde_json alone into the same types (borrowed), sonic-rs into a copy of those types made for
this measurement (sonic-rs and simd-json refuse serde_json's ``RawValue``, which the body's types
borrow; the copy has sonic-rs's ``LazyValue`` there), and serde_json, sonic-rs and simd-json each
skipping the body (``IgnoredAny``: validated, nothing kept), a lower bound on any typed read.

Per call, with reader X in place of today's: ``handle_json - hand + X``. The hand reader is worth
keeping for a body size where every library is more than 10% slower per call; a skip's ratio is
a lower bound, so one above 1.1 settles it for that library and one below does not::

    python benches/derender/json_readers.py                 # release build, 7 rounds of 200 ms
    python benches/derender/json_readers.py --quick         # debug build, 1 round (checks only)

Every reader must take every body and ``handle_json`` must answer 200, else the exit status is 1.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import json

from bench_derender import (
    CHAT,
    MODEL,
    NAME,
    REQUEST_ID,
    STEADY,
    chunks_of,
    dumps,
    handlers,
    original_request,
    output_ids,
    prompt_ids,
    stream_all,
    usage,
)
from support import report, tokenizer_path
from tokstream.protocol import GenerateResponse

ROOT = Path(__file__).resolve().parents[2]
WHOLE = 4_096
READERS = (
    "hand",
    "serde_json",
    "sonic-rs typed",
    "serde_json skip",
    "sonic-rs skip",
    "simd-json skip",
)


def bodies() -> dict[str, bytes]:
    """The three bodies, each one tokstream answers with a 200."""
    handle = handlers()["tokstream"]
    ids = output_ids()
    _, one = stream_all(handle, CHAT, chunks_of(ids, 1, False), False)
    _, sixteen = stream_all(handle, CHAT, chunks_of(ids, 16, True), True)
    whole_ids = output_ids(WHOLE)
    choice = {"index": 0, "finish_reason": "stop", "token_ids": whole_ids}
    raw = {"request_id": REQUEST_ID, "choices": [choice], "usage": usage(WHOLE)}
    response = GenerateResponse.model_validate(raw).model_dump(mode="json")
    whole = dumps(
        {
            "model": MODEL,
            "generate_response": response,
            "prompt_tokens": len(prompt_ids()),
            "prompt_token_ids": list(prompt_ids()),
            "chat_request": original_request(CHAT, False, False),
        }
    )
    return {
        "stream chunk, 1 id, with state": one[STEADY],
        "stream chunk, 16 ids, logprobs (5), with state": sixteen[STEADY // 16],
        f"whole response, {WHOLE:,} ids": whole,
    }


def build(release: bool) -> Path:
    """Builds the example; the path of its binary."""
    command = ["cargo", "build", "--locked", "--example", "json_readers"]
    subprocess.run(command + (["--release"] if release else []), cwd=ROOT, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / ("release" if release else "debug") / "examples" / "json_readers"


def measure(binary: Path, rounds: int, millis: int) -> list[dict[str, Any]]:
    """Each body's figures, with the per-call estimates for each reader."""
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for k, (name, body) in enumerate(bodies().items()):
            files[str(Path(tmp) / f"body{k}.json")] = name
            Path(tmp, f"body{k}.json").write_bytes(body)
        command = [str(binary), str(tokenizer_path(NAME)), MODEL, str(rounds), str(millis)]
        done = subprocess.run([*command, *files], capture_output=True, text=True, check=True)
        for line in done.stdout.splitlines():
            row = json.loads(line)
            row["body"] = files[row.pop("file")]
            handle, hand = row["handle_json"]["ns"], row["hand"]["ns"]
            for reader in READERS:
                per_call = handle - hand + row[reader]["ns"]
                row[reader]["per_call_ns"] = per_call
                row[reader]["per_call_ratio"] = per_call / handle
            results.append(row)
    return results


def check(results: list[dict[str, Any]]) -> list[str]:
    """What went wrong: a reader that refused a body, or a ``handle_json`` that did not 200."""
    return [
        f"{r['body']}: {reader} did not take it"
        for r in results
        for reader in ("handle_json", *READERS)
        if not r[reader]["took"]
    ]


def markdown(results: list[dict[str, Any]]) -> str:
    lines = [
        "| body | bytes | handle_json | " + " | ".join(READERS) + " |",
        "|---|---:|---:|" + "---:|" * len(READERS),
    ]
    for r in results:
        cells = [f"{r[k]['ns'] / 1000:.2f} µs" for k in READERS]
        lines.append(
            f"| {r['body']} | {r['bytes']:,} | {r['handle_json']['ns'] / 1000:.2f} µs | "
            + " | ".join(cells)
            + " |"
        )
    compared = ("serde_json", "sonic-rs typed", "sonic-rs skip", "simd-json skip")
    lines += [
        "",
        "| body, per call with the reader / today | serde_json | sonic-rs | "
        "sonic-rs, at least (skip) | simd-json, at least (skip) |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in results:
        ratios = [r[k]["per_call_ratio"] for k in compared]
        lines.append(f"| {r['body']} | " + " | ".join(f"{x:.2f}" for x in ratios) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, help="per reader and body (default: 7)")
    parser.add_argument("--millis", type=int, help="per reader, round and body (default: 200)")
    parser.add_argument("--quick", action="store_true", help="debug build, 1 round of 5 ms")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    binary = build(release=not args.quick)
    rounds = args.rounds or (1 if args.quick else 7)
    millis = args.millis or (5 if args.quick else 200)
    start = os.getloadavg()[0]
    results = measure(binary, rounds, millis)
    problems = check(results)
    conditions = f"median of {rounds} rounds of {millis} ms per reader, the readers taking turns"
    report(markdown(results), conditions, results, start, args.json)
    for problem in problems:
        print(f"json_readers: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
