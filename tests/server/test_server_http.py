"""``tokstream serve``'s HTTP layer: a regression test for each of issue 23's defects, and HTTP/2.

Every test drives a real ``tokstream serve`` process over raw sockets, on loopback TCP and on a
Unix domain socket (``--uds``) alike, and holds it to the front's contract: chunked framing that
cannot desync a pipelined connection, HEAD without a body, ``Date``, ``Allow`` on 405, the
``Host`` checks, the absolute form, ``100 Continue`` only to HTTP/1.1 clients, the ``Connection``
tokens, 501 for a transfer coding other than ``chunked``, every refusal counted in ``/metrics``,
``Cache-Control: no-store`` on the probes; ``/health`` answering while one client pipelines, while
connections flood past the cap or the open-file limit; memory that follows the bytes received and
not a declared length; connections released when their answers go unread or their client leaves;
one front (no ``--front asgi``, no ``tokstream.connection``); and many concurrent HTTP/2 streams on
one connection (cleartext, prior knowledge), each answered exactly on its own stream.

Every socket has a timeout and every loop a bound, so a regression fails instead of hanging. The
only timing bounds are generous liveness ones (``LIVENESS``, ``MARGIN``) that a slow machine
stays far inside and only a starved or stuck server breaks.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import importlib.util
import json
import os
import re
import resource
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import h2.config
import h2.connection
import h2.events
import pytest
import tokstream
from helpers.derender_util import error_message
from helpers.raw_http import raw_connect
from helpers.real_tokenizers import load_tokenizer, tokenizer_path
from helpers.server_util import (
    CHAT,
    COMPLETION,
    HOST,
    Answer,
    Server,
    metric,
    request,
    stream_body,
    whole_body,
)

#: Short timeouts so the tests take seconds; the margins below are generous on 2 shared cores.
HEADER_TIMEOUT = 1.0
KEEP_ALIVE = 1.0
BODY_TIMEOUT = 1.0
SEND_TIMEOUT = 1.0
#: Seconds past a timeout (or after the cause) within which its effect must show.
MARGIN = 4.0
#: A ``/health`` on a new connection must answer within this, each step (connect, read).
LIVENESS = 2.0
#: The cap of the servers with short timeouts.
CAP = 8
#: The head, body and keep-alive timeouts of the servers whose floods must outlast the probes.
LONG = 30.0
#: Their cap: room for the 100 clients of item 9 and the 64 heads of item 6.
ROOMY_CAP = 128
TRANSPORTS = ("tcp", "unix")
SHORT = [
    *("--header-timeout", str(HEADER_TIMEOUT)),
    *("--keep-alive-timeout", str(KEEP_ALIVE)),
    *("--body-timeout", str(BODY_TIMEOUT)),
]

HEALTH = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
#: A last request on a connection: answered, then the server closes.
LAST_HEALTH = b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
#: A head that never ends (no blank line).
PARTIAL_HEAD = b"GET /health HTTP/1.1\r\nHost: x\r\n"
#: A derender whose answer's text is "Hello, world".
BODY = json.dumps(whole_body(COMPLETION, [9707, 11, 1879])).encode()
HELLO = "Hello, world"


def qwen() -> list[str]:
    return ["--tokenizer", str(tokenizer_path("qwen3").parent)]


def launch(
    factory: pytest.TempPathFactory, transport: str, name: str, flags: Sequence[str]
) -> Iterator[Server]:
    folder = factory.mktemp(name)
    uds = folder / "s.sock" if transport == "unix" else None
    served = Server([*qwen(), *flags], folder / "server.log", uds=uds)
    try:
        yield served.start()
    finally:
        served.stop()


@pytest.fixture(scope="module", params=TRANSPORTS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """One worker thread, short timeouts, a small cap."""
    flags = [*SHORT, "--max-connections", str(CAP)]
    yield from launch(tmp_path_factory, request.param, "http", flags)


@pytest.fixture(scope="module", params=TRANSPORTS)
def two_workers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """Two worker threads, short timeouts, a small cap."""
    flags = [*SHORT, "--workers", "2", "--max-connections", str(CAP)]
    yield from launch(tmp_path_factory, request.param, "workers", flags)


@pytest.fixture(scope="module", params=TRANSPORTS)
def roomy(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """Long timeouts (so only the behaviour under test can free a connection) and a cap of
    ``ROOMY_CAP``."""
    flags = ["--header-timeout", str(LONG), "--body-timeout", str(LONG)]
    flags += ["--keep-alive-timeout", str(LONG), "--max-connections", str(ROOMY_CAP)]
    yield from launch(tmp_path_factory, request.param, "roomy", flags)


@pytest.fixture(scope="module", params=TRANSPORTS)
def unread(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """A one-second ``--send-timeout``, short timeouts, a cap of ``ROOMY_CAP``."""
    flags = [*SHORT, "--send-timeout", str(SEND_TIMEOUT), "--max-connections", str(ROOMY_CAP)]
    yield from launch(tmp_path_factory, request.param, "unread", flags)


# --- raw HTTP/1.x: sending, reading, splitting into answers ---------------------------------------


@dataclass
class Reply:
    """One HTTP/1.x answer as the server framed it (field names lower-cased, in order)."""

    status: int
    fields: list[tuple[str, str]]
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """The field's values joined with commas, None when absent."""
        values = [value for key, value in self.fields if key == name]
        return ", ".join(values) if values else None

    def tokens(self, name: str) -> list[str]:
        return [t.strip().lower() for t in (self.header(name) or "").split(",") if t.strip()]


_STATUS_LINE = re.compile(rb"HTTP/1\.[01] [1-5]\d\d[ \r]")


