"""Builds many live streams of one implementation and measures this process's RSS growth.

Used two ways by ``bench_memory.py``: called in the bench session (where the allocator reuses
memory freed by earlier benches, so the growth understates), and run as a fresh interpreter::

    python benches/core/memory_probe.py < request.json  # {"impl", "path", "seqs"} -> JSON on stdout

``tracemalloc`` cannot see Rust allocations, hence the resident set from ``/proc/self/statm``,
read after a garbage collection and ``malloc_trim`` on both sides of the build.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))
sys.path.append(str(Path(__file__).resolve().parents[2]))

from support import rss_bytes, settle_memory

IMPLS = ("tokstream", "DecodeStream", "reference")


def builder(impl: str, path: str) -> Any:
    """Returns ``build(seqs) -> streams`` for ``impl``, with its tokenizer loaded beforehand."""
    if impl == "tokstream":
        import tokstream

        detok = tokstream.Detokenizer.from_file(path)

        def build(seqs: list[list[int]]) -> list[Any]:
            streams = [detok.stream() for _ in seqs]
            for stream, seq in zip(streams, seqs, strict=True):
                for i in seq:
                    stream.step(i)
            return streams

        return build

    from tokenizers import Tokenizer
    from tokenizers.decoders import DecodeStream

    from oracles.vllm_reference import RefStream

    tok = Tokenizer.from_file(path)
    if impl == "DecodeStream":

        def build(seqs: list[list[int]]) -> list[Any]:
            streams = [DecodeStream(skip_special_tokens=False) for _ in seqs]
            for stream, seq in zip(streams, seqs, strict=True):
                for i in seq:
                    stream.step(tok, i)
            return streams

        return build

    def build(seqs: list[list[int]]) -> list[Any]:
        streams = [RefStream(tok, None, False) for _ in seqs]
        for stream, seq in zip(streams, seqs, strict=True):
            for i in seq:
                stream.step(i)
        return streams

    return build


def measure(build: Any, seqs: list[list[int]]) -> dict[str, Any]:
    """Runs ``build(seqs)`` and returns the RSS growth while its streams are alive."""
    settle_memory()
    before = rss_bytes()
    start = time.perf_counter()
    streams = build(seqs)
    seconds = time.perf_counter() - start
    settle_memory()
    delta = rss_bytes() - before
    count = len(streams)
    del streams
    return {"rss_delta": delta, "rss_per_stream": delta / count, "build_seconds": seconds}


def main() -> None:
    """Reads a request from stdin, measures in this fresh interpreter, prints JSON."""
    request = json.load(sys.stdin)
    if request["impl"] not in IMPLS:
        raise SystemExit(f"unknown impl {request['impl']!r}")
    build = builder(request["impl"], request["path"])
    json.dump(measure(build, request["seqs"]), sys.stdout)


if __name__ == "__main__":
    main()
