"""Raw HTTP/1.1 over a socket, for the tests that send what no HTTP client would: a connection
to a TCP port on 127.0.0.1 or to a Unix domain socket, everything the server sends until it
closes, and the checks of one answer: in the JSON error shape, or hyper's own with no body."""

from __future__ import annotations

import json
import socket

from helpers.server_util import HOST, INTERNALS


def raw_connect(address: int | str, timeout: float) -> socket.socket:
    """A raw connection to a TCP port on 127.0.0.1 or to a Unix socket's path."""
    if isinstance(address, str):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(address)
        except OSError:
            sock.close()
            raise
        return sock
    sock = socket.create_connection((HOST, address), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything until the server closes (the socket's timeout bounds each wait)."""
    out = b""
    while True:
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            return out
        if not data:
            return out
        out += data


def parse(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return status, {k.lower(): v for k, v in headers.items()}, body


def assert_json_error(raw: bytes, status: int, kind: str) -> None:
    """One response of the OpenAI error shape, ``connection: close``, nothing after it."""
    assert raw, "the server closed without an answer"
    code, headers, body = parse(raw)
    assert code == status, raw[:300]
    assert headers["content-type"] == "application/json", headers
    assert headers.get("connection") == "close", headers
    assert len(body) == int(headers["content-length"]), raw[:300]
    error = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert (error["type"], error["code"]) == (kind, status), error
    assert not [word for word in INTERNALS if word in error["message"]], error


def assert_bare_refusal(raw: bytes, status: int) -> None:
    """One response with ``status`` and no body, nothing after it: hyper's own answer to a
    message it refuses (the connection is then closed, which ``read_all`` waited for)."""
    assert raw, "the server closed without an answer"
    code, headers, body = parse(raw)
    assert code == status, raw[:300]
    assert headers.get("content-length", "0") == "0", headers
    assert body == b"", raw[:300]
    assert headers.get("connection", "close") == "close", headers
