"""Load test of the derender server: concurrent streams over HTTP, against a plain-Python peer.

Starts ``tokstream serve`` as a real process, then the peer: ``benches/server/reference_server.py``,
the plain-Python reference derender (``oracles/derender_reference.py``) behind
``tokstream.server.App`` (the embeddable ASGI app) on uvicorn with as many workers. Against each it
replays N concurrent recorded generate streams over loopback HTTP (a light keep-alive HTTP/1.1
client, ``benches/server/http_client.py``, or aiohttp with ``--client aiohttp``; one task per
stream, posting its chunks one after another, each with the ``stream_state`` of the previous answer)
and reports chunks/s, tokens/s, per-chunk latency, the server's CPU time per token
(``/proc/<pid>/stat`` of the server and its workers) and errors. Every stream's text must equal the
one-shot decode (REFERENCE C1, ``skip_special_tokens=True``) and every request must succeed, else
the exit status is 1::

    python benches/server/loadtest.py           # N = 64 and 256 streams of 512 tokens, both servers
    python benches/server/loadtest.py --quick       # 8 streams of 64 tokens, both servers (seconds)
    python benches/server/loadtest.py --health   # /health latency under whole 8,000-token derenders
    python benches/server/loadtest.py --servers tokstream --transports tcp unix  # also over --uds

The streams: a multilingual pool of ids (``benches/generation.py`` and the samples of
``oracles/corpus.py``, added tokens spliced in) is cut into one 512-id output per stream, each
starting at its own place, behind a chat-shaped prompt. The output is split into chunks of 1 to
4 ids, sent as vLLM's generate server serializes ``GenerateStreamResponse`` chunks, then a
finish-only chunk (no ids, ``finish_reason: "length"``) and a usage-only chunk (``choices:
[]``). Three streams in four are chat (``DerenderChatStreamRequest``), one is a completion.
Bodies are built before the clock starts: a request is a prebuilt head, the previous answer's
state bytes (sliced out of the answer, not parsed) and a prebuilt tail; answers are parsed and
checked after the clock stops, so the client stays light on the cores it shares with the server.

``load_support.py`` builds and checks the streams and runs the server processes,
``load_health.py`` is the ``--health`` mode, and ``bench_load.py`` runs ``--quick`` under pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from load_health import health_markdown, run_health
from load_support import (
    ROOT,
    Server,
    Stream,
    asyncio_run,
    check_stream,
    cpu_delta,
    fmt_ms,
    load_tokenizer,
    make_streams,
    percentile,
)

from fixtures import model_dir

_STATE_KEY = b'"stream_state":'
_HEADERS = {"Content-Type": "application/json"}


# --- the replay ------------------------------------------------------------------------------


async def replay_one(
    session: Any, url: Any, s: Stream, latencies: list[float], errors: list[dict[str, Any]]
) -> list[bytes]:
    """Posts one stream's chunks in order, each with the previous answer's state."""
    state, answers = b"null", []
    clock = time.perf_counter
    for k in range(len(s.heads)):
        body = s.heads[k] + state + s.tails[k]
        start = clock()
        try:
            async with session.post(url, data=body, headers=_HEADERS) as resp:
                status, answer = resp.status, await resp.read()
        except Exception as exc:
            error = {"stream": s.index, "chunk": k, "error": repr(exc)}
            errors.append({**error, "body": body.decode()[:4000]})
            break
        latencies.append(clock() - start)
        got = take_answer(s, k, body, status, answer, errors)
        if got is None:
            break
        state = got
        answers.append(answer)
    return answers


async def replay(url: str, streams: list[Stream]) -> dict[str, Any]:
    """Replays every stream concurrently; returns timings, answers and errors."""
    import aiohttp

    latencies: list[float] = []
    errors: list[dict[str, Any]] = []
    import yarl

    connector = aiohttp.TCPConnector(limit=len(streams), keepalive_timeout=120)
    timeout = aiohttp.ClientTimeout(total=120)
    # No cookie jar and URLs parsed once: about 10% of the client's time per request.
    jar = aiohttp.DummyCookieJar()
    urls = {path: yarl.URL(url + path) for path in {s.path for s in streams}}
    async with aiohttp.ClientSession(
        connector=connector, timeout=timeout, auto_decompress=False, cookie_jar=jar
    ) as session:
        start = time.perf_counter()
        cpu = time.process_time()
        answers = await asyncio.gather(
            *(replay_one(session, urls[s.path], s, latencies, errors) for s in streams)
        )
        wall = time.perf_counter() - start
        client_cpu = time.process_time() - cpu
    return {
        "wall": wall,
        "client_cpu": client_cpu,
        "latencies": latencies,
        "errors": errors,
        "answers": answers,
    }


def take_answer(
    s: Stream, k: int, body: bytes, status: int, answer: bytes, errors: list[dict[str, Any]]
) -> bytes | None:
    """The state of an answer to chunk ``k`` of ``s``, or None (an error recorded)."""
    at = answer.rfind(_STATE_KEY)
    if status != 200 or at < 0 or not answer.endswith(b"}"):
        errors.append(
            {
                "stream": s.index,
                "chunk": k,
                "status": status,
                "body": body.decode()[:4000],
                "answer": answer.decode(errors="replace")[:4000],
            }
        )
        return None
    return answer[at + len(_STATE_KEY) : -1]


async def replay_group_raw(
    url: str, group: list[Stream], latencies: list[float], errors: list[dict[str, Any]]
) -> list[list[bytes]]:
    """Streams sharing one connection of the light client, kept alive: in each round every
    stream with chunks left posts its next one, the round's requests pipelined in one write."""
    from http_client import Connection

    states = [b"null"] * len(group)
    answers: list[list[bytes]] = [[] for _ in group]
    live = [j for j, s in enumerate(group) if s.heads]
    clock = time.perf_counter
    conn = await Connection.open_url(url)
    try:
        k = 0
        while live:
            bodies = [group[j].heads[k] + states[j] + group[j].tails[k] for j in live]
            start = clock()
            try:
                got = await conn.post_many(
                    [(group[j].path, b) for j, b in zip(live, bodies, strict=True)]
                )
            except Exception as exc:
                errors += [{"stream": group[j].index, "chunk": k, "error": repr(exc)} for j in live]
                break
            latencies += [clock() - start] * len(live)
            for j, body, (status, answer) in zip(live, bodies, got, strict=True):
                state = take_answer(group[j], k, body, status, answer, errors)
                if state is None:
                    return answers
                states[j] = state
                answers[j].append(answer)
            k += 1
            live = [j for j in live if k < len(group[j].heads)]
    finally:
        conn.close()
    return answers


