"""``tokstream serve`` under abuse, over raw sockets: timeouts and size limits.

A client that never finishes its headers, sends nothing, idles on keep-alive, stalls its body,
or sends a 10 MB header or a bad ``Content-Length``: each must be answered (408 in the JSON error
shape; 431 and 400 as hyper's own answers, with no body) or closed, within its timeout plus a
generous margin, and the server must keep answering ``/health``. Every loop here is bounded and
every socket has a timeout, so a regression fails instead of hanging. Each test runs over
loopback TCP and over a Unix domain socket (``--uds``). The connection cap is in
``test_server_cap.py``; the drain on SIGTERM and the command line in
``test_server_lifecycle.py``.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.raw_http import assert_bare_refusal, assert_json_error, parse, raw_connect, read_all
from helpers.real_tokenizers import load_tokenizer, tokenizer_path
from helpers.server_util import COMPLETION, Server, metric, request, whole_body

#: Short timeouts so the tests take seconds; the margins below are generous on 2 shared cores.
HEADER_TIMEOUT = 1.0
KEEP_ALIVE = 1.0
BODY_TIMEOUT = 1.0
MARGIN = 4.0
HEADER_LIMIT = 64 * 1024  # the default
TRANSPORTS = ("tcp", "unix")
HEALTH = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"


def qwen() -> list[str]:
    return ["--tokenizer", str(tokenizer_path("qwen3").parent)]


@pytest.fixture(scope="module", params=TRANSPORTS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """Every limit is proven on both transports."""
    folder = tmp_path_factory.mktemp("limits")
    flags = ["--header-timeout", str(HEADER_TIMEOUT), "--keep-alive-timeout", str(KEEP_ALIVE)]
    flags += ["--body-timeout", str(BODY_TIMEOUT)]
    uds = folder / "derender.sock" if request.param == "unix" else None
    served = Server([*qwen(), *flags], folder / "server.log", uds=uds)
    try:
        yield served.start()
    finally:
        served.stop()


def connect(address: int | str, timeout: float = HEADER_TIMEOUT + MARGIN) -> socket.socket:
    """A raw connection with the header deadline's timeout (plus the margin) by default."""
    return raw_connect(address, timeout)


def healthy(address: int | str) -> None:
    answer = request(address, "GET", "/health", timeout=10)
    assert answer.status == 200, answer


def timeouts(server: Server) -> float:
    return metric(server.metrics(), "tokstream_errors_total", reason="request_timeout")


def test_a_slowloris_is_closed_within_the_header_timeout(server: Server) -> None:
    """Headers sent a byte every 50 ms never end: closed without an answer, and counted."""
    before = timeouts(server)
    sock = connect(server.address)
    start = time.monotonic()
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
    try:
        for _ in range(int((HEADER_TIMEOUT + MARGIN) / 0.05)):
            if select.select([sock], [], [], 0.05)[0]:
                break  # the server answered or closed
            sock.sendall(b"X")
    except (BrokenPipeError, ConnectionResetError):
        pass  # closed while a byte was on its way
    raw = read_all(sock)
    sock.close()
    assert time.monotonic() - start < HEADER_TIMEOUT + MARGIN
    assert raw == b"", raw[:300]
    assert timeouts(server) - before == 1
    healthy(server.address)


def test_a_silent_connection_is_closed_without_an_answer(server: Server) -> None:
    sock = connect(server.address)
    start = time.monotonic()
    raw = read_all(sock)
    sock.close()
    assert raw == b""
    assert time.monotonic() - start < HEADER_TIMEOUT + MARGIN


def test_an_idle_keep_alive_connection_is_closed(server: Server) -> None:
    sock = connect(server.address, timeout=KEEP_ALIVE + MARGIN)
    sock.sendall(HEALTH)
    first = sock.recv(65536)
    start = time.monotonic()
    assert parse(first)[0] == 200, first
    assert read_all(sock) == b""
    sock.close()
    assert time.monotonic() - start < KEEP_ALIVE + MARGIN


