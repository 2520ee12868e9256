"""``tokstream.asgi``: the derender endpoints as an ASGI app embedded in someone else's server.

The app is called two ways: directly as an ASGI callable (a scope, a ``receive`` that hands out
the body in the pieces a test chooses, a ``send`` that records), and inside uvicorn started by
the test on a loopback port, as a user would embed it. Its answers must be ``handle_json``'s
(``created`` aside); its own refusals are the JSON error shape, with ``Allow`` on 405. The app has
no HTTP limits of its own, so none are tested here beyond its body limit (413).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from helpers.real_tokenizers import load_tokenizer, tokenizer_path
from helpers.server_util import (
    CHAT,
    COMPLETION,
    HOST,
    Answer,
    assert_error,
    metric,
    parse_metrics,
    request,
    stream_body,
    whole_body,
)
from tokstream.asgi import App, create_app
from tokstream.launch import bind

NAME = "qwen3-embedded"
SMALL_LIMIT = 4096


@pytest.fixture(scope="module")
def app() -> Iterator[App]:
    served = create_app(str(tokenizer_path("qwen3").parent), served_model_name=NAME)
    yield served
    lifespan(served, ["lifespan.startup", "lifespan.shutdown"])  # its thread pool ends


def lifespan(app: App, kinds: Sequence[str]) -> list[str]:
    """Runs the lifespan protocol with these messages; the kinds of the app's answers."""
    incoming = [{"type": kind} for kind in kinds]
    answers: list[str] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0)

    async def send(message: dict[str, Any]) -> None:
        answers.append(message["type"])

    asyncio.run(app({"type": "lifespan"}, receive, send))
    return answers


def call(
    app: App,
    method: str,
    path: str,
    parts: Sequence[bytes] = (b"",),
    headers: Sequence[tuple[bytes, bytes]] = (),
    *,
    disconnect: bool = False,
) -> Answer:
    """One HTTP request straight to the ASGI callable: the body in ``parts``, then (with
    ``disconnect``) the client leaving instead of the last part."""
    messages: list[dict[str, Any]] = [
        {"type": "http.request", "body": part, "more_body": k < len(parts) - 1}
        for k, part in enumerate(parts)
    ]
    if disconnect:
        messages[-1] = {"type": "http.disconnect"}
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"x"), *headers],
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    if not sent:
        return Answer(0, {}, b"")
    start, *bodies = sent
    assert start["type"] == "http.response.start", sent
    found = {k.decode(): v.decode() for k, v in start["headers"]}
    body = b"".join(m["body"] for m in bodies)
    assert found["content-length"] == str(len(body)), found
    return Answer(start["status"], found, body)


def without_created(raw: bytes) -> Any:
    answer = json.loads(raw)
    for part in (answer, answer.get("chunk") or {}):
        part.pop("created", None)
    return answer


def bodies() -> list[tuple[str, bytes]]:
    tok = load_tokenizer("qwen3")
    ids = tok.encode("Embedded 中文 👋 streams", add_special_tokens=False).ids
    out = [
        (COMPLETION, whole_body(COMPLETION, ids)),
        (CHAT, whole_body(CHAT, ids)),
        (CHAT, stream_body(ids[:3], None)),
        (CHAT, {**whole_body(CHAT, ids), "model": "nope"}),  # 404 from the core
        (COMPLETION, {"generate_responses": "no"}),  # 400 from the core
    ]
    return [(path, json.dumps(body).encode()) for path, body in out]


def test_derenders_are_handle_json_answers_in_any_body_pieces(app: App) -> None:
    for path, raw in bodies():
        status, expected = app.derenderer.handle_json(path, raw)
        for parts in ([raw], [raw[:7], raw[7:20], b"", raw[20:]]):
            answer = call(app, "POST", path, parts)
            assert answer.status == status, answer
            assert answer.headers["content-type"] == "application/json"
            assert without_created(answer.body) == without_created(expected)


