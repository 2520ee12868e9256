"""``StreamSet``: many streams stepped together are exact, and each equals its own ``DetokStream``.

Every corpus sample at several prompt cuts, in several chunkings (single ids, sizes 2, 3, 5, 16,
a seeded random one), both ``skip_special_tokens`` values, on the ten real tokenizers: all of a
tokenizer's cases run as slots of one set, stepped together with per-slot counts, so slots
finish at different rounds and neighbouring chunks belong to different streams. Each slot's
deltas must equal a lone stream's, chunk by chunk, and add up to the C1 target.
"""

from __future__ import annotations

import array
import random
from typing import Any

import numpy as np
import pytest
from helpers.stream_util import c1_target, chunked, run_stream
from tokenizers import Tokenizer

from oracles.corpus import samples

SKIPS = (False, True)


def cuts(n: int) -> list[int]:
    """Prompt cuts: none, one id, the middle, all but the last id."""
    return sorted({0, 1, n // 2, max(n - 1, 0)})


def chunkings(ids: list[int], seed: str) -> list[list[list[int]]]:
    """Single ids, sizes 2, 3, 5 and 16, and a seeded random chunking of 1 to 7 ids."""
    found = [chunked(ids, size) for size in (1, 2, 3, 5, 16)]
    rng, chunks, i = random.Random(seed), [], 0
    while i < len(ids):
        width = rng.randint(1, 7)
        chunks.append(ids[i : i + width])
        i += width
    found.append(chunks)
    return found


def cases(name: str, tok: Tokenizer) -> list[tuple[str, list[int], list[list[int]]]]:
    """(label, prompt, chunks) for every sample, cut and chunking of a tokenizer."""
    found = []
    for sample, ids in samples(tok):
        for k in cuts(len(ids)):
            for j, chunks in enumerate(chunkings(ids[k:], f"{name}/{sample}/{k}")):
                found.append((f"{sample} cut={k} chunking={j}", ids[:k], chunks))
    return found


def run_set(
    detok: Any, cases: list[tuple[str, list[int], list[list[int]]]], skip: bool, rng: random.Random
) -> list[list[str]]:
    """Steps every case as a slot of one set; returns each slot's deltas, then its finish().

    Each round steps the unfinished slots in a shuffled order (``slots=``) with their next chunk
    (``counts=``), the ids as one ``array('I')``.
    """
    tokstream_set = detok_set(detok)
    slots = [tokstream_set.add(prompt or None, skip) for _, prompt, _ in cases]
    assert slots == list(range(len(cases)))
    out: list[list[str]] = [[] for _ in cases]
    for r in range(max(len(chunks) for _, _, chunks in cases)):
        live = [i for i, (_, _, chunks) in enumerate(cases) if r < len(chunks)]
        rng.shuffle(live)
        flat = array.array("I", [x for i in live for x in cases[i][2][r]])
        counts = array.array("I", [len(cases[i][2][r]) for i in live])
        deltas = tokstream_set.step(flat, counts=counts, slots=array.array("I", live))
        assert len(deltas) == len(live)
        for i, delta in zip(live, deltas, strict=True):
            out[i].append(delta)
    for i in slots:
        out[i].append(tokstream_set.finish(i))
        assert tokstream_set.finished(i)
    return out


def detok_set(detok: Any) -> Any:
    """A new, empty ``StreamSet`` of ``detok``."""
    import tokstream

    return tokstream.StreamSet(detok)


@pytest.mark.parametrize("skip", SKIPS)
def test_slots_equal_lone_streams_and_decode(
    name: str, tok: Tokenizer, detok: Any, skip: bool
) -> None:
    """Every case, all in one set: deltas equal a lone stream's, the total the C1 target."""
    found = cases(name, tok)
    got = run_set(detok, found, skip, random.Random(f"{name}/{skip}"))
    for (label, prompt, chunks), deltas in zip(found, got, strict=True):
        gen = [x for c in chunks for x in c]
        assert "".join(deltas) == c1_target(tok, prompt or None, gen, skip), f"{name} {label}"
        assert deltas == run_stream(detok, prompt or None, chunks, skip), f"{name} {label}"


@pytest.mark.parametrize("skip", SKIPS)
def test_dense_one_id_per_slot(name: str, tok: Tokenizer, detok: Any, skip: bool) -> None:
    """The dense form (entry ``i`` is slot ``i``, one id each), as a frontend steps a batch."""
    seqs = [ids for _, ids in samples(tok)]
    width = max(len(ids) for ids in seqs)
    padded = [ids + [detok.vocab_size] * (width - len(ids)) for ids in seqs]  # no-token ids
    s = detok_set(detok)
    for _ in seqs:
        s.add(skip_special_tokens=skip)
    out = [s.step(np.array([ids[t] for ids in padded], dtype=np.uint32)) for t in range(width)]
    for k, ids in enumerate(seqs):
        deltas = [column[k] for column in out] + [s.finish(k)]
        assert "".join(deltas) == c1_target(tok, None, ids, skip), f"{name} slot {k}"
        assert deltas == run_stream(detok, None, padded[k], skip), f"{name} slot {k}"


@pytest.mark.parametrize("skip", SKIPS)
def test_dense_steps_mixed_with_reads(name: str, tok: Tokenizer, detok: Any, skip: bool) -> None:
    """A dense step of a ready slot only notes its id; every later read or step sees the step.

    Each round is a dense one-id step, or one through ``slots=`` and ``counts=`` (one or two ids a
    slot, in a shuffled order); between rounds, random slots are read (``window``), rebuilt from
    their window (``reset``), moved to another set, or finished and removed. Every slot's deltas,
    window and ``finish()`` equal a lone ``DetokStream``'s fed the same chunks.
    """
    rng = random.Random(f"mixed/{name}/{skip}")
    seqs = [ids for _, ids in samples(tok)]
    s, other = detok_set(detok), detok_set(detok)
    lone = [detok.stream(skip_special_tokens=skip) for _ in seqs]
    for _ in seqs:
        s.add(skip_special_tokens=skip)
    at = [0] * len(seqs)
    done = [False] * len(seqs)
    while not all(done):
        live = [k for k in range(len(seqs)) if not done[k]]
        if rng.random() < 0.6 and live == list(range(len(live))):
            chunks = {k: seqs[k][at[k] : at[k] + 1] or [detok.vocab_size] for k in live}
            deltas = s.step(array.array("I", [chunks[k][0] for k in live]))
        else:
            rng.shuffle(live)
            chunks = {k: seqs[k][at[k] : at[k] + rng.choice((1, 1, 2))] for k in live}
            flat = [x for k in live for x in chunks[k]]
            deltas = s.step(flat, counts=[len(chunks[k]) for k in live], slots=live)
        for k, delta in zip(live, deltas, strict=True):
            assert delta == lone[k].step(chunks[k]), f"{name} slot {k} at {at[k]}"
            at[k] += len(chunks[k])
        for k in rng.sample(live, min(3, len(live))):
            assert s.window(k) == lone[k].window, f"{name} slot {k} at {at[k]}"
            move = rng.random()
            if move < 0.3:
                s.reset(k, skip_special_tokens=skip, window=s.window(k))
            elif move < 0.4:
                # Out of the set and back into the same slot (the lowest free one).
                other_slot = other.add(skip_special_tokens=skip, window=s.window(k))
                s.remove(k)
                assert s.add(skip_special_tokens=skip, window=other.window(other_slot)) == k
                other.remove(other_slot)
        for k in live:
            if at[k] >= len(seqs[k]) and rng.random() < 0.5:
                assert s.finish(k) == lone[k].finish(), f"{name} slot {k}"
                assert s.finished(k)
                done[k] = True
    assert [s.finished(k) for k in range(len(seqs))] == [True] * len(seqs)


@pytest.mark.parametrize("skip", SKIPS)
def test_resumed_from_windows(name: str, tok: Tokenizer, detok: Any, skip: bool) -> None:
    """Slots rebuilt from their own wire window, or moved to another set, continue exactly.

    After every step, each slot is reset from ``window(slot)``, or added to a fresh set from it
    (the stateless pattern); the text is what one stream gives, chunk by chunk.
    """
    rng = random.Random(f"resume/{name}/{skip}")
    for sample, ids in samples(tok):
        k = len(ids) // 3
        prompt, chunks = ids[:k], chunked(ids[k:], 3)
        a, b = detok_set(detok), detok_set(detok)
        slot = a.add(prompt or None, skip)
        out = []
        for chunk in chunks:
            out.append(a.step(chunk, counts=[len(chunk)], slots=[slot])[0])
            window = a.window(slot)
            assert window[1] == 0
            if rng.random() < 0.5:
                a.reset(slot, skip_special_tokens=skip, window=window)
            else:
                a.remove(slot)
                a, b = b, a
                slot = a.add(skip_special_tokens=skip, window=window)
        out.append(a.finish(slot))
        where = f"{name} {sample} skip={skip}"
        assert out == run_stream(detok, prompt or None, chunks, skip), where
        assert "".join(out) == c1_target(tok, prompt or None, ids[k:], skip), where


def test_a_vllm_window_resumes(get_tok: Any, get_detok: Any) -> None:
    """A window as vLLM carries it (token strings, unrebased offsets) continues as ``resume``."""
    tok, detok = get_tok("qwen3"), get_detok("qwen3")
    enc = tok.encode("Hello 中文 👋 world, again", add_special_tokens=False)
    window = (enc.tokens[:6], 2, 5)
    lone = detok.resume(*window)
    s = detok_set(detok)
    s.add()  # slot 0, left alone (count 0)
    slot = s.add(window=window)
    for i in enc.ids[6:]:
        assert s.step([i], counts=[0, 1]) == ["", lone.step(i)]
    assert s.finish(slot) == lone.finish()
