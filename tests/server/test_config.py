"""Model configuration: names resolved to local files (paths and Hugging Face model ids), and
what a model's configs say (EOS ids, ``model_max_length``).

Model ids resolve from a hub cache folder laid out on disk (``hub_util``) with
``HF_HUB_OFFLINE=1``; the one test that lets ``huggingface_hub`` try the network runs in a child
process whose endpoint is a closed loopback port.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.hub_util import QWEN3_GENERATION_CONFIG, add_snapshot, commit_of, offline_env
from helpers.real_tokenizers import load_tokenizer, model_dir
from helpers.stream_util import import_tokstream

from fixtures import SOURCES

tokstream = import_tokstream()
from tokstream import config  # noqa: E402
from tokstream.config import ModelConfig  # noqa: E402

MODEL = "Qwen/Qwen3-0.6B"
TEXT = "Hello, 世界! Streaming 👋 never splits a character."


def qwen_files(*, generation: bool = True) -> dict[str, bytes | Path]:
    folder = model_dir("qwen3")
    files: dict[str, bytes | Path] = {
        "tokenizer.json": folder / "tokenizer.json",
        "tokenizer_config.json": folder / "tokenizer_config.json",
    }
    if generation:
        files["generation_config.json"] = QWEN3_GENERATION_CONFIG.encode()
    return files


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty hub cache, with this process offline and pointed at it."""
    folder = tmp_path / "hub"
    folder.mkdir()
    for key, value in offline_env(folder).items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)  # so that "Qwen/Qwen3-0.6B" is not also a path by chance
    return folder


def test_a_model_id_loads_from_the_cache_with_its_configs(cache: Path) -> None:
    """The snapshot ``refs/main`` names is found; its configs come along, EOS from
    generation_config.json first."""
    snapshot = add_snapshot(cache, MODEL, qwen_files())
    found = config.resolve(MODEL)
    assert found.tokenizer == snapshot / "tokenizer.json"
    assert (found.model_id, found.revision) == (MODEL, None)
    d = tokstream.Detokenizer.from_pretrained(MODEL)
    ids = load_tokenizer("qwen3").encode(TEXT, add_special_tokens=False).ids
    stream = d.stream()
    assert "".join(stream.step(i) for i in ids) + stream.finish() == TEXT
    assert d.generation_config == QWEN3_GENERATION_CONFIG
    raw = (model_dir("qwen3") / "tokenizer_config.json").read_bytes()
    assert d.tokenizer_config == raw.decode()
    assert tokstream.Derenderer(d).eos_token_ids == (151645, 151643)


def test_without_generation_config_eos_is_the_tokenizer_configs(cache: Path) -> None:
    add_snapshot(cache, MODEL, qwen_files(generation=False))
    d = tokstream.Detokenizer.from_pretrained(MODEL)
    assert d.generation_config is None
    assert tokstream.Derenderer(d).eos_token_ids == (d.token_to_id("<|im_end|>"),) == (151645,)


def test_revisions_pick_their_snapshot(cache: Path) -> None:
    """A branch or tag through its ref, a commit id directly; main stays main."""
    main = add_snapshot(cache, MODEL, qwen_files(), refs=("main",))
    tagged = add_snapshot(cache, MODEL, qwen_files(generation=False), refs=("v1",))
    pinned = add_snapshot(cache, MODEL, qwen_files(), refs=(), commit=commit_of("pinned"))
    assert config.resolve(MODEL).directory == main
    assert config.resolve(MODEL, "v1").directory == tagged
    assert config.resolve(MODEL, commit_of("pinned")).directory == pinned
    assert tokstream.Detokenizer.from_pretrained(MODEL, revision="v1").generation_config is None
    with pytest.raises(tokstream.TokenizerLoadError, match=r"revision v2\)"):
        config.resolve(MODEL, "v2")


def test_a_missing_model_says_where_it_looked_in_one_line(cache: Path) -> None:
    with pytest.raises(tokstream.TokenizerLoadError) as raised:
        tokstream.Detokenizer.from_pretrained("Org/Missing-Model")
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("no tokenizer Org/Missing-Model (revision main): ")
    assert str(cache) in message
    assert str(cache.parent / "Org" / "Missing-Model") in message
    assert "HF_HUB_OFFLINE=1" in message


def test_a_cached_model_without_tokenizer_json_is_refused(cache: Path) -> None:
    add_snapshot(cache, MODEL, {"tokenizer_config.json": b"{}"})
    with pytest.raises(tokstream.TokenizerLoadError, match=r"but not its tokenizer\.json"):
        config.resolve(MODEL)


