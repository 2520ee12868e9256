"""Resident memory of 10,000 live streams (qwen3), per implementation.

``tracemalloc`` cannot see Rust allocations, so the figure is the growth of the resident set
(``/proc/self/statm``) across creating 10,000 streams and stepping each with 4 ids, one id a call,
read by the process that holds them (see ``memory_probe.py``). It is taken twice:

- ``rss_per_stream``: in a fresh interpreter started by this bench, which loads only what the
  implementation needs. This is the figure to quote.
- ``rss_per_stream_in_session``: in the bench session itself. After the other benches have run,
  the allocator hands out memory they freed, so this one can read near zero; it is kept to show
  that, not to be quoted.

The time of these rows is that of building the 10,000 streams in the session, once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from memory_probe import builder
from support import generation_ids, rss_bytes, settle_memory, tokenizer_path

NAME = "qwen3"
N_STREAMS = 10_000
IDS_EACH = 4
PROBE = Path(__file__).resolve().with_name("memory_probe.py")


def fresh_interpreter(impl: str, path: str, seqs: list[list[int]]) -> dict[str, Any]:
    """Runs ``memory_probe.py`` in a new Python process and returns its measurement."""
    request = json.dumps({"impl": impl, "path": path, "seqs": seqs})
    done = subprocess.run(
        [sys.executable, str(PROBE)],
        input=request,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.skipif(not Path("/proc/self/statm").is_file(), reason="needs /proc/self/statm")
@pytest.mark.parametrize("impl", ["tokstream", "DecodeStream", "reference"])
def test_memory(benchmark: Any, memory_rows: list[dict[str, Any]], impl: str) -> None:
    """Builds 10,000 streams, steps each with 4 ids, and records the RSS growth."""
    path = str(tokenizer_path(NAME))
    ids = generation_ids(NAME)
    # Stream k takes the generation's ids from offset 37 * k, so windows differ between streams.
    seqs = [[ids[(37 * k + j) % len(ids)] for j in range(IDS_EACH)] for k in range(N_STREAMS)]
    build = builder(impl, path)

    before: list[int] = []

    def setup() -> None:
        settle_memory()
        before.append(rss_bytes())

    benchmark.group = f"memory-10k {NAME}"
    streams = benchmark.pedantic(build, args=(seqs,), setup=setup, rounds=1)
    settle_memory()
    in_session = rss_bytes() - before[-1]
    assert len(streams) == N_STREAMS
    del streams

    fresh = fresh_interpreter(impl, path, seqs)
    assert fresh["rss_delta"] > 0, "a fresh interpreter must grow while holding 10,000 streams"
    row = {
        "impl": impl,
        "tokenizer": NAME,
        "streams": N_STREAMS,
        "ids_each": IDS_EACH,
        "rss_delta": fresh["rss_delta"],
        "rss_per_stream": fresh["rss_per_stream"],
        "rss_per_stream_in_session": in_session / N_STREAMS,
    }
    memory_rows.append(row)
    benchmark.extra_info.update(row, tokens=N_STREAMS * IDS_EACH, calls=N_STREAMS * IDS_EACH)
