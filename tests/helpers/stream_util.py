"""What the tests share about streams and their oracles: the real tokenizers' names by kind,
tokstream loaded once per tokenizer, the one-shot decode, C1's target text (REFERENCE C1 and its
one exception), when vLLM's algorithm is right (so C4 demands identical deltas), and stepping a
stream through chunks. The fixtures built on them are in ``conftest.py``."""

from __future__ import annotations

import collections
import functools
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from tokenizers import Tokenizer

from fixtures import NAMES
from helpers.real_tokenizers import tokenizer_path
from oracles.corpus import byte_ids
from oracles.vllm_reference import REPLACEMENT, State, VllmReference

TOKENIZER_NAMES: tuple[str, ...] = NAMES
BYTE_LEVEL = TOKENIZER_NAMES[:5]
SENTENCEPIECE = TOKENIZER_NAMES[5:8]

#: Cases where vLLM's algorithm misses C1, by tokenizer (tests add to it; shown in the summary).
VLLM_WRONG: collections.Counter[str] = collections.Counter()


def import_tokstream() -> ModuleType:
    """Imports the built package (a test fails, never skips, when it is not installed)."""
    import tokstream

    return tokstream


@functools.cache
def load_detokenizer(name: str) -> Any:
    """Loads ``tokstream.Detokenizer.from_file`` once per session for a real tokenizer."""
    return import_tokstream().Detokenizer.from_file(str(tokenizer_path(name)))


def decode(tok: Tokenizer, ids: Sequence[int], skip: bool) -> str:
    """The oracle ``D``: ``tokenizers``' one-shot decode."""
    return tok.decode(list(ids), skip_special_tokens=skip)


def _common_prefix_len(a: str, b: str) -> int:
    # Code points, not bytes: the first difference is where decode rewrote the prompt's tail.
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _without_unfinished_char(tok: Tokenizer, prompt: Sequence[int], skip: bool) -> list[int] | None:
    """The prompt minus the byte tokens of a character it leaves unfinished, or None.

    Only for byte-fallback tokenizers whose trailing ``<0xNN>`` run is valid UTF-8 but for an
    incomplete last character. ``D(P)`` renders such a run as U+FFFD throughout (retroactively),
    hiding the run's complete characters, which are prompt text all the same.
    """
    if b"ByteFallback" not in tok.decoder.__getstate__():
        return None
    specials = {i for i, t in tok.get_added_tokens_decoder().items() if t.special}
    run: list[tuple[int, int]] = []  # (index in prompt, byte), last first
    for index in range(len(prompt) - 1, -1, -1):
        if skip and prompt[index] in specials:
            continue  # removed before the decoder, so the runs on both sides merge
        token = tok.id_to_token(prompt[index]) or ""
        if not (len(token) == 6 and token.startswith("<0x") and token.endswith(">")):
            break
        run.append((index, int(token[3:5], 16)))
    run.reverse()
    try:
        bytes(b for _, b in run).decode()
    except UnicodeDecodeError as err:
        if err.end == len(run) and err.reason == "unexpected end of data":
            return list(prompt[: run[err.start][0]])
    return None


def c1_target(
    tok: Tokenizer, prompt: Sequence[int] | None, generated: Sequence[int], skip: bool
) -> str:
    """Returns the text contract C1 requires a stream to produce in total.

    ``D(P+G)[len(D(P)):]`` when ``D(P)`` is a prefix of ``D(P+G)``; otherwise ``D(P+G)`` minus its
    longest common prefix with ``D(P)`` (prompt text is never repeated); ``D(G)`` without a prompt.
    One refinement keeps "never repeats prompt text" true for byte fallback: when the prompt ends
    inside a character of a byte run, the run's complete characters count as prompt text too
    (``D(P)`` shows them as U+FFFD), so the longer common prefix of the two renderings is cut.

    >>> c1_target(tok, None, ids, False) == tok.decode(ids)  # doctest: +SKIP
    True
    """
    if not prompt:
        return decode(tok, generated, skip)
    full = decode(tok, [*prompt, *generated], skip)
    common = _common_prefix_len(full, decode(tok, prompt, skip))
    finished = _without_unfinished_char(tok, prompt, skip)
    if finished is not None:
        common = max(common, _common_prefix_len(full, decode(tok, finished, skip)))
    return full[common:]


