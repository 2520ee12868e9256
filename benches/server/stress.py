"""Stress bench of the server's limits: ``/health``, ``/metrics`` and RSS while clients misbehave.

Starts ``tokstream serve`` (one worker, qwen3, default limits unless a phase says otherwise) as
a real process, from ``--python`` (default: this interpreter), and runs phases of ``--seconds``
each. While each runs, a separate process GETs ``/health`` and ``/metrics`` in turn, every
10 ms, each on a new connection, and a thread samples the server's RSS (``/proc/<pid>/status``)
and open descriptors every 50 ms. The phases:

- ``idle``: nothing else, the baseline;
- ``idle-connections``: ``--idle`` connections held open (1,000 by default): a third send
  nothing, a third send their headers a byte a second (slowloris), a third send a body a byte a
  second. The server closes the first two kinds at its header timeout and the client opens them
  again, so the count stays up the whole phase; a body that trickles in is not idle, and stays;
- ``big-headers``: ``--flooders`` clients (4) each send 10 MB header values back to back, read
  the answer (431) and start again;
- ``stop-strings``: 2 clients posting 1 MB bodies with 64 stop strings of 4 KiB each, back to
  back (a derender completion body);
- ``pipeline-unread``: ``--unread`` connections (60) pipeline ``GET /health`` and never read
  (the server must drop their answers after ``--send-timeout`` and close; the client then
  opens them again);
- ``pipeline-read``: one connection pipelines ``GET /health`` and reads the answers as fast as
  it can;
- ``over-cap``: a server with ``--max-connections`` ``--cap`` (256), and 1.5 times as many
  connections each holding a partial head (a byte a second after the request line);
- ``over-fd-limit``: a server started under an open-file limit of ``--nofile`` (1,024, soft and
  hard), and 1.5 times as many connections each holding a partial head.

Each phase also reads the server's refusal counters (``tokstream_errors_total``) before and
after. The issue's targets: ``/health`` and ``/metrics`` p99 under 50 ms and RSS growth under
50 MB in every phase. The exit status is 1 when a target is missed or a probe fails::

    python benches/server/stress.py                     # 8 phases of 20 s, about 4 minutes
    python benches/server/stress.py --seconds 10 --json .benchmarks/stress.json
    python benches/server/stress.py --phases idle pipeline-read --python VENV/bin/python

Every client loop ends at its phase's end and opens at most ``MAX_OPENS`` connections a slot;
everything runs over loopback. It is not part of the pytest benches.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import re
import resource
import select
import socket
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from front_cpu import Target, start_tokstream
from load_support import MODEL, asyncio_run, fmt_ms, load_tokenizer, percentile

from fixtures import model_dir

PHASES = (
    "idle",
    "idle-connections",
    "big-headers",
    "stop-strings",
    "pipeline-unread",
    "pipeline-read",
    "over-cap",
    "over-fd-limit",
)
#: Phases that need a server of their own (its flags and open-file limit are set per run).
OWN_SERVER = ("over-cap", "over-fd-limit")
HEALTH_TARGET_MS = 50.0
RSS_TARGET_MB = 50.0
HEADER_BYTES = 10 * 1000 * 1000
#: Most connections one client slot opens in a phase (each loop also ends with its phase).
MAX_OPENS = 20_000
PROBE_TIMEOUT = 5.0
_HEALTH = b"GET /health HTTP/1.1\r\nHost: stress\r\n\r\n"
_SLOW_HEAD = b"GET /health HTTP/1.1\r\nHost: stress\r\n"
_SLOW_BODY_HEAD = (
    b"POST /v1/completions/derender HTTP/1.1\r\nHost: stress\r\nContent-Length: 100000\r\n\r\n"
)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def open_fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


class RssSampler(threading.Thread):
    """The server's RSS and open descriptors every 50 ms while running."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.samples: list[float] = []
        self.fds: list[int] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.05):
            self.samples.append(rss_mb(self.pid))
            self.fds.append(open_fds(self.pid))


