"""Stress bench of the server's connection limits: ``/health`` and RSS while clients misbehave.

Starts ``tokstream serve`` (default limits, one worker) as a real process and runs phases of
``--seconds`` each, while a separate process GETs ``/health`` every 10 ms on a new connection
and a thread samples the server's RSS (``/proc/<pid>/status``) every 50 ms:

- ``idle``: nothing else, the baseline;
- ``idle-connections``: ``--idle`` connections held open (1,000 by default): a third send
  nothing, a third send their headers a byte a second (slowloris), a third send a body a byte a
  second. The server closes the first two kinds at its header timeout and the client opens them
  again, so the count stays up the whole phase; a body that trickles in is not idle, and stays;
- ``big-headers``: ``--flooders`` clients (4) each send 10 MB header values back to back, read
  the answer (431) and start again.

- ``stop-strings``: 2 clients posting 0.9 MB bodies with 64 stop strings of 4 KiB each, back
  to back (issue 11's case (a); the one automaton over all stop strings answers each in a few
  milliseconds).

The issue's targets: ``/health`` p99 under 50 ms and RSS growth under
50 MB in every phase. The exit status is 1 when a target is missed or a probe fails::

    python benches/stress.py                     # 4 phases of 20 s
    python benches/stress.py --seconds 5 --json .benchmarks/stress.json

Run by hand (about two minutes); it is not part of the pytest benches.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from load_support import (
    MODEL,
    Server,
    asyncio_run,
    fmt_ms,
    load_tokenizer,
    percentile,
    probe_health,
)

from fixtures import model_dir

PHASES = ("idle", "idle-connections", "big-headers", "stop-strings")
HEALTH_TARGET_MS = 50.0
RSS_TARGET_MB = 50.0
HEADER_BYTES = 10 * 1000 * 1000
_SLOW_HEAD = b"GET /health HTTP/1.1\r\nHost: stress\r\n"
_SLOW_BODY_HEAD = (
    b"POST /v1/completions/derender HTTP/1.1\r\nHost: stress\r\nContent-Length: 100000\r\n\r\n"
)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class RssSampler(threading.Thread):
    """The server's RSS every 50 ms while running."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.samples: list[float] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.05):
            self.samples.append(rss_mb(self.pid))


async def hold_idle(port: int, count: int, stop: float, stats: dict[str, int]) -> None:
    """Keeps ``count`` connections open until ``stop``: a third silent, a third sending their
    headers a byte a second, a third sending a body a byte a second."""

    async def one(k: int) -> None:
        kind = k % 3
        while time.perf_counter() < stop:
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
    """A whole completion of about 0.9 MB with 64 stop strings of 4 KiB that never match."""
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
        while time.perf_counter() < stop:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
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
        while time.perf_counter() < stop:
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


def run_phase(
    server: Server, name: str, seconds: float, args: argparse.Namespace
) -> dict[str, Any]:
    pid = server.proc.pid
    sampler = RssSampler(pid)
    rss_start = rss_mb(pid)
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
        probes = pool.submit(probe_health, server.url, seconds - 1.0, 1.0)
        stop = time.perf_counter() + seconds
        if name == "idle-connections":
            asyncio_run(hold_idle(server.port, args.idle, stop, stats))
        elif name == "big-headers":
            asyncio_run(flood_headers(server.port, args.flooders, stop, stats))
        elif name == "stop-strings":
            body = stop_string_body(args.tokenizer)
            asyncio_run(post_stop_strings(server.port, 2, stop, body, stats))
        else:
            time.sleep(seconds)
        got = probes.result()
    sampler.done.set()
    sampler.join()
    time.sleep(0.5)
    ms = [t * 1e3 for t in got["latencies"]]
    peak = max(sampler.samples, default=rss_start)
    row = {
        "phase": name,
        "seconds": seconds,
        "probes": len(ms),
        "probe_errors": got["errors"],
        "health_p50_ms": percentile(ms, 0.5),
        "health_p99_ms": percentile(ms, 0.99),
        "health_max_ms": max(ms, default=float("nan")),
        "rss_start_mb": rss_start,
        "rss_peak_mb": peak,
        "rss_end_mb": rss_mb(pid),
        "rss_growth_mb": peak - rss_start,
        **{k: v for k, v in stats.items() if v},
    }
    row["target_met"] = (
        row["health_p99_ms"] < HEALTH_TARGET_MS
        and row["rss_growth_mb"] < RSS_TARGET_MB
        and not row["probe_errors"]
    )
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def markdown(rows: list[dict[str, Any]], args: argparse.Namespace) -> str:
    what = {
        "idle": "nothing else (baseline)",
        "idle-connections": f"{args.idle:,} idle or slow connections",
        "big-headers": f"{args.flooders} clients sending 10 MB headers",
        "stop-strings": "2 clients posting 0.9 MB bodies with 64 stop strings of 4 KiB",
    }
    lines = [
        "| while | /health probes | errors | p50 | p99 | max | RSS start | RSS peak | growth "
        "| client side | targets |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        if r["phase"] == "idle-connections":
            opened, closed = r.get("opened", 0), r.get("closed_by_server", 0)
            side = f"{opened:,} opened, {closed:,} closed by the server"
        elif r["phase"] == "big-headers":
            sent = r.get("sent_kb", 0) / 1024
            side = (
                f"{r.get('attempts', 0):,} 10 MB headers begun, {r.get('answered_431', 0):,} "
                f"answered 431, {sent:,.0f} MB written before the server closed"
            )
        elif r["phase"] == "stop-strings":
            side = f"{r.get('answered_200', 0):,} answered, {r.get('unfinished', 0):,} unfinished"
        else:
            side = "-"
        lines.append(
            f"| {what[r['phase']]} | {r['probes']:,} | {r['probe_errors']} "
            f"| {fmt_ms(r['health_p50_ms'])} | {fmt_ms(r['health_p99_ms'])} "
            f"| {fmt_ms(r['health_max_ms'])} | {r['rss_start_mb']:.0f} MB "
            f"| {r['rss_peak_mb']:.0f} MB | {r['rss_growth_mb']:.1f} MB | {side} "
            f"| {'met' if r['target_met'] else 'missed'} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", default=str(model_dir("qwen3")))
    parser.add_argument("--seconds", type=float, default=20.0, help="per phase")
    parser.add_argument("--idle", type=int, default=1000, help="idle connections")
    parser.add_argument("--flooders", type=int, default=4, help="clients sending 10 MB headers")
    parser.add_argument(
        "--phases",
        nargs="+",
        default=list(PHASES),
        choices=PHASES,
        help="stop-strings: 2 clients posting 0.9 MB bodies with 64 stop strings of 4 KiB",
    )
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the client needs --idle sockets
    server = Server("tokstream", args.tokenizer, 1)
    try:
        rows = [run_phase(server, phase, args.seconds, args) for phase in args.phases]
        alive = server.proc.poll() is None
    finally:
        server.stop()
    print(markdown(rows, args))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=1))
    return 0 if alive and all(r["target_met"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
