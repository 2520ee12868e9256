"""``tokstream serve`` starting and stopping: the bind, the banner, SIGTERM, workers, the CLI.

Real processes on loopback ports. The drain test holds requests in flight across SIGTERM: one
whose body arrives after the signal (it must finish), one whose body never arrives (a JSON 503
within the grace period), and a large derender on the thread pool (either); the process must
exit 0 soon after the grace period. Command-line refusals must be one clear line, never a
traceback.
"""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import tokstream
from helpers.raw_http import assert_json_error, parse, read_all
from helpers.real_tokenizers import load_tokenizer, tokenizer_path
from helpers.server_util import (
    CHAT,
    COMPLETION,
    HOST,
    START_SECONDS,
    Server,
    free_port,
    metric,
    parse_metrics,
    request,
    sample_ids,
    whole_body,
    whole_text,
)
from tokstream.cli import main

GRACE = 2.0
#: Generous on 2 shared cores: enough to prove "not hung", far below the 26 s of issue 11.
MARGIN = 3.0


def qwen() -> list[str]:
    return ["--tokenizer", str(tokenizer_path("qwen3").parent)]


def tokstream_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tokstream", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def post_raw(port: int, body: bytes, sent: int) -> socket.socket:
    """A derender POST whose headers and first ``sent`` body bytes are on their way."""
    sock = socket.create_connection((HOST, port), timeout=GRACE + MARGIN + 30)
    head = f"POST {COMPLETION} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
    sock.sendall(head.encode() + body[:sent])
    return sock


def slow_body(n_ids: int = 8000, n_stops: int = 8) -> bytes:
    """A whole completion with long stop strings: a large body, derendered on the thread pool."""
    ids = load_tokenizer("qwen3").encode("a " * n_ids, add_special_tokens=False).ids[:n_ids]
    stops = ["a " * 2047 + f"z{k}" for k in range(n_stops)]
    body = whole_body(COMPLETION, ids)
    body["completion_request"] = {"model": "qwen3", "prompt": "x", "stop": stops}
    return json.dumps(body).encode()


@pytest.mark.timeout(120)
def test_sigterm_finishes_or_answers_503_then_exits(tmp_path: Path) -> None:
    args = [*qwen(), "--shutdown-grace", str(GRACE)]
    server = Server(args, tmp_path / "server.log").start()
    try:
        quick = json.dumps(whole_body(COMPLETION, [9707, 11, 1879])).encode()
        finishing = post_raw(server.port, quick, 10)
        stuck = post_raw(server.port, quick, 10)
        slow = post_raw(server.port, slow_body(), 1 << 30)
        answers: dict[str, tuple[float, bytes]] = {}

        def wait(name: str, sock: socket.socket) -> None:
            raw = read_all(sock)
            answers[name] = (time.monotonic() - start, raw)

        time.sleep(0.5)  # the slow derender is under way
        assert server.proc is not None
        start = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        readers = [
            threading.Thread(target=wait, args=item)
            for item in (("finishing", finishing), ("stuck", stuck), ("slow", slow))
        ]
        for reader in readers:
            reader.start()
        time.sleep(0.3)
        finishing.sendall(quick[10:])
        code = server.proc.wait(GRACE + 1 + MARGIN)
        exited = time.monotonic() - start
        for reader in readers:
            reader.join(MARGIN)
        for sock in (finishing, stuck, slow):
            sock.close()
    finally:
        server.stop(signal.SIGKILL)
    assert code == 0, server.output()
    assert exited < GRACE + 1 + MARGIN, exited
    status, _, body = parse(answers["finishing"][1])
    assert status == 200, answers["finishing"]
    assert json.loads(body)["choices"][0]["text"] == "Hello, world"
    seconds, raw = answers["stuck"]
    assert_json_error(raw, 503, "ServiceUnavailableError")
    assert seconds < GRACE + MARGIN, seconds
    seconds, raw = answers["slow"]
    if not raw.startswith(b"HTTP/1.1 200"):
        assert_json_error(raw, 503, "ServiceUnavailableError")
    assert "Traceback" not in server.output(), server.output()