def probe(port: int, seconds: float, delay: float) -> dict[str, Any]:
    """GETs ``/health`` and ``/metrics`` in turn every 10 ms for ``seconds`` after ``delay``, a
    new connection each time. A failed probe counts as an error, and its time as its latency.

    Runs in its own process, so the load generator cannot delay the probes.
    """
    time.sleep(delay)
    got: dict[str, Any] = {"/health": [], "/metrics": [], "errors": {"/health": 0, "/metrics": 0}}
    stop = time.perf_counter() + seconds
    for k in range(int(seconds * 200) + 1):
        if time.perf_counter() >= stop:
            break
        path = "/health" if k % 2 == 0 else "/metrics"
        start = time.perf_counter()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=PROBE_TIMEOUT)
            conn.request("GET", path)
            resp = conn.getresponse()
            resp.read()
            conn.close()
            got["errors"][path] += resp.status != 200
        except OSError:
            got["errors"][path] += 1
        got[path].append(time.perf_counter() - start)
        time.sleep(0.01)
    return got


_ERRORS = re.compile(r'^tokstream_errors_total\{reason="(\w+)"\} (\d+)', re.M)


def refusals(port: int) -> dict[str, int]:
    """The server's ``tokstream_errors_total`` counters, by reason (empty if unreadable)."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
        conn.close()
    except OSError:
        return {}
    return {reason: int(n) for reason, n in _ERRORS.findall(text)}


async def hold_idle(
    port: int, count: int, stop: float, stats: dict[str, int], kinds: tuple[int, ...] = (0, 1, 2)
) -> None:
    """Keeps ``count`` connections open until ``stop``, of ``kinds`` in turn: 0 silent, 1
    sending its headers a byte a second, 2 sending a body a byte a second."""

    async def one(k: int) -> None:
        kind = kinds[k % len(kinds)]
        for _ in range(MAX_OPENS):
            if time.perf_counter() >= stop:
                break
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                stats["connect_errors"] += 1
                await asyncio.sleep(0.1)
                continue
            stats["opened"] += 1
            try:
                if kind == 1:
                    writer.write(_SLOW_HEAD)
                elif kind == 2:
                    writer.write(_SLOW_BODY_HEAD)
                while time.perf_counter() < stop:
                    try:
                        data = await asyncio.wait_for(reader.read(65536), 1.0)
                    except asyncio.TimeoutError:
                        if kind:
                            writer.write(b"X")
                        continue
                    if not data:
                        stats["closed_by_server"] += 1
                        break
                    stats["answered"] += 1  # a 408 before the close
            except OSError:
                stats["closed_by_server"] += 1
            finally:
                writer.close()

    await asyncio.gather(*(one(k) for k in range(count)))


def stop_string_body(tokenizer: str) -> bytes:
    """A whole completion of about 1 MB (ids and 64 stop strings of 4 KiB that never match)."""
    tok = load_tokenizer(tokenizer)
    unit = tok.encode("Stop strings cost what they cost. ", add_special_tokens=False).ids
    ids = (unit * (130_000 // len(unit) + 1))[:130_000]  # under qwen3's max_model_len
    stops = [("ab " * 1400)[: 4096 - 4] + f"{k:04d}" for k in range(64)]
    generate = {"request_id": "stress", "choices": [{"index": 0, "token_ids": ids}]}
    request = {"model": MODEL, "prompt": "x", "stop": stops}
    body = {"generate_responses": [generate], "completion_request": request}
    return json.dumps(body, separators=(",", ":")).encode()


async def post_stop_strings(
    port: int, count: int, stop: float, body: bytes, stats: dict[str, int]
) -> None:
    """``count`` clients posting the stop-string body back to back until ``stop``."""
    head = (
        f"POST /v1/completions/derender HTTP/1.1\r\nHost: stress\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()

    async def one() -> None:
        for _ in range(MAX_OPENS):
            if time.perf_counter() >= stop:
                break
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                stats["connect_errors"] += 1
                await asyncio.sleep(0.1)
                continue
            try:
                writer.write(head + body)
                left = stop - time.perf_counter()
                answer = await asyncio.wait_for(reader.read(12), max(left, 0.1))
                stats["answered_200" if answer == b"HTTP/1.1 200" else "other_answers"] += 1
            except (OSError, asyncio.TimeoutError):
                stats["unfinished"] += 1
            finally:
                writer.close()

    await asyncio.gather(*(one() for _ in range(count)))


async def flood_headers(port: int, count: int, stop: float, stats: dict[str, int]) -> None:
    """``count`` clients sending 10 MB header values back to back until ``stop``."""
    chunk = b"a" * 65536

    async def one() -> None:
        for _ in range(MAX_OPENS):
            if time.perf_counter() >= stop:
                break
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                stats["connect_errors"] += 1
                await asyncio.sleep(0.1)
                continue
            answer = asyncio.ensure_future(reader.read(65536))
            sent = 0
            try:
                # All 10 MB, whatever the server answers, until it closes the connection.
                writer.write(b"GET /health HTTP/1.1\r\nHost: stress\r\nX-Big: ")
                for _ in range(HEADER_BYTES // len(chunk)):
                    writer.write(chunk)
                    await writer.drain()
                    sent += len(chunk)
            except OSError:
                stats["closed_by_server"] += 1
            try:
                status = (await asyncio.wait_for(answer, 30))[:12]
                stats["answered_431" if status == b"HTTP/1.1 431" else "other_answers"] += 1
            except (OSError, asyncio.TimeoutError):
                stats["no_answer"] += 1
            finally:
                stats["attempts"] += 1
                stats["sent_kb"] += sent // 1024
                answer.cancel()
                writer.close()

    await asyncio.gather(*(one() for _ in range(count)))


def pipeline_unread(port: int, count: int, stop: float, stats: dict[str, int]) -> None:
    """``count`` connections pipelining ``GET /health`` until ``stop`` and never reading: each
    writes while its socket takes bytes; one the server closes is opened again."""
    burst = _HEALTH * 256
    socks: list[socket.socket | None] = [None] * count
    try:
        for _ in range(int((stop - time.perf_counter()) / 0.02) + 1):
            if time.perf_counter() >= stop:
                break
            for i in range(count):
                s = socks[i]
                if s is None:
                    if stats["opened"] >= count * MAX_OPENS:
                        continue
                    try:
                        s = socket.create_connection(("127.0.0.1", port), timeout=2)
                    except OSError:
                        stats["connect_errors"] += 1
                        continue
                    s.setblocking(False)
                    socks[i] = s
                    stats["opened"] += 1
                try:
                    for _ in range(4096):  # until the socket takes no more
                        n = s.send(burst)
                        stats["sent_kb"] += n // 1024
                        if n < len(burst):
                            break
                except BlockingIOError:
                    pass
                except OSError:
                    stats["closed_by_server"] += 1
                    s.close()
                    socks[i] = None
            time.sleep(0.02)
    finally:
        for s in socks:
            if s is not None:
                s.close()


def pipeline_read(port: int, stop: float, stats: dict[str, int]) -> None:
    """One connection pipelining ``GET /health`` (up to 1,024 in flight, 64 a write) and
    reading the answers as fast as it can, until ``stop``."""
    batch = _HEALTH * 64
    s: socket.socket | None = None
    # What is left of the write under way, the last bytes read (an answer's status line split
    # across two reads counts once), and the requests sent and not yet answered.
    pending, tail, in_flight = b"", b"", 0
    try:
        for _ in range(100_000_000):
            if time.perf_counter() >= stop:
                break
            if s is None:
                if stats["opened"] >= MAX_OPENS:
                    break
                try:
                    s = socket.create_connection(("127.0.0.1", port), timeout=2)
                except OSError:
                    stats["connect_errors"] += 1
                    time.sleep(0.1)
                    continue
                s.setblocking(False)
                stats["opened"] += 1
                pending, tail, in_flight = b"", b"", 0
            if not pending and in_flight < 1024:
                pending, in_flight = batch, in_flight + 64
            readable, writable, _ = select.select([s], [s] if pending else [], [], 0.1)
            try:
                if writable:
                    pending = pending[s.send(pending) :]
                if readable:
                    data = s.recv(1 << 20)
                    if not data:
                        raise ConnectionResetError
                    seen = tail + data
                    answers = seen.count(b"HTTP/1.1 ")
                    stats["answered"] += answers
                    in_flight -= answers
                    stats["answered_200"] += seen.count(b"HTTP/1.1 200")
                    tail = seen[-11:]  # shorter than a status line: none counts twice
            except BlockingIOError:
                pass
            except OSError:
                stats["closed_by_server"] += 1
                s.close()
                s = None
    finally:
        if s is not None:
            s.close()


def run_phase(
    server: Target, name: str, seconds: float, args: argparse.Namespace
) -> dict[str, Any]:
    pid = server.proc.pid
    sampler = RssSampler(pid)
    rss_start, fds_start = rss_mb(pid), open_fds(pid)
    refused_before = refusals(server.port)
    sampler.start()
    stats: dict[str, int] = {
        k: 0
        for k in (
            "opened",
            "closed_by_server",
            "answered",
            "connect_errors",
            "attempts",
            "sent_kb",
            "answered_431",
            "other_answers",
            "no_answer",
            "answered_200",
            "unfinished",
        )
    }
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        probes = pool.submit(probe, server.port, seconds - 1.0, 1.0)
        stop = time.perf_counter() + seconds
        if name == "idle-connections":
            asyncio_run(hold_idle(server.port, args.idle, stop, stats))
        elif name == "big-headers":
            asyncio_run(flood_headers(server.port, args.flooders, stop, stats))
        elif name == "stop-strings":
            body = stop_string_body(args.tokenizer)
            stats["body_kb"] = len(body) // 1024
            asyncio_run(post_stop_strings(server.port, 2, stop, body, stats))
        elif name == "pipeline-unread":
            pipeline_unread(server.port, args.unread, stop, stats)
        elif name == "pipeline-read":
            pipeline_read(server.port, stop, stats)
        elif name == "over-cap":
            asyncio_run(hold_idle(server.port, args.cap * 3 // 2, stop, stats, kinds=(1,)))
        elif name == "over-fd-limit":
            asyncio_run(hold_idle(server.port, args.nofile * 3 // 2, stop, stats, kinds=(1,)))
        else:
            time.sleep(seconds)
        got = probes.result()
    sampler.done.set()
    sampler.join()
    time.sleep(0.5)
    refused = {
        k: n - refused_before.get(k, 0)
        for k, n in refusals(server.port).items()
        if n > refused_before.get(k, 0)
    }
    peak = max(sampler.samples, default=rss_start)
    row: dict[str, Any] = {"phase": name, "seconds": seconds}
    for path in ("/health", "/metrics"):
        ms = [t * 1e3 for t in got[path]]
        key = path.strip("/")
        row[f"{key}_probes"] = len(ms)
        row[f"{key}_errors"] = got["errors"][path]
        row[f"{key}_p50_ms"] = percentile(ms, 0.5)
        row[f"{key}_p99_ms"] = percentile(ms, 0.99)
        row[f"{key}_max_ms"] = max(ms, default=float("nan"))
    row |= {
        "rss_start_mb": rss_start,
        "rss_peak_mb": peak,
        "rss_end_mb": rss_mb(pid),
        "rss_growth_mb": peak - rss_start,
        "fds_start": fds_start,
        "fds_peak": max(sampler.fds, default=fds_start),
        "refused": refused,
        **{k: v for k, v in stats.items() if v},
    }
    row["target_met"] = (
        row["health_p99_ms"] < HEALTH_TARGET_MS
        and row["metrics_p99_ms"] < HEALTH_TARGET_MS
        and row["rss_growth_mb"] < RSS_TARGET_MB
        and not row["health_errors"]
        and not row["metrics_errors"]
    )
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def describe(args: argparse.Namespace) -> dict[str, str]:
    return {
        "idle": "nothing else (baseline)",
        "idle-connections": f"{args.idle:,} idle or slow connections",
        "big-headers": f"{args.flooders} clients sending 10 MB headers",
        "stop-strings": "2 clients posting 1 MB bodies with 64 stop strings of 4 KiB",
        "pipeline-unread": f"{args.unread} connections pipelining, never reading",
        "pipeline-read": "1 connection pipelining /health, reading as fast as it can",
        "over-cap": f"{args.cap * 3 // 2:,} partial heads, --max-connections {args.cap}",
        "over-fd-limit": f"{args.nofile * 3 // 2:,} partial heads, open-file limit {args.nofile:,}",
    }


def client_side(r: dict[str, Any]) -> str:
    phase = r["phase"]
    if phase in ("idle-connections", "over-cap", "over-fd-limit", "pipeline-unread"):
        side = (
            f"{r.get('opened', 0):,} opened, {r.get('closed_by_server', 0):,} closed by the server"
        )
        if phase == "pipeline-unread":
            side += f", {r.get('sent_kb', 0) / 1024:,.0f} MB written"
        return side
    if phase == "big-headers":
        sent = r.get("sent_kb", 0) / 1024
        return (
            f"{r.get('attempts', 0):,} 10 MB headers begun, {r.get('answered_431', 0):,} "
            f"answered 431, {sent:,.0f} MB written before the server closed"
        )
    if phase == "stop-strings":
        return (
            f"{r.get('body_kb', 0):,} KiB bodies: {r.get('answered_200', 0):,} answered, "
            f"{r.get('unfinished', 0):,} unfinished"
        )
    if phase == "pipeline-read":
        return f"{r.get('answered_200', 0):,} /health answers read"
    return "-"


def markdown(rows: list[dict[str, Any]], args: argparse.Namespace) -> str:
    what = describe(args)
    lines = [
        "| while | probes (each path) | errors | /health p50 | /health p99 | /metrics p50 "
        "| /metrics p99 | max | RSS start | RSS peak | growth | fds peak | client side "
        "| refusals counted | targets |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for r in rows:
        refused = ", ".join(f"{k} {n:,}" for k, n in sorted(r["refused"].items())) or "-"
        worst = max(r["health_max_ms"], r["metrics_max_ms"])
        lines.append(
            f"| {what[r['phase']]} | {r['health_probes']:,} "
            f"| {r['health_errors'] + r['metrics_errors']} "
            f"| {fmt_ms(r['health_p50_ms'])} | {fmt_ms(r['health_p99_ms'])} "
            f"| {fmt_ms(r['metrics_p50_ms'])} | {fmt_ms(r['metrics_p99_ms'])} "
            f"| {fmt_ms(worst)} | {r['rss_start_mb']:.0f} MB "
            f"| {r['rss_peak_mb']:.0f} MB | {r['rss_growth_mb']:.1f} MB | {r['fds_peak']:,} "
            f"| {client_side(r)} | {refused} | {'met' if r['target_met'] else 'missed'} |"
        )
    return "\n".join(lines)


def start(args: argparse.Namespace, phase: str | None, workdir: str) -> Target:
    """A server for ``phase``: its own flags or open-file limit, or the defaults (None)."""
    extra: tuple[str, ...] = ()
    nofile = None
    if phase == "over-cap":
        extra = ("--max-connections", str(args.cap))
    elif phase == "over-fd-limit":
        nofile = args.nofile
    return start_tokstream(
        phase or "tokstream", args.python, args.tokenizer, workdir, extra=extra, nofile=nofile
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable, help="runs tokstream serve")
    parser.add_argument("--tokenizer", default=str(model_dir("qwen3")))
    parser.add_argument("--seconds", type=float, default=20.0, help="per phase")
    parser.add_argument("--idle", type=int, default=1000, help="idle connections")
    parser.add_argument("--flooders", type=int, default=4, help="clients sending 10 MB headers")
    parser.add_argument("--unread", type=int, default=60, help="connections that never read")
    parser.add_argument("--cap", type=int, default=256, help="--max-connections of over-cap")
    parser.add_argument("--nofile", type=int, default=1024, help="open files of over-fd-limit")
    parser.add_argument("--phases", nargs="+", default=list(PHASES), choices=PHASES)
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the client needs its sockets
    workdir = tempfile.mkdtemp(prefix="tokstream-stress-")
    rows, alive = [], True
    shared: Target | None = None
    try:
        for phase in args.phases:
            if phase in OWN_SERVER:
                server = start(args, phase, workdir)
            else:
                shared = shared or start(args, None, workdir)
                server = shared
            try:
                rows.append(run_phase(server, phase, args.seconds, args))
                alive = alive and server.proc.poll() is None
            finally:
                if server is not shared:
                    server.stop()
    finally:
        if shared is not None:
            shared.stop()
        os.rmdir(workdir)
    print(markdown(rows, args))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=1))
    return 0 if alive and all(r["target_met"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