async def replay_raw(url: str, streams: list[Stream], per_connection: int = 1) -> dict[str, Any]:
    """``replay`` with the light client, ``per_connection`` streams to a connection."""
    latencies: list[float] = []
    errors: list[dict[str, Any]] = []
    groups = [streams[i : i + per_connection] for i in range(0, len(streams), per_connection)]
    start = time.perf_counter()
    cpu = time.process_time()
    got = await asyncio.gather(*(replay_group_raw(url, g, latencies, errors) for g in groups))
    return {
        "wall": time.perf_counter() - start,
        "client_cpu": time.process_time() - cpu,
        "latencies": latencies,
        "errors": errors,
        "answers": [a for answers in got for a in answers],
    }


CLIENTS = {"light": replay_raw, "aiohttp": replay}
"""The load generators: the light client (default) and aiohttp."""


def run_load(
    server: Server,
    streams: list[Stream],
    warmup: list[Stream],
    client: str = "light",
    per_connection: int = 1,
) -> dict[str, Any]:
    """Warms the server up, replays ``streams`` once with the clock on, checks every answer."""
    replay_with = CLIENTS[client]
    if per_connection > 1:
        replay_with = functools.partial(replay_raw, per_connection=per_connection)
    warm = asyncio_run(replay_with(server.url, warmup))
    before = server.cpu_seconds()
    got = asyncio_run(replay_with(server.url, streams))
    server_cpu = cpu_delta(before, server.cpu_seconds())
    problems: list[Any] = warm["errors"] + got["errors"]
    wrong = [check_stream(s, answers) for s, answers in zip(streams, got["answers"], strict=True)]
    problems += [w for w in wrong if w is not None]
    chunks = len(got["latencies"])
    tokens = sum(len(s.ids) for s in streams)
    lat = got["latencies"]
    return {
        "server": server.name,
        "transport": server.transport,
        "streams": len(streams),
        "per_connection": per_connection,
        "tokens_per_stream": len(streams[0].ids),
        "chunks": chunks,
        "tokens": tokens,
        "wall_s": got["wall"],
        "chunks_per_s": chunks / got["wall"],
        "tokens_per_s": tokens / got["wall"],
        "latency_ms": {
            "p50": percentile(lat, 0.5) * 1e3,
            "p90": percentile(lat, 0.9) * 1e3,
            "p99": percentile(lat, 0.99) * 1e3,
            "max": max(lat, default=float("nan")) * 1e3,
            "mean": sum(lat) / max(len(lat), 1) * 1e3,
        },
        "server_cpu_s": server_cpu,
        "server_cpu_us_per_token": server_cpu / tokens * 1e6,
        "server_cpu_us_per_chunk": server_cpu / max(chunks, 1) * 1e6,
        "chunks_per_core_s": chunks / server_cpu if server_cpu else float("nan"),
        "client_cpu_s": got["client_cpu"],
        "errors": len(got["errors"]) + len(warm["errors"]),
        "exact_streams": wrong.count(None),
        "problems": problems[:20],
    }