def test_local_paths_win_and_take_no_revision(cache: Path) -> None:
    folder = model_dir("qwen3")
    assert config.resolve(folder) == config.Resolved(folder / "tokenizer.json")
    assert config.resolve(str(folder / "tokenizer.json")).model_id is None
    with pytest.raises(tokstream.TokenizerLoadError, match="not to the local path"):
        config.resolve(folder, "main")
    empty = cache.parent / "empty"
    empty.mkdir()
    with pytest.raises(tokstream.TokenizerLoadError, match=r"no tokenizer\.json in the directory"):
        tokstream.Detokenizer.from_pretrained(empty)
    # The fixtures' folders hold the file compressed: the error says so.
    with pytest.raises(tokstream.TokenizerLoadError, match=r"tokenizer\.json\.xz: decompress"):
        config.resolve(SOURCES / "qwen3")
    # Not a path, and not a model id either: only the path is named.
    with pytest.raises(tokstream.TokenizerLoadError, match="no such file or directory") as raised:
        config.resolve("./nowhere/tokenizer.json")
    assert str(cache.parent / "nowhere" / "tokenizer.json") in str(raised.value)


def test_the_cache_folder_and_offline_state_are_read_at_call_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    assert config.hub_cache() == tmp_path / "home" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "elsewhere"))
    assert config.hub_cache() == tmp_path / "elsewhere"
    for value, offline in (("1", True), ("yes", True), ("TRUE", True), ("0", False), ("", False)):
        monkeypatch.setenv("HF_HUB_OFFLINE", value)
        monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
        assert config.hub_offline() is offline, value


def test_online_an_unreachable_hub_falls_back_to_the_cache(tmp_path: Path) -> None:
    """Not offline: huggingface_hub tries its endpoint (here a closed loopback port), then
    serves the cached snapshot; a model not cached fails with the hub's reason, in one line."""
    cache = tmp_path / "hub"
    snapshot = add_snapshot(cache, MODEL, qwen_files())
    script = (
        "import sys\n"
        "from tokstream import config, TokenizerLoadError\n"
        "print(config.resolve(sys.argv[1]).tokenizer)\n"
        "try:\n"
        "    config.resolve('Org/Missing-Model')\n"
        "except TokenizerLoadError as e:\n"
        "    print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, MODEL],
        env={**_base_env(), **offline_env(cache, offline=False)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found, missing = done.stdout.splitlines()
    assert Path(found) == snapshot / "tokenizer.json"
    assert missing.startswith("no tokenizer Org/Missing-Model (revision main): not a local path")
    assert f"not in the Hugging Face cache {cache}, and the download failed: " in missing


def _base_env() -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "SYSTEMROOT", "VIRTUAL_ENV")
    return {k: v for k, v in os.environ.items() if k in keep or k.startswith("PYTHON")}


def test_eos_ids_generation_config_first() -> None:
    def ids(token: str) -> int | None:
        return {"</s>": 2, "<eos>": 7}.get(token)

    both = ModelConfig.from_texts('{"eos_token": "</s>"}', '{"eos_token_id": [5, 6]}')
    assert both.eos_token_ids(ids) == (5, 6)
    assert ModelConfig.from_texts(None, '{"eos_token_id": 9}').eos_token_ids(ids) == (9,)
    # An empty or unusable generation config gives way to the tokenizer config.
    for generation in ('{"eos_token_id": []}', '{"eos_token_id": null}', "[1]", "not json", None):
        cfg = ModelConfig.from_texts('{"eos_token": {"content": "<eos>"}}', generation)
        assert cfg.eos_token_ids(ids) == (7,), generation
    assert ModelConfig.from_texts('{"eos_token": "<unknown>"}', None).eos_token_ids(ids) == ()
    assert (
        ModelConfig.from_texts('{"eos_token": 3}', '{"eos_token_id": true}').eos_token_ids(ids)
        == ()
    )
    mixed = ModelConfig.from_texts(None, '{"eos_token_id": [1, -1, true, "x", 4]}')
    assert mixed.eos_token_ids(ids) == (1, 4)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(131072, 131072), (2048.0, 2048), (1e30, None), (0, None), (-5, None), (True, None),
     ("4096", None), (None, None)],
)  # fmt: skip
def test_model_max_length_only_when_sensible(value: object, expected: int | None) -> None:
    cfg = ModelConfig.from_texts(json.dumps({"model_max_length": value}), None)
    assert cfg.model_max_length == expected


def test_configs_beside_a_file_or_in_a_directory(tmp_path: Path) -> None:
    (tmp_path / "tokenizer_config.json").write_text('{"model_max_length": 512}')
    (tmp_path / "generation_config.json").write_text('{"eos_token_id": 1}')
    for where in (tmp_path, tmp_path / "tokenizer.json"):
        cfg = ModelConfig.beside(where)
        assert cfg.model_max_length == 512
        assert cfg.generation_config == {"eos_token_id": 1}
    assert ModelConfig.beside(tmp_path / "none" / "tokenizer.json") == ModelConfig()
