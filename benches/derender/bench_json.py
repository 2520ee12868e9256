"""The JSON readers' comparison (``json_readers.py``) once, in its quick mode, with its checks.

Every reader must take each of the three bodies and ``handle_json`` must answer 200; the
figures of a quick run (a debug build, one round of 5 ms) are not quoted. It has no
``benchmark`` fixture, so ``--benchmark-only`` skips it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_every_reader_takes_every_body(tmp_path: Path) -> None:
    out = tmp_path / "json_readers.json"
    command = [sys.executable, str(HERE / "json_readers.py"), "--quick", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    runs = json.loads(out.read_text())["runs"]
    assert [r["body"] for r in runs] == [
        "stream chunk, 1 id, with state",
        "stream chunk, 16 ids, logprobs (5), with state",
        "whole response, 4,096 ids",
    ]
    for r in runs:
        assert all(r[k]["took"] for k in ("handle_json", "hand", "serde_json", "sonic-rs typed"))
        assert all(r[k]["ns"] > 0 for k in ("handle_json", "hand", "serde_json"))
