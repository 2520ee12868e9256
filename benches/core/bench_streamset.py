"""``StreamSet.step`` vs a Python loop of ``DetokStream.step`` vs ``step_batch`` (qwen3).

1,000 streams (and 64), each already mid-generation (a few ids of the generation, from its own
offset, outside the timing), advanced by one id each, 16 times over: 16 ``StreamSet.step`` calls
(the ids of a call as one ``array('I')``, or as a list of ints), 16 ``step_batch`` calls, or
16 x N ``step`` calls from a Python loop. The ids of every call are built before timing starts, in
the form each implementation takes them. Every implementation's output is checked first: each
stream's deltas plus ``finish()`` equal ``decode`` of its ids.

Timed one after the other, two implementations' medians also differ by what else the machine
did between them; ``streamset_ratio.py`` runs the same round with the implementations taking
turns, and the last test here runs its quick mode.
"""

from __future__ import annotations

import array
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tokstream
from support import generation_ids

NAME = "qwen3"
#: Ids each stream takes before timing starts (so streams are live, not fresh).
WARM = 4
#: Ids each stream takes per round, one per call.
STEPS = 16
IMPLS = (
    "tokstream StreamSet step, array('I')",
    "tokstream StreamSet step, list",
    "tokstream step_batch",
    "tokstream step loop",
)


def sequences(n_streams: int) -> list[list[int]]:
    """Stream ``k`` reads the generation cyclically from offset ``37 * k``, ``WARM + STEPS`` ids."""
    ids = generation_ids(NAME)
    n = len(ids)
    return [[ids[(37 * k + j) % n] for j in range(WARM + STEPS)] for k in range(n_streams)]


def runner(detok: Any, impl: str, seqs: list[list[int]]) -> tuple[Any, Any, Any]:
    """(setup, run, finish) for one implementation over ``seqs``.

    ``setup`` makes live streams (warm-up stepped), ``run`` does the timed 16 calls (or 16 x N)
    and returns each call's deltas, ``finish`` flushes the streams in stream order.
    """
    columns = [[seq[WARM + t] for seq in seqs] for t in range(STEPS)]
    if impl.startswith("tokstream StreamSet"):
        chunks: list[Any] = columns
        if "array" in impl:
            chunks = [array.array("I", column) for column in columns]

        def setup_set() -> Any:
            s = tokstream.StreamSet(detok)
            for _ in seqs:
                s.add()
            s.step([x for seq in seqs for x in seq[:WARM]], counts=[WARM] * len(seqs))
            return s

        def run_set(s: Any) -> list[list[str]]:
            step = s.step
            return [step(chunk) for chunk in chunks]

        return setup_set, run_set, lambda s: [s.finish(k) for k in range(len(seqs))]

    def setup_streams() -> list[Any]:
        streams = [detok.stream() for _ in seqs]
        for stream, seq in zip(streams, seqs, strict=True):
            stream.step(seq[:WARM])
        return streams

    if impl == "tokstream step_batch":

        def run_batch(streams: list[Any]) -> list[list[str]]:
            step_batch = detok.step_batch
            return [step_batch(streams, column) for column in columns]

        run: Callable[[list[Any]], list[list[str]]] = run_batch
    else:

        def run_loop(streams: list[Any]) -> list[list[str]]:
            return [[s.step(i) for s, i in zip(streams, column, strict=True)] for column in columns]

        run = run_loop
    return setup_streams, run, lambda streams: [s.finish() for s in streams]


def check(tok: Any, detok: Any, impl: str, seqs: list[list[int]]) -> None:
    """Exactness, before any timing: every stream's warm-up text (a lone stream's;
    tests/core/test_streamset.py shows a slot's is the same), the round's deltas, then ``finish()``,
    equal ``decode`` of its ids."""
    setup, run, finish = runner(detok, impl, seqs)
    live = setup()
    warm = [detok.stream().step(seq[:WARM]) for seq in seqs]
    out, tails = run(live), finish(live)
    for k, seq in enumerate(seqs):
        text = warm[k] + "".join(out[t][k] for t in range(STEPS)) + tails[k]
        if text != tok.decode(seq, skip_special_tokens=False):
            raise AssertionError(f"{impl}: stream {k} differs from decode")


@pytest.mark.parametrize("n_streams", [1_000, 64])
@pytest.mark.parametrize("impl", IMPLS)
def test_streamset(benchmark: Any, get_tok: Any, get_detok: Any, impl: str, n_streams: int) -> None:
    """N streams x 16 ids, one id per stream and call, in each implementation's form."""
    tok, detok = get_tok(NAME), get_detok(NAME)
    seqs = sequences(n_streams)
    check(tok, detok, impl, seqs)
    setup, run, _ = runner(detok, impl, seqs)
    benchmark.group = f"streamset-{n_streams} {NAME}"
    benchmark.extra_info.update(
        impl=impl,
        tokenizer=NAME,
        streams=n_streams,
        tokens=n_streams * STEPS,
        calls=STEPS * n_streams if impl == "tokstream step loop" else STEPS,
        baseline=impl == IMPLS[0],
    )
    rounds = 300 if n_streams == 1_000 else 1_000
    benchmark.pedantic(run, setup=lambda: ((setup(),), {}), rounds=rounds, warmup_rounds=2)


def test_streamset_ratio_quick(tmp_path: Path) -> None:
    """``streamset_ratio.py --quick`` as a user runs it: it checks every text against ``decode``
    (and exits non-zero if one differs), then writes a ratio for each implementation, the
    baseline's being 1."""
    out = tmp_path / "ratio.json"
    script = Path(__file__).resolve().parent / "streamset_ratio.py"
    done = subprocess.run(
        [sys.executable, str(script), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    (run,) = json.loads(out.read_text())["runs"]
    assert run["streams"] == 64 and run["rounds"] == 5, run
    assert set(run["ratio"]) == {IMPLS[0], "tokstream step_batch", "tokstream step loop"}, run
    assert run["ratio"][IMPLS[0]] == 1.0, run
    assert all(v > 0 for v in run["median_ns"].values()), run
    assert "| 64 | tokstream step loop |" in done.stdout, done.stdout
