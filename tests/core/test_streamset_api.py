"""``StreamSet``'s surface: slots, id buffers, errors that name the slot and leave the set usable.

Exactness on every tokenizer is in ``test_streamset.py``; here one tokenizer of each engine.
"""

from __future__ import annotations

import array
import threading
from typing import Any

import numpy as np
import pytest
from helpers.stream_util import decode, load_detokenizer
from tokenizers import Tokenizer

from oracles.corpus import encode_text

pytestmark = pytest.mark.parametrize(
    "name", ["qwen3", "mistral-7b-v0.1", "t5-small"], indirect=True
)

TEXTS = ["Hello there, 世界", "two 👋 waves", "code: x = f(y)"]


def new_set(tokstream: Any, detok: Any, n: int) -> Any:
    """A set of ``n`` fresh streams in slots ``0..n``."""
    s = tokstream.StreamSet(detok)
    assert [s.add() for _ in range(n)] == list(range(n))
    return s


def finish_exact(tok: Tokenizer, s: Any, slots: list[int], texts: list[str]) -> None:
    """Steps each slot through its own text in one call; checks the result against decode."""
    seqs = [encode_text(tok, t) for t in texts]
    flat = [x for ids in seqs for x in ids]
    deltas = s.step(flat, counts=[len(ids) for ids in seqs], slots=slots)
    for slot, ids, delta in zip(slots, seqs, deltas, strict=True):
        assert delta + s.finish(slot) == decode(tok, ids, False), f"slot {slot}"


def test_every_id_form_gives_the_same_deltas(tokstream: Any, tok: Tokenizer, detok: Any) -> None:
    """Lists, tuples, array('I'), numpy arrays of any integer type, bytes: the same step."""
    seqs = [encode_text(tok, t) for t in TEXTS]
    width = max(map(len, seqs))
    columns = [[ids[t] if t < len(ids) else detok.vocab_size for ids in seqs] for t in range(width)]
    forms = {
        "list": list,
        "tuple": tuple,
        "generator": lambda c: (x for x in c),
        "array I": lambda c: array.array("I", c),
        "array q": lambda c: array.array("q", c),
        "uint32": lambda c: np.array(c, dtype=np.uint32),
        "int64": lambda c: np.array(c, dtype=np.int64),
        "uint64": lambda c: np.array(c, dtype=np.uint64),
        "int32 strided": lambda c: np.repeat(np.array(c, dtype=np.int32), 2)[::2],
        "bytes": lambda c: array.array("I", c).tobytes(),
        "memoryview": lambda c: memoryview(array.array("I", c)),
        "misaligned": lambda c: memoryview(b"\0" + array.array("I", c).tobytes())[1:].cast("I"),
    }
    want = None
    for form, make in forms.items():
        s = new_set(tokstream, detok, len(seqs))
        got = [s.step(make(column)) for column in columns]
        got.append([s.finish(k) for k in range(len(seqs))])
        if want is None:
            want = got
            for k, ids in enumerate(seqs):
                assert "".join(column[k] for column in got) == decode(tok, ids, False)
        assert got == want, form


def test_counts_and_slots(tokstream: Any, tok: Tokenizer, detok: Any) -> None:
    """Counts split the flat ids; slots pick and order the streams; a count of 0 skips a slot."""
    s = new_set(tokstream, detok, 3)
    a, b = encode_text(tok, TEXTS[0]), encode_text(tok, TEXTS[1])
    got = s.step(np.array(b + a, dtype=np.uint32), counts=[len(b), 0, len(a)], slots=[2, 1, 0])
    assert got == [detok.stream().step(b), "", detok.stream().step(a)]
    dense = s.step([], counts=[0, 0, 0])
    assert dense == ["", "", ""]
    assert s.step(array.array("I")) == s.step(np.zeros(0, np.uint32)) == s.step(b"") == []
    assert s.finish(0) + s.finish(2) == ""
    finish_exact(tok, s, [1], [TEXTS[2]])


def test_add_remove_reset(tokstream: Any, tok: Tokenizer, detok: Any) -> None:
    """Removed slots are reused lowest first; reset starts a slot anew, with its prompt and flag."""
    s = new_set(tokstream, detok, 4)
    s.step([1, 2, 3, 4])
    s.remove(1)
    s.remove(3)
    assert (len(s), s.slots, 1 in s, 3 in s, -1 in s, "x" in s) == (
        2,
        [0, 2],
        False,
        False,
        False,
        False,
    )
    assert s.add() == 1
    prompt = encode_text(tok, "The prompt")
    s.reset(0, prompt, True)
    ids = encode_text(tok, " continues here")
    lone = detok.stream(prompt, skip_special_tokens=True)
    assert s.step(ids, counts=[len(ids)], slots=[0]) == [lone.step(ids)]
    assert s.window(0) == lone.window
    s.reset(2)  # it took an id above; now it starts a text, with a first token's rules
    finish_exact(tok, s, [1, 2], TEXTS[:2])