@pytest.mark.timeout(120)
def test_sigterm_shuts_down_cleanly(tmp_path: Path) -> None:
    server = Server(qwen(), tmp_path / "server.log").start()
    try:
        ids = sample_ids(load_tokenizer("qwen3"))
        answer = server.ok(CHAT, whole_body(CHAT, ids))
        assert whole_text(CHAT, answer) == load_tokenizer("qwen3").decode(
            ids, skip_special_tokens=True
        )
        assert server.proc is not None
        start = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        code = server.proc.wait(15)
        assert code == 0, server.output()
        assert time.monotonic() - start < 15
        assert "Traceback" not in server.output(), server.output()
    finally:
        server.stop(signal.SIGKILL)


@pytest.mark.timeout(180)
def test_metrics_add_up_every_worker(tmp_path: Path) -> None:
    """With --workers 2, every scrape counts every request, whichever worker thread answers;
    SIGTERM drains both."""
    args = [*qwen(), "--workers", "2", "--shutdown-grace", str(GRACE)]
    server = Server(args, tmp_path / "server.log", log_level="info").start()
    try:
        for _ in range(12):
            assert request(server.port, "GET", "/v1/models").status == 200
        for scrape in range(4):
            answer = request(server.port, "GET", "/metrics")
            assert answer.status == 200
            found = parse_metrics(answer.body.decode())
            assert metric(found, "tokstream_workers") == 2, answer.body.decode()[:400]
            assert metric(found, "tokstream_requests_total", endpoint="models", status="200") == 12
            seen = metric(found, "tokstream_requests_total", endpoint="metrics", status="200")
            assert seen == scrape, (scrape, seen)
        # A request stuck in a worker gets its 503 within the grace.
        quick = json.dumps(whole_body(COMPLETION, [9707])).encode()
        stuck = post_raw(server.port, quick, 5)
        time.sleep(0.3)
        start = time.monotonic()
        assert server.stop() == 0, server.output()
        assert time.monotonic() - start < GRACE + 1 + MARGIN
        assert_json_error(read_all(stuck), 503, "ServiceUnavailableError")
        stuck.close()
    finally:
        server.stop(signal.SIGKILL)


@pytest.mark.timeout(180)
def test_two_workers_both_load_and_answer(tmp_path: Path) -> None:
    args = [*qwen(), "--workers", "2"]
    server = Server(args, tmp_path / "server.log", log_level="info").start()
    try:
        tok = load_tokenizer("qwen3")
        ids = sample_ids(tok)
        for _ in range(10):
            answer = server.ok(COMPLETION, whole_body(COMPLETION, ids))
            assert whole_text(COMPLETION, answer) == tok.decode(ids, skip_special_tokens=True)
        assert server.stop() == 0, server.output()
    finally:
        server.stop(signal.SIGKILL)


