"""Conformance sweeps on the ten real tokenizers (REFERENCE.md sections 1 and 2).

C1: every prompt cut of every corpus sample, several chunkings, both ``skip_special_tokens`` values,
total text equals the oracle target. C4: delta by delta equal to the vLLM reference wherever that
reference is itself right. C3: windows handed between the reference and tokstream, both ways.
"""

from __future__ import annotations

import random
import zlib
from typing import Any

import pytest
from helpers.stream_util import VLLM_WRONG, c1_target, chunked, decode, run_stream, vllm_is_right
from tokenizers import Tokenizer

from oracles.corpus import SAMPLE_NAMES, long_generation, samples
from oracles.vllm_reference import State, VllmReference

SKIPS = (False, True)
ENGINES = {
    "gpt2": "bytelevel",
    "llama-3.2-instruct": "bytelevel",
    "qwen3": "bytelevel",
    "deepseek-r1": "bytelevel",
    "mistral-nemo-tekken": "bytelevel",
    "mistral-7b-v0.1": "sentencepiece",
    "mistral-7b-instruct-v0.3": "sentencepiece",
    "phi-3-mini": "sentencepiece",
    "bert-all-minilm-l6-v2": "windowed",
    "t5-small": "windowed",
}


@pytest.fixture(scope="session")
def corpus_ids(tok: Tokenizer) -> dict[str, list[int]]:
    """The corpus samples as ids of the tokenizer under test."""
    return dict(samples(tok))