def c1_exception_target(tok: Tokenizer, generated: Sequence[int], skip: bool) -> str:
    """The text C1's one exception gives in total, without a prompt (byte fallback only).

    ``D(G)``, except that a byte run that is not valid UTF-8 keeps its complete characters before
    the first bad or missing byte, followed by one U+FFFD per byte token left (``D`` shows every
    byte token of the run as U+FFFD). Built from ``D`` itself: each such run is found among the
    ids the decoder sees, located in ``D(G)`` by decoding the ids before it, and rewritten there.
    """
    specials = {i for i, t in tok.get_added_tokens_decoder().items() if t.special}
    seen = [i for i in generated if tok.id_to_token(i) is not None and not (skip and i in specials)]

    def byte_of(token_id: int) -> int | None:
        token = tok.id_to_token(token_id) or ""
        if len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
            return int(token[3:5], 16)
        return None

    text = decode(tok, seen, False)
    edits: list[tuple[int, int, str]] = []  # (start, length in text, replacement)
    index = 0
    while index < len(seen):
        if byte_of(seen[index]) is None:
            index += 1
            continue
        end = index
        while end < len(seen) and byte_of(seen[end]) is not None:
            end += 1
        run = bytes(b for b in map(byte_of, seen[index:end]) if b is not None)
        try:
            run.decode()
        except UnicodeDecodeError as err:
            kept = run[: err.start].decode()
            if kept:
                start = len(decode(tok, seen[:index], False))
                edits.append((start, len(run), kept + REPLACEMENT * (len(run) - err.start)))
        index = end
    for start, length, replacement in reversed(edits):
        assert text[start : start + length] == REPLACEMENT * length, (text, start)
        if start == 0:  # the decoder's Strip removes up to `strip` leading spaces of the text
            strip = 2 - len(decode(tok, byte_ids(tok, b" A"), False))
            spaces = len(replacement) - len(replacement.lstrip(" "))
            replacement = replacement[min(strip, spaces) :]
        text = text[:start] + replacement + text[start + length :]
    return text


#: tokstream advances a window after this many held tokens (api.md fix 2); vLLM never does.
HOLD_LIMIT = 16


def vllm_is_right(ref: VllmReference, deltas: list[str], last: State, target: str) -> bool:
    """Whether the reference satisfies C1 and C2 here, so that C4 demands identical deltas.

    A target holding U+FFFD means a decided replacement character, which vLLM holds back and
    tokstream emits at once; a run of ``HOLD_LIMIT`` holds is where tokstream advances its window.
    """
    if REPLACEMENT in target or "".join(deltas) + ref.flush(last) != target:
        return False
    run = longest = 0
    for delta in deltas:
        run = run + 1 if delta == "" else 0
        longest = max(longest, run)
    return longest < HOLD_LIMIT


def chunked(ids: Sequence[int], size: int) -> list[list[int]]:
    """Splits ``ids`` into consecutive chunks of ``size`` (the last may be shorter)."""
    return [list(ids[i : i + size]) for i in range(0, len(ids), size)]


def run_stream(
    detok: Any, prompt: Sequence[int] | None, chunks: Sequence[int | Sequence[int]], skip: bool
) -> list[str]:
    """Steps a fresh tokstream stream through ``chunks``; returns every delta, then ``finish()``."""
    stream = detok.stream(prompt_ids=list(prompt) if prompt else None, skip_special_tokens=skip)
    out = [stream.step(chunk) for chunk in chunks]
    out.append(stream.finish())
    return out
