"""What the load test needs besides the clock: recorded streams, their checks, server processes.

See ``benches/server/loadtest.py``. The streams are built from real tokenizers' encodings of the
multilingual texts of ``benches/generation.py`` and ``oracles/corpus.py``; the servers are real
processes whose CPU time is read from ``/proc``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for _dir in (HERE, HERE.parent, ROOT):
    if str(_dir) not in sys.path:
        sys.path.append(str(_dir))

from generation import GENERATION  # noqa: E402
from tokstream import _core  # noqa: E402

from oracles.corpus import SAMPLES, Marker, build, marker_ids  # noqa: E402

CHAT = _core.CHAT_PATH
COMPLETION = _core.COMPLETION_PATH
MODEL = "loadtest-model"
QUESTIONS = (
    "Explain incremental detokenization, with a Python example and a note on Unicode.",
    "Summarize streaming detokenization in Chinese, Japanese and Korean, with emoji.",
    "Write a short guide to vLLM's derender endpoints and what a stream state carries.",
)
_NULLS = b',"usage":null,"prompt_token_ids":null,"mm_placeholders":null,"metrics":null}'


def dumps(value: Any) -> bytes:
    """Compact JSON, as a client's HTTP library sends it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


# --- the recorded streams --------------------------------------------------------------------


@dataclass
class Stream:
    """One recorded generate stream and the derender bodies that replay it."""

    index: int
    path: str
    request_id: str
    prompt: list[int]
    ids: list[int]
    target: str
    heads: list[bytes] = field(default_factory=list)  # body up to the state
    tails: list[bytes] = field(default_factory=list)  # body after the state


def load_tokenizer(path: str) -> Any:
    """A ``tokenizers.Tokenizer`` from a ``tokenizer.json`` or its folder (padding off)."""
    from tokenizers import Tokenizer

    file = Path(path) / "tokenizer.json" if Path(path).is_dir() else Path(path)
    tok = Tokenizer.from_file(str(file))
    tok.no_padding()
    tok.no_truncation()
    return tok


def id_pool(tok: Any) -> tuple[list[int], list[int]]:
    """The multilingual ids every stream is cut from, and the character boundaries in them.

    A place is a boundary when the next ids decode to text that does not begin with U+FFFD (a
    stream starting there does not start inside a character).
    """
    ids = build(tok, (Marker("think"),)) if marker_ids(tok)["think"] is not None else []
    ids += tok.encode(GENERATION, add_special_tokens=False).ids
    gap = tok.encode("\n\n", add_special_tokens=False).ids
    for pieces in SAMPLES.values():
        ids += build(tok, pieces) + gap
    starts = [k for k in range(len(ids)) if not tok.decode(ids[k : k + 4]).startswith("\ufffd")]
    return ids, starts


def prompt_ids(tok: Any, question: str) -> list[int]:
    """A chat-shaped prompt: the tokenizer's start/end markers around a user turn."""
    marks = marker_ids(tok)
    start = [marks["start"]] if marks["start"] is not None else []
    end = [marks["end"]] if marks["end"] is not None else []
    enc = tok.encode
    return [
        *start,
        *enc(f"user\n{question}", add_special_tokens=False).ids,
        *end,
        *start,
        *enc("assistant\n", add_special_tokens=False).ids,
    ]


def c1_target(tok: Any, prompt: list[int], ids: list[int]) -> str:
    """REFERENCE C1 with ``skip_special_tokens=True``: the prompt's text cut from the decode."""
    full = tok.decode([*prompt, *ids], skip_special_tokens=True)
    pre = tok.decode(prompt, skip_special_tokens=True)
    if full.startswith(pre):
        return full[len(pre) :]
    n = 0
    while n < min(len(full), len(pre)) and full[n] == pre[n]:
        n += 1
    return full[n:]


def original_request(path: str, question: str, tokens: int) -> dict[str, Any]:
    """The client's request as the render step saw it (a small one)."""
    common: dict[str, Any] = {"model": MODEL, "max_tokens": tokens, "stream": True}
    common["stream_options"] = {"include_usage": True}
    if path == COMPLETION:
        return {"prompt": question, **common}
    return {"messages": [{"role": "user", "content": question}], **common}