# --- the report --------------------------------------------------------------------------------


def conditions(args: argparse.Namespace) -> dict[str, Any]:
    """What the figures depend on."""
    import aiohttp
    import tokenizers
    import tokstream
    import uvicorn

    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        commit = ""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu_model": model,
        "loadavg_start": os.getloadavg(),
        "python": sys.version.split()[0],
        "tokstream": tokstream.__version__,
        "tokenizers": tokenizers.__version__,
        "uvicorn": uvicorn.__version__,
        "aiohttp": aiohttp.__version__,
        "commit": commit,
        "tokenizer": args.tokenizer,
        "workers": args.workers,
    }


def markdown(runs: list[dict[str, Any]], workers: int, chunk_ids: int | None = None) -> str:
    """The replay figures as Markdown tables, with the tokstream / reference ratios."""
    lines = [
        "| server | transport | workers | streams | streams/conn | tokens/stream | chunks "
        "| chunks/s | tokens/s "
        "| p50 | p99 | server CPU/token | server CPU/chunk | chunks/s per core | server busy "
        "| client busy | errors | exact |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in runs:
        lat = r["latency_ms"]
        lines.append(
            f"| {r['server']} | {r['transport']} | {workers} | {r['streams']} "
            f"| {r.get('per_connection', 1)} "
            f"| {r['tokens_per_stream']} "
            f"| {r['chunks']:,} | {r['chunks_per_s']:,.0f} | {r['tokens_per_s']:,.0f} "
            f"| {fmt_ms(lat['p50'])} | {fmt_ms(lat['p99'])} "
            f"| {r['server_cpu_us_per_token']:.1f} µs | {r['server_cpu_us_per_chunk']:.1f} µs "
            f"| {r['chunks_per_core_s']:,.0f} "
            f"| {r['server_cpu_s'] / r['wall_s']:.0%} | {r['client_cpu_s'] / r['wall_s']:.0%} "
            f"| {r['errors']} "
            f"| {r['exact_streams']}/{r['streams']} |"
        )
    ratios = ratio_rows(runs)
    if ratios:
        lines += [
            "",
            "| streams | tokstream chunks/s | reference chunks/s | tokstream / reference "
            "| reference / tokstream CPU per token |",
            "|---:|---:|---:|---:|---:|",
        ]
        for n, mine, ref in ratios:
            lines.append(
                f"| {n} | {mine['chunks_per_s']:,.0f} | {ref['chunks_per_s']:,.0f} "
                f"| {_ratio(mine['chunks_per_s'], ref['chunks_per_s'], 2)} "
                f"| {_ratio(ref['server_cpu_us_per_token'], mine['server_cpu_us_per_token'], 1)} |"
            )
    lines += ["", legend(chunk_ids)]
    return "\n".join(lines)


def _ratio(a: float, b: float, digits: int) -> str:
    """``a / b`` as ``"3.5x"``; ``"n/a"`` when ``b`` is 0 (a run too short for the CPU clock,
    which counts in 10 ms ticks)."""
    return f"{a / b:.{digits}f}x" if b else "n/a"


def legend(chunk_ids: int | None) -> str:
    """The table's footnote, for generate chunks of ``chunk_ids`` ids (``None``: 1 to 4)."""
    size = "1 to 4 ids" if chunk_ids is None else f"{chunk_ids} id" + ("s" * (chunk_ids != 1))
    return (
        f"Chunks are HTTP requests (one generate chunk of {size} each, plus a finish-only and a "
        "usage-only chunk per stream); tokens are output ids; p50/p99 are per-chunk latencies "
        "seen by the client; server CPU is user + system time of the server and its workers over "
        "the timed replay, per token and per chunk; busy is CPU time over wall time, for the "
        "server and for the load generator (which shares the machine's cores with it: at 100% the "
        "client, not the server, bounds the throughput)."
    )


def ratio_rows(runs: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any], dict[str, Any]]]:
    """Pairs each stream count's tokstream run with its reference run."""
    by = {(r["server"], r["streams"]): r for r in runs if r["transport"] == "tcp"}
    return [
        (n, by[("tokstream", n)], by[("reference", n)])
        for (server, n) in by
        if server == "tokstream" and ("reference", n) in by
    ]


