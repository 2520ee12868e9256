"""The load test's ``--health`` mode: ``/health`` latency while whole derenders run.

``W`` clients (``W`` = the server's workers) post the same whole chat derender of 8,000 ids back
to back (without logprobs: about 40 kB, derendered on the event loop; with 20 logprobs per
position: about 8 MB, derendered on a thread without the interpreter lock), while a separate
process GETs ``/health`` every 10 ms on a new connection. The issue's target: p99 under 50 ms.
See ``benches/server/loadtest.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from typing import Any

from load_support import (
    CHAT,
    MODEL,
    Server,
    asyncio_run,
    c1_target,
    dumps,
    fmt_bytes,
    fmt_ms,
    id_pool,
    original_request,
    percentile,
    probe_health,
    prompt_ids,
)

_HEADERS = {"Content-Type": "application/json"}

HEALTH_TARGET_MS = 50.0


def health_body(tok: Any, tokens: int, top: int, seed: int) -> tuple[bytes, str]:
    """A whole chat derender body of ``tokens`` ids (with ``top`` logprobs per position, as
    vLLM's generate server reports them by id), and the text it must give."""
    pool, starts = id_pool(tok)
    rng = random.Random(seed)
    begin = starts[rng.randrange(len(starts))]
    ids = [pool[(begin + j) % len(pool)] for j in range(tokens)]
    question = "Write a long, multilingual answer."
    prompt = prompt_ids(tok, question)
    logprobs = None
    if top:
        content = []
        for k, token_id in enumerate(ids):
            sampled = round(-rng.expovariate(6.0), 6)
            tops = [{"token_id": token_id, "logprob": sampled, "rank": 1}]
            for rank in range(2, top + 1):
                other = pool[(k * 7 + rank * 131) % len(pool)]
                tops.append(
                    {"token_id": other, "logprob": round(sampled - rank * 0.37, 6), "rank": rank}
                )
            content.append(
                {"token_id": token_id, "logprob": sampled, "rank": 1, "top_logprobs": tops}
            )
        logprobs = {"content": content}
    choice = {
        "index": 0,
        "logprobs": logprobs,
        "finish_reason": "length",
        "token_ids": ids,
        "routed_experts": None,
        "sampling_mask": None,
    }
    usage = {
        "prompt_tokens": len(prompt),
        "total_tokens": len(prompt) + tokens,
        "completion_tokens": tokens,
        "prompt_tokens_details": None,
    }
    response = {
        "request_id": f"gen-health-{seed}",
        "model": None,
        "created": None,
        "choices": [choice],
        "usage": usage,
    }
    for key in ("prompt_logprobs", "prompt_token_id_logprobs", "prompt_token_ids"):
        response[key] = None
    for key in ("mm_placeholders", "metrics", "kv_transfer_params", "ec_transfer_params"):
        response[key] = None
    request = original_request(CHAT, question, tokens)
    del request["stream"], request["stream_options"]
    if top:
        request |= {"logprobs": True, "top_logprobs": top}
    body = {"model": MODEL, "generate_response": response, "prompt_tokens": len(prompt)}
    body |= {"prompt_token_ids": prompt, "chat_request": request}
    return dumps(body), c1_target(tok, prompt, ids)


def check_whole(answer: bytes, target: str, tokens: int, top: int) -> str | None:
    """Checks a whole chat answer against the decode; returns what is wrong, or None."""
    choice = json.loads(answer)["choices"][0]
    got = choice["message"]["content"]
    if got != target:
        n = next((i for i, (a, b) in enumerate(zip(got, target, strict=False)) if a != b), 0)
        return f"whole answer: content differs from decode at char {n}: {got[n : n + 40]!r}"
    if choice["finish_reason"] != "length":
        return f"whole answer: finish_reason {choice['finish_reason']!r}"
    content = (choice["logprobs"] or {}).get("content") or []
    if top and (len(content) != tokens or any(len(e["top_logprobs"]) != top for e in content)):
        return f"whole answer: {len(content)} logprob entries, want {tokens} with {top} each"
    return None


async def health_phase(url: str, body: bytes, concurrency: int, seconds: float) -> dict[str, Any]:
    """``concurrency`` clients post ``body`` back to back for ``seconds`` while a separate
    process probes ``/health`` (a new connection per probe, as a kubelet does)."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    import aiohttp

    stop = time.perf_counter() + seconds
    latencies: list[float] = []
    errors: list[dict[str, Any]] = []
    answers: list[bytes] = []
    timeout = aiohttp.ClientTimeout(total=600)
    loop = asyncio.get_running_loop()
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        idle = await loop.run_in_executor(pool, probe_health, url, 1.0, 0.0)
        async with aiohttp.ClientSession(timeout=timeout, auto_decompress=False) as session:

            async def load() -> None:
                while time.perf_counter() < stop:
                    start = time.perf_counter()
                    try:
                        async with session.post(url + CHAT, data=body, headers=_HEADERS) as resp:
                            status, answer = resp.status, await resp.read()
                    except Exception as exc:
                        errors.append({"error": repr(exc)})
                        return
                    latencies.append(time.perf_counter() - start)
                    if status != 200:
                        text = answer[:4000].decode(errors="replace")
                        errors.append({"status": status, "answer": text})
                        return
                    if not answers:
                        answers.append(answer)

            probes = loop.run_in_executor(pool, probe_health, url, seconds - 0.5, 0.5)
            results = await asyncio.gather(*(load() for _ in range(concurrency)), probes)
    return {
        "idle": idle,
        "probes": results[-1],
        "latencies": latencies,
        "errors": errors,
        "answer": answers[0] if answers else b"",
    }


def run_health(args: argparse.Namespace, tok: Any) -> list[dict[str, Any]]:
    """The ``--health`` mode: one phase per ``--health-top-logprobs`` value, on ``tokstream
    serve``."""
    return _run_health_on("tokstream", args, tok)


def _run_health_on(name: str, args: argparse.Namespace, tok: Any) -> list[dict[str, Any]]:
    out = []
    server = Server(name, args.tokenizer, args.workers)
    try:
        for top in args.health_top_logprobs:
            body, target = health_body(tok, args.health_tokens, top, args.seed)
            got = asyncio_run(
                health_phase(server.url, body, args.health_concurrency, args.health_seconds)
            )
            problems: list[Any] = list(got["errors"])
            wrong = (
                check_whole(got["answer"], target, args.health_tokens, top)
                if got["answer"]
                else "no whole derender finished"
            )
            if wrong:
                problems.append(wrong)
            probes, idle = got["probes"], got["idle"]
            ms = [t * 1e3 for t in probes["latencies"]]
            row = {
                "server": name,
                "derenders_per_s": len(got["latencies"]) / args.health_seconds,
                "top_logprobs": top,
                "tokens": args.health_tokens,
                "concurrent_derenders": args.health_concurrency,
                "body_bytes": len(body),
                "answer_bytes": len(got["answer"]),
                "derenders": len(got["latencies"]),
                "derender_p50_ms": percentile(got["latencies"], 0.5) * 1e3,
                "probes": len(ms),
                "probe_errors": probes["errors"],
                "idle_p50_ms": percentile([t * 1e3 for t in idle["latencies"]], 0.5),
                "health_p50_ms": percentile(ms, 0.5),
                "health_p99_ms": percentile(ms, 0.99),
                "health_max_ms": max(ms, default=float("nan")),
                "errors": len(got["errors"]) + probes["errors"],
                "exact": not wrong,
                "problems": problems[:10],
            }
            row["target_met"] = row["health_p99_ms"] < HEALTH_TARGET_MS
            out.append(row)
            print(
                f"health, {name}, top_logprobs {top}: {row['derenders']} derenders, /health p50 "
                f"{row['health_p50_ms']:.2f} ms p99 {row['health_p99_ms']:.2f} ms, "
                f"errors {row['errors']}, exact {row['exact']}",
                file=sys.stderr,
                flush=True,
            )
            for problem in row["problems"]:
                print(f"  FAILED: {problem}", file=sys.stderr, flush=True)
    finally:
        server.stop()
    return out


def health_markdown(rows: list[dict[str, Any]], workers: int) -> str:
    """The ``--health`` figures as a Markdown table."""
    lines = [
        "| server | whole derender | workers | concurrent | body | derenders | derenders/s "
        "| derender p50 | /health "
        f"probes | idle p50 | p50 | p99 | max | p99 < {HEALTH_TARGET_MS:.0f} ms |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        what = f"{r['tokens']:,} ids" + (
            f", {r['top_logprobs']} logprobs" if r["top_logprobs"] else ""
        )
        lines.append(
            f"| {r['server']} | {what} | {workers} | {r['concurrent_derenders']} "
            f"| {fmt_bytes(r['body_bytes'])} | {r['derenders']} | {r['derenders_per_s']:,.1f} "
            f"| {fmt_ms(r['derender_p50_ms'])} | {r['probes']} "
            f"| {fmt_ms(r['idle_p50_ms'])} | {fmt_ms(r['health_p50_ms'])} "
            f"| {fmt_ms(r['health_p99_ms'])} | {fmt_ms(r['health_max_ms'])} "
            f"| {'met' if r['target_met'] else 'missed'} |"
        )
    return "\n".join(lines)