def test_errors_name_the_slot_and_leave_the_set_usable(
    tokstream: Any, tok: Tokenizer, detok: Any
) -> None:
    """Every refused step changes nothing; slot errors say which slot and carry ``.slot``."""
    s = new_set(tokstream, detok, 3)
    s.finish(1)
    cases: list[tuple[type[Exception], str, dict[str, Any], int | None]] = [
        (tokstream.StreamFinishedError, "slot 1", {"ids": [5, 6, 7]}, 1),
        (tokstream.InvalidTokenIdError, "slot 2", {"ids": [5, 6, -7], "counts": [2, 0, 1]}, 2),
        (tokstream.InvalidTokenIdError, "slot 0", {"ids": np.array([-1], "i4"), "slots": [0]}, 0),
        (ValueError, "slot 0 appears twice", {"ids": [5, 6], "slots": [0, 0]}, 0),
        (IndexError, "slot 9 holds no stream", {"ids": [5], "slots": [9]}, 9),
        (IndexError, "slot 3 holds no stream", {"ids": [8], "counts": [0, 0, 0, 1]}, 3),
        (ValueError, "add up to 2, but 3 ids", {"ids": [5, 6, 7], "counts": [1, 0, 1]}, None),
        (ValueError, "2 slots but 1 counts", {"ids": [5], "counts": [1], "slots": [0, 2]}, None),
        (ValueError, "3 bytes is not a multiple of 4", {"ids": b"abc"}, None),
        (ValueError, "one-dimensional", {"ids": np.zeros((1, 3), np.uint32)}, None),
        (TypeError, "not buffer format", {"ids": np.zeros(3, np.float32)}, None),
        (TypeError, "not str", {"ids": "abc"}, None),
        (TypeError, "must be ints", {"ids": [5, "6", 7]}, 1),
    ]
    for kind, message, kwargs, slot in cases:
        with pytest.raises(kind, match=message) as info:
            s.step(**kwargs)
        assert getattr(info.value, "slot", None) == slot, message
    with pytest.raises(tokstream.StreamFinishedError, match="slot 1"):
        s.finish(1)
    for call in (s.finish, s.remove, s.window, s.finished, lambda k: s.reset(k)):
        with pytest.raises(IndexError, match="holds no stream"):
            call(7)
        with pytest.raises(IndexError, match="slot -1 holds no stream"):
            call(-1)
    with pytest.raises(TypeError, match="a slot must be an int"):
        s.finish("0")
    finish_exact(tok, s, [0, 2], TEXTS[:2])


def test_bad_streams_are_refused(tokstream: Any, tok: Tokenizer, detok: Any) -> None:
    """A prompt with a window, a malformed window, a negative prompt id: refused, nothing added."""
    s = tokstream.StreamSet(detok)
    with pytest.raises(ValueError, match="not both"):
        s.add([1], window=([], 0, 0))
    with pytest.raises(tokstream.InvalidWindowError, match="window must be"):
        s.add(window=([], 0))
    with pytest.raises(tokstream.InvalidWindowError, match="not in the vocabulary"):
        s.add(window=(["no such token \x00"], 0, 1))
    with pytest.raises(tokstream.InvalidTokenIdError):
        s.add([1, -2])
    with pytest.raises(TypeError):
        tokstream.StreamSet("not a detokenizer")
    assert len(s) == 0
    slot = s.add()
    with pytest.raises(tokstream.InvalidWindowError):
        s.reset(slot, window=(["no such token \x00"], 0, 1))
    finish_exact(tok, s, [slot], TEXTS[:1])


def test_sets_step_in_threads(tokstream: Any, tok: Tokenizer, detok: Any) -> None:
    """Sets of one detokenizer step in several threads at once (the lock is released) exactly."""
    seqs = [encode_text(tok, t) for t in TEXTS * 4]
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def work() -> None:
        try:
            barrier.wait()
            for _ in range(20):
                s = new_set(tokstream, detok, len(seqs))
                flat = np.array([x for ids in seqs for x in ids], dtype=np.uint32)
                got = s.step(flat, counts=[len(ids) for ids in seqs])
                for k, ids in enumerate(seqs):
                    assert got[k] + s.finish(k) == decode(tok, ids, False)
        except BaseException as exc:  # collected: a failure in a thread must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]


def test_windows_are_the_sets_tokenizers(tokstream: Any, detok: Any) -> None:
    """A window moves between sets of one detokenizer; another tokenizer's may not resume."""
    other = load_detokenizer("gpt2" if detok.engine != "bytelevel" else "t5-small")
    s, t = tokstream.StreamSet(detok), tokstream.StreamSet(detok)
    slot = s.add()
    s.step([5, 6], counts=[2])
    window = s.window(slot)
    assert window == detok.resume(*window).window
    assert t.add(window=window) == 0
    assert t.step([7]) == s.step([7])
    assert repr(s) == "StreamSet(streams=1, slot_end=1)"
    foreign = other.stream()
    foreign.step(list(range(3, 40)))
    with pytest.raises(tokstream.InvalidWindowError):
        s.add(window=([*foreign.window[0], "\x00 surely not a token"], 0, 1))


def test_a_stream_reads_every_id_form_as_a_set_does(
    tokstream: Any, tok: Tokenizer, detok: Any
) -> None:
    """``Stream.step`` and ``StreamSet.step`` read a buffer of ids the same way: by its item
    type, bytes as native-endian uint32 (four bytes an id), so ``b"Hi"`` is refused by both."""
    ids = encode_text(tok, TEXTS[1])
    forms = {
        "list": list(ids),
        "bytes": array.array("I", ids).tobytes(),
        "bytearray": bytearray(array.array("I", ids).tobytes()),
        "array I": array.array("I", ids),
        "uint8 buffer of uint32s": np.frombuffer(array.array("I", ids).tobytes(), np.uint8),
        "int64": np.array(ids, dtype=np.int64),
    }
    want = decode(tok, ids, False)
    for form, value in forms.items():
        stream = detok.stream()
        first = stream.step(value)
        assert first + stream.finish() == want, form
        assert new_set(tokstream, detok, 1).step(value, counts=[len(ids)]) == [first], form
    for bad in (b"Hi", bytearray(b"abc")):
        with pytest.raises(ValueError, match="native-endian uint32"):
            detok.stream().step(bad)
        with pytest.raises(ValueError, match="native-endian uint32"):
            new_set(tokstream, detok, 1).step(bad, counts=[1])
