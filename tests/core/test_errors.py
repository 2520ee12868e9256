"""Errors: each documented exception where it is due, nothing else, and streams that survive them.

Documented (api.md, ``tokstream.errors``): negative ids raise ``InvalidTokenIdError`` before the
stream changes; ids at or past ``vocab_size`` are not errors and add nothing, like ``decode``;
malformed windows raise ``InvalidWindowError``; using a finished stream raises
``StreamFinishedError``.
"""

from __future__ import annotations

import functools
import json
import resource
from typing import Any

import numpy
import pytest
from helpers.real_tokenizers import load_tokenizer, tokenizer_path
from helpers.stream_util import c1_target, decode
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer

from oracles.corpus import encode_text

U32 = 2**32  # tokenizers' decode takes ids below this and raises OverflowError from it on
HYPOTHESIS_NAMES = ("gpt2", "qwen3", "mistral-7b-v0.1", "bert-all-minilm-l6-v2", "t5-small")


def test_exception_hierarchy(tokstream: Any) -> None:
    """Each error is a TokstreamError and the built-in a caller would already catch."""
    assert issubclass(tokstream.InvalidTokenIdError, tokstream.TokstreamError)
    assert issubclass(tokstream.InvalidTokenIdError, ValueError)
    assert issubclass(tokstream.InvalidWindowError, tokstream.TokstreamError)
    assert issubclass(tokstream.InvalidWindowError, ValueError)
    assert issubclass(tokstream.StreamFinishedError, tokstream.TokstreamError)
    assert issubclass(tokstream.StreamFinishedError, RuntimeError)
    assert issubclass(tokstream.TokenizerLoadError, ValueError)


def test_unloadable_tokenizers_raise_tokenizer_load_error(tokstream: Any, tmp_path: Any) -> None:
    """Bad JSON, a JSON that is no tokenizer, a missing file: TokenizerLoadError (a ValueError)."""
    (tmp_path / "tokenizer.json").write_text("{not json")
    calls = [
        lambda: tokstream.Detokenizer.from_str("{not json"),
        lambda: tokstream.Detokenizer.from_str('{"model": 3}'),
        lambda: tokstream.Detokenizer.from_file(str(tmp_path / "missing.json")),
        lambda: tokstream.Detokenizer.from_file(str(tmp_path)),
    ]
    for call in calls:
        with pytest.raises(tokstream.TokenizerLoadError) as info:
            call()
        assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("name", ["qwen3"], indirect=True)
def test_from_file_takes_a_directory(tokstream: Any, tok: Tokenizer, detok: Any) -> None:
    """A directory holding ``tokenizer.json`` loads the same tables as the file itself."""
    folder = tokenizer_path("qwen3").parent
    other = tokstream.Detokenizer.from_file(str(folder))
    ids = encode_text(tok, "<think>中文</think> ok")
    assert (other.engine, other.vocab_size) == (detok.engine, detok.vocab_size)
    assert other.decode(ids) == detok.decode(ids) == decode(tok, ids, False)


@pytest.mark.parametrize("bad", [[-1], [5, 6, -5], [-(2**40)], [7, -1, 8]])
def test_negative_ids_raise_and_leave_the_stream_unchanged(
    tokstream: Any, tok: Tokenizer, detok: Any, bad: list[int]
) -> None:
    """A rejected step changes nothing: the window and the final text are as if it never came."""
    prompt, gen = encode_text(tok, "Say:"), encode_text(tok, "Hello 中文 world 👨‍👩‍👧‍👦")
    stream = detok.stream(prompt_ids=prompt)
    out = [stream.step(i) for i in gen[:3]]
    before = stream.window
    with pytest.raises(tokstream.InvalidTokenIdError) as info:
        stream.step(bad if len(bad) > 1 else bad[0])
    assert isinstance(info.value, ValueError) and isinstance(info.value, tokstream.TokstreamError)
    assert stream.window == before and not stream.finished
    out += [stream.step(gen[3:]), stream.finish()]
    assert "".join(out) == c1_target(tok, prompt, gen, False)
    for call in (lambda: detok.decode(bad), lambda: detok.convert_ids_to_tokens(bad)):
        with pytest.raises(tokstream.InvalidTokenIdError):
            call()
    with pytest.raises(tokstream.InvalidTokenIdError):
        detok.stream(prompt_ids=[*prompt, *bad])


