"""The stateless derender pattern: every chunk resumes a new stream from the last wire window.

A derender server keeps no stream between calls: the first chunk seeds from the prompt, each
later chunk builds a stream with ``resume(*window)``, steps it, and hands back its ``window``;
the last call resumes once more to ``finish()``. The text must be what one long-lived stream
gives, chunk by chunk, and exact in total (C1), on every tokenizer.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from helpers.stream_util import c1_target, run_stream
from tokenizers import Tokenizer

from oracles.corpus import samples


def stateless(detok: Any, prompt: list[int], chunks: list[list[int]], skip: bool) -> list[str]:
    """Deltas of a stream rebuilt from its window at every chunk, then the finishing tail."""
    window = None
    out = []
    for chunk in chunks:
        if window is None:
            stream = detok.stream(prompt_ids=prompt or None, skip_special_tokens=skip)
        else:
            stream = detok.resume(*window, skip_special_tokens=skip)
        out.append(stream.step(chunk))
        window = stream.window
        assert window[1] == 0 and len(window[0]) <= 32
    if window is None:
        stream = detok.stream(prompt_ids=prompt or None, skip_special_tokens=skip)
    else:
        stream = detok.resume(*window, skip_special_tokens=skip)
    out.append(stream.finish())
    return out


@pytest.mark.parametrize("skip", [False, True])
def test_resuming_every_chunk_equals_one_stream(
    name: str, tok: Tokenizer, detok: Any, skip: bool
) -> None:
    """Chunks of 1 to 4 ids at several prompt cuts of every corpus sample."""
    for sample, ids in samples(tok):
        rng = random.Random(f"{name}/{sample}/{skip}")
        n = len(ids)
        for cut in sorted({0, 1, n // 3, n // 2, 2 * n // 3, n - 1}):
            prompt, gen = ids[:cut], ids[cut:]
            chunks, i = [], 0
            while i < len(gen):
                width = rng.randint(1, 4)
                chunks.append(gen[i : i + width])
                i += width
            where = f"{name} {sample} cut={cut} skip={skip}"
            got = stateless(detok, prompt, chunks, skip)
            assert "".join(got) == c1_target(tok, prompt or None, gen, skip), where
            assert got == run_stream(detok, prompt or None, chunks, skip), where
