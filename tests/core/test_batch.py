"""``Detokenizer.step_batch``: its argument errors leave every stream as it was.

Equality with single steps, and several threads batching at once, are in ``test_threads.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.stream_util import decode, load_detokenizer
from tokenizers import Tokenizer

from oracles.corpus import encode_text

pytestmark = pytest.mark.parametrize(
    "name", ["qwen3", "mistral-7b-v0.1", "t5-small"], indirect=True
)


def finish_exact(tok: Tokenizer, streams: list[Any], texts: list[str]) -> None:
    """Steps each stream through its own text; checks the result against decode."""
    for stream, text in zip(streams, texts, strict=True):
        ids = encode_text(tok, text)
        assert stream.step(ids) + stream.finish() == decode(tok, ids, False)


def test_a_stream_listed_twice_is_a_value_error(tok: Tokenizer, detok: Any) -> None:
    """The same stream twice in one batch would be stepped twice: refused before any step."""
    a, b = detok.stream(), detok.stream()
    with pytest.raises(ValueError, match="twice"):
        detok.step_batch([a, b, a], [[1], [2], [3]])
    finish_exact(tok, [a, b], ["one 中文", "two 👋"])


def test_lengths_must_match(tok: Tokenizer, detok: Any) -> None:
    """As many chunks as streams, else nothing is stepped."""
    a, b = detok.stream(), detok.stream()
    with pytest.raises(ValueError, match="differ in length"):
        detok.step_batch([a, b], [[1]])
    finish_exact(tok, [a, b], ["alpha", "beta"])


def test_streams_of_another_detokenizer_are_refused(tok: Tokenizer, detok: Any) -> None:
    """A stream carries its own tokenizer's tables; another detokenizer cannot step it."""
    other = load_detokenizer("gpt2" if detok.engine != "bytelevel" else "t5-small")
    mine, theirs = detok.stream(), other.stream()
    with pytest.raises(ValueError, match="another Detokenizer"):
        detok.step_batch([mine, theirs], [[1], [1]])
    finish_exact(tok, [mine], ["still usable"])


def test_wrong_types(tokstream: Any, tok: Tokenizer, detok: Any) -> None:
    """Non-streams and non-ids are TypeErrors; negative ids are InvalidTokenIdError."""
    a = detok.stream()
    with pytest.raises(TypeError):
        detok.step_batch([a, "not a stream"], [[1], [1]])
    with pytest.raises(TypeError):
        detok.step_batch([a], ["text"])
    with pytest.raises(tokstream.InvalidTokenIdError):
        detok.step_batch([a], [[5, -1]])
    finish_exact(tok, [a], ["unchanged 中文"])


def test_ints_and_sequences_mix(tok: Tokenizer, detok: Any) -> None:
    """A chunk may be one int, a list or a tuple of ints, or empty."""
    ids = encode_text(tok, "Hello there, 世界")
    streams = [detok.stream() for _ in range(4)]
    chunks = [ids[0], list(ids[:2]), tuple(ids[:3]), []]
    got = detok.step_batch(streams, chunks)
    want = [s.step(c) for s, c in zip([detok.stream() for _ in range(4)], chunks, strict=True)]
    assert got == want
