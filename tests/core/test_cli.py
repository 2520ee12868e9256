"""The command line the README's first command runs: ``python -m tokstream stream``."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers.real_tokenizers import tokenizer_path


@pytest.mark.parametrize("name", ["qwen3", "mistral-7b-v0.1", "t5-small"])
def test_stream_command_prints_the_exact_text(name: str) -> None:
    """It streams a multilingual line one id at a time and reports that it equals decode."""
    folder = tokenizer_path(name).parent
    text = "Streaming 中文 and 한국어 👋 never splits a character."
    done = subprocess.run(
        [sys.executable, "-m", "tokstream", "stream", "--tokenizer", str(folder), "--text", text],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "exact=True" in done.stderr
    assert "engine=" in done.stderr
    # t5's vocabulary has no Hangul or emoji: decode shows <unk> there, and so must the stream.
    if name != "t5-small":
        assert done.stdout.strip() == text


def test_stream_command_needs_a_tokenizer() -> None:
    """Without --tokenizer it exits with a usage error instead of guessing."""
    done = subprocess.run(
        [sys.executable, "-m", "tokstream", "stream"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--tokenizer" in done.stderr


def test_stream_command_reads_standard_input() -> None:
    """Without --text it streams what standard input holds."""
    folder = tokenizer_path("qwen3").parent
    text = "From a pipe: 日本語 and ✨ as well.\nTwo lines."
    done = subprocess.run(
        [sys.executable, "-m", "tokstream", "stream", "--tokenizer", str(folder)],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "exact=True" in done.stderr
    assert done.stdout.rstrip("\n") == text


def test_stream_command_documents_its_flags() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tokstream", "stream", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert "standard input" in done.stdout and "model id" in done.stdout
