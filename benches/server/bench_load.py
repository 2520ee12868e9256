"""The load test's quick mode, once, with its checks: the servers over HTTP, every text exact.

``benches/server/loadtest.py --quick`` starts ``tokstream serve`` and the plain-Python reference
server (``benches/server/reference_server.py``) as real processes, replays 8 concurrent streams of
64 ids against each over loopback, and exits non-zero unless every request answered 200 and every
stream's text equals the one-shot decode; a second run takes ``tokstream serve`` over a Unix domain
socket (``--transports unix``). This runs it as a user would and reads its JSON. It takes a few
seconds; the figures of a quick run are too small to quote (see ``BENCHMARKS.md`` for the full run).
It has no ``benchmark`` fixture, so ``--benchmark-only`` skips it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import tokenizer_path

HERE = Path(__file__).resolve().parent


def quick(tmp_path: Path, *flags: str) -> list[dict[str, Any]]:
    """Runs ``loadtest.py --quick`` with ``flags``; its runs, once it exited 0."""
    tokenizer = tokenizer_path("qwen3").parent
    out = tmp_path / "load.json"
    command = [sys.executable, str(HERE / "loadtest.py"), "--quick", "--tokenizer", str(tokenizer)]
    done = subprocess.run(
        [*command, *flags, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=170,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    runs: list[dict[str, Any]] = json.loads(out.read_text())["runs"]
    for run in runs:
        assert run["errors"] == 0 and not run["problems"], run
        assert run["exact_streams"] == run["streams"] == 8, run
        assert run["tokens"] == 8 * 64 and run["chunks"] > run["streams"] * 64 / 4, run
    return runs


@pytest.mark.timeout(180)
def test_load_quick(tmp_path: Path) -> None:
    """Quick mode: 8 streams x 64 ids per server (tokstream and the reference), no error, every
    text exact."""
    runs = quick(tmp_path, "--servers", "tokstream", "reference")
    assert {r["server"] for r in runs} == {"tokstream", "reference"}


@pytest.mark.timeout(180)
def test_load_quick_over_unix_sockets(tmp_path: Path) -> None:
    """Quick mode over a Unix domain socket (``tokstream serve --uds``): no error, every text
    exact."""
    runs = quick(tmp_path, "--servers", "tokstream", "--transports", "unix")
    assert {(r["server"], r["transport"]) for r in runs} == {("tokstream", "unix")}


@pytest.mark.timeout(180)
def test_load_quick_pipelined(tmp_path: Path) -> None:
    """Quick mode with four streams to a connection, each round's chunks pipelined in one write:
    no error, every text exact."""
    runs = quick(tmp_path, "--servers", "tokstream", "--per-connection", "4")
    assert {(r["server"], r["per_connection"]) for r in runs} == {("tokstream", 4)}


def test_loopback_floor_quick(tmp_path: Path) -> None:
    """``loopback_floor.py --quick`` as a user runs it: the floor server and ``tokstream serve``
    loaded with one real derender chunk, every answer a 200 (it exits non-zero otherwise), and
    each server's CPU per answer reported."""
    out = tmp_path / "floor.json"
    done = subprocess.run(
        [sys.executable, str(HERE / "loopback_floor.py"), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    runs = json.loads(out.read_text())["runs"]
    assert [(r["server"], r["connections"]) for r in runs] == [("floor", 8), ("tokstream", 8)]
    for r in runs:
        assert r["per_s"] > 0 and r["user_us"] + r["sys_us"] > 0, r
    assert "| tokstream | 8 |" in done.stdout, done.stdout


def test_front_cpu_quick(tmp_path: Path) -> None:
    """``front_cpu.py --quick``: the front and the two floors loaded with one real derender chunk
    by the native client, every answer a 200 (it exits non-zero otherwise), each server's CPU
    per answer reported. Its ratios are not checked: a quick run's timings mean nothing."""
    out = tmp_path / "front_cpu.json"
    done = subprocess.run(
        [sys.executable, str(HERE / "front_cpu.py"), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    runs = json.loads(out.read_text())["runs"]
    assert {r["server"] for r in runs} >= {"new front", "hyper floor", "mio floor"}
    for r in runs:
        assert r["per_s"] > 0 and r["cpu_us"] > 0, r


def test_stress_phases_answer_their_probes(tmp_path: Path) -> None:
    """``stress.py`` with phases of 3 s: under every abuse case ``/health`` and ``/metrics``
    answer every probe without an error and the server stays up. The p99 target is the bench's
    to report (BENCHMARKS.md); a timing is not checked here, so the exit status is not either."""
    out = tmp_path / "stress.json"
    done = subprocess.run(
        [sys.executable, str(HERE / "stress.py"), "--seconds", "3", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert out.exists(), done.stdout[-4000:] + done.stderr[-4000:]
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 8, [r["phase"] for r in rows]
    for r in rows:
        assert r["health_probes"] > 0 and r["metrics_probes"] > 0, r
        assert r["health_errors"] == 0 and r["metrics_errors"] == 0, r