@pytest.mark.parametrize("skip", [False, True])
def test_ids_past_the_vocabulary_contribute_nothing(tok: Tokenizer, detok: Any, skip: bool) -> None:
    """Ids from ``vocab_size`` up to 2**32 - 1, anywhere (prompt too), add nothing, like decode."""
    size = detok.vocab_size
    words = encode_text(tok, "Hello big world, 中文!")
    far = [size, size + 1, 2**31 - 1, U32 - 1]
    cases = [[*far[:2], *words], [*words[:2], *far, *words[2:]], [*words, *far], far]
    for ids in cases:
        assert detok.decode(ids, skip_special_tokens=skip) == decode(tok, ids, skip), ids
        assert "".join(run_all(detok, None, ids, skip)) == decode(tok, ids, skip), ids
        for cut in (1, 3):
            target = c1_target(tok, ids[:cut], ids[cut:], skip)
            assert "".join(run_all(detok, ids[:cut], ids[cut:], skip)) == target, (cut, ids)
    assert detok.convert_ids_to_tokens(far) == ["", "", "", ""]


def run_all(detok: Any, prompt: list[int] | None, ids: list[int], skip: bool) -> list[str]:
    """Single-id steps, then ``finish()``."""
    stream = detok.stream(prompt_ids=prompt, skip_special_tokens=skip)
    return [*(stream.step(i) for i in ids), stream.finish()]


@pytest.mark.parametrize("name", ["gpt2", "mistral-7b-v0.1"], indirect=True)
def test_ids_past_u32_add_nothing_or_raise_invalid_token_id(
    tokstream: Any, tok: Tokenizer, detok: Any
) -> None:
    """Past 2**32 (where tokenizers overflows) a documented outcome: nothing, or the id error."""
    words = encode_text(tok, "Hello world")
    stream = detok.stream()
    out = [stream.step(words[0])]
    for huge in (U32, U32 + 5, 2**63, 2**70):
        try:
            out.append(stream.step(huge))
        except tokstream.InvalidTokenIdError:
            pass
    out += [stream.step(words[1:]), stream.finish()]
    assert "".join(out) == decode(tok, words, False)


@pytest.mark.parametrize("name", ["gpt2", "phi-3-mini"], indirect=True)
def test_ids_as_int_list_or_tuple_give_the_same_text(tok: Tokenizer, detok: Any) -> None:
    """``step`` and ``prompt_ids`` take an int or any int sequence, with identical results."""
    prompt, gen = encode_text(tok, "Q: 中"), encode_text(tok, "Hello 中文 world")
    expected = "".join(run_all(detok, prompt, gen, False))
    for wrap in (list, tuple):
        stream = detok.stream(prompt_ids=wrap(prompt))
        assert stream.step(wrap(gen[:3])) + stream.step(wrap(gen[3:])) + stream.finish() == expected
    assert detok.decode(tuple(gen)) == detok.decode(gen) == decode(tok, gen, False)


