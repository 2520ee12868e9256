"""A real ``tokstream serve`` process on a loopback port, and a plain HTTP client for it.

The server runs as ``sys.executable -m tokstream serve`` on a port picked by binding port 0 (or,
with ``uds``, on a Unix domain socket); its output goes to a log file that failures quote.
Requests use the standard library's ``http.client``, one connection per request, so no client
keeps state a test did not ask for. Nothing here talks to anything but 127.0.0.1 and the
sockets the tests make.
"""

# ruff: noqa: RUF001
# (The full-width comma is CJK punctuation.)
from __future__ import annotations

import http.client
import json
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokstream import _core

from helpers.derender_util import INTERNALS as INTERNALS
from helpers.derender_util import error_message

HOST = "127.0.0.1"
CHAT = _core.CHAT_PATH
COMPLETION = _core.COMPLETION_PATH
#: Generous: 2 shared cores, and a worker that loads a 7 MB tokenizer.json before answering.
START_SECONDS = 60.0
STOP_SECONDS = 15.0


def free_port() -> int:
    """A port nothing listens on right now (the kernel's pick for port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


@dataclass
class Answer:
    """One HTTP response."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class UnixConnection(http.client.HTTPConnection):
    """``http.client`` over a Unix domain socket at ``path``."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


def request(
    port: int | str,
    method: str,
    path: str,
    body: bytes | Iterable[bytes] | None = None,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = 30.0,
) -> Answer:
    """Sends one request on a fresh connection; an iterable body goes out chunked. ``port`` is
    a TCP port on 127.0.0.1, or a Unix domain socket's path."""
    conn: http.client.HTTPConnection
    if isinstance(port, str):
        conn = UnixConnection(port, timeout)
    else:
        conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        chunked = body is not None and not isinstance(body, bytes)
        conn.request(method, path, body=body, headers=headers or {}, encode_chunked=chunked)
        response = conn.getresponse()
        data = response.read()
        found = {k.lower(): v for k, v in response.getheaders()}
        return Answer(response.status, found, data)
    finally:
        conn.close()


class Server:
    """A ``tokstream serve`` child process; ``start`` returns once ``/health`` answers 200.

    ``uds`` serves on a Unix domain socket at that path (``--uds``) instead of a TCP port."""

    def __init__(
        self,
        args: Sequence[str],
        log: Path,
        *,
        log_level: str = "warning",
        uds: Path | None = None,
    ) -> None:
        self.args = list(args)
        self.uds = uds
        self.log = log
        self.log_level = log_level
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> int | str:
        """Where requests go: the port, or the Unix socket's path."""
        return self.port if self.uds is None else str(self.uds)

    def command(self, port: int) -> list[str]:
        base = [sys.executable, "-m", "tokstream", "serve"]
        if self.uds is None:
            base += ["--host", HOST, "--port", str(port)]
        else:
            base += ["--uds", str(self.uds)]
        return [*base, "--log-level", self.log_level, *self.args]

    def start(self) -> Server:
        # The port can be taken between picking and binding it: then try another.
        for _ in range(3):
            self.port = free_port()
            with self.log.open("wb") as out:
                self.proc = subprocess.Popen(
                    self.command(self.port), stdout=out, stderr=subprocess.STDOUT
                )
            if self._wait_healthy():
                return self
            if "address already in use" not in self.output().lower():
                break
        self.stop()
        raise AssertionError(f"server {self.args} did not become healthy:\n{self.output()}")

    def _wait_healthy(self) -> bool:
        assert self.proc is not None
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                if request(self.address, "GET", "/health", timeout=2.0).status == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def output(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self, sig: int = signal.SIGTERM) -> int | None:
        """Signals the process and waits for it (killing it after ``STOP_SECONDS``)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(STOP_SECONDS)
        return self.proc.returncode

    def call(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Answer:
        """One request; a dict or list body is sent as JSON, a generator of bytes chunked."""
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        return request(self.address, method, path, body, **kwargs)

    def post(self, path: str, body: Any) -> Answer:
        return self.call("POST", path, body)

    def ok(self, path: str, body: Any) -> Any:
        """Posts ``body`` and returns the parsed answer, which must be 200."""
        answer = self.post(path, body)
        assert answer.status == 200, (answer.status, answer.body[:2000], str(body)[:2000])
        return answer.json()

    def metrics(self) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
        """``/metrics`` as ``{(name, labels without worker): value}``, summed over workers."""
        answer = self.call("GET", "/metrics")
        assert answer.status == 200, answer
        assert answer.headers["content-type"].startswith("text/plain"), answer.headers
        return parse_metrics(answer.body.decode())


_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Parses Prometheus text format; every non-comment line must be a sample."""
    out: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        assert match, f"not a Prometheus sample: {line!r}"
        name, labels, value = match.groups()
        pairs = frozenset((k, v) for k, v in _LABEL.findall(labels or "") if k != "worker")
        out[(name, pairs)] = out.get((name, pairs), 0.0) + float(value)
    return out


