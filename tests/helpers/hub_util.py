"""A Hugging Face hub cache folder laid out on disk, for the model-id tests.

The layout is the one ``huggingface_hub`` writes: ``models--Org--Name/blobs/<sha256>`` holding
each file's bytes, ``snapshots/<commit>/<file>`` a relative symlink to its blob, and
``refs/<branch or tag>`` the commit it points at. ``offline_env`` is the environment a test runs
under: offline, this cache, and an endpoint on a closed loopback port, so that nothing can reach
the network even by mistake.
"""

from __future__ import annotations

import hashlib
import os
import socket
from collections.abc import Mapping
from pathlib import Path

#: Qwen3-0.6B's generation_config.json names both ends of a turn as EOS.
QWEN3_GENERATION_CONFIG = (
    '{"bos_token_id": 151643, "do_sample": true, "eos_token_id": [151645, 151643], '
    '"pad_token_id": 151643, "temperature": 0.6, "top_k": 20, "top_p": 0.95}'
)


def commit_of(label: str) -> str:
    """A 40-hex commit id derived from ``label`` (stable across runs)."""
    return hashlib.sha1(label.encode()).hexdigest()


def add_snapshot(
    cache: Path,
    model_id: str,
    files: Mapping[str, bytes | Path],
    *,
    refs: tuple[str, ...] = ("main",),
    commit: str | None = None,
) -> Path:
    """Adds one snapshot of ``model_id`` to the cache; returns its snapshot folder.

    ``files`` maps a file name to its bytes or to a file to copy; every name in ``refs``
    (branches or tags) points at the snapshot's commit.
    """
    repo = cache / ("models--" + model_id.replace("/", "--"))
    commit = commit or commit_of(f"{model_id}:{','.join(sorted(files))}:{refs}")
    snapshot = repo / "snapshots" / commit
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        data = content.read_bytes() if isinstance(content, Path) else content
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.write_bytes(data)
        link = snapshot / name
        link.unlink(missing_ok=True)
        link.symlink_to(os.path.relpath(blob, snapshot))
    for ref in refs:
        (repo / "refs" / ref).parent.mkdir(parents=True, exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
    return snapshot


def closed_loopback_url() -> str:
    """An http URL on 127.0.0.1 where nothing listens (connections are refused at once)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def offline_env(cache: Path, *, offline: bool = True) -> dict[str, str]:
    """The variables that point ``huggingface_hub`` at ``cache`` and away from the network."""
    env = {
        "HF_HUB_CACHE": str(cache),
        "HF_HOME": str(cache.parent / "hf-home"),
        "HF_ENDPOINT": closed_loopback_url(),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "HF_HUB_OFFLINE": "1" if offline else "0",
    }
    return env