def gen_chunk(request_id: str, ids: list[int], finish: str | None) -> bytes:
    """One ``GenerateStreamResponse`` chunk with one choice, every field as vLLM writes it."""
    choice = {
        "index": 0,
        "logprobs": None,
        "finish_reason": finish,
        "token_ids": ids,
        "routed_experts": None,
        "sampling_mask": None,
    }
    return dumps({"request_id": request_id, "choices": [choice]})[:-1] + _NULLS


def usage_chunk(request_id: str, prompt_tokens: int, completion_tokens: int) -> bytes:
    """The usage-only chunk that ends a stream with ``include_usage``."""
    usage = {
        "prompt_tokens": prompt_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "completion_tokens": completion_tokens,
        "prompt_tokens_details": None,
    }
    chunk = {"request_id": request_id, "choices": [], "usage": usage, "prompt_token_ids": None}
    return dumps({**chunk, "mm_placeholders": None, "metrics": None})


def make_streams(
    tok: Any, count: int, tokens: int, seed: int, chunk_ids: int | None = None
) -> list[Stream]:
    """``count`` streams of ``tokens`` output ids each, with their bodies prebuilt; chunks of
    ``chunk_ids`` ids (None: 1 to 4 at random)."""
    pool, starts = id_pool(tok)
    # Ending on a character boundary too keeps streams out of C1's one exception (a byte
    # fallback run cut after a character of it was sent), where text cannot equal the decode.
    clean = set(starts)
    starts = [k for k in starts if (k + tokens) % len(pool) in clean] or starts
    streams = []
    for i in range(count):
        rng = random.Random(seed * 1_000_003 + i)
        begin = starts[rng.randrange(len(starts))]
        ids = [pool[(begin + j) % len(pool)] for j in range(tokens)]
        question = QUESTIONS[i % len(QUESTIONS)]
        prompt = prompt_ids(tok, question)
        path = COMPLETION if i % 4 == 3 else CHAT
        s = Stream(
            i, path, f"gen-loadtest-{seed}-{i:05d}", prompt, ids, c1_target(tok, prompt, ids)
        )
        chunks, at = [], 0
        while at < tokens:
            size = chunk_ids or rng.randint(1, 4)
            chunks.append(gen_chunk(s.request_id, ids[at : at + size], None))
            at += size
        chunks.append(gen_chunk(s.request_id, [], "length"))
        chunks.append(usage_chunk(s.request_id, len(prompt), tokens))
        key = b"chat_request" if path == CHAT else b"completion_request"
        rest = b',"' + key + b'":' + dumps(original_request(path, question, tokens)) + b"}"
        for k, chunk in enumerate(chunks):
            s.heads.append(b'{"stream":true,"model":"' + MODEL.encode() + b'","generate_chunk":')
            s.heads[-1] += chunk + b',"stream_state":'
            seed_ids = b',"prompt_token_ids":' + dumps(prompt) if k == 0 else b""
            s.tails.append(b',"prompt_tokens":' + str(len(prompt)).encode() + seed_ids + rest)
        streams.append(s)
    return streams


def check_stream(s: Stream, answers: list[bytes]) -> str | None:
    """Checks one replayed stream's answers; returns what is wrong, or None."""
    if len(answers) != len(s.heads):
        return f"stream {s.index}: {len(answers)} of {len(s.heads)} chunks answered"
    text = []
    for k, raw in enumerate(answers):
        chunk = json.loads(raw)["chunk"]
        if chunk["id"] != s.request_id:
            return f"stream {s.index} chunk {k}: id {chunk['id']!r}"
        for choice in chunk["choices"]:
            text.append((choice["delta"]["content"] or "") if s.path == CHAT else choice["text"])
            if s.path == CHAT and (choice["delta"]["role"] == "assistant") != (k == 0):
                return f"stream {s.index} chunk {k}: role {choice['delta']['role']!r}"
    finish = json.loads(answers[-2])["chunk"]["choices"]
    if [c["finish_reason"] for c in finish] != ["length"]:
        return f"stream {s.index}: finish chunk answered {finish!r}"
    last = json.loads(answers[-1])["chunk"]
    usage = last["usage"] or {}
    if last["choices"] or usage.get("completion_tokens") != len(s.ids):
        return f"stream {s.index}: usage chunk answered {last!r}"
    if "".join(text) != s.target:
        got = "".join(text)
        n = next(
            (i for i, (a, b) in enumerate(zip(got, s.target, strict=False)) if a != b), len(got)
        )
        return (
            f"stream {s.index}: text differs from decode at char {n}: "
            f"got {got[max(0, n - 20) : n + 20]!r}, want {s.target[max(0, n - 20) : n + 20]!r}"
        )
    return None


