"""What ``tokstream serve`` logs, read from a real server's output.

A refused or failed request is one line at warning (5xx at error) with its status, the reason
``/metrics`` counts it under, the method, path, request id and message; those lines are
rate-limited. ``--access-log`` adds a line for every request at info. ``--log-format json``
makes every line, the startup and shutdown lines included, one JSON object. Startup prints a
short banner; shutdown says what the drain answered.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from helpers.raw_http import raw_connect, read_all
from helpers.real_tokenizers import tokenizer_path
from helpers.server_util import COMPLETION, Server, whole_body

QWEN3 = str(tokenizer_path("qwen3").parent)
IDS = [9707, 11, 1879]


def serve(tmp_path: Path, *flags: str, log_level: str = "warning") -> Server:
    return Server(["--tokenizer", QWEN3, *flags], tmp_path / "server.log", log_level=log_level)


def front_lines(server: Server) -> list[str]:
    return [line for line in server.output().splitlines() if "tokstream.front" in line]


def fields(line: str) -> dict[str, str]:
    """The ``key=value`` fields of a text line (values bare or JSON-quoted)."""
    found: dict[str, str] = {}
    for key, quoted, bare in re.findall(r' (\w+)=(?:("(?:[^"\\]|\\.)*")|(\S+))', line):
        found[key] = json.loads(quoted) if quoted else bare
    return found


def raw(server: Server, data: bytes) -> bytes:
    sock = raw_connect(server.address, 10)
    try:
        sock.sendall(data)
        return read_all(sock)
    finally:
        sock.close()


def test_refusals_are_one_warning_line_each_with_their_request_id(tmp_path: Path) -> None:
    server = serve(tmp_path).start()
    try:
        assert server.call("GET", "/nope").status == 404
        answer = server.call(
            "POST", COMPLETION, {"stream": True}, headers={"x-request-id": "router-7"}
        )
        assert answer.status == 400
        body = whole_body(COMPLETION, IDS, request_id="gen-42")
        body["generate_responses"][0]["choices"][0]["token_ids"] = "not ids"
        assert server.post(COMPLETION, body).status == 400
        assert server.call("GET", "/health").status == 200  # not logged: no --access-log
    finally:
        assert server.stop() == 0
    lines = front_lines(server)
    assert len(lines) == 3, lines
    assert all(" WARNING tokstream.front: refused " in line for line in lines), lines
    nope, router, body_id = (fields(line) for line in lines)
    assert nope["status"] == "404" and nope["reason"] == "not_found", nope
    assert nope["method"] == "GET" and nope["path"] == "/nope"
    assert nope["message"] == "no endpoint at /nope"
    assert "request_id" not in nope
    assert router["status"] == "400" and router["reason"] == "bad_request"
    assert router["request_id"] == "router-7", router
    assert router["path"] == COMPLETION and router["message"], router
    assert body_id["request_id"] == "gen-42", body_id
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z WARNING", lines[0]), lines[0]


def test_a_connection_closed_by_the_front_is_logged(tmp_path: Path) -> None:
    server = serve(tmp_path).start()
    try:
        head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n"
        assert raw(server, head).startswith(b"HTTP/1.1 431 ")
        raw(server, b"GET /health HTTP/1.1\r\nHost: x\r\nBad\0Header: 1\r\n\r\n")
    finally:
        server.stop()
    closed = [fields(line) for line in front_lines(server) if " closed " in line]
    reasons = [c["reason"] for c in closed]
    assert reasons == ["header_too_large", "bad_request"], closed
    assert "--max-header-bytes" in closed[0]["message"]


def test_refusal_lines_are_rate_limited_and_say_how_many_were_dropped(tmp_path: Path) -> None:
    server = serve(tmp_path).start()
    try:
        for _ in range(200):
            assert server.call("GET", "/nope").status == 404
        time.sleep(0.3)  # the limit refills: the next line is written, after a count of the rest
        assert server.call("GET", "/nope").status == 404
    finally:
        server.stop()
    lines = front_lines(server)
    refused = [line for line in lines if " refused " in line]
    dropped = [fields(line) for line in lines if " dropped " in line]
    # A burst of 20, then 10 a second.
    assert 21 <= len(refused) < 150, len(refused)
    assert dropped, lines[-5:]
    # Every refusal is a line of its own or is counted in a later "dropped" line.
    assert len(refused) + sum(int(d["lines"]) for d in dropped) == 201, (len(refused), dropped)
    assert " dropped " in lines[-2] and " refused " in lines[-1], lines[-3:]


def test_log_level_error_hides_refusals(tmp_path: Path) -> None:
    server = serve(tmp_path, log_level="error").start()
    try:
        assert server.call("GET", "/nope").status == 404
    finally:
        server.stop()
    assert front_lines(server) == []


def test_the_access_log_has_every_request(tmp_path: Path) -> None:
    server = serve(tmp_path, "--access-log", log_level="info").start()
    try:
        server.ok(COMPLETION, whole_body(COMPLETION, IDS, request_id="gen-5"))
        assert server.call("GET", "/nope").status == 404
    finally:
        server.stop()
    lines = [fields(line) for line in front_lines(server)]
    derendered = [f for f in lines if f.get("path") == COMPLETION]
    assert len(derendered) == 1, lines
    ok = derendered[0]
    assert ok["status"] == "200" and ok["request_id"] == "gen-5", ok
    assert int(ok["bytes_in"]) > 0 and int(ok["bytes_out"]) > 0 and float(ok["ms"]) >= 0
    assert any(f.get("status") == "404" for f in lines)
    health = [f for f in lines if f.get("path") == "/health"]
    assert health and all(f["status"] == "200" for f in health)  # the start's probes


def json_lines(server: Server) -> list[dict[str, Any]]:
    return [json.loads(line) for line in server.output().splitlines() if line.startswith("{")]


def test_json_lines_from_start_to_shutdown(tmp_path: Path) -> None:
    server = serve(tmp_path, "--log-format", "json", "--access-log", log_level="info").start()
    try:
        server.ok(COMPLETION, whole_body(COMPLETION, IDS, request_id="gen-6"))
        assert server.call("GET", "/nope").status == 404
    finally:
        assert server.stop() == 0
    text = [line for line in server.output().splitlines() if line.strip()]
    records = json_lines(server)
    assert len(records) == len(text), text  # every line is one JSON object
    events = [r["event"] for r in records]
    assert events[0] == "listening" and events[-1] == "drained", events
    start = records[0]
    assert start["logger"] == "tokstream.serve" and start["level"] == "INFO"
    assert start["url"].startswith("http://127.0.0.1:") and start["model"] == "qwen3"
    assert start["max_model_len"] == 131072 and start["access_log"] is True
    refused = [r for r in records if r["event"] == "refused"]
    assert len(refused) == 1 and refused[0]["status"] == 404, refused
    assert refused[0]["logger"] == "tokstream.front" and refused[0]["level"] == "WARNING"
    served = [r for r in records if r["event"] == "request" and r["path"] == COMPLETION]
    assert served[0]["request_id"] == "gen-6" and served[0]["status"] == 200
    assert records[-1]["answered"] >= 0 and records[-1]["every_connection_closed"] is True


def test_the_banner_is_a_few_short_lines_and_shutdown_says_what_it_drained(
    tmp_path: Path,
) -> None:
    server = serve(tmp_path, log_level="info").start()
    assert server.stop() == 0
    text = server.output().splitlines()
    start = text.index(next(line for line in text if "listening on" in line))
    banner = text[start : start + 5]
    assert banner[0].startswith("tokstream serve: listening on http://127.0.0.1:"), banner
    assert all(line.startswith("  ") for line in banner[1:]), banner
    assert max(len(line) for line in banner) < 200, banner
    assert "max_model_len 131,072" in banner[1]
    drained = [line for line in text if "drained in" in line]
    assert len(drained) == 1 and "answered during the grace" in drained[0], text


def test_a_tokenizer_without_a_length_says_unbounded(tmp_path: Path) -> None:
    tok = tokenizer_path("mistral-nemo-tekken").parent
    server = Server(["--tokenizer", str(tok)], tmp_path / "server.log", log_level="info")
    server.start()
    server.stop()
    banner = "\n".join(server.output().splitlines()[:3])
    assert "max_model_len unbounded" in banner, banner


def test_access_lines_are_written_while_the_server_runs(tmp_path: Path) -> None:
    """Access lines are buffered, but written within a fraction of a second."""
    server = serve(tmp_path, "--access-log", log_level="info").start()
    try:
        server.ok(COMPLETION, whole_body(COMPLETION, IDS, request_id="gen-live"))
        deadline = time.monotonic() + 5
        while "request_id=gen-live" not in server.output() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "request_id=gen-live" in server.output(), server.output()[-2000:]
    finally:
        server.stop()