def test_the_banner_follows_the_bind_and_the_open_file_limit_is_raised(tmp_path: Path) -> None:
    """--port 0: the banner names the port really bound; the soft file limit is the hard one;
    SIGINT stops it cleanly."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert hard == resource.RLIM_INFINITY or hard > 256, (soft, hard)
    low = 256

    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))

    log = tmp_path / "server.log"
    command = [sys.executable, "-m", "tokstream", "serve", *qwen(), "--port", "0"]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, preexec_fn=lower)
    try:
        deadline = time.monotonic() + START_SECONDS
        while not (found := re.search(r"listening on http://127\.0\.0\.1:(\d+)", log.read_text())):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        port = int(found.group(1))
        assert port != 0
        assert request(port, "GET", "/health", timeout=START_SECONDS).status == 200
        limits = Path(f"/proc/{proc.pid}/limits").read_text()
        line = next(x for x in limits.splitlines() if x.startswith("Max open files"))
        raised_soft, raised_hard = line.split()[3:5]
        assert raised_soft == raised_hard != str(low), line
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl+C: the same drain, no traceback
        assert proc.wait(30) == 0, log.read_text()
    assert "Traceback" not in log.read_text(), log.read_text()


def one_line_error(done: subprocess.CompletedProcess[str], *words: str) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0, done
    assert "Traceback" not in done.stderr and "listening on" not in done.stdout, done
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def test_a_port_in_use_is_one_line_and_no_banner() -> None:
    with socket.socket() as taken:
        taken.bind((HOST, 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = tokstream_cli("serve", *qwen(), "--port", str(port))
    one_line_error(done, f"127.0.0.1:{port}", "address already in use")
    assert done.returncode == 1


def test_a_bad_host_is_one_line() -> None:
    done = tokstream_cli("serve", *qwen(), "--host", "999.1.1.1", "--port", str(free_port()))
    one_line_error(done, "999.1.1.1", "cannot listen")


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The command line in this process (argparse refuses before anything starts)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return int(done.value.code or 0), out.out, out.err


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("--port", "99999", "from 0 to 65535"),
        ("--port", "-1", "from 0 to 65535"),
        ("--port", "http", "from 0 to 65535"),
        ("--workers", "0", "of at least 1"),
        ("--workers", "abc", "of at least 1"),
        ("--header-timeout", "0", "seconds above 0"),
        ("--body-timeout", "soon", "seconds above 0"),
        ("--send-timeout", "0", "seconds above 0"),
        ("--send-timeout", "later", "seconds above 0"),
        ("--max-connections", "0", "of at least 1"),
        ("--shutdown-grace", "-3", "seconds above 0"),
    ],
)
def test_bad_flag_values_get_the_serve_usage_and_say_why(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, expected: str
) -> None:
    code, _, err = run_main(capsys, "serve", f"{flag}={value}")
    assert code == 2
    assert err.startswith("usage: tokstream serve"), err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"tokstream serve: error: argument {flag}:"), last
    assert expected in last and repr(value) in last, last


@pytest.mark.parametrize(
    ("flag", "known"), [("--reasoning-parser", "qwen3"), ("--tool-call-parser", "hermes")]
)
def test_unknown_parsers_are_refused_with_a_clear_message(flag: str, known: str) -> None:
    done = tokstream_cli("serve", "--port", str(free_port()), flag, "x")
    assert done.returncode != 0
    assert flag in done.stderr and "invalid choice" in done.stderr, done.stderr
    assert known in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_help_shows_the_defaults_and_version_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(capsys, "serve", "--help")
    assert code == 0
    options = out.split("options:", 1)[1]
    entries = {e.split()[0]: " ".join(e.split()) for e in re.split(r"\n  (?=-)", options) if e}
    for flag, default in [
        ("--host", "127.0.0.1"),
        ("--port", "8000"),
        ("--workers", "1"),
        ("--header-timeout", "10.0"),
        ("--body-timeout", "30.0"),
        ("--keep-alive-timeout", "5.0"),
        ("--send-timeout", "10.0"),
        ("--max-header-bytes", "65536"),
        ("--max-connections", "2048"),
        ("--shutdown-grace", "10.0"),
    ]:
        assert entries[flag].endswith(f"(default: {default})"), entries[flag]
    assert run_main(capsys, "--version")[:2] == (0, f"tokstream {tokstream.__version__}\n")


@pytest.mark.parametrize("command", ["stream", "serve"])
@pytest.mark.parametrize("case", ["missing", "not a tokenizer"])
def test_a_tokenizer_that_cannot_load_is_one_line_naming_it(
    tmp_path: Path, command: str, case: str
) -> None:
    if case == "missing":
        path = tmp_path / "nonexistent"
    else:
        path = tmp_path / "config.json"
        path.write_text('{"architectures": ["Qwen3ForCausalLM"]}')
    extra: list[Any] = ["--port", str(free_port())] if command == "serve" else []
    done = tokstream_cli(command, "--tokenizer", str(path), *extra)
    assert done.returncode == 1, done
    one_line_error(done, str(path))
    assert os.fspath(path) in done.stderr
