"""Logprob token strings (REFERENCE section 4), against ``tokenizers``' decode.

Each id is decoded alone; SentencePiece and Metaspace tokenizers get back the leading spaces that
decoding a first token strips; a string ending in U+FFFD is corrected with up to 4 preceding
sampled ids, so a character split over several ids reports ``""`` for its first parts and the
whole character on the id that completes it.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.stream_util import BYTE_LEVEL, SENTENCEPIECE, TOKENIZER_NAMES
from tokenizers import Tokenizer

from oracles.corpus import encode_text

REPLACEMENT = "\ufffd"
SPLIT_TEXT = "Hi 中文 삥뽕빵 👨‍👩‍👧‍👦 🇯🇵 नमस्ते, done."
#: Tokenizers whose decoder drops a first token's leading spaces (the strings put them back).
STRIPPING = (*SENTENCEPIECE, "t5-small")


def rolling(detok: Any, ids: list[int]) -> list[str]:
    """Logprob strings of a sampled sequence, each with the (up to) 4 sampled ids before it."""
    return [detok.logprob_token(t, ids[max(0, i - 4) : i]) for i, t in enumerate(ids)]


def as_continuation(tok: Tokenizer, ids: list[int]) -> str:
    """The text ``ids`` add after a plain first token: no first-token space stripping."""
    head = encode_text(tok, "a")
    return tok.decode([*head, *ids], skip_special_tokens=False)[len(tok.decode(head)) :]


@pytest.mark.parametrize("name", TOKENIZER_NAMES, indirect=True)
def test_clean_tokens_are_their_decode(tok: Tokenizer, detok: Any, name: str) -> None:
    """A token that decodes to whole characters reports exactly that (plus stripped spaces)."""
    for t in encode_text(tok, "The quick brown fox, 2 spaces  and code: x = f(1)"):
        alone = tok.decode([t], skip_special_tokens=False)
        if alone.endswith(REPLACEMENT):
            continue
        want = alone
        if name in STRIPPING:
            marks = len(tok.id_to_token(t)) - len(tok.id_to_token(t).lstrip("\u2581"))
            spaces = len(alone) - len(alone.lstrip(" "))
            want = " " * max(0, marks - spaces) + alone
        assert detok.logprob_token(t) == want, (t, tok.id_to_token(t))


@pytest.mark.parametrize("name", [*BYTE_LEVEL, *SENTENCEPIECE, "t5-small"], indirect=True)
def test_split_characters_add_up_to_the_text(tok: Tokenizer, detok: Any) -> None:
    """Over a sampled sequence, the strings concatenate to the text those ids add."""
    ids = encode_text(tok, SPLIT_TEXT)
    strings = rolling(detok, ids)
    assert "".join(strings) == as_continuation(tok, ids)
    assert not any(s.endswith(REPLACEMENT) for s in strings if s != REPLACEMENT)


@pytest.mark.parametrize("name", ["mistral-7b-v0.1"], indirect=True)
def test_three_byte_tokens_report_empty_empty_char(tok: Tokenizer, detok: Any) -> None:
    """中 = E4 B8 AD as three ``<0xNN>`` tokens: "", "", "中" (and bytes follow the string)."""
    ids = [tok.token_to_id(f"<0x{b:02X}>") for b in "中".encode()]
    prefix = encode_text(tok, "Hello")
    strings = rolling(detok, [*prefix, *ids])[len(prefix) :]
    assert strings == ["", "", "中"]
    assert [list(s.encode()) for s in strings] == [[], [], list("中".encode())]


@pytest.mark.parametrize("name", ["qwen3", "phi-3-mini"], indirect=True)
def test_no_context_or_too_little_gives_empty(tok: Tokenizer, detok: Any) -> None:
    """Without the ids that start the character, no decode comes out clean: ``""``."""
    ids = encode_text(tok, "👨‍👩‍👧‍👦")
    partial = [t for t in ids if tok.decode([t]).endswith(REPLACEMENT)]
    assert partial, "the family emoji splits into partial tokens"
    assert detok.logprob_token(partial[-1]) == ""
    assert detok.logprob_token(partial[-1], [10**6, 10**6]) == ""


@pytest.mark.parametrize("name", ["gpt2"], indirect=True)
def test_bad_ids(tokstream: Any, detok: Any) -> None:
    """Negative ids are InvalidTokenIdError; ids outside the vocabulary report ``""``."""
    with pytest.raises(tokstream.InvalidTokenIdError):
        detok.logprob_token(-1)
    with pytest.raises(tokstream.InvalidTokenIdError):
        detok.logprob_token(5, [1, -2])
    assert detok.logprob_token(detok.vocab_size + 7) == ""