def _dechunk(raw: bytes) -> tuple[bytes, bytes] | None:
    """A chunked body at the start of ``raw`` and what follows it; None while incomplete."""
    body = b""
    while True:
        end = raw.find(b"\r\n")
        if end < 0:
            return None
        size = int(raw[:end].split(b";")[0], 16)
        raw = raw[end + 2 :]
        if size == 0:
            trailers = raw.find(b"\r\n") if raw.startswith(b"\r\n") else raw.find(b"\r\n\r\n")
            if trailers < 0:
                return None
            return body, raw[trailers + (2 if raw.startswith(b"\r\n") else 4) :]
        if len(raw) < size + 2:
            return None
        body += raw[:size]
        raw = raw[size + 2 :]


def split_replies(raw: bytes, methods: Sequence[str]) -> tuple[list[Reply], bytes]:
    """The answers in ``raw`` to requests of ``methods``, in order (1xx answers included), and
    the bytes left over: an answer cut short, or bytes that are not an answer at all (as the
    body a HEAD answer must not have)."""
    replies: list[Reply] = []
    asked = 0
    while raw and _STATUS_LINE.match(raw):
        end = raw.find(b"\r\n\r\n")
        if end < 0:
            break
        lines = raw[:end].decode("latin-1").split("\r\n")
        fields = [
            (k.strip().lower(), v.strip()) for k, _, v in (x.partition(":") for x in lines[1:])
        ]
        reply = Reply(int(lines[0].split(" ")[1]), fields)
        after = raw[end + 4 :]
        if reply.status < 200:
            replies.append(reply)
            raw = after
            continue
        if asked == len(methods):
            break
        length = reply.header("content-length")
        if methods[asked] == "HEAD" or reply.status in (204, 304):
            body = b""
        elif "chunked" in reply.tokens("transfer-encoding"):
            found = _dechunk(after)
            if found is None:
                break
            body, after = found
        elif length is not None:
            if len(after) < int(length):
                break
            body, after = after[: int(length)], after[int(length) :]
        else:  # delimited by the close
            body, after = after, b""
        reply.body = body
        replies.append(reply)
        asked += 1
        raw = after
    return replies, raw


def finals(replies: Sequence[Reply]) -> list[int]:
    """The statuses of the final (not 1xx) answers."""
    return [r.status for r in replies if r.status >= 200]


def receive(
    sock: socket.socket,
    methods: Sequence[str],
    seconds: float = MARGIN,
    *,
    until_closed: bool = True,
) -> tuple[list[Reply], bytes, bool]:
    """Reads answers to ``methods`` until the server closes (or, with ``until_closed`` False,
    until each is answered), for ``seconds`` at most: the answers, the bytes left over, and
    whether the server closed (end of stream or reset)."""
    raw = b""
    deadline = time.monotonic() + seconds
    while True:
        replies, rest = split_replies(raw, methods)
        if not until_closed and len(finals(replies)) == len(methods):
            return replies, rest, False
        left = deadline - time.monotonic()
        if left <= 0:
            return replies, rest, False
        sock.settimeout(left)
        try:
            data = sock.recv(1 << 16)
        except TimeoutError:
            continue
        except (ConnectionResetError, BrokenPipeError):
            data = b""
        if not data:
            return (*split_replies(raw, methods), True)
        raw += data


def interim(sock: socket.socket) -> list[Reply]:
    """The 1xx answers the server sends before the request's body is sent (read until a
    blank line, within ``LIVENESS``)."""
    raw = b""
    deadline = time.monotonic() + LIVENESS
    while b"\r\n\r\n" not in raw and time.monotonic() < deadline:
        sock.settimeout(max(deadline - time.monotonic(), 0.01))
        try:
            data = sock.recv(1 << 16)
        except TimeoutError:
            break
        if not data:
            break
        raw += data
    return split_replies(raw, [])[0]


def connect(address: int | str, timeout: float = MARGIN) -> socket.socket:
    return raw_connect(address, timeout)


def exchange(
    address: int | str, data: bytes, methods: Sequence[str], seconds: float = MARGIN
) -> tuple[list[Reply], bytes, bool]:
    """Sends ``data`` on a new connection in one write and reads until the server closes."""
    sock = connect(address)
    try:
        try:
            sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the end: what it answered is still to be read
        return receive(sock, methods, seconds)
    finally:
        sock.close()


def assert_refused(replies: list[Reply], rest: bytes, closed: bool) -> None:
    """A refusal: the connection closed with at most one answer, a 400 (hyper's, or the JSON
    one), and nothing after it."""
    assert closed, f"the connection stayed open after {finals(replies)}"
    assert len(replies) <= 1 and rest == b"", (finals(replies), rest[:300])
    if replies:
        assert replies[0].status == 400, (replies[0].status, replies[0].body[:300])


def assert_json_reply(reply: Reply, code: int, kind: str | None) -> None:
    """The JSON error shape with ``code`` (and ``kind``, when given)."""
    assert reply.status == code, (reply.status, reply.body[:300])
    assert reply.header("content-type") == "application/json", reply.fields
    body = json.loads(reply.body)
    if kind is not None:
        error_message(body, code, kind)
    else:
        assert list(body) == ["error"], body
        assert set(body["error"]) == {"message", "type", "param", "code"}, body
        assert body["error"]["code"] == code, body


def post_head(length: int, path: str = COMPLETION, extra: str = "") -> bytes:
    return f"POST {path} HTTP/1.1\r\nHost: x\r\n{extra}Content-Length: {length}\r\n\r\n".encode()


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def post_chunked(framing: bytes, version: str = "1.1", extra: str = "") -> bytes:
    head = f"POST {COMPLETION} HTTP/{version}\r\nHost: x\r\n{extra}"
    return head.encode() + b"Transfer-Encoding: chunked\r\n\r\n" + framing


def text_of(reply: Reply | Answer) -> str:
    return str(json.loads(reply.body)["choices"][0]["text"])


# --- the server process: probes, files, memory, counters ------------------------------------------


