"""``tokstream serve --tokenizer Qwen/Qwen3-0.6B``: a real server process resolving a model id
from a Hugging Face cache folder on disk, with ``HF_HUB_OFFLINE=1``."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.hub_util import QWEN3_GENERATION_CONFIG, add_snapshot, offline_env
from helpers.real_tokenizers import load_tokenizer, model_dir
from helpers.server_util import (
    CHAT,
    COMPLETION,
    Server,
    chunk_text,
    stream_body,
    whole_body,
    whole_text,
)

MODEL = "Qwen/Qwen3-0.6B"
TEXT = "Derendered from the cache: 世界, 한국어 and 👋, exactly."
IM_END, END_OF_TEXT = 151645, 151643


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The server on a cache that holds the model's tokenizer.json, tokenizer_config.json and
    generation_config.json (EOS: both ends of a turn)."""
    root = tmp_path_factory.mktemp("hub")
    folder = model_dir("qwen3")
    files: dict[str, bytes | Path] = {
        "tokenizer.json": folder / "tokenizer.json",
        "tokenizer_config.json": folder / "tokenizer_config.json",
        "generation_config.json": QWEN3_GENERATION_CONFIG.encode(),
    }
    add_snapshot(root / "hub", MODEL, files)
    with pytest.MonkeyPatch.context() as patch:
        for key, value in offline_env(root / "hub").items():
            patch.setenv(key, value)
        patch.chdir(root)
        server = Server(["--tokenizer", MODEL], root / "server.log", log_level="info").start()
    try:
        yield server
    finally:
        server.stop()


def test_the_model_id_is_the_served_name_with_its_configs(served: Server) -> None:
    assert "model 'Qwen/Qwen3-0.6B'" in served.output()
    assert f"eos ids [{IM_END}, {END_OF_TEXT}]" in served.output()
    models = served.call("GET", "/v1/models").json()["data"]
    assert [(m["id"], m["max_model_len"]) for m in models] == [(MODEL, 131072)]


@pytest.mark.parametrize("eos", [IM_END, END_OF_TEXT])
@pytest.mark.parametrize("path", [CHAT, COMPLETION])
def test_whole_and_streamed_derenders_are_exact(served: Server, path: str, eos: int) -> None:
    """Both EOS ids of generation_config.json end a choice without being detokenized (special
    tokens are kept, so an EOS id taken for text would show)."""
    ids = load_tokenizer("qwen3").encode(TEXT, add_special_tokens=False).ids
    body = whole_body(path, [*ids, eos])
    response = body["generate_response"] if path == CHAT else body["generate_responses"][0]
    response["choices"][0]["finish_reason"] = "stop"
    body["chat_request" if path == CHAT else "completion_request"] = {"skip_special_tokens": False}
    answer = served.ok(path, body)
    assert whole_text(path, answer) == TEXT
    assert answer["choices"][0]["finish_reason"] == "stop"
    assert answer["model"] == MODEL
    first = served.ok(path, stream_body(ids[:4], None))
    last = served.ok(path, stream_body(ids[4:], first["stream_state"], finish_reason="length"))
    assert chunk_text(path, first) + chunk_text(path, last) == TEXT


def test_a_cache_with_only_tokenizer_json_serves(tmp_path: Path) -> None:
    """The done-when of the model-id work: nothing but the model's tokenizer.json is cached."""
    add_snapshot(tmp_path / "hub", MODEL, {"tokenizer.json": model_dir("qwen3") / "tokenizer.json"})
    ids = load_tokenizer("qwen3").encode(TEXT, add_special_tokens=False).ids
    with pytest.MonkeyPatch.context() as patch:
        for key, value in offline_env(tmp_path / "hub").items():
            patch.setenv(key, value)
        patch.chdir(tmp_path)
        server = Server(["--tokenizer", MODEL], tmp_path / "server.log", log_level="info").start()
    try:
        assert "eos ids []" in server.output()
        assert whole_text(CHAT, server.ok(CHAT, whole_body(CHAT, ids))) == TEXT
    finally:
        assert server.stop() == 0


def test_a_model_missing_from_the_cache_is_one_clear_line(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", **offline_env(tmp_path / "hub")}
    done = subprocess.run(
        [sys.executable, "-m", "tokstream", "serve", "--tokenizer", MODEL, "--revision", "v9"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        f"tokstream serve: no tokenizer {MODEL} (revision v9): not a local path "
        f"({tmp_path / MODEL}), not in the Hugging Face cache {tmp_path / 'hub'} "
        "(HF_HUB_OFFLINE=1: nothing is downloaded)\n"
    )
