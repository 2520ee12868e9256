"""``Detokenizer.step_batch`` over 1,000 live streams vs 1,000 separate ``step`` calls (qwen3).

Each round takes 1,000 streams that are already mid-generation (each stepped with a few ids of
the generation, from its own offset, outside the timing) and advances every one of them by one id,
16 times over: 16 ``step_batch`` calls, or 16 x 1,000 ``step`` calls from a Python loop.
``DecodeStream`` stepped the same way is shown for scale.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from support import generation_ids
from tokenizers.decoders import DecodeStream

NAME = "qwen3"
N_STREAMS = 1_000
#: Ids each stream takes before timing starts (so streams are live, not fresh).
WARM = 4
#: Ids each stream takes per round, one per call.
STEPS = 16
ROUNDS = {"tokstream step_batch": 100, "tokstream step loop": 100, "DecodeStream step loop": 30}


def sequences() -> list[list[int]]:
    """Stream ``k`` reads the generation cyclically from offset ``37 * k``, ``WARM + STEPS`` ids."""
    ids = generation_ids(NAME)
    n = len(ids)
    return [[ids[(37 * k + j) % n] for j in range(WARM + STEPS)] for k in range(N_STREAMS)]


def live_streams(detok: Any, seqs: list[list[int]]) -> Callable[[], Any]:
    """A benchmark setup: fresh tokstream streams, each already stepped through its warm-up."""

    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        streams = [detok.stream() for _ in seqs]
        for stream, seq in zip(streams, seqs, strict=True):
            stream.step(seq[:WARM])
        return (streams,), {}

    return setup


def test_step_batch(benchmark: Any, get_tok: Any, get_detok: Any) -> None:
    """1,000 streams x 16 ids: one ``step_batch`` call per id position."""
    detok = get_detok(NAME)
    seqs = sequences()
    # One int per stream, as the loop below passes them: the same ids in the same form.
    chunks = [[seq[WARM + t] for seq in seqs] for t in range(STEPS)]

    setup = live_streams(detok, seqs)

    def run(streams: list[Any]) -> list[list[str]]:
        step_batch = detok.step_batch
        return [step_batch(streams, chunk) for chunk in chunks]

    check(get_tok, detok, seqs, setup, run)
    measure(benchmark, "tokstream step_batch", setup, run, calls=STEPS, baseline=True)


def test_step_loop(benchmark: Any, get_tok: Any, get_detok: Any) -> None:
    """1,000 streams x 16 ids: one ``DetokStream.step`` call per stream and id."""
    detok = get_detok(NAME)
    seqs = sequences()
    columns = [[seq[WARM + t] for seq in seqs] for t in range(STEPS)]

    setup = live_streams(detok, seqs)

    def run(streams: list[Any]) -> list[list[str]]:
        return [[s.step(i) for s, i in zip(streams, column, strict=True)] for column in columns]

    check(get_tok, detok, seqs, setup, run)
    measure(benchmark, "tokstream step loop", setup, run, calls=STEPS * N_STREAMS)


def test_decodestream_loop(benchmark: Any, get_tok: Any) -> None:
    """1,000 ``DecodeStream`` objects x 16 ids, one ``step`` call per stream and id."""
    tok = get_tok(NAME)
    seqs = sequences()
    columns = [[seq[WARM + t] for seq in seqs] for t in range(STEPS)]

    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        streams = [DecodeStream(skip_special_tokens=False) for _ in seqs]
        for stream, seq in zip(streams, seqs, strict=True):
            stream.step(tok, seq[:WARM])
        return (streams,), {}

    def run(streams: list[Any]) -> list[list[str | None]]:
        return [
            [s.step(tok, i) for s, i in zip(streams, column, strict=True)] for column in columns
        ]

    # No flush: each stream's output, warm-up included, must be a prefix of its decode.
    fresh = [DecodeStream(skip_special_tokens=False) for _ in seqs]
    warm = [s.step(tok, seq[:WARM]) or "" for s, seq in zip(fresh, seqs, strict=True)]
    out = run(fresh)
    for k, seq in enumerate(seqs):
        text = warm[k] + "".join(filter(None, (out[t][k] for t in range(STEPS))))
        assert tok.decode(seq, skip_special_tokens=False).startswith(text), f"stream {k}"
    measure(benchmark, "DecodeStream step loop", setup, run, calls=STEPS * N_STREAMS)


def check(get_tok: Any, detok: Any, seqs: list[list[int]], setup: Callable, run: Callable) -> None:
    """Asserts C1 per stream: warm-up output, the round's deltas and ``finish()`` equal decode."""
    tok = get_tok(NAME)
    (streams,), _ = setup()
    # Re-run the warm-up on fresh streams to capture its output too.
    fresh = [detok.stream() for _ in seqs]
    warm = [s.step(seq[:WARM]) for s, seq in zip(fresh, seqs, strict=True)]
    out = run(fresh)
    for k, seq in enumerate(seqs):
        text = warm[k] + "".join(out[t][k] for t in range(STEPS)) + fresh[k].finish()
        assert text == tok.decode(seq, skip_special_tokens=False), f"stream {k}"
    assert run(streams) == out


def measure(
    benchmark: Any, impl: str, setup: Callable, run: Callable, calls: int, baseline: bool = False
) -> None:
    """Times ``run`` on fresh live streams from ``setup``, with the batch group's extra info."""
    benchmark.group = f"batch-{N_STREAMS} {NAME}"
    benchmark.extra_info.update(
        impl=impl,
        tokenizer=NAME,
        streams=N_STREAMS,
        tokens=N_STREAMS * STEPS,
        calls=calls,
        baseline=baseline,
    )
    benchmark.pedantic(run, setup=setup, rounds=ROUNDS[impl], warmup_rounds=2)
