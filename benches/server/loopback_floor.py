"""The floor under a connection a stream: server CPU per request of a server that does no work.

With one request in flight a connection, every chunk pays a read, a write and a wake-up of its
own in the kernel, whatever the server does with it. ``examples/loopback_floor.rs`` is that
server (it answers each read with the same bytes, on mio, the front's event library) and a
native HTTP/1.1 client that keeps N keep-alive connections each with one request in flight.
This script builds it, starts ``tokstream serve`` (qwen3, one worker) and the floor server,
and loads both the same way with one real derender chunk: a chat stream's second chunk, one
id, with the state the server returned for the first (the floor answers with the server's own
answer to it, so both send the same bytes). It reports, per server and connection count, the
answers a second and the server's CPU time per answer, user and system (``/proc/<pid>/stat``),
the median of rounds that alternate the servers' order. Every answer must be a 200, else the
exit status is 1::

    python benches/server/loopback_floor.py                  # 64 and 256 connections, 8 s, 3 rounds
    python benches/server/loopback_floor.py --connections 64 --seconds 4
    python benches/server/loopback_floor.py --quick              # a debug build, 8 connections, 1 s

The client here is not ``loadtest.py``'s: it is native and far lighter, so it keeps the server
busier, and a busy server sleeps less per request. Compare the two servers within a run.
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
from load_support import CLK_TCK, ROOT, Server, free_port, load_tokenizer, make_streams
from support import report

from fixtures import model_dir

SERVERS = ("floor", "tokstream")


def build(release: bool) -> Path:
    """Builds the example; the path of its binary."""
    command = ["cargo", "build", "--locked", "--example", "loopback_floor", "--features", "front"]
    subprocess.run(command + (["--release"] if release else []), cwd=ROOT, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / ("release" if release else "debug") / "examples" / "loopback_floor"


def exchange(port: int, request: bytes) -> bytes:
    """One request on a new connection; the whole answer, head and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        while len(body) < length:
            body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def http_post(path: str, body: bytes) -> bytes:
    return (
        b"POST " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )


def derender_chunk(port: int, tok: Any) -> tuple[bytes, bytes]:
    """The request both servers are loaded with, and the tokstream server's answer to it.

    The first chunk of a chat stream goes first, to get its state; the second chunk carries it.
    The two deltas must begin the stream's decode."""
    stream = make_streams(tok, 1, 64, 0, chunk_ids=1)[0]
    text, state = "", b"null"
    for k in range(2):
        request = http_post(stream.path, stream.heads[k] + state + stream.tails[k])
        answer = exchange(port, request)
        if not answer.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"chunk {k}: {answer[:300]!r}")
        reply = json.loads(answer.partition(b"\r\n\r\n")[2])
        text += "".join(c["delta"]["content"] or "" for c in reply["chunk"]["choices"])
        state = json.dumps(reply["stream_state"], separators=(",", ":")).encode()
    if not stream.target.startswith(text):
        raise RuntimeError(f"the first two deltas {text!r} do not begin the decode")
    return request, answer


def cpu(pids: list[int]) -> tuple[float, float]:
    """User and system CPU seconds of ``pids``, summed."""
    user = system = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        user += int(fields[11]) / CLK_TCK
        system += int(fields[12]) / CLK_TCK
    return user, system


def wait_listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the floor server exited ({proc.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the floor server did not listen")


def measure(binary: Path, conns: list[int], seconds: float, rounds: int) -> list[dict[str, Any]]:
    """Each server at each connection count, ``rounds`` times, the order alternating."""
    tokenizer = str(model_dir("qwen3"))
    server = Server("tokstream", tokenizer, workers=1)
    floor = None
    files = tempfile.mkdtemp(prefix="tokstream-floor-")
    try:
        request, answer = derender_chunk(server.port, load_tokenizer(tokenizer))
        req_file, answer_file = Path(files, "request"), Path(files, "answer")
        req_file.write_bytes(request)
        answer_file.write_bytes(answer)
        floor_port = free_port()
        floor = subprocess.Popen([binary, "serve", f"127.0.0.1:{floor_port}", str(answer_file)])
        wait_listening(floor_port, floor)
        ports = {"floor": floor_port, "tokstream": server.port}
        pids = {"floor": lambda: [floor.pid], "tokstream": server.pids}
        results = []
        for n in conns:
            runs: dict[str, list[dict[str, float]]] = {name: [] for name in SERVERS}
            for r in range(rounds):
                for name in SERVERS if r % 2 == 0 else SERVERS[::-1]:
                    before = cpu(pids[name]())
                    addr = f"127.0.0.1:{ports[name]}"
                    done = subprocess.run(
                        [binary, "load", addr, str(n), req_file, str(seconds)],
                        capture_output=True,
                        text=True,
                        check=True,
                    )
                    after = cpu(pids[name]())
                    got = json.loads(done.stdout)
                    if got["not_ok"] or not got["requests"]:
                        raise RuntimeError(f"{name}, {n} connections: {got}")
                    runs[name].append(
                        {
                            "per_s": got["requests"] / got["seconds"],
                            "user_us": (after[0] - before[0]) / got["requests"] * 1e6,
                            "sys_us": (after[1] - before[1]) / got["requests"] * 1e6,
                        }
                    )
            for name in SERVERS:
                row = {k: statistics.median(run[k] for run in runs[name]) for k in runs[name][0]}
                results.append({"server": name, "connections": n, **row, "rounds": runs[name]})
        return results
    finally:
        if floor is not None:
            floor.kill()
            floor.wait()
        server.stop()
        shutil.rmtree(files, ignore_errors=True)


def markdown(results: list[dict[str, Any]]) -> str:
    lines = [
        "| server | connections, one request in flight each | answers/s | server CPU per answer "
        "(user + system) | answers/s per core |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in results:
        total = r["user_us"] + r["sys_us"]
        lines.append(
            f"| {r['server']} | {r['connections']} | {r['per_s']:,.0f} | {total:.1f} µs "
            f"({r['user_us']:.1f} + {r['sys_us']:.1f}) | {1e6 / total:,.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, nargs="+", help="default: 64 256")
    parser.add_argument("--seconds", type=float, help="per load run (default: 8)")
    parser.add_argument("--rounds", type=int, help="per server and count (default: 3)")
    parser.add_argument("--quick", action="store_true", help="debug build, 8 connections, 1 s")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    binary = build(release=not args.quick)
    conns = args.connections or ([8] if args.quick else [64, 256])
    seconds = args.seconds or (1.0 if args.quick else 8.0)
    rounds = args.rounds or (1 if args.quick else 3)
    start = os.getloadavg()[0]
    try:
        results = measure(binary, conns, seconds, rounds)
    except (RuntimeError, subprocess.CalledProcessError) as e:
        print(f"loopback_floor: {e}", file=sys.stderr)
        return 1
    conditions = f"{seconds:g} s a run, median of {rounds} rounds; every answer a 200"
    report(markdown(results), conditions, results, start, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