def main(argv: list[str] | None = None) -> int:
    """Runs the load test (or the /health test); returns 1 when anything failed."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default_tok = model_dir("qwen3")
    parser.add_argument("--tokenizer", default=str(default_tok), help="tokenizer.json or folder")
    parser.add_argument("--streams", type=int, nargs="+", help="N per run (default: 64 256)")
    parser.add_argument("--tokens", type=int, help="output ids per stream (default: 512)")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker threads of tokstream serve, processes of the reference",
    )
    parser.add_argument(
        "--servers",
        nargs="+",
        default=["tokstream", "reference"],
        choices=["tokstream", "reference"],
        help="tokstream (tokstream serve), reference (the plain-Python derender on the ASGI "
        "app on uvicorn)",
    )
    parser.add_argument(
        "--chunk-ids",
        type=int,
        help="ids per generate chunk (default: 1 to 4 at random; 1 is one token per chunk)",
    )
    parser.add_argument(
        "--transports",
        nargs="+",
        default=["tcp"],
        choices=["tcp", "unix"],
        help="how the client reaches the server: loopback TCP (default) or a Unix domain socket "
        "(tokstream serve --uds; the light client only, not the reference server)",
    )
    parser.add_argument(
        "--per-connection",
        type=int,
        default=1,
        help="streams sharing one keep-alive connection, their chunks pipelined a round at a "
        "time (default: 1, a connection per stream; above 1 takes the light client)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--client",
        choices=sorted(CLIENTS),
        default="light",
        help="load generator: the light keep-alive client (default) or aiohttp",
    )
    parser.add_argument(
        "--quick", action="store_true", help="8 streams x 64 ids; 3 s per health variant"
    )
    parser.add_argument("--health", action="store_true", help="/health latency under load")
    parser.add_argument("--health-seconds", type=float, help="per variant (default: 10)")
    parser.add_argument("--health-tokens", type=int, default=8000)
    parser.add_argument(
        "--health-concurrency",
        type=int,
        default=4,
        help="whole derenders in flight at once during the /health probes (default: 4)",
    )
    parser.add_argument(
        "--health-top-logprobs",
        type=int,
        nargs="+",
        default=[0, 20],
        help="one variant per value: alternatives per logprob position",
    )
    parser.add_argument("--json", type=Path, help="write the raw figures here")
    args = parser.parse_args(argv)
    if "unix" in args.transports and (
        args.client != "light" or args.health or "reference" in args.servers
    ):
        parser.error("--transports unix takes the light client and the tokstream server only")
    if args.per_connection < 1 or (args.per_connection > 1 and args.client != "light"):
        parser.error("--per-connection takes 1 or more, and above 1 the light client")
    quick = args.quick
    args.streams = args.streams or ([8] if quick else [64, 256])
    args.tokens = args.tokens or (64 if quick else 512)
    args.health_seconds = args.health_seconds or (3.0 if quick else 10.0)
    tok = load_tokenizer(args.tokenizer)
    report: dict[str, Any] = {"conditions": conditions(args), "runs": [], "health": []}
    failed = False
    if args.health:
        report["health"] = run_health(args, tok)
        failed = any(h["errors"] or not h["exact"] for h in report["health"])
        print(health_markdown(report["health"], args.workers))
    else:
        streams = make_streams(tok, max(args.streams), args.tokens, args.seed, args.chunk_ids)
        warmup = make_streams(
            tok, min(4, max(args.streams)), args.tokens, args.seed + 1, args.chunk_ids
        )
        for name, transport in [(n, t) for n in args.servers for t in args.transports]:
            server = Server(name, args.tokenizer, args.workers, transport)
            try:
                for n in args.streams:
                    run = run_load(server, streams[:n], warmup, args.client, args.per_connection)
                    report["runs"].append(run)
                    print(
                        f"{name:<9} {transport:<4} N={n:<4} {run['chunks_per_s']:8,.0f} chunks/s "
                        f"p50 {run['latency_ms']['p50']:.2f} ms p99 "
                        f"{run['latency_ms']['p99']:.2f} ms errors {run['errors']} "
                        f"exact {run['exact_streams']}/{n}",
                        file=sys.stderr,
                        flush=True,
                    )
                    for problem in run["problems"]:
                        print(f"  FAILED: {problem}", file=sys.stderr, flush=True)
                    failed |= bool(run["problems"]) or run["errors"] > 0
            finally:
                server.stop()
        print(markdown(report["runs"], args.workers, args.chunk_ids))
    report["conditions"]["loadavg_end"] = os.getloadavg()
    c = report["conditions"]
    print(
        f"\n{c['nproc']} cores ({c['cpu_model']}), load {c['loadavg_start'][0]:.2f} -> "
        f"{c['loadavg_end'][0]:.2f}; Python {c['python']}, tokstream {c['tokstream']}, "
        f"tokenizers {c['tokenizers']}, uvicorn {c['uvicorn']}, aiohttp {c['aiohttp']}; "
        f"commit {c['commit']}; tokenizer {c['tokenizer']}"
    )
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print("FAILED" if failed else "OK: every request answered 200, every text exact")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