# --- the servers -----------------------------------------------------------------------------

CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo += children.get(p, [])
    return found


class Server:
    """A derender server run as a real process, with the CPU time of it and its workers."""

    def __init__(self, name: str, tokenizer: str, workers: int, transport: str = "tcp") -> None:
        self.name, self.port, self.transport = name, free_port(), transport
        self.url = f"http://127.0.0.1:{self.port}"
        self.sockdir = tempfile.mkdtemp(prefix="tokstream-load-") if transport == "unix" else None
        if name == "tokstream":
            command = [sys.executable, "-m", "tokstream", "serve"]
        else:
            command = [sys.executable, str(HERE / "reference_server.py")]
        command += ["--tokenizer", tokenizer, "--workers", str(workers)]
        if self.sockdir is not None:  # the replay's address; /health is polled there too
            if name == "reference":
                raise ValueError("the reference server listens on TCP only")
            path = os.path.join(self.sockdir, "derender.sock")
            self.url = "unix:" + path
            command += ["--uds", path]
        else:
            command += ["--port", str(self.port)]
        command += ["--log-level", "warning", "--served-model-name", MODEL]
        self.command = command
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{name} server exited ({self.proc.returncode}):\n{self.tail()}")
            if healthy(self.url):
                break
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{name} server did not answer /health:\n{self.tail()}")
            time.sleep(0.1)

    def tail(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-4000:]

    def pids(self) -> list[int]:
        """The server's process and every descendant (uvicorn's workers)."""
        return descendants(self.proc.pid)

    def cpu_seconds(self) -> dict[int, float]:
        """User + system CPU seconds per live process of the server."""
        out = {}
        for pid in self.pids():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            out[pid] = (int(fields[11]) + int(fields[12])) / CLK_TCK
        return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        if self.sockdir is not None:
            shutil.rmtree(self.sockdir, ignore_errors=True)


def healthy(url: str) -> bool:
    """Whether ``GET /health`` at ``url`` (``http://...`` or ``unix:PATH``) answers 200."""
    if not url.startswith("unix:"):
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as resp:
                return resp.status == 200
        except OSError:
            return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(2)
            sock.connect(url.removeprefix("unix:"))
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            return sock.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def cpu_delta(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds spent between two snapshots by the processes alive at the second."""
    return sum(t - before.get(pid, 0.0) for pid, t in after.items())


def fmt_bytes(value: float) -> str:
    """Formats a size in kB or MB."""
    return f"{value / 1e6:.1f} MB" if value >= 1e6 else f"{value / 1e3:.0f} kB"


def fmt_ms(value: float) -> str:
    """Formats milliseconds with two decimals below 10."""
    return f"{value:.2f} ms" if value < 10 else f"{value:.1f} ms"


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..1) of unsorted values; NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(q * len(ordered) + 0.999999) - 1))]


def asyncio_run(coro: Any) -> Any:
    """Runs a coroutine on uvloop when it is installed (as uvicorn does), else asyncio's loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


def probe_health(url: str, seconds: float, delay: float) -> dict[str, Any]:
    """GETs ``/health`` every 10 ms for ``seconds`` after ``delay``, a new connection each time.

    Runs in its own process, so the load generator's event loop cannot delay the probes.
    """
    import http.client
    from urllib.parse import urlsplit

    where = urlsplit(url)
    time.sleep(delay)
    latencies, errors = [], 0
    stop = time.perf_counter() + seconds
    while time.perf_counter() < stop:
        start = time.perf_counter()
        try:
            conn = http.client.HTTPConnection(where.hostname or "", where.port, timeout=30)
            conn.request("GET", "/health")
            resp = conn.getresponse()
            resp.read()
            conn.close()
            errors += resp.status != 200
        except OSError:
            errors += 1
            continue
        latencies.append(time.perf_counter() - start)
        time.sleep(0.01)
    return {"latencies": latencies, "errors": errors}