def test_health_models_and_metrics(app: App) -> None:
    health = call(app, "GET", "/health")
    assert (health.status, health.body) == (200, b"")
    assert health.headers["content-type"] == "text/plain; charset=utf-8"
    assert health.headers["cache-control"] == "no-store"
    models = call(app, "GET", "/v1/models")
    assert models.status == 200 and "cache-control" not in models.headers
    assert [m["id"] for m in models.json()["data"]] == [NAME]
    before = parse_metrics(call(app, "GET", "/metrics").body.decode())
    call(app, "POST", COMPLETION, [bodies()[0][1]])
    call(app, "GET", "/nowhere")
    scrape = call(app, "GET", "/metrics")
    assert scrape.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert scrape.headers["cache-control"] == "no-store"
    after = parse_metrics(scrape.body.decode())

    def grew(name: str, **labels: str) -> float:
        return metric(after, name, **labels) - metric(before, name, **labels)

    assert metric(after, "tokstream_workers") == 1
    assert grew("tokstream_requests_total", endpoint="completions", status="200") == 1
    assert grew("tokstream_requests_total", endpoint="other", status="404") == 1
    assert grew("tokstream_requests_total", endpoint="metrics", status="200") == 1
    assert grew("tokstream_errors_total", reason="not_found") == 1


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("GET", CHAT, "POST"),
        ("PUT", COMPLETION, "POST"),
        ("POST", "/health", "GET, HEAD"),
        ("DELETE", "/metrics", "GET, HEAD"),
    ],
)
def test_a_wrong_method_is_405_with_allow(app: App, method: str, path: str, allow: str) -> None:
    answer = call(app, method, path)
    assert_error(answer, 405, "MethodNotAllowedError")
    assert answer.headers["allow"] == allow, answer.headers


def test_an_unknown_path_is_404(app: App) -> None:
    assert_error(call(app, "GET", "/v1/chat/completions"), 404, "NotFoundError")


def test_a_body_over_the_limit_is_413_declared_or_counted(app: App) -> None:
    """Refused from ``Content-Length`` before reading, or once the pieces pass the limit."""
    small = App(app.derenderer, max_body_bytes=SMALL_LIMIT)
    raw = bodies()[0][1]
    padded = raw[:-1] + b" " * (SMALL_LIMIT - len(raw)) + raw[-1:]
    assert len(padded) == SMALL_LIMIT
    assert call(small, "POST", COMPLETION, [padded]).status == 200
    over = padded + b" "
    declared = [(b"content-length", str(len(over)).encode())]
    for parts, headers in (([over], declared), ([over[:4000], over[4000:]], [])):
        assert_error(call(small, "POST", COMPLETION, parts, headers), 413, "PayloadTooLargeError")
    errors = parse_metrics(call(small, "GET", "/metrics").body.decode())
    assert metric(errors, "tokstream_errors_total", reason="payload_too_large") == 2


def test_an_encoded_body_is_415(app: App) -> None:
    raw = bodies()[0][1]
    headers = [(b"content-encoding", b"gzip")]
    answer = call(app, "POST", COMPLETION, [raw], headers)
    assert_error(answer, 415, "UnsupportedMediaTypeError")
    assert 'Content-Encoding "gzip"' in answer.json()["error"]["message"]
    identity = [(b"content-encoding", b"identity")]
    assert call(app, "POST", COMPLETION, [raw], identity).status == 200


def test_a_client_that_leaves_mid_body_gets_nothing(app: App) -> None:
    raw = bodies()[0][1]
    answer = call(app, "POST", COMPLETION, [raw[:10], raw[10:]], disconnect=True)
    assert answer == Answer(0, {}, b"")


def test_lifespan_starts_and_shuts_down(app: App) -> None:
    own = App(app.derenderer)
    kinds = ["lifespan.startup", "lifespan.shutdown"]
    assert lifespan(own, kinds) == [f"{kind}.complete" for kind in kinds]


@pytest.fixture(scope="module")
def uvicorn_port(app: App) -> Iterator[int]:
    """The app in uvicorn, in a thread of this process, on a loopback port of the test's."""
    import uvicorn

    sock = bind(HOST, 0)
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(
        App(app.derenderer), http="h11", ws="none", lifespan="on", log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
        assert not thread.is_alive()


def test_embedded_in_uvicorn_it_answers_as_handle_json(app: App, uvicorn_port: int) -> None:
    """Over HTTP, small bodies and a 300 kB one (derendered on the app's thread pool) alike."""
    tok = load_tokenizer("qwen3")
    ids = tok.encode("Streaming 中文 👋 " * 9000, add_special_tokens=False).ids
    large = json.dumps(whole_body(COMPLETION, ids)).encode()
    assert len(large) > 256 * 1024
    for path, raw in [*bodies(), (COMPLETION, large)]:
        status, expected = app.derenderer.handle_json(path, raw)
        answer = request(uvicorn_port, "POST", path, raw)
        assert answer.status == status, answer
        assert without_created(answer.body) == without_created(expected)
    answer = request(uvicorn_port, "GET", "/health")
    assert (answer.status, answer.headers["cache-control"]) == (200, "no-store")
    assert_error(request(uvicorn_port, "GET", CHAT), 405, "MethodNotAllowedError")
