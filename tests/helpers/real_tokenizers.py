"""The real tokenizers, from the project's compressed fixtures (``fixtures/``), for the tests.

``fixtures.model_dir`` lays each one out once, decompressed, under ``target/fixtures``; nothing is
read from outside the repository, so every test runs on a fresh clone and none skips.
"""

from __future__ import annotations

import functools
from pathlib import Path

from tokenizers import Tokenizer

from fixtures import model_dir, tokenizer_json

__all__ = ["load_tokenizer", "model_dir", "tokenizer_path"]


def tokenizer_path(name: str) -> Path:
    """Returns the decompressed ``tokenizer.json`` of the fixture ``name``."""
    return tokenizer_json(name)


@functools.cache
def load_tokenizer(name: str) -> Tokenizer:
    """Loads a real tokenizer once per session, with BERT's padding and truncation switched off."""
    tok = Tokenizer.from_file(str(tokenizer_path(name)))
    tok.no_padding()
    tok.no_truncation()
    return tok