class Index:
    """An int-like object that is not an ``int``: it has only ``__index__``."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


def test_anything_with_index_is_an_id(tok: Tokenizer, detok: Any, tokstream: Any) -> None:
    """``__index__`` objects and numpy integers, alone or in lists, tuples, arrays, generators.

    ``step`` and ``prompt_ids`` take the same shapes; ids past the vocabulary (numpy's largest
    uint64 as Python's ``2**64``) add nothing; a float or a str is a ``TypeError``.
    """
    prompt, gen = encode_text(tok, "Q: 中"), encode_text(tok, "Hello 中文 world")
    expected = "".join(run_all(detok, prompt, gen, False))
    shapes = {
        "index": lambda ids: [Index(i) for i in ids],
        "numpy": lambda ids: numpy.array(ids, dtype=numpy.int64),
        "numpy-uint32": lambda ids: numpy.array(ids, dtype=numpy.uint32),
        "numpy-scalars": lambda ids: [numpy.int32(i) for i in ids],
        "generator": lambda ids: (i for i in ids),
    }
    for label, shape in shapes.items():
        stream = detok.stream(prompt_ids=shape(prompt))
        text = stream.step(shape(gen[:3])) + stream.step(shape(gen[3:])) + stream.finish()
        assert text == expected, label
        one = detok.stream(prompt_ids=shape(prompt))
        singles = [one.step(x) for x in shape(gen)]
        assert "".join(singles) + one.finish() == expected, label
        assert detok.decode(shape(gen)) == decode(tok, gen, False), label
    stream = detok.stream()
    for past in (numpy.uint64(2**64 - 1), Index(2**64), 2**64, numpy.int64(detok.vocab_size)):
        assert stream.step(past) == "" and stream.step([past]) == ""
    for bad in (1.5, "7", numpy.float32(3.0), [1, 2.5], None):
        with pytest.raises(TypeError, match="token ids must be ints"):
            stream.step(bad)
    with pytest.raises(tokstream.InvalidTokenIdError):
        stream.step(numpy.int64(-1))
    with pytest.raises(tokstream.InvalidTokenIdError):
        stream.step([Index(-(2**70))])


def malformed_windows(tok: Tokenizer) -> dict[str, tuple[Any, int, int]]:
    """Windows vLLM's Rust port rejects (its Python side forgets the order check)."""
    real = [tok.id_to_token(i) for i in encode_text(tok, "Hello big world")]
    return {
        "prefix_after_read": (real, 2, 1),
        "read_past_end": (real, 0, len(real) + 1),
        "prefix_past_end": (real, len(real) + 1, len(real) + 1),
        "negative_prefix": (real, -1, 1),
        "negative_read": (real, 0, -1),
        "too_long": ([real[0]] * 1025, 0, 1),
        "unknown_token": ([*real, "\u2603not-a-token\u2603"], 0, 1),
        "non_string_entry": ([*real, 17], 0, 1),
        "lone_surrogate": (["\ud800"], 0, 1),
        "lone_surrogate_after_real": ([*real, "a\udfff"], 0, 1),
    }


@pytest.mark.parametrize(
    "name", ["gpt2", "mistral-7b-v0.1", "bert-all-minilm-l6-v2"], indirect=True
)
def test_malformed_windows_raise_invalid_window(tokstream: Any, tok: Tokenizer, detok: Any) -> None:
    """Each malformed window is an InvalidWindowError (a ValueError); edge-valid ones are taken."""
    for label, window in malformed_windows(tok).items():
        for skip in (False, True):
            with pytest.raises(tokstream.InvalidWindowError) as info:
                detok.resume(*window, skip_special_tokens=skip)
            assert isinstance(info.value, ValueError), label
    real = tok.id_to_token(encode_text(tok, "Hello")[0])
    for window in (([], 0, 0), ([real] * 1024, 1023, 1024), (["", real, ""], 0, 3)):
        stream = detok.resume(*window)
        assert isinstance(stream.step(encode_text(tok, " world")) + stream.finish(), str)


@pytest.mark.parametrize("name", ["gpt2"], indirect=True)
def test_unknown_token_before_prefix_offset_is_rejected(
    tokstream: Any, tok: Tokenizer, detok: Any
) -> None:
    """errors.py: token strings not in the vocabulary raise, including entries vLLM trims away."""
    real = tok.id_to_token(encode_text(tok, "Hello")[0])
    with pytest.raises(tokstream.InvalidWindowError):
        detok.resume(["\u2603not-a-token\u2603", real], 1, 2)


def test_step_and_finish_after_finish_raise(tokstream: Any, tok: Tokenizer, detok: Any) -> None:
    """A finished stream refuses ``step`` (an id, a list, an empty list) and another ``finish``."""
    stream = detok.stream(prompt_ids=encode_text(tok, "Hi"))
    assert stream.step([]) == "" and not stream.finished
    stream.step(encode_text(tok, " there"))
    stream.finish()
    assert stream.finished
    window = stream.window
    for call in (lambda: stream.step(5), lambda: stream.step([5, 6]), lambda: stream.step([])):
        with pytest.raises(tokstream.StreamFinishedError) as info:
            call()
        assert isinstance(info.value, RuntimeError)
    with pytest.raises(tokstream.StreamFinishedError):
        stream.finish()
    assert stream.window == window


def test_step_batch_with_a_finished_stream_raises(
    tokstream: Any, tok: Tokenizer, detok: Any
) -> None:
    """``step_batch`` holding a finished stream raises StreamFinishedError as ``step`` would."""
    done, live = detok.stream(), detok.stream()
    done.finish()
    with pytest.raises(tokstream.StreamFinishedError):
        detok.step_batch([live, done], [encode_text(tok, "a"), encode_text(tok, "b")])


@pytest.mark.parametrize("name", HYPOTHESIS_NAMES, indirect=True)
@given(
    prompt=st.none() | st.lists(st.integers(-3, 160_000), max_size=12),
    calls=st.lists(
        st.lists(st.integers(-3, 160_000) | st.sampled_from([-(2**40), U32 - 1]), max_size=6),
        max_size=12,
    ),
    skip=st.booleans(),
)
def test_random_ids_raise_only_documented_errors(
    tokstream: Any, name: str, detok: Any, prompt: Any, calls: Any, skip: bool
) -> None:
    """Random ids: only InvalidTokenIdError, only for negatives; the text is C1's on byte-level."""
    tok = load_tokenizer(name)  # not a test argument: hypothesis would print its whole repr
    try:
        stream = detok.stream(prompt_ids=prompt, skip_special_tokens=skip)
    except tokstream.InvalidTokenIdError:
        assert any(i < 0 for i in prompt)
        prompt, stream = None, detok.stream(skip_special_tokens=skip)
    else:
        # Only the last 7 prompt ids are read (REFERENCE 2); a negative before them may pass.
        assert not any(i < 0 for i in (prompt or [])[-7:])
        prompt = [i for i in prompt or [] if i >= 0]
    out, taken = [], []
    for ids in calls:
        try:
            out.append(stream.step(ids))
            taken += ids
        except tokstream.InvalidTokenIdError:
            assert any(i < 0 for i in ids)
    out.append(stream.finish())
    assert all(isinstance(x, str) for x in out)
    if name in ("gpt2", "qwen3"):  # no C1 exception applies to byte-level tokenizers
        assert "".join(out) == c1_target(tok, prompt, taken, skip)


@functools.cache
def vocabulary(name: str) -> frozenset[str]:
    """Every token string of ``name``, added tokens included (cached: 150k entries for Qwen3)."""
    return frozenset(load_tokenizer(name).get_vocab(with_added_tokens=True))


@st.composite
def windows(draw: Any, name: str) -> tuple[list[Any], int, int]:
    """Random windows: vocabulary strings, "", junk, over-long; offsets in and out of range."""
    tok = load_tokenizer(name)
    vocab_id = st.integers(0, tok.get_vocab_size() - 1)
    entry = vocab_id.map(tok.id_to_token) | st.just("") | st.text(max_size=4)
    tokens = draw(st.lists(entry, max_size=40) | st.just([tok.id_to_token(5)] * 1025))
    prefix = draw(st.integers(-2, len(tokens) + 2))
    read = draw(st.integers(-2, len(tokens) + 2))
    return tokens, prefix, read


@pytest.mark.parametrize("name", HYPOTHESIS_NAMES, indirect=True)
@given(data=st.data(), skip=st.booleans())
def test_random_windows_are_resumed_or_rejected_as_documented(
    tokstream: Any, name: str, detok: Any, data: Any, skip: bool
) -> None:
    """A window is accepted exactly when it is well formed; then the stream works to the end."""
    tokens, prefix, read = data.draw(windows(name))
    known = vocabulary(name)
    valid = 0 <= prefix <= read <= len(tokens) <= 1024 and all(
        t == "" or t in known for t in tokens
    )
    if not valid:
        with pytest.raises(tokstream.InvalidWindowError):
            detok.resume(tokens, prefix, read, skip_special_tokens=skip)
        return
    stream = detok.resume(tokens, prefix, read, skip_special_tokens=skip)
    ids = data.draw(st.lists(st.integers(0, detok.vocab_size + 5), max_size=10))
    assert isinstance(stream.step(ids) + stream.finish(), str)
    assert len(stream.window[0]) <= max(32, len(tokens) + len(ids))


def sparse_tokenizer(ids: dict[str, int]) -> str:
    """A few-hundred-byte BPE ``tokenizer.json`` whose vocabulary has exactly ``ids``."""
    model = {"type": "BPE", "vocab": ids, "merges": [], "unk_token": None}
    return json.dumps({"version": "1.0", "model": model, "decoder": None})


@pytest.mark.parametrize("largest", [2**24, 2**28, 2**31])
def test_sparse_ids_are_refused_at_load_not_allocated(tokstream: Any, largest: int) -> None:
    """One id of 2**28 in a 300-byte file: TokenizerLoadError, never gigabytes of tables.

    The per-id tables hold an entry per id slot, so memory stays proportional to the file only
    while ids are dense: at most twice the tokens plus 65,536 slots.
    """
    text = sparse_tokenizer({"a": 0, "b": 1, "c": largest})
    assert len(text) < 300
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(tokstream.TokenizerLoadError, match="too sparse") as err:
        tokstream.Detokenizer.from_str(text)
    assert str(largest) in str(err.value)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 64 * 1024, f"loading grew the peak RSS by {grown_kib} KiB"


def test_moderately_sparse_ids_still_load(tokstream: Any) -> None:
    """Gaps within the allowance load: slots are the largest id plus one, gaps add nothing."""
    text = sparse_tokenizer({"a": 0, "b": 1, "c": 65_000})
    detok = tokstream.Detokenizer.from_str(text)
    assert detok.vocab_size == 65_001
    assert detok.decode([0, 65_000, 1, 30_000]) == Tokenizer.from_str(text).decode([0, 65_000, 1])
