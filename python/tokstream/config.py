"""Model configuration: what a user names, resolved to local files, and what those files say.

The one place that turns ``--tokenizer`` (or ``Detokenizer.from_pretrained``'s argument) into a
local ``tokenizer.json``, and that reads a model's ``tokenizer_config.json`` and
``generation_config.json``. A name is, in this order:

- a ``tokenizer.json`` file, or a directory holding one (its configs are the files beside it);
- a Hugging Face model id (``Qwen/Qwen3-8B``, with an optional revision), resolved through
  ``huggingface_hub`` into its cache: only the cache is read when ``HF_HUB_OFFLINE=1``, else the
  tokenizer and config files are downloaded (``pip install "tokstream[server]"`` brings it).

Nothing else of the model (weights, ``config.json``) is fetched.

>>> from tokstream import config
>>> config.resolve("Qwen/Qwen3-0.6B").tokenizer  # doctest: +SKIP
PosixPath('.../huggingface/hub/models--Qwen--Qwen3-0.6B/snapshots/.../tokenizer.json')
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import TokenizerLoadError

__all__ = ["MODEL_FILES", "ModelConfig", "Resolved", "hub_cache", "hub_offline", "resolve"]

TOKENIZER_FILE = "tokenizer.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
GENERATION_CONFIG_FILE = "generation_config.json"
MODEL_FILES = (TOKENIZER_FILE, TOKENIZER_CONFIG_FILE, GENERATION_CONFIG_FILE)
"""The files of a model repository that tokstream reads (and the only ones it downloads)."""

# A model id as the Hub spells them: an optional owner, then a name; letters, digits, "-_.".
_REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")
_TRUE = frozenset({"1", "ON", "YES", "TRUE"})  # huggingface_hub's reading of a boolean variable
_MAX_SENSIBLE_LEN = 1 << 24  # tokenizer configs say 1e30 and the like for "no limit"


@dataclass(frozen=True)
class Resolved:
    """Where a name led.

    Attributes:
        tokenizer: The local ``tokenizer.json``; its configs are the files beside it.
        model_id: The Hugging Face model id, when the name was one (else ``None``).
        revision: The revision asked for, when the name was a model id.
    """

    tokenizer: Path
    model_id: str | None = None
    revision: str | None = None

    @property
    def directory(self) -> Path:
        """The folder holding the tokenizer and its configs."""
        return self.tokenizer.parent


def hub_offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) forbids downloads, read now."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.upper() in _TRUE


def hub_cache() -> Path:
    """The Hugging Face hub cache folder: ``HF_HUB_CACHE``, else ``$HF_HOME/hub``, read now.

    Falls back to ``huggingface_hub``'s own default (``~/.cache/huggingface/hub``).
    """
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    try:
        from huggingface_hub import constants
    except ModuleNotFoundError:
        return Path.home() / ".cache" / "huggingface" / "hub"
    return Path(constants.HF_HUB_CACHE)


def resolve(name: str | os.PathLike[str], revision: str | None = None) -> Resolved:
    """Resolves a tokenizer name to a local ``tokenizer.json``.

    Args:
        name: A ``tokenizer.json``, a directory holding one, or a Hugging Face model id.
        revision: A branch, tag or commit of the model id (default ``main``).

    Returns:
        Where the tokenizer is, and the model id it came from if any.

    Raises:
        TokenizerLoadError: Nothing usable was found; the one-line message says where it
            looked (the path, and the hub cache folder with the offline state).
    """
    path = Path(name).expanduser()
    if path.exists():
        if revision is not None:
            raise TokenizerLoadError(
                f"a revision ({revision}) applies to Hugging Face model ids, not to the local "
                f"path {path}"
            )
        file = path / TOKENIZER_FILE if path.is_dir() else path
        if not file.is_file():
            message = f"no {TOKENIZER_FILE} in the directory {path.resolve()}"
            if (path / f"{TOKENIZER_FILE}.xz").is_file():
                message += f" (it holds {TOKENIZER_FILE}.xz: decompress it with `xz -dk`)"
            raise TokenizerLoadError(message)
        return Resolved(file)
    text = os.fspath(name)
    if not _REPO_ID.fullmatch(text) or ".." in text or "--" in text:
        raise TokenizerLoadError(
            f"no tokenizer at {path.resolve()}: no such file or directory "
            "(and not a Hugging Face model id)"
        )
    return _from_hub(text, revision, path)


def _from_hub(model_id: str, revision: str | None, path: Path) -> Resolved:
    cache = hub_cache()
    offline = hub_offline()
    where = f"no tokenizer {model_id} (revision {revision or 'main'})"
    state = " (HF_HUB_OFFLINE=1: nothing is downloaded)" if offline else ""
    try:
        from huggingface_hub import snapshot_download
    except ModuleNotFoundError:
        raise TokenizerLoadError(
            f"{where}: not a local path ({path.resolve()}), and a Hugging Face model id needs "
            'huggingface_hub: pip install "tokstream[server]"'
        ) from None
    try:
        folder = snapshot_download(
            model_id,
            revision=revision,
            cache_dir=cache,
            local_files_only=offline,
            allow_patterns=list(MODEL_FILES),
        )
    except (OSError, ValueError) as e:
        # huggingface_hub's errors (not found, offline, HTTP, a bad id) are OSError or ValueError.
        looked = (
            f"{where}: not a local path ({path.resolve()}), not in the Hugging Face cache {cache}"
        )
        if offline:
            raise TokenizerLoadError(looked + state) from None
        raise TokenizerLoadError(f"{looked}, and the download failed: {_first_line(e)}") from None
    file = Path(folder) / TOKENIZER_FILE
    if not file.is_file():
        raise TokenizerLoadError(
            f"{where}: the Hugging Face cache {cache} holds the model ({folder}) but not its "
            f"{TOKENIZER_FILE}{state}"
        )
    return Resolved(file, model_id, revision)


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:300]


def _object(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


@dataclass(frozen=True)
class ModelConfig:
    """A model's ``tokenizer_config.json`` and ``generation_config.json``, parsed.

    A file that is missing, not JSON or not a JSON object counts as absent.

    >>> c = ModelConfig.from_texts('{"eos_token": "<|im_end|>"}', '{"eos_token_id": [1, 2]}')
    >>> c.eos_token_ids(lambda token: 7)
    (1, 2)
    """

    tokenizer_config: Mapping[str, Any] | None = None
    generation_config: Mapping[str, Any] | None = None

    @classmethod
    def from_texts(cls, tokenizer_config: str | None, generation_config: str | None) -> ModelConfig:
        """Parses the two files' texts (``None`` for a missing file)."""
        return cls(_object(tokenizer_config), _object(generation_config))

    @classmethod
    def beside(cls, tokenizer: str | os.PathLike[str]) -> ModelConfig:
        """Reads the configs beside a ``tokenizer.json`` (or in the directory holding one)."""
        path = Path(tokenizer)
        folder = path if path.is_dir() else path.parent
        return cls.from_texts(
            _read(folder / TOKENIZER_CONFIG_FILE), _read(folder / GENERATION_CONFIG_FILE)
        )

    def eos_token_ids(self, token_to_id: Callable[[str], int | None]) -> tuple[int, ...]:
        """The end-of-sequence ids, as vLLM finds them.

        ``generation_config.json``'s ``eos_token_id`` (one id or a list) first, else the id of
        ``tokenizer_config.json``'s ``eos_token`` (a string or an added-token object) through
        ``token_to_id``; empty when neither names one.
        """
        if self.generation_config is not None:
            ids = _ids(self.generation_config.get("eos_token_id"))
            if ids:
                return ids
        if self.tokenizer_config is not None:
            token = self.tokenizer_config.get("eos_token")
            if isinstance(token, dict):
                token = token.get("content")
            if isinstance(token, str):
                found = token_to_id(token)
                if found is not None:
                    return (found,)
        return ()

    @property
    def response_template(self) -> str | None:
        """``tokenizer_config.json``'s ``response_template`` (as JSON text), when it has one.

        It describes how the model's output maps to a chat message (transformers' "Response
        Parsing"); ``--reasoning-parser auto`` and ``--tool-call-parser auto`` parse with it.
        """
        if self.tokenizer_config is None:
            return None
        value = self.tokenizer_config.get("response_template")
        return json.dumps(value) if isinstance(value, dict) else None

    @property
    def model_max_length(self) -> int | None:
        """``tokenizer_config.json``'s ``model_max_length``, when it is a sensible bound."""
        if self.tokenizer_config is None:
            return None
        value = self.tokenizer_config.get("model_max_length")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return int(value) if 0 < value <= _MAX_SENSIBLE_LEN else None


def _ids(value: object) -> tuple[int, ...]:
    if isinstance(value, bool):
        return ()
    if isinstance(value, int):
        return (value,) if value >= 0 else ()
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, int) and not isinstance(v, bool) and v >= 0)
    return ()
