"""What ``tokstream serve`` hands the native front: its flags become ``ServerConfig`` and
``Listen``, and ``launch.front_for`` passes each limit to ``_core.Front`` by keyword. A stand-in
records what ``Front`` and ``launch.run`` are given, so no server runs here."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.real_tokenizers import tokenizer_path
from helpers.server_util import HOST
from tokstream import launch
from tokstream.cli import main
from tokstream.launch import Listen, bind, connection_cap, front_for
from tokstream.server import DEFAULT_SEND_TIMEOUT, ServerConfig, build_app

QWEN = str(tokenizer_path("qwen3").parent)


class FakeFront:
    """Records the arguments ``_core.Front`` would get."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs


def test_front_for_passes_every_limit_by_keyword(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch, "Front", FakeFront)
    config = ServerConfig(
        tokenizer=QWEN,
        served_model_name="qwen3",
        max_body_bytes=5000,
        offload_bytes=6000,
        header_timeout=1.5,
        body_timeout=2.5,
        send_timeout=3.5,
        max_header_bytes=4096,
        max_connections=7,
    )
    app = build_app(config)
    with bind(HOST, 0) as sock:
        front = front_for(app, config, sock, threads=3, keep_alive_timeout=4.5)
        assert isinstance(front, FakeFront)
        assert front.args[1:3] == (sock.fileno(), app.models_body())
    assert front.args[0] is app.derenderer._core
    expected = {
        "unix": False,
        "threads": 3,
        "header_timeout": 1.5,
        "body_timeout": 2.5,
        "keep_alive_timeout": 4.5,
        "send_timeout": 3.5,
        "max_header_bytes": 4096,
        "max_body_bytes": 5000,
        "max_connections": 7,
        "offload_bytes": 6000,
    }
    assert {key: front.kwargs[key] for key in expected} == expected


def serve(monkeypatch: pytest.MonkeyPatch, *flags: str) -> tuple[ServerConfig, Listen]:
    """``tokstream serve FLAGS`` up to the point where it would bind and serve."""
    seen: list[tuple[ServerConfig, Listen]] = []

    def run(app: Any, config: ServerConfig, listen: Listen, banner: Any) -> int:
        assert "unread answers" in banner("http://x")
        seen.append((config, listen))
        return 0

    monkeypatch.setattr(launch, "run", run)
    monkeypatch.setattr(launch, "raise_open_file_limit", lambda: 100_000)
    assert main(["serve", "--tokenizer", QWEN, *flags]) == 0
    (found,) = seen
    return found


def test_serve_flags_reach_the_config_and_the_listen(monkeypatch: pytest.MonkeyPatch) -> None:
    config, listen = serve(
        monkeypatch,
        "--send-timeout",
        "2.5",
        "--header-timeout",
        "1.5",
        "--keep-alive-timeout",
        "4.5",
        "--workers",
        "3",
        "--max-connections",
        "50000",
    )
    assert (config.send_timeout, config.header_timeout) == (2.5, 1.5)
    assert (listen.workers, listen.keep_alive_timeout) == (3, 4.5)
    # The worker threads share the process's open-file limit.
    assert config.max_connections == connection_cap(50_000, 100_000, 3) < 50_000


def test_the_send_timeout_defaults_to_ten_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    config, _ = serve(monkeypatch)
    assert config.send_timeout == DEFAULT_SEND_TIMEOUT == 10.0
