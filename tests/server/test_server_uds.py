"""``tokstream serve --uds PATH``: the server on a Unix domain socket instead of a TCP port.

The server serves the same contract there (a stream with its state carried, a whole response,
errors, ``/metrics``); the banner names the socket; the socket file is removed when the server
exits; and binding refuses what it must not replace (a regular file, a live server's socket)
while replacing a socket file a dead server left. The limits over this transport are in
``test_server_limits.py``.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.real_tokenizers import load_tokenizer, tokenizer_path
from helpers.server_util import (
    CHAT,
    COMPLETION,
    Server,
    assert_error,
    chunk_text,
    stream_body,
    whole_body,
    whole_text,
)
from tokstream.launch import BindError, bind_unix

TEXT = "Unix sockets carry the same answers: 世界 👋"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("uds")
    served = Server(
        ["--tokenizer", str(tokenizer_path("qwen3").parent)],
        folder / "server.log",
        uds=folder / "derender.sock",
    )
    try:
        yield served.start()
    finally:
        served.stop()


def test_a_stream_with_its_state_carried_is_exact(server: Server) -> None:
    tok = load_tokenizer("qwen3")
    ids = tok.encode(TEXT, add_special_tokens=False).ids
    state, text = None, ""
    for k in range(0, len(ids), 2):
        body = stream_body(ids[k : k + 2], state)
        answer = server.ok(CHAT, body)
        text += chunk_text(CHAT, answer)
        state = answer["stream_state"]
    assert text == tok.decode(ids)


def test_whole_responses_errors_and_metrics_are_served(server: Server) -> None:
    tok = load_tokenizer("qwen3")
    ids = tok.encode(TEXT, add_special_tokens=False).ids
    answer = server.ok(COMPLETION, whole_body(COMPLETION, ids))
    assert whole_text(COMPLETION, answer) == tok.decode(ids)
    assert_error(server.post(COMPLETION, {"generate_responses": "no"}), 400, "BadRequestError")
    assert_error(server.call("GET", "/nowhere"), 404, "NotFoundError")
    assert server.call("GET", "/health").status == 200
    counted = server.metrics()
    assert any(name.startswith("tokstream_") and value > 0 for (name, _), value in counted.items())


def test_the_banner_names_the_socket_and_exit_removes_it(tmp_path: Path) -> None:
    path = tmp_path / "derender.sock"
    served = Server(
        ["--tokenizer", str(tokenizer_path("qwen3").parent)], tmp_path / "server.log", uds=path
    )
    served.start()
    try:
        assert f"listening on unix:{path}," in served.output()
        assert path.is_socket()
    finally:
        code = served.stop()
    assert code == 0, served.output()
    assert not path.exists()


def test_binding_refuses_a_file_and_a_live_socket_and_replaces_a_dead_one(
    tmp_path: Path,
) -> None:
    plain = tmp_path / "plain"
    plain.write_text("not a socket")
    with pytest.raises(BindError, match="exists and is not a socket"):
        bind_unix(str(plain))
    assert plain.read_text() == "not a socket"

    live = tmp_path / "live.sock"
    first = bind_unix(str(live))
    try:
        with pytest.raises(BindError, match="address already in use"):
            bind_unix(str(live))
    finally:
        first.close()
    # Closed without removing its file, as a killed server leaves it: replaced.
    assert live.is_socket()
    second = bind_unix(str(live))
    try:
        assert second.family == socket.AF_UNIX
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(live))
    finally:
        second.close()

    with pytest.raises(BindError, match="cannot listen on"):
        bind_unix(str(tmp_path / "missing-folder" / "x.sock"))
