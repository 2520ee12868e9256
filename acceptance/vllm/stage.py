"""Lays out the run directory of the acceptance stage from vLLM's unpacked source distribution.

Usage: ``python acceptance/vllm/stage.py SDIST_TREE RUN_DIR`` (run from the repository root, with
the interpreter that has the tokenizer fixtures' dependencies).

The run directory gets vLLM's derender test files copied byte for byte (their sha256 checked
against the pinned release's, so an edited copy cannot run), the empty ``__init__.py`` files of
their packages, our stand-in ``tests/utils.py``, and one model directory per entry of
``models.py``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

from models import MODELS  # noqa: E402

import fixtures  # noqa: E402

DERENDER = "tests/entrypoints/scale_out/derender"
_EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#: vllm 0.33.0's source distribution: the files the stage runs, with their sha256.
FILES = {
    "tests/__init__.py": _EMPTY,
    "tests/entrypoints/__init__.py": _EMPTY,
    "tests/entrypoints/scale_out/__init__.py": _EMPTY,
    f"{DERENDER}/__init__.py": _EMPTY,
    f"{DERENDER}/utils.py": "dffd9c2b38f3fa2b27d7b2e606e77ce4c1d10b5b9137153022e720c38a1957ab",
    f"{DERENDER}/test_derender.py": (
        "24be8c0f9d8f05c2548fd5ba20db6d66697d17f0c03f22f4032bd813ec0fbd89"
    ),
    f"{DERENDER}/test_derender_stream.py": (
        "8d293a18ae38d1cc7cdd4445fb4c704833445428861b3badb98e50f7d9bd8e45"
    ),
}


def stage(sdist: Path, run: Path) -> None:
    if run.exists():
        shutil.rmtree(run)
    for name, digest in FILES.items():
        data = (sdist / name).read_bytes()
        found = hashlib.sha256(data).hexdigest()
        if found != digest:
            raise SystemExit(f"{name} of the source distribution is not vllm 0.33.0's ({found})")
        target = run / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    shutil.copyfile(HERE / "standins" / "tests_utils.py", run / "tests" / "utils.py")
    for name, model in MODELS.items():
        target = run / name
        shutil.copytree(fixtures.model_dir(model.fixture), target)
        config = {
            "model_type": model.model_type,
            "max_position_embeddings": model.max_position_embeddings,
        }
        (target / "config.json").write_text(json.dumps(config, indent=2) + "\n")


if __name__ == "__main__":
    stage(Path(sys.argv[1]), Path(sys.argv[2]))