def cut_subset(n: int) -> list[int]:
    """Prompt cuts for the costlier C3 sweep: both ends, the middle, the quarters."""
    return sorted({k for k in (0, 1, n // 4, n // 2, 3 * n // 4, n - 1, n) if 0 <= k <= n})


def chunkings(ids: list[int], seed: int) -> dict[str, list[list[int]]]:
    """Chunk sizes 2, 3, 5, 16 and one seeded random chunking (speculative decoding's shapes)."""
    found = {f"size{size}": chunked(ids, size) for size in (2, 3, 5, 16)}
    rng, chunks, i = random.Random(seed), [], 0
    while i < len(ids):
        width = rng.randint(1, 7)
        chunks.append(ids[i : i + width])
        i += width
    found["random"] = chunks
    return found


def where(name: str, sample: str, k: int, skip: bool, prompt: list[int], gen: list[int]) -> str:
    """A reproducer line for assertion messages."""
    return f"{name} sample={sample} cut={k} skip={skip} prompt[-7:]={prompt[-7:]} gen={gen}"


def test_engine_and_vocab_size(name: str, tok: Tokenizer, detok: Any) -> None:
    """Each family gets its fast engine; ``vocab_size`` counts every id slot."""
    assert detok.engine == ENGINES[name]
    assert detok.vocab_size == tok.get_vocab_size(with_added_tokens=True)


@pytest.mark.parametrize("skip", SKIPS)
@pytest.mark.parametrize("sample", SAMPLE_NAMES)
def test_c1_every_prompt_cut(
    name: str, tok: Tokenizer, detok: Any, corpus_ids: dict[str, list[int]], sample: str, skip: bool
) -> None:
    """C1 at every cut, with single ids and with every chunking."""
    ids = corpus_ids[sample]
    for k in range(len(ids) + 1):
        prompt, gen = ids[:k], ids[k:]
        target = c1_target(tok, prompt, gen, skip)
        out = run_stream(detok, prompt, gen, skip)
        assert "".join(out) == target, where(name, sample, k, skip, prompt, gen)
        seed = zlib.crc32(f"{name}/{sample}/{k}/{skip}".encode())
        for shape, chunks in chunkings(gen, seed).items():
            got = "".join(run_stream(detok, prompt, chunks, skip))
            assert got == target, f"{shape}: {where(name, sample, k, skip, prompt, gen)}"


@pytest.mark.parametrize("skip", SKIPS)
@pytest.mark.parametrize("sample", SAMPLE_NAMES)
def test_c4_deltas_equal_vllm_where_vllm_is_right(
    name: str, tok: Tokenizer, detok: Any, corpus_ids: dict[str, list[int]], sample: str, skip: bool
) -> None:
    """C4 delta by delta (single ids), and per chunk against the concatenated reference deltas."""
    ids = corpus_ids[sample]
    ref = VllmReference(tok, skip)
    for k in range(len(ids) + 1):
        prompt, gen = ids[:k], ids[k:]
        target = c1_target(tok, prompt, gen, skip)
        seed_state = ref.seed(prompt)
        deltas, states = ref.run(gen, seed_state)
        last = states[-1] if states else seed_state
        ours = run_stream(detok, prompt, gen, skip)
        at = where(name, sample, k, skip, prompt, gen)
        if not vllm_is_right(ref, deltas, last, target):
            # vLLM loses or delays text here; tokstream must still be exact (C1), and is counted.
            VLLM_WRONG[f"{name} skip={skip}"] += 1
            assert "".join(ours) == target, at
            continue
        assert ours[:-1] == deltas, at
        assert ours[-1] == ref.flush(last), at
        seed = zlib.crc32(f"{name}/{sample}/{k}/{skip}".encode())
        for shape, chunks in chunkings(gen, seed).items():
            got = run_stream(detok, prompt, chunks, skip)
            expected, i = [], 0
            for chunk in chunks:
                expected.append("".join(deltas[i : i + len(chunk)]))
                i += len(chunk)
            assert got[:-1] == expected, f"{shape}: {at}"


@pytest.mark.parametrize("skip", SKIPS)
@pytest.mark.parametrize("sample", SAMPLE_NAMES)
def test_c3_windows_interchange_with_vllm(
    name: str, tok: Tokenizer, detok: Any, corpus_ids: dict[str, list[int]], sample: str, skip: bool
) -> None:
    """C3: a vLLM window resumed by tokstream; a tokstream window continued by the reference."""
    ids = corpus_ids[sample]
    ref = VllmReference(tok, skip)
    for k in cut_subset(len(ids)):
        prompt, gen = ids[:k], ids[k:]
        target = c1_target(tok, prompt, gen, skip)
        seed_state = ref.seed(prompt)
        deltas, states = ref.run(gen, seed_state)
        before = [seed_state, *states]  # before[j]: the reference's state after j generated ids
        right = vllm_is_right(ref, deltas, before[-1], target)
        stream = detok.stream(prompt_ids=prompt or None, skip_special_tokens=skip)
        ours: list[str] = []
        for j in range(len(gen) + 1):
            at = f"switch={j} {where(name, sample, k, skip, prompt, gen)}"
            sent = "".join(deltas[:j])
            # Reference -> tokstream: resume from the reference's window, finish with tokstream.
            resumed = detok.resume(*before[j].window, skip_special_tokens=skip)
            rest = [resumed.step(i) for i in gen[j:]] + [resumed.finish()]
            if right:
                assert rest[:-1] == deltas[j:], at
            if target.startswith(sent):
                assert sent + "".join(rest) == target, at
            # tokstream -> reference: tokstream's exported window is vLLM's, then vLLM continues.
            window = stream.window
            assert window[1] == 0 and 0 <= window[2] <= len(window[0]), at
            if right:
                assert window == before[j].window, at
                more, after = ref.run(gen[j:], State.from_window(window))
                assert more == deltas[j:], at
                tail = ref.flush(after[-1] if after else State.from_window(window))
                assert "".join(ours) + "".join(more) + tail == target, at
            if j < len(gen):
                ours.append(stream.step(gen[j]))


@pytest.mark.parametrize("skip", SKIPS)
def test_window_stays_small_over_10000_tokens(
    name: str, tok: Tokenizer, detok: Any, skip: bool
) -> None:
    """The wire window stays <= 32 entries over a long generation, and the text stays exact."""
    ids = long_generation(tok)
    stream = detok.stream(skip_special_tokens=skip)
    out, longest = [], 0
    for token_id in ids:
        out.append(stream.step(token_id))
        longest = max(longest, len(stream.window[0]))
    out.append(stream.finish())
    assert longest <= 32
    assert "".join(out) == decode(tok, ids, skip)


@pytest.mark.parametrize("skip", SKIPS)
def test_decode_and_tokens_equal_tokenizers(
    tok: Tokenizer, detok: Any, corpus_ids: dict[str, list[int]], skip: bool
) -> None:
    """``decode`` and ``convert_ids_to_tokens`` agree with ``tokenizers`` (specials, OOV, long)."""
    vocab = tok.get_vocab_size()
    specials = {i for i, t in tok.get_added_tokens_decoder().items() if t.special}
    rng = random.Random(vocab)
    cases = [*corpus_ids.values(), long_generation(tok, 2000), []]
    cases += [[rng.randrange(vocab + 50) for _ in range(rng.randint(1, 40))] for _ in range(200)]
    cases.append(sorted(specials)[:50] + list(range(vocab - 5, vocab + 5)))
    for ids in cases:
        assert detok.decode(ids, skip_special_tokens=skip) == decode(tok, ids, skip), ids
        expected = [tok.id_to_token(i) or "" for i in ids if not (skip and i in specials)]
        assert detok.convert_ids_to_tokens(ids, skip_special_tokens=skip) == expected, ids
    # The documented defaults: decode and convert_ids_to_tokens keep specials unless told.
    ids = corpus_ids["mixed"]
    assert detok.decode(ids) == decode(tok, ids, False)
    assert detok.convert_ids_to_tokens(ids) == [tok.id_to_token(i) for i in ids]