def test_the_header_timeout_also_holds_for_a_second_request(server: Server) -> None:
    """After one answer, a request begun on the same connection must end its headers in time."""
    sock = connect(server.address)
    sock.sendall(HEALTH)
    assert parse(sock.recv(65536))[0] == 200
    start = time.monotonic()
    sock.sendall(b"GET /health HTTP/1.1\r\n")
    raw = read_all(sock)
    sock.close()
    assert time.monotonic() - start < HEADER_TIMEOUT + MARGIN
    assert raw == b"", raw[:300]


def post_head(length: int) -> bytes:
    head = f"POST {COMPLETION} HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n"
    return head.encode() + b"Connection: close\r\n\r\n"


def test_a_stalled_body_gets_408_within_the_body_timeout(server: Server) -> None:
    sock = connect(server.address, timeout=BODY_TIMEOUT + MARGIN)
    sock.sendall(post_head(100) + b'{"generate')
    start = time.monotonic()
    raw = read_all(sock)
    sock.close()
    assert time.monotonic() - start < BODY_TIMEOUT + MARGIN
    assert_json_error(raw, 408, "RequestTimeoutError")
    healthy(server.address)


def test_a_slow_but_steady_body_is_served(server: Server) -> None:
    """The body timeout bounds a pause, not the whole body: pieces every 0.4 s all arrive."""
    body = json.dumps(whole_body(COMPLETION, [9707, 11, 1879])).encode()
    sock = connect(server.address, timeout=BODY_TIMEOUT + MARGIN)
    sock.sendall(post_head(len(body)))
    pieces = [body[k : k + 25] for k in range(0, len(body), 25)]
    assert len(pieces) * 0.4 > 2 * BODY_TIMEOUT
    for piece in pieces:
        time.sleep(0.4)
        sock.sendall(piece)
    status, _, answer = parse(read_all(sock))
    sock.close()
    assert status == 200, answer
    assert json.loads(answer)["choices"][0]["text"] == "Hello, world"


def rss_kib(server: Server) -> int:
    assert server.proc is not None
    status = Path(f"/proc/{server.proc.pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS")))


def test_a_10_mb_header_is_refused_and_not_buffered(server: Server) -> None:
    """The server answers 431 (hyper's, no body) once the limit is passed, drains a little, then
    closes: the sender may see the 431 or only a reset, but the server never holds the 10 MB."""
    before = rss_kib(server)
    sock = connect(server.address)
    answer: list[bytes] = []
    reader = threading.Thread(target=lambda: answer.append(read_all(sock)))
    reader.start()
    try:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ")
        chunk = b"a" * 65536
        for _ in range(160):  # 10 MiB
            sock.sendall(chunk)
    except (BrokenPipeError, ConnectionResetError):
        pass
    reader.join(HEADER_TIMEOUT + MARGIN)
    sock.close()
    assert answer, "the server kept the connection open"
    if answer[0]:
        assert_bare_refusal(answer[0], 431)
    assert rss_kib(server) - before < 16 * 1024, (before, rss_kib(server))
    healthy(server.address)


def test_a_header_over_the_limit_sent_whole_gets_431(server: Server) -> None:
    """A client that sends its whole 200 kB header before reading still reads the 431 (hyper's
    own answer, with no body)."""
    answer = request(server.address, "GET", "/health", headers={"X-Big": "b" * 200_000})
    assert (answer.status, answer.body) == (431, b""), answer


@pytest.mark.parametrize("size", [HEADER_LIMIT - 2048, HEADER_LIMIT + 1])
def test_headers_at_the_limit_pass_and_just_over_it_get_431(server: Server, size: int) -> None:
    head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: "
    tail = b"\r\n\r\n"
    sock = connect(server.address)
    sock.sendall(head + b"p" * (size - len(head) - len(tail)) + tail)
    raw = sock.recv(65536) if size <= HEADER_LIMIT else read_all(sock)
    sock.close()
    if size <= HEADER_LIMIT:
        assert parse(raw)[0] == 200, raw[:300]
    else:
        assert_bare_refusal(raw, 431)


