"""``tokstream serve --max-connections``: what a connection over the cap meets.

At the cap a new connection closes the oldest idle connection (reading its head, or idle on
keep-alive) and is served, so a flood of idle connections cannot lock out ``/health``; only when
none of the open connections is idle does the new one get 503 (JSON), then a close. The server
here has timeouts far longer than a test, so that only the cap closes a connection. Each test
runs over loopback TCP and over a Unix domain socket (``--uds``), with raw sockets whose waits
are all bounded.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
from helpers.raw_http import assert_json_error, parse, raw_connect, read_all
from helpers.real_tokenizers import tokenizer_path
from helpers.server_util import COMPLETION, Server, metric, request, whole_body

CAP = 6
#: Every timeout of the server: long, so that nothing but the cap closes a connection.
PATIENT = 30.0
#: Generous on 2 shared cores, and far below PATIENT.
MARGIN = 4.0
HEALTH = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.fixture(scope="module", params=["tcp", "unix"])
def capped(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("capped")
    flags = ["--tokenizer", str(tokenizer_path("qwen3").parent), "--max-connections", str(CAP)]
    for flag in ("--header-timeout", "--keep-alive-timeout", "--body-timeout"):
        flags += [flag, str(PATIENT)]
    uds = folder / "derender.sock" if request.param == "unix" else None
    served = Server(flags, folder / "server.log", uds=uds)
    try:
        yield served.start()
    finally:
        served.stop()


def connect(address: int | str) -> socket.socket:
    return raw_connect(address, 10)


def healthy(address: int | str) -> None:
    answer = request(address, "GET", "/health", timeout=10)
    assert answer.status == 200, answer


def over_capacity(server: Server) -> float:
    return metric(server.metrics(), "tokstream_errors_total", reason="over_capacity")


def test_at_the_cap_a_new_connection_closes_the_oldest_idle_one(capped: Server) -> None:
    """With CAP connections idle on keep-alive, one more is served: the server closes the oldest
    idle one (without an answer) to make room, and the others stay open and keep answering."""
    held: list[socket.socket] = []
    try:
        for _ in range(CAP):
            sock = connect(capped.address)
            held.append(sock)
            sock.sendall(HEALTH)
            assert parse(sock.recv(65536))[0] == 200  # accepted, then idle on keep-alive
        answer = request(capped.address, "GET", "/health", timeout=10)
        assert answer.status == 200, answer
        held[0].settimeout(MARGIN)  # only the cap closes it this soon
        assert read_all(held[0]) == b""
        for sock in held[1:]:
            sock.sendall(HEALTH)
            assert parse(sock.recv(65536))[0] == 200
    finally:
        for sock in held:
            sock.close()
    healthy(capped.address)


def test_at_the_cap_with_none_idle_a_new_connection_gets_503(capped: Server) -> None:
    """With CAP connections each waiting for the rest of its body, one more is answered 503,
    then closed, and counted; none of the CAP is dropped for it: each is served once its body
    arrives."""
    body = json.dumps(whole_body(COMPLETION, [9707, 11, 1879])).encode()
    head = (
        f"POST {COMPLETION} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
        "Expect: 100-continue\r\nConnection: close\r\n\r\n"
    )
    before = over_capacity(capped)
    held: list[socket.socket] = []
    try:
        for _ in range(CAP):
            sock = connect(capped.address)
            held.append(sock)
            sock.sendall(head.encode())
            # 100 Continue comes once the server reads the body: the request is in progress.
            interim = sock.recv(65536)
            assert interim.startswith(b"HTTP/1.1 100 "), interim[:300]
            sock.sendall(body[:10])
        extra = connect(capped.address)
        extra.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        raw = read_all(extra)
        extra.close()
        assert_json_error(raw, 503, "ServiceUnavailableError")
        for sock in held:
            sock.sendall(body[10:])
            status, _, answer = parse(read_all(sock))
            assert status == 200, answer[:300]
            assert json.loads(answer)["choices"][0]["text"] == "Hello, world"
    finally:
        for sock in held:
            sock.close()
    assert over_capacity(capped) - before == 1
    healthy(capped.address)
