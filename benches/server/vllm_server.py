"""Server CPU per derender chunk: ``tokstream serve`` against vLLM 0.33.0's own derender server,
over HTTP, loaded the same way in one run, the servers taking turns.

The peer is ``acceptance/vllm/derender_server.py``: vLLM's derender router, exception handlers
and serving objects as its server runs them (uvicorn, one process, uvloop, httptools), from the
acceptance virtualenv that ``.ci/vllm-acceptance`` makes (``--vllm-python``). Both serve the same
tokenizer fixture (qwen3), one process each (``tokstream serve --workers 1``), no access log. Each
is loaded with its own answer's state: a chat stream's first chunk (one id) goes first, and the load
is the stream's second chunk (one id) with the state that server returned for the first, as
``benches/server/loopback_floor.py`` builds it. Before timing, the two servers' second chunks must
carry the same delta. The client is h2load (Debian's ``nghttp2-client``) over HTTP/1.1: 64
keep-alive connections with one request in flight each, ``--requests`` answers a run for tokstream
and ``--vllm-requests`` for vLLM (it answers far fewer a second). Server CPU is user + system time
of the server's processes over the run (``/proc/<pid>/stat``), per answer; a round runs both servers
once; the figures are medians over rounds, and the ratio is the median of the rounds' own ratios.
Every answer must be a 200, else the exit status is 1::

    python benches/server/vllm_server.py                      # 5 rounds
    python benches/server/vllm_server.py --rounds 1 --requests 20000 --vllm-requests 2000

Run it with an interpreter that has tokstream installed (a release build); the repository's
own ``python/`` is not on the server's path.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from front_cpu import Target, h2load, machine_busy, start_tokstream
from load_support import MODEL, free_port, load_tokenizer
from loopback_floor import cpu, derender_chunk
from support import report

from fixtures import model_dir

ROOT = Path(__file__).resolve().parents[2]
ACCEPTANCE = ROOT / "acceptance" / "vllm"
VLLM_PYTHON = ROOT / "target" / "vllm-acceptance" / "venv" / "bin" / "python"


def start_vllm(python: str, fixture: str) -> Target:
    """vLLM's derender server (``acceptance/vllm/derender_server.py``) on ``fixture``."""
    port = free_port()
    command = [python, str(ACCEPTANCE / "derender_server.py"), "--port", str(port)]
    command += ["--fixture", fixture, "--served-model-name", MODEL]
    path = [ACCEPTANCE / "standins", ACCEPTANCE, ROOT]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, path)), "HF_HUB_OFFLINE": "1"}
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    target = Target("vLLM", port, proc, log)
    deadline = time.monotonic() + 180
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return target
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                text = log.read().decode(errors="replace")[-3000:]
                target.stop()
                raise RuntimeError(f"vLLM's derender server did not start:\n{text}") from None
            time.sleep(0.2)


def delta(answer: bytes) -> str:
    """The text delta of a derender chunk's answer (HTTP/1.1 bytes)."""
    reply = json.loads(answer.partition(b"\r\n\r\n")[2])
    return "".join(c["delta"].get("content") or "" for c in reply["chunk"]["choices"])