def probe(address: int | str) -> None:
    """``/health`` on a new connection answers 200, within ``LIVENESS`` a step."""
    try:
        answer = request(address, "GET", "/health", timeout=LIVENESS)
    except OSError as e:
        pytest.fail(f"/health did not answer within {LIVENESS} s: {e!r}")
    assert answer.status == 200, answer


def healthy(address: int | str) -> None:
    answer = request(address, "GET", "/health", timeout=10)
    assert answer.status == 200, answer


def pid_of(server: Server) -> int:
    assert server.proc is not None and server.proc.poll() is None, server.output()
    return server.proc.pid


def open_files(server: Server) -> int:
    return len(os.listdir(f"/proc/{pid_of(server)}/fd"))


def vm_kib(server: Server, name: str) -> int:
    status = Path(f"/proc/{pid_of(server)}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith(name + ":")))


def wait_for(condition: Callable[[], bool], seconds: float) -> bool:
    """Polls ``condition`` every 50 ms for ``seconds`` at most; whether it came true."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def settle(server: Server, files: int) -> None:
    """Waits (bounded) until the server holds no more than ``files`` open files plus two."""
    wait_for(lambda: open_files(server) <= files + 2, MARGIN)


def refusals(server: Server, reason: str) -> float:
    """``tokstream_errors_total`` for ``reason``, summed over any other labels."""
    found = server.metrics()
    return sum(
        value
        for (name, labels), value in found.items()
        if name == "tokstream_errors_total" and ("reason", reason) in labels
    )


def health_count(server: Server) -> float:
    found = server.metrics()
    return metric(found, "tokstream_requests_total", endpoint="health", status="200")


def quiet(server: Server) -> None:
    """Waits (bounded) until the server has stopped answering what a closed client left queued:
    the /health count holds still for 0.3 s."""
    last = -1.0
    for _ in range(40):
        now = health_count(server)
        if now == last:
            return
        last = now
        time.sleep(0.3)


def close_all(socks: Sequence[socket.socket]) -> None:
    for sock in socks:
        sock.close()


# --- 1, 3: chunked framing ------------------------------------------------------------------------


def first_chunk_line(line: bytes) -> bytes:
    """The body in chunks, the first (5 bytes) under the size line ``line``."""
    return line + BODY[:5] + b"\r\n" + chunk(BODY[5:]) + b"0\r\n\r\n"


BAD_FRAMING = {
    "a trailer line that is no field": chunk(BODY) + b"0\r\nnot a field line\r\n\r\n",
    "a bare LF in a chunk extension": first_chunk_line(b"5;a\nb\r\n"),
    "a space before the chunk size": first_chunk_line(b" 5\r\n"),
    "a tab before the chunk size": first_chunk_line(b"\t5\r\n"),
    "a bare CR in a chunk extension": first_chunk_line(b"5;a\rb\r\n"),
    "a NUL in a chunk extension": first_chunk_line(b"5;a\x00b\r\n"),
}


@pytest.mark.parametrize("case", list(BAD_FRAMING))
def test_malformed_chunked_framing_is_refused_with_nothing_answered_after(
    server: Server, case: str
) -> None:
    """Items 1 and 3: a bad trailer or chunk-size line is refused (a 400, or a close), and the
    request pipelined after it is not answered: it is neither taken into the body nor served."""
    data = post_chunked(BAD_FRAMING[case]) + LAST_HEALTH
    assert_refused(*exchange(server.address, data, ["POST", "GET"]))
    healthy(server.address)


def test_a_bare_lf_after_the_last_chunk_does_not_swallow_the_next_request(server: Server) -> None:
    """Item 1: after ``0\\r\\n\\n`` the next request is either answered as its own request, or
    the connection is refused and closed with nothing answered after the refusal; it never
    vanishes into a trailer section."""
    data = post_chunked(chunk(BODY) + b"0\r\n\n") + LAST_HEALTH
    replies, rest, closed = exchange(server.address, data, ["POST", "GET"])
    if finals(replies)[:1] == [200]:
        assert finals(replies) == [200, 200], "the request after the body vanished"
        assert rest == b"" and closed, rest[:300]
        assert text_of(replies[0]) == HELLO
    else:
        assert_refused(replies, rest, closed)
    healthy(server.address)


# --- 2: HEAD --------------------------------------------------------------------------------------


def test_head_answers_have_no_body_and_the_next_answer_is_read_right(server: Server) -> None:
    """Item 2: HEAD of an unknown path (404), of a derender path (405) and of /health get heads
    only, so the GET pipelined after them is read as its own answer."""
    heads = [b"HEAD /nope HTTP/1.1\r\nHost: x\r\n\r\n"]
    heads.append(f"HEAD {COMPLETION} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    heads.append(b"HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b"".join(heads) + LAST_HEALTH
    replies, rest, closed = exchange(server.address, data, ["HEAD", "HEAD", "HEAD", "GET"])
    assert finals(replies) == [404, 405, 200, 200], (finals(replies), rest[:300])
    assert rest == b"" and closed, rest[:300]
    assert replies[-1].body == b""


# --- 4: HTTP/1.0 with Transfer-Encoding -----------------------------------------------------------


def test_http10_with_transfer_encoding_is_refused_and_closed(server: Server) -> None:
    """Item 4: HTTP/1.0 with ``Transfer-Encoding: chunked`` and ``Connection: keep-alive`` is
    refused and closed (RFC 9112 6.1): the request pipelined after it is not answered."""
    data = post_chunked(chunk(BODY) + b"0\r\n\r\n", "1.0", "Connection: keep-alive\r\n")
    data += b"GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
    assert_refused(*exchange(server.address, data, ["POST", "GET"]))


# --- 5: a pipelining client and the other connections ---------------------------------------------


class Pipeliner:
    """One client pipelining ``GET /health`` as fast as the server takes it, reading every
    answer: a writer thread keeps requests queued, a reader thread counts the bytes answered
    (a /health answer is more than 40)."""

    def __init__(self, address: int | str) -> None:
        self.sock = connect(address, timeout=MARGIN)
        self.done = threading.Event()
        self.received = 0
        self.threads = [threading.Thread(target=self._write), threading.Thread(target=self._read)]

    def __enter__(self) -> Pipeliner:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        for thread in self.threads:
            thread.join(MARGIN + 1)
        self.sock.close()

    def _write(self) -> None:
        batch = HEALTH * 512
        deadline = time.monotonic() + 60
        try:
            while not self.done.is_set() and time.monotonic() < deadline:
                self.sock.sendall(batch)
        except OSError:
            pass

    def _read(self) -> None:
        buffer = bytearray(1 << 18)
        try:
            while not self.done.is_set():
                n = self.sock.recv_into(buffer)
                if not n:
                    return
                self.received += n
        except OSError:
            pass


def health_beside_pipeliners(server: Server, count: int) -> None:
    loads = [Pipeliner(server.address) for _ in range(count)]
    with contextlib.ExitStack() as stack:
        for load in loads:
            stack.enter_context(load)
        started = wait_for(lambda: all(load.received > 500 * 40 for load in loads), MARGIN)
        assert started, [load.received for load in loads]
        for _ in range(20):
            probe(server.address)
            time.sleep(0.05)
        before = [load.received for load in loads]
        pairs = list(zip(loads, before, strict=True))
        served = wait_for(lambda: all(load.received > n + 100 * 40 for load, n in pairs), MARGIN)
        assert served, "a pipelining client stopped being served"
    quiet(server)


def test_a_pipelining_client_does_not_starve_health(server: Server) -> None:
    """Item 5: while one client pipelines /health and reads the answers, /health on other
    connections answers within the liveness bound, and the pipeliner keeps being served."""
    health_beside_pipeliners(server, 1)


def test_a_pipelining_client_does_not_starve_health_with_two_workers(two_workers: Server) -> None:
    """Item 5, with ``--workers 2`` and a pipelining client for each worker."""
    health_beside_pipeliners(two_workers, 2)


# --- 6: a declared length is not reserved ---------------------------------------------------------


def test_a_declared_content_length_reserves_no_memory(roomy: Server) -> None:
    """Item 6: 64 heads of ``Content-Length: 33554432`` with one body byte each grow neither the
    server's RSS nor its address space by anything like 64 x 32 MiB; with its address space
    limited to 1 GiB above what it uses, the server stays up and answers."""
    pid = pid_of(roomy)
    files = open_files(roomy)
    size, rss = vm_kib(roomy, "VmSize"), vm_kib(roomy, "VmRSS")
    limit = resource.prlimit(pid, resource.RLIMIT_AS)
    resource.prlimit(pid, resource.RLIMIT_AS, (size * 1024 + (1 << 30), limit[1]))
    held: list[socket.socket] = []
    try:
        for _ in range(64):
            held.append(connect(roomy.address, timeout=LONG))
            held[-1].sendall(post_head(33554432) + b"{")
        # All but a few accepted (the count started with the start-up probe's connection in it).
        assert wait_for(lambda: open_files(roomy) >= files + 60, MARGIN), "not all accepted"
        healthy(roomy.address)  # queued behind the 64: their heads have been read
        time.sleep(0.2)
        assert roomy.proc is not None and roomy.proc.poll() is None, roomy.output()[-2000:]
        grown_rss = vm_kib(roomy, "VmRSS") - rss
        grown_size = vm_kib(roomy, "VmSize") - size
        assert grown_rss < 200 * 1024, f"RSS grew {grown_rss} KiB"
        assert grown_size < 1024 * 1024, f"the address space grew {grown_size} KiB"
        probe(roomy.address)
    finally:
        close_all(held)
        if roomy.proc is not None and roomy.proc.poll() is None:
            resource.prlimit(pid, resource.RLIMIT_AS, limit)
    settle(roomy, files)


# --- 7: floods past the open-file limit and past the cap ------------------------------------------


def test_health_answers_when_connections_outnumber_the_open_file_limit(roomy: Server) -> None:
    """Item 7: with the server's open-file limit 48 above what it has open (its cap is higher),
    120 connections each sending part of a head: /health on a new connection still answers
    (accept is retried, not left until another connection arrives)."""
    pid = pid_of(roomy)
    files = open_files(roomy)
    limit = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (files + 48, limit[1]))
    held: list[socket.socket] = []
    try:
        for _ in range(120):
            held.append(connect(roomy.address, timeout=LONG))
            held[-1].sendall(PARTIAL_HEAD)
        assert wait_for(lambda: open_files(roomy) >= files + 32, MARGIN), open_files(roomy)
        for _ in range(5):
            probe(roomy.address)
    finally:
        if roomy.proc is not None and roomy.proc.poll() is None:
            resource.prlimit(pid, resource.RLIMIT_NOFILE, limit)
        close_all(held)
    settle(roomy, files)


def test_health_answers_with_half_again_the_cap_of_slow_heads(roomy: Server) -> None:
    """Item 7: with ``--max-connections 128`` and 192 connections each sending part of a head,
    /health gets 200, not 503 (a new connection closes the oldest idle one)."""
    files = open_files(roomy)
    held: list[socket.socket] = []
    try:
        for _ in range(ROOMY_CAP * 3 // 2):
            held.append(connect(roomy.address, timeout=LONG))
            held[-1].sendall(PARTIAL_HEAD)
        reached = files + ROOMY_CAP - 8
        assert wait_for(lambda: open_files(roomy) >= reached, MARGIN), open_files(roomy)
        for _ in range(5):
            probe(roomy.address)
    finally:
        close_all(held)
    settle(roomy, files)


# --- 8: answers nobody reads ----------------------------------------------------------------------


def unread_client(address: int | str) -> socket.socket:
    """A non-blocking connection with a small receive buffer (on TCP)."""
    if isinstance(address, str):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        target: Any = address
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        target = (HOST, address)
    sock.settimeout(MARGIN)
    sock.connect(target)
    sock.setblocking(False)
    return sock


def closed_by_server(sock: socket.socket, deadline: float) -> bool:
    """Reads what is buffered until the server's close (end of stream or reset)."""
    sock.setblocking(True)
    for _ in range(10_000):  # at most what the buffers hold
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        sock.settimeout(left)
        try:
            if not sock.recv(1 << 16):
                return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except TimeoutError:
            return False
    return False


def test_clients_that_never_read_are_closed_after_the_send_timeout(unread: Server) -> None:
    """Item 8: 60 clients pipeline /metrics and never read; once their answers stop draining,
    the server closes each within the send timeout plus a margin (its open files fall back),
    each client sees the close, and /metrics counts them under ``send_timeout``."""
    files = open_files(unread)
    counted = refusals(unread, "send_timeout")
    socks = [unread_client(unread.address) for _ in range(60)]
    try:
        batch = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 256
        sent = [0] * len(socks)
        pending = [b""] * len(socks)
        stuck = [0] * len(socks)
        closed = [False] * len(socks)
        peak = 0

        def done(k: int) -> bool:
            # A client stops once its writes stall, but not before the answers to what it sent
            # overflow any socket buffers (64 KiB of requests is about 1,900 answers): under
            # load, a client stalled early could have every answer drained and then be closed
            # by another limit than the send timeout.
            return closed[k] or sent[k] > 4 << 20 or (stuck[k] >= 3 and sent[k] >= 64 << 10)

        for _ in range(300):  # rounds until every client's writes stall
            for k, sock in enumerate(socks):
                if done(k):
                    continue
                try:
                    data = pending[k] or batch
                    n = sock.send(data)
                    pending[k], sent[k], stuck[k] = data[n:], sent[k] + n, 0
                except BlockingIOError:
                    stuck[k] += 1
                except OSError:
                    closed[k] = True  # closed already
            peak = max(peak, open_files(unread))
            if all(done(k) for k in range(len(socks))):
                break
            time.sleep(0.02)
        assert peak >= files + 50, (files, peak)
        # A client past 4 MB has filled the kernel's buffers on loopback TCP (which grow to
        # megabytes), not the server: whether the server let it go is checked below.
        released = wait_for(lambda: open_files(unread) <= files + 2, SEND_TIMEOUT + MARGIN + 2)
        assert released, f"{open_files(unread) - files} connections still held"
        deadline = time.monotonic() + MARGIN
        assert all(closed_by_server(sock, deadline) for sock in socks)
    finally:
        close_all(socks)
    reasons = {
        labels: value
        for (name, labels), value in unread.metrics().items()
        if name == "tokstream_errors_total"
    }
    assert refusals(unread, "send_timeout") - counted >= 60, reasons
    healthy(unread.address)


# --- 9: a client that leaves mid-body -------------------------------------------------------------


def test_clients_that_send_part_of_a_body_and_close_are_released(roomy: Server) -> None:
    """Item 9: 100 clients each send a head, part of its body and a FIN in one go: the server
    notices every FIN (its body timeout is 30 s here) and holds none of them moments later."""
    files = open_files(roomy)
    for _ in range(100):
        sock = connect(roomy.address)
        sock.sendall(post_head(1000) + b'{"generate_responses": [')
        sock.close()
    healthy(roomy.address)  # queued behind the 100: they have all been accepted
    released = wait_for(lambda: open_files(roomy) <= files + 2, MARGIN)
    assert released, f"{open_files(roomy) - files} connections still held"


# --- 10 to 19: conformance ------------------------------------------------------------------------

_IMF_FIXDATE = re.compile(
    r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT$"
)


def test_every_answer_has_a_date(server: Server) -> None:
    """Item 10: 200s, a HEAD, errors and a derender all carry a ``Date`` in IMF-fixdate, close
    to this machine's clock."""
    calls = [
        ("GET", "/health", None),
        ("HEAD", "/health", None),
        ("GET", "/v1/models", None),
        ("GET", "/metrics", None),
        ("GET", "/nope", None),
        ("POST", "/health", b"{}"),
        ("POST", COMPLETION, BODY),
        ("POST", COMPLETION, b"{not json"),
    ]
    for method, path, body in calls:
        answer = request(server.address, method, path, body, timeout=10)
        date = answer.headers.get("date")
        assert date is not None and _IMF_FIXDATE.match(date), (method, path, answer.headers)
        skew = datetime.now(timezone.utc) - email.utils.parsedate_to_datetime(date)
        assert abs(skew.total_seconds()) < 600, (date, skew)


ALLOW = [
    ("GET", COMPLETION, {"POST"}),
    ("GET", CHAT, {"POST"}),
    ("PUT", COMPLETION, {"POST"}),
    ("POST", "/health", {"GET", "HEAD"}),
    ("POST", "/v1/models", {"GET", "HEAD"}),
    ("DELETE", "/metrics", {"GET", "HEAD"}),
]


@pytest.mark.parametrize(("method", "path", "allowed"), ALLOW)
def test_a_405_says_what_is_allowed(
    server: Server, method: str, path: str, allowed: set[str]
) -> None:
    """Item 11: a wrong method gets the JSON 405 with ``Allow``: POST on the derender paths,
    GET and HEAD on the GET endpoints."""
    body = b"{}" if method in ("POST", "PUT") else None
    answer = request(server.address, method, path, body, timeout=10)
    assert answer.status == 405, answer
    assert answer.headers.get("content-type") == "application/json", answer.headers
    error_message(answer.json(), 405, "MethodNotAllowedError")
    allow = {token.strip() for token in answer.headers.get("allow", "").split(",")}
    assert allow == allowed, answer.headers


HOSTS = {
    "HTTP/1.1 without Host": (b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n", 400),
    "HTTP/1.1 with two Host": (
        b"GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n",
        400,
    ),
    "HTTP/1.0 with two Host": (b"GET /health HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", 400),
    "a derender without Host": (
        post_head(len(BODY), extra="Connection: close\r\n").replace(b"Host: x\r\n", b"") + BODY,
        400,
    ),
    "HTTP/1.0 without Host": (b"GET /health HTTP/1.0\r\n\r\n", 200),
}


@pytest.mark.parametrize("case", list(HOSTS))
def test_host_is_required_once_in_http11_and_never_twice(server: Server, case: str) -> None:
    """Item 12: no ``Host`` in HTTP/1.1, or two in any version, gets the JSON 400; HTTP/1.0
    without one is served."""
    data, status = HOSTS[case]
    method = "POST" if data.startswith(b"POST") else "GET"
    replies, rest, closed = exchange(server.address, data, [method])
    assert finals(replies) == [status], (finals(replies), rest[:300])
    assert rest == b"" and closed
    if status == 400:
        assert_json_reply(replies[0], 400, "BadRequestError")


def test_an_absolute_form_target_is_served_like_its_path(server: Server) -> None:
    """Item 13: ``GET http://x/health``, ``GET http://x/v1/models`` and a derender posted to
    ``http://x/v1/completions/derender`` are served as their paths."""
    data = b"GET http://x/health HTTP/1.1\r\nHost: x\r\n\r\n"
    data += b"GET http://x/v1/models HTTP/1.1\r\nHost: x\r\n\r\n"
    data += f"POST http://x{COMPLETION} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n".encode()
    data += f"Content-Length: {len(BODY)}\r\n\r\n".encode() + BODY
    replies, rest, closed = exchange(server.address, data, ["GET", "GET", "POST"])
    assert finals(replies) == [200, 200, 200], (finals(replies), rest[:300])
    assert rest == b"" and closed
    assert json.loads(replies[1].body)["object"] == "list"
    assert text_of(replies[2]) == HELLO


def test_no_100_continue_to_an_http10_client(server: Server) -> None:
    """Item 14: an HTTP/1.0 request with ``Expect: 100-continue`` gets no 100, only its answer."""
    head = f"POST {COMPLETION} HTTP/1.0\r\nHost: x\r\nExpect: 100-continue\r\n"
    sock = connect(server.address)
    try:
        sock.sendall(head.encode() + f"Content-Length: {len(BODY)}\r\n\r\n".encode())
        early = sock.recv(1 << 16) if select.select([sock], [], [], 0.5)[0] else b""
        sock.sendall(BODY)
        replies, rest, closed = receive(sock, ["POST"])
    finally:
        sock.close()
    assert early == b"", early[:300]
    assert [r.status for r in replies] == [200] and rest == b"" and closed, (
        [r.status for r in replies],
        rest[:300],
    )
    assert text_of(replies[0]) == HELLO


def test_an_http11_client_expecting_100_gets_it_then_its_answer(server: Server) -> None:
    """Item 14, the other side: an HTTP/1.1 client that waits for ``100 Continue`` gets it
    (the derender reads its body), then its answer."""
    sock = connect(server.address)
    try:
        sock.sendall(post_head(len(BODY), extra="Expect: 100-continue\r\nConnection: close\r\n"))
        first = interim(sock)
        sock.sendall(BODY)
        replies, rest, closed = receive(sock, ["POST"])
    finally:
        sock.close()
    assert [r.status for r in first] == [100], [r.status for r in first]
    assert finals(replies) == [200] and rest == b"" and closed, (finals(replies), rest[:300])
    assert text_of(replies[-1]) == HELLO


@pytest.mark.parametrize("value", ["close, keep-alive", "keep-alive, close"])
def test_connection_close_among_other_tokens_closes(server: Server, value: str) -> None:
    """Item 15: ``Connection: close`` with another token still closes after the answer: the
    request pipelined after it is not answered."""
    data = f"GET /health HTTP/1.1\r\nHost: x\r\nConnection: {value}\r\n\r\n".encode() + HEALTH
    replies, rest, closed = exchange(server.address, data, ["GET", "GET"])
    assert finals(replies) == [200] and rest == b"" and closed, (finals(replies), rest[:300])
    assert "close" in replies[0].tokens("connection"), replies[0].fields


def test_an_http10_keep_alive_answer_says_so_and_stays_open(server: Server) -> None:
    """Item 16: an HTTP/1.0 ``Connection: keep-alive`` request is answered with
    ``Connection: keep-alive``, and a second request on the connection is served."""
    sock = connect(server.address)
    try:
        sock.sendall(b"GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        first, rest, closed = receive(sock, ["GET"], until_closed=False)
        assert finals(first) == [200] and rest == b"" and not closed, (finals(first), rest)
        assert "keep-alive" in first[0].tokens("connection"), first[0].fields
        sock.sendall(b"GET /v1/models HTTP/1.0\r\n\r\n")
        second, rest, closed = receive(sock, ["GET"])
    finally:
        sock.close()
    assert finals(second) == [200] and rest == b"" and closed, (finals(second), rest[:300])
    assert json.loads(second[0].body)["object"] == "list"


@pytest.mark.parametrize("coding", ["gzip, chunked", "identity, chunked", "chunked, chunked"])
def test_a_transfer_coding_other_than_chunked_gets_501_then_close(
    server: Server, coding: str
) -> None:
    """Item 17: a ``Transfer-Encoding`` that is not exactly ``chunked`` gets the JSON 501 and a
    close; the body is not passed on, and the request pipelined after it is not answered."""
    head = f"POST {COMPLETION} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: {coding}\r\n\r\n"
    data = head.encode() + chunk(BODY) + b"0\r\n\r\n" + LAST_HEALTH
    replies, rest, closed = exchange(server.address, data, ["POST", "GET"])
    assert finals(replies) == [501] and rest == b"" and closed, (finals(replies), rest[:300])
    assert_json_reply(replies[0], 501, "NotImplementedError")
    assert "close" in replies[0].tokens("connection"), replies[0].fields


def over_the_cap(server: Server) -> list[Reply]:
    """With ``CAP`` connections in the middle of a body (none idle), what a new connection
    asking /health gets."""
    held = [connect(server.address) for _ in range(CAP)]
    try:
        for sock in held:
            sock.sendall(post_head(1000) + b"{")
        replies: list[Reply] = []
        for _ in range(40):  # a connection is counted once the server has accepted it
            for sock in held:
                with contextlib.suppress(OSError):
                    sock.sendall(b" ")  # each body keeps arriving: none times out
            replies = exchange(server.address, LAST_HEALTH, ["GET"])[0]
            if finals(replies) == [503]:
                break
            time.sleep(0.05)
        return replies
    finally:
        close_all(held)


def test_every_refusal_is_counted_in_metrics(server: Server) -> None:
    """Item 18: 400s (tokstream's for a missing Host, hyper's for a malformed head), 408s (a
    body that stops, a head that never ends), a 431 and a 503 at the cap are all counted in
    ``tokstream_errors_total`` by reason."""
    reasons = ("bad_request", "request_timeout", "header_too_large", "over_capacity")
    before = {reason: refusals(server, reason) for reason in reasons}
    exchange(server.address, HOSTS["HTTP/1.1 without Host"][0], ["GET"])
    exchange(server.address, b"GET /health HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n", ["GET"])
    stalled, slow = connect(server.address), connect(server.address)
    try:
        stalled.sendall(post_head(100) + b"{")
        slow.sendall(PARTIAL_HEAD)
        assert receive(stalled, ["POST"], BODY_TIMEOUT + MARGIN)[2], "a stalled body was held"
        assert receive(slow, ["GET"], HEADER_TIMEOUT + MARGIN)[2], "a slow head was held"
    finally:
        close_all([stalled, slow])
    big = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 200_000 + b"\r\n\r\n"
    exchange(server.address, big, ["GET"])
    refused = over_the_cap(server)
    assert finals(refused) == [503], finals(refused)
    assert_json_reply(refused[0], 503, "ServiceUnavailableError")
    assert "close" in refused[0].tokens("connection"), refused[0].fields
    # The held connections close as the server reads their end: then the scrape gets in.
    up = wait_for(
        lambda: request(server.address, "GET", "/health", timeout=10).status == 200, MARGIN
    )
    assert up, "the connections over the cap were not let go"
    after = {reason: refusals(server, reason) for reason in reasons}
    grown = {reason: after[reason] - before[reason] for reason in reasons}
    assert grown["bad_request"] >= 2, grown
    assert grown["request_timeout"] >= 2, grown
    assert grown["header_too_large"] >= 1, grown
    assert grown["over_capacity"] >= 1, grown


def test_health_and_metrics_are_not_cached(server: Server) -> None:
    """Item 19: /health and /metrics answers, to GET and HEAD, say ``Cache-Control: no-store``."""
    for path in ("/health", "/metrics"):
        for method in ("GET", "HEAD"):
            answer = request(server.address, method, path, timeout=10)
            assert answer.status == 200, answer
            cache = answer.headers.get("cache-control", "")
            assert "no-store" in [t.strip() for t in cache.split(",")], (method, path, cache)


# --- 20, 21: one front ----------------------------------------------------------------------------


def test_the_asgi_front_is_gone_from_the_command_line(tmp_path: Path) -> None:
    """Item 20: ``tokstream serve --front asgi`` is refused as an unknown argument, and the
    help names no ``--front``."""
    socket_path = tmp_path / "missing" / "s.sock"  # a server that got this far could not bind
    command = [sys.executable, "-m", "tokstream", "serve", *qwen(), "--uds", str(socket_path)]
    done = subprocess.run([*command, "--front", "asgi"], capture_output=True, timeout=60)
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 2, (done.returncode, stderr[-2000:])
    assert "unrecognized arguments: --front asgi" in stderr, stderr[-2000:]
    shown = subprocess.run([*command[:4], "--help"], capture_output=True, timeout=60)
    assert shown.returncode == 0 and b"--front" not in shown.stdout, shown.stdout[-2000:]


async def _asgi_call(app: Any, method: str, path: str, body: bytes) -> tuple[int, bytes]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"x"), (b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await asyncio.sleep(3600)  # the client stays: the app must not wait for this
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await asyncio.wait_for(app(scope, receive, send), 30)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def test_tokstream_asgi_is_still_an_app_to_embed() -> None:
    """Item 20: ``tokstream.asgi.create_app`` still builds an ASGI app that answers /health and
    a derender."""
    from tokstream.asgi import create_app

    app = create_app(str(tokenizer_path("qwen3").parent))
    assert asyncio.run(_asgi_call(app, "GET", "/health", b"")) == (200, b"")
    status, body = asyncio.run(_asgi_call(app, "POST", COMPLETION, BODY))
    assert status == 200, body[:300]
    assert json.loads(body)["choices"][0]["text"] == HELLO


def test_tokstream_connection_is_gone() -> None:
    """Item 21: ``tokstream.connection`` (the uvicorn protocol subclass) neither imports nor
    exists in the package or the source tree."""
    assert importlib.util.find_spec("tokstream.connection") is None
    assert not (Path(tokstream.__file__).parent / "connection.py").exists()
    source = Path(__file__).resolve().parents[2] / "python" / "tokstream" / "connection.py"
    assert not source.exists()


def child_pids(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def bound_unix_paths(pid: int) -> set[str]:
    """The paths of the Unix sockets the process holds that are bound to one."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    paths = set()
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 8 and parts[6] in inodes:
            paths.add(parts[7])
    return paths


def test_two_workers_keep_one_set_of_counters_without_a_socket_directory(
    two_workers: Server,
) -> None:
    """Item 21: with ``--workers 2`` the server is one process (no children, no Unix socket
    bound but ``--uds``), and /metrics counts every request, whichever thread served it."""

    quiet(two_workers)
    before = health_count(two_workers)
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            for _ in range(10):
                healthy(two_workers.address)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    assert health_count(two_workers) - before == 40
    pid = pid_of(two_workers)
    assert child_pids(pid) == []
    expected = set() if two_workers.uds is None else {str(two_workers.uds)}
    assert bound_unix_paths(pid) == expected


# --- HTTP/2 ---------------------------------------------------------------------------------------


@dataclass
class Stream:
    """One HTTP/2 request and what came back on its stream."""

    method: str
    path: str
    body: bytes = b""
    status: int | None = None
    fields: dict[str, str] = field(default_factory=dict)
    data: bytearray = field(default_factory=bytearray)
    ended: bool = False


def h2_exchange(address: int | str, streams: list[Stream], seconds: float = 60) -> None:
    """Sends every request on one HTTP/2 connection (prior knowledge), as many streams at
    once as the server allows, and fills in each one's answer."""
    sock = connect(address, timeout=MARGIN)
    conn = h2.connection.H2Connection(
        h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
    )
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    waiting = list(streams)
    by_id: dict[int, Stream] = {}
    body_left: dict[int, bytes] = {}
    settled = False
    deadline = time.monotonic() + seconds
    try:
        while not all(s.ended for s in streams):
            assert time.monotonic() < deadline, "the HTTP/2 answers did not all arrive"
            limit = conn.remote_settings.max_concurrent_streams
            while settled and waiting and conn.open_outbound_streams < limit:
                stream = waiting.pop(0)
                sid = conn.get_next_available_stream_id()
                fields = [(":method", stream.method), (":scheme", "http")]
                fields += [(":authority", "x"), (":path", stream.path)]
                if stream.body:
                    fields += [("content-type", "application/json")]
                    fields += [("content-length", str(len(stream.body)))]
                conn.send_headers(sid, fields, end_stream=not stream.body)
                by_id[sid] = stream
                if stream.body:
                    body_left[sid] = stream.body
            for sid, rest in list(body_left.items()):
                room = min(conn.local_flow_control_window(sid), conn.max_outbound_frame_size)
                if room > 0:
                    conn.send_data(sid, rest[:room], end_stream=len(rest) <= room)
                    body_left[sid] = rest[room:]
                    if not body_left[sid]:
                        del body_left[sid]
            sock.sendall(conn.data_to_send())
            data = sock.recv(1 << 16)
            assert data, "the server closed the HTTP/2 connection"
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RemoteSettingsChanged):
                    settled = True
                elif isinstance(event, h2.events.ResponseReceived):
                    got = by_id[event.stream_id]
                    got.fields = {str(k): str(v) for k, v in event.headers}
                    got.status = int(got.fields[":status"])
                elif isinstance(event, h2.events.DataReceived):
                    by_id[event.stream_id].data += event.data
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    by_id[event.stream_id].ended = True
                elif isinstance(event, h2.events.StreamReset):
                    pytest.fail(f"stream {event.stream_id} reset: {event.error_code!r}")
                elif isinstance(event, h2.events.ConnectionTerminated):
                    pytest.fail(f"the server ended the connection: {event.error_code!r}")
            sock.sendall(conn.data_to_send())
        conn.close_connection()
        sock.sendall(conn.data_to_send())
    finally:
        sock.close()


def stable(body: bytes) -> Any:
    """A JSON answer without its ``created`` times (the only fields that follow the clock)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "created"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(json.loads(body))


def h2_streams() -> list[Stream]:
    """100 requests: /health, /v1/models, a 404, and derenders (whole completions, whole chats,
    first stream chunks) each of a different text and request id."""
    tok = load_tokenizer("qwen3")
    streams = []
    for k in range(100):
        ids = tok.encode(f"stream {k}: {'中文 👋 ' * (k % 7)}end", add_special_tokens=False).ids
        kind = k % 6
        if kind == 0:
            streams.append(Stream("GET", "/health"))
        elif kind == 1:
            streams.append(Stream("GET", "/v1/models"))
        elif kind == 2:
            streams.append(Stream("GET", f"/nope/{k}"))
        elif kind == 3:
            body = whole_body(COMPLETION, ids, request_id=f"h2-{k}")
            streams.append(Stream("POST", COMPLETION, json.dumps(body).encode()))
        elif kind == 4:
            body = whole_body(CHAT, ids, request_id=f"h2-{k}")
            streams.append(Stream("POST", CHAT, json.dumps(body).encode()))
        else:
            body = stream_body(ids, None)
            body["generate_chunk"]["request_id"] = f"h2-{k}"
            streams.append(Stream("POST", CHAT, json.dumps(body).encode()))
    return streams


def test_many_concurrent_http2_streams_on_one_connection(server: Server) -> None:
    """HTTP/2 (cleartext, prior knowledge): 100 concurrent streams on one connection, mixing
    /health, /v1/models, a 404 and derenders of different texts, each get on their own stream
    exactly the answer the same request gets over HTTP/1.1."""
    streams = h2_streams()
    expected = []
    for stream in streams:
        answer = request(server.address, stream.method, stream.path, stream.body or None)
        expected.append(answer)
    h2_exchange(server.address, streams)
    for k, (stream, answer) in enumerate(zip(streams, expected, strict=True)):
        assert stream.status == answer.status, (k, stream.path, stream.status, bytes(stream.data))
        assert stream.fields.get("content-type") == answer.headers.get("content-type"), k
        if stream.path == "/health":
            assert bytes(stream.data) == b"", k
        else:
            assert stable(bytes(stream.data)) == stable(answer.body), (k, stream.path)
        if stream.method == "POST":
            assert stream.status == 200, (k, bytes(stream.data)[:300])
            assert f'"h2-{k}"' in stream.data.decode(), k