def metric(
    found: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    """One sample's value, 0 when absent (a counter not yet incremented)."""
    return found.get((name, frozenset(labels.items())), 0.0)


def assert_error(answer: Answer, code: int, kind: str) -> None:
    """The OpenAI-style error object with ``code`` and ``kind``, hiding internals."""
    assert answer.status == code, (answer.status, answer.body[:500])
    assert answer.headers.get("content-type") == "application/json", answer.headers
    error_message(answer.json(), code, kind)


def sample_ids(tok: Any) -> list[int]:
    """Split characters (CJK, ZWJ emoji, flags, Devanagari), a special token and ``<think>``."""
    added = sorted(tok.get_added_tokens_decoder().items())
    special = next(token.content for _, token in added if token.special)
    text = (
        f"Hello 中文测试，日本語のテキスト。{special} 삥뽕빵 👨‍👩‍👧‍👦 🇯🇵 नमस्ते"
        " <think>ok</think> done 🤖!"
    )
    return tok.encode(text, add_special_tokens=False).ids


# --- generate shapes (the fields a derender needs; the rest default) -----------------------------


def gen_choice(
    ids: Sequence[int], finish_reason: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {"index": 0, "token_ids": list(ids), "finish_reason": finish_reason, **extra}


def whole_body(
    path: str,
    ids: Sequence[int],
    *,
    prompt: Sequence[int] | None = None,
    request_id: str = "gen-1",
    **extra: Any,
) -> dict[str, Any]:
    """A whole derender request of one choice, for either path."""
    response = {
        "request_id": request_id,
        "choices": [gen_choice(ids, "length", **extra)],
        "prompt_token_ids": None if prompt is None else list(prompt),
    }
    if path == CHAT:
        return {"generate_response": response}
    return {"generate_responses": [response]}


def whole_text(path: str, answer: Any) -> str:
    choice = answer["choices"][0]
    return str(choice["message"]["content"] if path == CHAT else choice["text"])


def chunk_text(path: str, answer: Any) -> str:
    key = "delta" if path == CHAT else None
    # An empty delta's content is null, as vLLM's.
    choices = answer["chunk"]["choices"]
    return "".join(str((c[key]["content"] or "") if key else c["text"]) for c in choices)


def stream_body(
    chunk_ids: Sequence[int] | None,
    state: dict[str, Any] | None,
    *,
    finish_reason: str | None = None,
    prompt: Sequence[int] | None = None,
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    """One streaming derender request; ``chunk_ids=None`` is a usage-only chunk (no choices)."""
    choices = [] if chunk_ids is None else [gen_choice(chunk_ids, finish_reason)]
    chunk = {
        "request_id": "gen-s",
        "choices": choices,
        "usage": usage,
        "prompt_token_ids": None if prompt is None else list(prompt),
    }
    return {"stream": True, "generate_chunk": chunk, "stream_state": state}
