"""Per-token and per-chunk streaming: tokstream vs ``DecodeStream`` vs vLLM's algorithm in Python.

One round is a full pass over the generation (about 1,000 to 1,700 ids, see ``generation.py``)
with a fresh stream, fed 1, 4 or 16 ids a call. Every implementation sees the same ids in the same
process. Groups are ``step-<chunk> <tokenizer>``, so ratios read off within a group; per-token time
is the round time over ``extra_info["tokens"]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from support import STEP_TOKENIZERS, chunked, generation_ids
from tokenizers import Tokenizer
from tokenizers.decoders import DecodeStream

from oracles.vllm_reference import RefStream

IMPLS = ("tokstream", "DecodeStream", "reference")
CHUNKS = (1, 4, 16)


def tokstream_run(detok: Any, chunks: list[Any]) -> Callable[[], list[str]]:
    """A pass with ``DetokStream.step``, then ``finish()`` (its output is part of the text)."""

    def run() -> list[str]:
        stream = detok.stream()
        step = stream.step
        out = [step(chunk) for chunk in chunks]
        out.append(stream.finish())
        return out

    return run


def decodestream_run(tok: Tokenizer, chunks: list[Any]) -> Callable[[], list[str | None]]:
    """A pass with ``tokenizers.decoders.DecodeStream.step`` (it has no flush)."""

    def run() -> list[str | None]:
        step = DecodeStream(skip_special_tokens=False).step
        return [step(tok, chunk) for chunk in chunks]

    return run


def reference_run(tok: Tokenizer, chunks: list[Any]) -> Callable[[], list[str]]:
    """A pass with the Python reference; a chunk is stepped id by id, as vLLM does."""

    def run() -> list[str]:
        step = RefStream(tok, None, False).step
        if chunks and isinstance(chunks[0], int):
            return [step(i) for i in chunks]
        return ["".join([step(i) for i in chunk]) for chunk in chunks]

    return run


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("name", STEP_TOKENIZERS)
def test_step(
    benchmark: Any, get_tok: Any, get_detok: Any, name: str, chunk: int, impl: str
) -> None:
    """Streams the generation through one implementation, ``chunk`` ids a call."""
    tok, detok = get_tok(name), get_detok(name)
    ids = generation_ids(name)
    chunks = chunked(ids, chunk)
    full = tok.decode(list(ids), skip_special_tokens=False)
    if impl == "tokstream":
        run: Callable[[], list[Any]] = tokstream_run(detok, chunks)
    elif impl == "DecodeStream":
        run = decodestream_run(tok, chunks)
    else:
        run = reference_run(tok, chunks)

    text = "".join(filter(None, run()))
    if impl == "tokstream":
        # C1: every delta plus finish() is exactly the one-shot decode.
        assert text == full
    else:
        # No flush: what they emitted must be a prefix of the decode (often all of it).
        assert full.startswith(text), f"{impl} output is not a prefix of decode(ids)"

    benchmark.group = f"step-{chunk} {name}"
    benchmark.extra_info.update(
        impl=impl,
        tokenizer=name,
        engine=detok.engine,
        chunk=chunk,
        tokens=len(ids),
        calls=len(chunks),
        chars_not_emitted=len(full) - len(text),
    )
    benchmark(run)
