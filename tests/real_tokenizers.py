"""Where the real tokenizer files are, shared by the tests and the benches.

They live beside the repo in ``../shared/tokenizers`` (override with env ``TOKSTREAM_SHARED``,
naming either that ``shared`` folder or the ``tokenizers`` folder itself). When they are missing,
what needs them skips with a reason; with env ``CI`` set it fails instead, because a CI run must
have no skips.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest
from tokenizers import Tokenizer


def unavailable(reason: str) -> None:
    """Skips the current test, or fails it when env ``CI`` is set (CI must have no skips)."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)")
    pytest.skip(reason)


def tokenizers_dir() -> Path:
    """Returns where the real tokenizer folders should be (they may be absent)."""
    override = os.environ.get("TOKSTREAM_SHARED")
    if not override:
        return Path(__file__).resolve().parents[1].parent / "shared" / "tokenizers"
    base = Path(override)
    return base / "tokenizers" if (base / "tokenizers").is_dir() else base


def tokenizer_path(name: str) -> Path:
    """Returns the ``tokenizer.json`` of ``name``, skipping (or failing under CI) when absent."""
    path = tokenizers_dir() / name / "tokenizer.json"
    if not path.is_file():
        unavailable(f"real tokenizer file {path} is absent (set TOKSTREAM_SHARED)")
    return path


@functools.cache
def load_tokenizer(name: str) -> Tokenizer:
    """Loads a real tokenizer once per session, with BERT's padding and truncation switched off."""
    tok = Tokenizer.from_file(str(tokenizer_path(name)))
    tok.no_padding()
    tok.no_truncation()
    return tok