BAD_LENGTHS = {
    "not a number": b"Content-Length: abc\r\n",
    "negative": b"Content-Length: -1\r\n",
    "two that differ": b"Content-Length: 2\r\nContent-Length: 3\r\n",
    "with chunked": b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n",
}


@pytest.mark.parametrize("case", list(BAD_LENGTHS))
def test_a_bad_content_length_gets_hypers_400_and_is_counted(server: Server, case: str) -> None:
    """hyper refuses the head: its 400 with no body, then closed. Next to chunked the length is
    dropped and the body ``{}`` is not a chunk size: the server's JSON 400, then closed. Either
    way ``/metrics`` counts it."""
    before = metric(server.metrics(), "tokstream_errors_total", reason="bad_request")
    sock = connect(server.address)
    sock.sendall(
        b"POST /v1/completions/derender HTTP/1.1\r\nHost: x\r\n" + BAD_LENGTHS[case] + b"\r\n{}"
    )
    raw = read_all(sock)
    sock.close()
    if case == "with chunked":
        assert_json_error(raw, 400, "BadRequestError")
    else:
        assert_bare_refusal(raw, 400)
    after = metric(server.metrics(), "tokstream_errors_total", reason="bad_request")
    assert after - before == 1
    healthy(server.address)


def test_health_is_plain_text_and_metrics_prometheus(server: Server) -> None:
    """Both are never to be cached (``Cache-Control: no-store``)."""
    answer = request(server.address, "GET", "/health")
    assert (answer.status, answer.body) == (200, b"")
    assert answer.headers["content-type"] == "text/plain; charset=utf-8"
    assert answer.headers["cache-control"] == "no-store", answer.headers
    metrics = request(server.address, "GET", "/metrics")
    assert metrics.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert metrics.headers["cache-control"] == "no-store", metrics.headers


def test_a_large_body_in_the_same_packets_as_its_headers_is_served(server: Server) -> None:
    """Head and a 300 kB body in one send: only the head counts against the header limit."""
    tok = load_tokenizer("qwen3")
    ids = tok.encode("Streaming 中文 👋 " * 9000, add_special_tokens=False).ids
    body = json.dumps(whole_body(COMPLETION, ids)).encode()
    assert len(body) > 4 * HEADER_LIMIT
    head = f"POST {COMPLETION} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
    sock = connect(server.address, timeout=60)
    sock.sendall(head.encode() + b"Connection: close\r\n\r\n" + body)
    status, _, answer = parse(read_all(sock))
    sock.close()
    assert status == 200, answer[:300]
    assert json.loads(answer)["choices"][0]["text"] == tok.decode(ids)


def test_pipelined_requests_are_all_answered(server: Server) -> None:
    sock = connect(server.address)
    one = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    sock.sendall(one * 3 + b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    raw = read_all(sock)
    sock.close()
    assert raw.count(b"HTTP/1.1 200 OK") == 4, raw[:600]
    assert raw.endswith(b"]}"), raw[-200:]


def test_pipelined_derenders_are_answered_in_order(server: Server) -> None:
    """Twelve derenders of different texts in one write: twelve answers, each its own text, in
    the order asked (a client that carries many streams on one connection relies on it)."""
    tok = load_tokenizer("qwen3")
    texts = [f"stream {k}: {'中文 👋 ' * k}end" for k in range(12)]
    raw = b""
    for k, text in enumerate(texts):
        body = json.dumps(whole_body(COMPLETION, tok.encode(text).ids)).encode()
        close = "Connection: close\r\n" if k == len(texts) - 1 else ""
        head = (
            f"POST {COMPLETION} HTTP/1.1\r\nHost: x\r\n{close}Content-Length: {len(body)}\r\n\r\n"
        )
        raw += head.encode() + body
    sock = connect(server.address, timeout=30)
    sock.sendall(raw)
    rest = read_all(sock)
    sock.close()
    got = []
    while rest:
        status, headers, tail = parse(rest)
        length = int(headers["content-length"])
        assert status == 200, tail[:300]
        got.append(json.loads(tail[:length])["choices"][0]["text"])
        rest = tail[length:]
    assert got == texts
