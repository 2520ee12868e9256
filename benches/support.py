"""Helpers shared by the benches: tokenizer loading, the generation's ids, resident memory, and
how the bench scripts report."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import json
import os
import sys
from pathlib import Path
from typing import Any

from generation import GENERATION

# The project's tokenizer fixtures (also for benches run in a fresh process, as a script).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tokenizers import Tokenizer

from fixtures import tokenizer_json as tokenizer_path

#: The tokenizers the step benches sweep: three byte-level, two SentencePiece byte-fallback and
#: two on the windowed engine (WordPiece and Metaspace/Unigram).
STEP_TOKENIZERS: tuple[str, ...] = (
    "qwen3",
    "deepseek-r1",
    "llama-3.2-instruct",
    "mistral-7b-v0.1",
    "phi-3-mini",
    "bert-all-minilm-l6-v2",
    "t5-small",
)


@functools.cache
def load_tokenizer(name: str) -> Tokenizer:
    """Loads the ``tokenizers`` oracle once for a real tokenizer, padding and truncation off."""
    tok = Tokenizer.from_file(str(tokenizer_path(name)))
    tok.no_padding()
    tok.no_truncation()
    return tok


@functools.cache
def load_detokenizer(name: str) -> Any:
    """Loads ``tokstream.Detokenizer`` once for a real tokenizer."""
    import tokstream

    return tokstream.Detokenizer.from_file(str(tokenizer_path(name)))


@functools.cache
def generation_ids(name: str) -> tuple[int, ...]:
    """The ids of ``GENERATION`` for ``name``, encoded without special tokens.

    ``<think>`` and ``</think>`` become their added tokens where the tokenizer has them (Qwen3,
    DeepSeek-R1), as a model would emit them.
    """
    return tuple(load_tokenizer(name).encode(GENERATION, add_special_tokens=False).ids)


def chunked(ids: tuple[int, ...], size: int) -> list[Any]:
    """Returns ``ids`` as ints (``size == 1``) or as consecutive lists of ``size`` ids."""
    if size == 1:
        return list(ids)
    return [list(ids[i : i + size]) for i in range(0, len(ids), size)]


_PAGE = os.sysconf("SC_PAGE_SIZE")
_LIBC_NAME = ctypes.util.find_library("c")
_LIBC = ctypes.CDLL(_LIBC_NAME) if _LIBC_NAME else None


def settle_memory() -> None:
    """Collects garbage and hands free heap pages back to the OS, so RSS deltas count growth."""
    gc.collect()
    trim = getattr(_LIBC, "malloc_trim", None)
    if trim is not None:
        trim(0)


def rss_bytes() -> int:
    """Resident set size of this process, from ``/proc/self/statm`` (sees Rust allocations)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


def report(table: str, conditions: str, runs: list[Any], load_at_start: float, out: Any) -> None:
    """A bench script's Markdown table, then one line of conditions (cores, the load average
    from ``load_at_start`` to now, and ``conditions``); ``runs`` as JSON to ``out`` when given."""
    print(table)
    print(
        f"\n{os.cpu_count()} cores, load {load_at_start:.2f} -> {os.getloadavg()[0]:.2f}; "
        + conditions
    )
    if out:
        Path(out).write_text(json.dumps({"runs": runs}, indent=2))
