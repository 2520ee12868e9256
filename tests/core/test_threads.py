"""Threads: one shared ``Detokenizer`` serves many threads; ``step_batch`` equals single steps.

A ``Detokenizer`` is immutable and meant to be shared (docs/semantics.md, thread safety); each
stream has one owner. Threads start together behind a barrier and loop several times so that
their calls interleave, including inside ``step_batch``, which releases the interpreter lock.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import Any

import pytest
from helpers.stream_util import c1_target, chunked, run_stream
from tokenizers import Tokenizer

from oracles.corpus import samples

THREADS = 8
ROUNDS = 5


def run_threads(workers: list[Callable[[], None]]) -> None:
    """Runs every worker in its own thread, started together; re-raises the first failure."""
    barrier = threading.Barrier(len(workers))
    errors: list[BaseException] = []

    def wrap(work: Callable[[], None]) -> None:
        barrier.wait()
        try:
            work()
        except BaseException as exc:  # collected: a failure in a thread must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=wrap, args=(work,)) for work in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a worker thread hung"
    if errors:
        raise errors[0]


def cases(tok: Tokenizer) -> list[tuple[list[int] | None, list[int], bool, str]]:
    """(prompt, generated, skip, C1 target) for every sample, cut at a third, both flags."""
    found = []
    for _, ids in samples(tok):
        for skip in (False, True):
            cut = len(ids) // 3
            found.append((None, ids, skip, c1_target(tok, None, ids, skip)))
            found.append((ids[:cut], ids[cut:], skip, c1_target(tok, ids[:cut], ids[cut:], skip)))
    return found


def test_one_detokenizer_shared_by_8_threads(tok: Tokenizer, detok: Any) -> None:
    """Eight threads, each with its own streams over different samples and chunkings, all exact."""
    all_cases = cases(tok)

    def worker(index: int) -> Callable[[], None]:
        mine = all_cases[index::THREADS]

        def work() -> None:
            for round_ in range(ROUNDS):
                for prompt, gen, skip, target in mine:
                    size = 1 + (index + round_) % 4
                    out = run_stream(detok, prompt, chunked(gen, size), skip)
                    assert "".join(out) == target, (index, prompt, gen, skip)
                    assert detok.decode(gen, skip_special_tokens=skip) == tok.decode(
                        gen, skip_special_tokens=skip
                    )

        return work

    run_threads([worker(i) for i in range(THREADS)])


def test_threads_interleave_steps_on_one_stream_each(tok: Tokenizer, detok: Any) -> None:
    """Streams created in the main thread, then each stepped by a different thread."""
    all_cases = cases(tok)[:THREADS]
    streams = [detok.stream(prompt_ids=p, skip_special_tokens=s) for p, _, s, _ in all_cases]
    outputs: list[list[str]] = [[] for _ in all_cases]

    def worker(index: int) -> Callable[[], None]:
        def work() -> None:
            stream, gen = streams[index], all_cases[index][1]
            outputs[index].extend(stream.step(i) for i in gen)
            outputs[index].append(stream.finish())

        return work

    run_threads([worker(i) for i in range(len(all_cases))])
    for (_, gen, _, target), out in zip(all_cases, outputs, strict=True):
        assert "".join(out) == target, gen


def batch_against_single(tok: Tokenizer, detok: Any, seed: int) -> None:
    """Steps every case both ways in lockstep (random chunk sizes), comparing every output."""
    rng = random.Random(seed)
    all_cases = cases(tok)
    batch = [detok.stream(prompt_ids=p, skip_special_tokens=s) for p, _, s, _ in all_cases]
    single = [detok.stream(prompt_ids=p, skip_special_tokens=s) for p, _, s, _ in all_cases]
    positions = [0] * len(all_cases)
    totals = [""] * len(all_cases)
    while any(pos < len(c[1]) for pos, c in zip(positions, all_cases, strict=True)):
        chunks = []
        for n, (_, gen, _, _) in enumerate(all_cases):
            width = rng.randint(0, 6)  # 0: a stream with nothing this round still takes part
            chunks.append(gen[positions[n] : positions[n] + width])
            positions[n] += width
        got = detok.step_batch(batch, chunks)
        expected = [stream.step(chunk) for stream, chunk in zip(single, chunks, strict=True)]
        assert got == expected
        totals = [t + g for t, g in zip(totals, got, strict=True)]
    for n, (stream, twin) in enumerate(zip(batch, single, strict=True)):
        assert stream.window == twin.window
        tail = stream.finish()
        assert tail == twin.finish()
        assert totals[n] + tail == all_cases[n][3]


@pytest.mark.parametrize("seed", [0, 1])
def test_step_batch_equals_individual_steps(tok: Tokenizer, detok: Any, seed: int) -> None:
    """``step_batch`` over many streams returns what each stream's own ``step`` returns."""
    batch_against_single(tok, detok, seed)
    assert detok.step_batch([], []) == []


@pytest.mark.parametrize("name", ["gpt2", "mistral-7b-v0.1", "t5-small"], indirect=True)
def test_step_batch_from_several_threads(tok: Tokenizer, detok: Any) -> None:
    """Four threads running ``step_batch`` on their own streams at once."""
    run_threads([lambda seed=seed: batch_against_single(tok, detok, seed) for seed in range(4)])