def one_run(target: Target, path: str, body: Path, requests: int) -> dict[str, float]:
    before, t0, busy0 = cpu(target.pids()), time.monotonic(), machine_busy()
    got = h2load(f"http://127.0.0.1:{target.port}{path}", body, 64, 1, requests, True)
    after, wall = cpu(target.pids()), time.monotonic() - t0
    if got["not_ok"] or not got["requests"]:
        raise RuntimeError(f"{target.name}: {got}")
    n = got["requests"]
    server = (after[0] - before[0]) + (after[1] - before[1])
    return {
        "per_s": n / got["seconds"],
        "user_us": (after[0] - before[0]) / n * 1e6,
        "sys_us": (after[1] - before[1]) / n * 1e6,
        "cpu_us": server / n * 1e6,
        "machine_cores": (machine_busy() - busy0) / wall,
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    workdir = tempfile.mkdtemp(prefix="tokstream-vllm-server-")
    targets: dict[str, Target] = {}
    try:
        tokenizer = str(model_dir(args.tokenizer))
        targets["tokstream"] = start_tokstream("tokstream", args.python, tokenizer, workdir)
        targets["vLLM"] = start_vllm(args.vllm_python, args.tokenizer)
        tok = load_tokenizer(tokenizer)
        bodies: dict[str, Path] = {}
        deltas: dict[str, str] = {}
        path = ""
        for name, target in targets.items():
            request, answer = derender_chunk(target.port, tok)
            head, _, body = request.partition(b"\r\n\r\n")
            path = head.split(b" ", 2)[1].decode()
            bodies[name] = Path(workdir, f"{name}.json")
            bodies[name].write_bytes(body)
            deltas[name] = delta(answer)
        if deltas["tokstream"] != deltas["vLLM"]:
            raise RuntimeError(f"the second chunks differ: {deltas}")
        counts = {"tokstream": args.requests, "vLLM": args.vllm_requests}
        for name, target in targets.items():  # warm-up, not counted
            one_run(target, path, bodies[name], max(counts[name] // 10, 500))
        rounds = []
        for k in range(args.rounds):
            load = os.getloadavg()[0]
            got = {n: one_run(t, path, bodies[n], counts[n]) for n, t in targets.items()}
            print(
                f"round {k + 1}: load {load:.2f}: "
                + ", ".join(f"{n} {r['cpu_us']:.1f} us" for n, r in got.items()),
                file=sys.stderr,
                flush=True,
            )
            rounds.append({"load": load, "runs": got})
        return {"delta": deltas["tokstream"], "rounds": rounds}
    finally:
        for t in targets.values():
            t.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def markdown(got: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    rows = []
    lines = [
        "| server | answers/s | server CPU per chunk (user + system) |",
        "|---|---:|---:|",
    ]
    for name in ("tokstream", "vLLM"):
        runs = [r["runs"][name] for r in got["rounds"]]
        row = {
            "server": name,
            **{k: statistics.median(r[k] for r in runs) for k in runs[0]},
        }
        rows.append(row)
        lines.append(
            f"| {name} | {row['per_s']:,.0f} | {row['cpu_us']:.2f} µs "
            f"({row['user_us']:.2f} + {row['sys_us']:.2f}) |"
        )
    ratios = [r["runs"]["vLLM"]["cpu_us"] / r["runs"]["tokstream"]["cpu_us"] for r in got["rounds"]]
    lines += [
        "",
        "| ratio (median of the rounds' ratios) | median | range |",
        "|---|---:|---:|",
        f"| vLLM / tokstream, server CPU per chunk | {statistics.median(ratios):.1f} | "
        f"{min(ratios):.1f} to {max(ratios):.1f} |",
    ]
    rows.append({"ratio_vllm_over_tokstream": ratios})
    return "\n".join(lines), rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable, help="tokstream's interpreter")
    parser.add_argument(
        "--vllm-python", default=str(VLLM_PYTHON), help="the acceptance virtualenv's interpreter"
    )
    parser.add_argument("--tokenizer", default="qwen3", help="a tokenizer fixture (qwen3)")
    parser.add_argument("--requests", type=int, default=100_000, help="per tokstream run")
    parser.add_argument("--vllm-requests", type=int, default=10_000, help="per vLLM run")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    if shutil.which("h2load") is None:
        parser.error("h2load is not installed (Debian: nghttp2-client)")
    if not Path(args.vllm_python).exists():
        parser.error(f"no {args.vllm_python}: run .ci/vllm-acceptance first, or --vllm-python")
    start = os.getloadavg()[0]
    try:
        got = measure(args)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        print(f"vllm_server: {e}", file=sys.stderr)
        return 1
    table, rows = markdown(got)
    loads = [r["load"] for r in got["rounds"]]
    conditions = (
        f"h2load --h1, 64 connections x 1, {args.requests:,} answers a tokstream run and "
        f"{args.vllm_requests:,} a vLLM run, median of {args.rounds} rounds; load at the rounds' "
        f"starts {min(loads):.2f} to {max(loads):.2f}; no parsers; the measured chunk's delta, "
        f"the same from both: {got['delta']!r}"
    )
    report(table, conditions, rows, start, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
