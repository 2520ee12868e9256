"""The derender endpoints as a plain ASGI app over ``Derenderer.handle_json``, to embed.

No framework: the app routes six paths by hand, reads the body, hands the raw bytes to the native
core and sends back what it answers. A framework's request objects, validation and dependency
injection would cost more per chunk than derendering it does (see BENCHMARKS.md).

Endpoints: ``POST /v1/chat/completions/derender``, ``POST /v1/completions/derender`` (both
shapes), ``GET /v1/models``, ``GET /health``, ``GET /metrics`` (Prometheus text, this app's
counters). Errors are OpenAI-style objects: 400 bad input, 404 unknown path or model, 405 wrong
method (with ``Allow``), 413 a body over ``max_body_bytes``. The app has no HTTP limits of its own
(timeouts, header size, connection cap): the server that runs it owns them. Bodies of
``offload_bytes`` or more are derendered on a thread (the core releases the interpreter lock for
them), so a large whole response never stalls the event loop.

``tokstream serve`` does not run this app: its front (``tokstream.launch``) serves the same
derenderer natively. This module also holds the server's defaults and ``ServerConfig``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from . import _core
from .derender import CHAT_PATH, COMPLETION_PATH, DEFAULT_PARSER_STATE, Derenderer
from .metrics import Metrics, render

__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_HEADER_TIMEOUT",
    "DEFAULT_KEEP_ALIVE_TIMEOUT",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_HEADER_BYTES",
    "DEFAULT_SEND_TIMEOUT",
    "DEFAULT_SHUTDOWN_GRACE",
    "App",
    "Metrics",
    "ServerConfig",
    "build_app",
    "error_body",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

DEFAULT_MAX_BODY_BYTES: int = _core.DEFAULT_MAX_BODY_BYTES
"""Largest request body accepted (413 above it): an 8,000-token whole response with 20
alternatives per logprob position is about 10 MB."""

DEFAULT_OFFLOAD_BYTES: int = _core.DEFAULT_OFFLOAD_BYTES
"""Bodies at least this large are derendered on a worker thread, off the event loop."""

DEFAULT_HEADER_TIMEOUT: float = _core.DEFAULT_HEADER_TIMEOUT
"""Seconds a connection has to send its request line and headers (then it is closed)."""

DEFAULT_BODY_TIMEOUT: float = _core.DEFAULT_BODY_TIMEOUT
"""Seconds a request's body may stop arriving before the request gets 408."""

DEFAULT_MAX_HEADER_BYTES: int = _core.DEFAULT_MAX_HEADER_BYTES
"""Largest request line and headers, in all (431 above it, without buffering them)."""

DEFAULT_MAX_CONNECTIONS: int = _core.DEFAULT_MAX_CONNECTIONS
"""Open connections a worker thread serves; one more closes the oldest idle one (503 if none is
idle)."""

DEFAULT_KEEP_ALIVE_TIMEOUT: float = _core.DEFAULT_KEEP_ALIVE_TIMEOUT
"""Seconds an idle keep-alive connection stays open after its last response."""

DEFAULT_SEND_TIMEOUT: float = _core.DEFAULT_SEND_TIMEOUT
"""Seconds a connection's answers may stay unread by the client before it is closed."""

DEFAULT_SHUTDOWN_GRACE = 10.0
"""Seconds requests in flight at SIGTERM have to finish; later they get 503."""

#: Exit this long after the grace period even if a derender thread is still running.
EXIT_MARGIN = 0.5

Headers = Sequence[tuple[bytes, bytes]]

_JSON = [(b"content-type", b"application/json")]
_PLAIN = [(b"content-type", b"text/plain; charset=utf-8")]
_PROMETHEUS = [(b"content-type", b"text/plain; version=0.0.4; charset=utf-8")]


def error_body(status: int, message: str) -> bytes:
    """The OpenAI-style error object of every refusal: the core's (``_core.error_body``), which
    the front answers too; its type follows from the status."""
    return _core.error_body(status, message)


_NO_STORE = (b"cache-control", b"no-store")
_ALLOW_POST = [(b"allow", b"POST")]
_ALLOW_GET = [(b"allow", b"GET, HEAD")]
_GET_PATHS = {"/health": "health", "/v1/models": "models", "/metrics": "metrics"}
_ERROR_REASONS = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


@dataclass(frozen=True)
class ServerConfig:
    """What ``tokstream serve`` builds its app and its front from."""

    tokenizer: str
    served_model_name: str
    max_model_len: int | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    offload_bytes: int = DEFAULT_OFFLOAD_BYTES
    reasoning_parser: str | None = None
    tool_parser: str | None = None
    parser_state: str = DEFAULT_PARSER_STATE
    response_template: str | None = None
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    send_timeout: float = DEFAULT_SEND_TIMEOUT
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    max_connections: int = DEFAULT_MAX_CONNECTIONS


class App:
    """The ASGI application; timeouts, header limits, the connection cap and shutdown are the
    host server's.

    Args:
        derenderer: What answers the derender endpoints.
        max_body_bytes: Bodies over this size are answered 413 without being read in full.
        offload_bytes: Bodies at least this size are derendered on a worker thread.
    """

    def __init__(
        self,
        derenderer: Derenderer,
        *,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        offload_bytes: int = DEFAULT_OFFLOAD_BYTES,
    ) -> None:
        self.derenderer = derenderer
        self.max_body_bytes = max_body_bytes
        self.offload_bytes = offload_bytes
        self.metrics = Metrics()
        self._handle = derenderer.handle_json_stats
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="derender")
        self._created = int(time.time())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self._pool.shutdown(wait=False, cancel_futures=True)
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        method = scope["method"]
        start = time.perf_counter()
        if path in (CHAT_PATH, COMPLETION_PATH):
            if method != "POST":
                status = await self._refuse(send, 405, "use POST", _ALLOW_POST)
            else:
                status = await self._derender(scope, path, receive, send, start)
            endpoint = "chat" if path == CHAT_PATH else "completions"
        elif path in _GET_PATHS:
            endpoint = _GET_PATHS[path]
            if method not in ("GET", "HEAD"):
                status = await self._refuse(send, 405, "use GET", _ALLOW_GET)
            elif endpoint == "health":
                status = await _respond(send, 200, b"", [*_PLAIN, _NO_STORE])
            elif endpoint == "models":
                status = await _respond(send, 200, self._models(), _JSON)
            else:
                metrics = render(self.metrics, 1)
                status = await _respond(send, 200, metrics, [*_PROMETHEUS, _NO_STORE])
        else:
            status = await self._refuse(send, 404, f"no endpoint at {path[:200]}")
            endpoint = "other"
        self.metrics.record(endpoint, status, time.perf_counter() - start)

    async def _refuse(self, send: Send, status: int, message: str, headers: Headers = ()) -> int:
        self.metrics.error(_ERROR_REASONS.get(status, "payload_too_large"))
        return await _respond(send, status, error_body(status, message), [*_JSON, *headers])

    async def _derender(
        self, scope: Scope, path: str, receive: Receive, send: Send, start: float
    ) -> int:
        limit = self.max_body_bytes
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit() and int(value) > limit:
                return await self._too_large(send)
            if name == b"content-encoding":
                codings = [c.strip() for c in value.decode("latin-1").split(",")]
                coding = next((c for c in codings if c and c.lower() != "identity"), None)
                if coding is not None:
                    message = (
                        f'the body\'s Content-Encoding "{coding[:40]}" is not decoded here: '
                        "send the JSON uncompressed"
                    )
                    return await self._refuse(send, 415, message)
        answer = await self._read_and_derender(path, receive)
        if answer == 499:
            return 499
        if answer == 413:
            return await self._too_large(send)
        assert isinstance(answer, tuple)
        status, out, tokens, state_bytes = answer
        metrics = self.metrics
        if status == 200:
            metrics.tokens += tokens
            if state_bytes:
                metrics.chunk_seconds.observe(time.perf_counter() - start)
                metrics.state_bytes.observe(state_bytes)
        else:
            metrics.error(_ERROR_REASONS.get(status, "internal"))
        return await _respond(send, status, out, _JSON)

    async def _read_and_derender(
        self, path: str, receive: Receive
    ) -> tuple[int, bytes, int, int] | int:
        """The derender's answer, or 499 (the client left) or 413 (the body is too large)."""
        limit = self.max_body_bytes
        chunks = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return 499
            part = message.get("body", b"")
            if part:
                size += len(part)
                if size > limit:
                    return 413
                chunks.append(part)
            if not message.get("more_body", False):
                break
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        if len(body) >= self.offload_bytes:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._pool, self._handle, path, body)
        return self._handle(path, body)

    async def _too_large(self, send: Send) -> int:
        message = f"the body is larger than the server's limit of {self.max_body_bytes} bytes"
        return await self._refuse(send, 413, message)

    def models_body(self) -> bytes:
        """The ``/v1/models`` answer (the front serves the same bytes)."""
        return self._models()

    def _models(self) -> bytes:
        model = {
            "id": self.derenderer.served_model_name,
            "object": "model",
            "created": self._created,
            "owned_by": "tokstream",
            "root": self.derenderer.served_model_name,
            "parent": None,
            "max_model_len": self.derenderer.max_model_len,
        }
        return json.dumps({"object": "list", "data": [model]}).encode()


async def _respond(send: Send, status: int, body: bytes, headers: Headers) -> int:
    # With its length given, the body goes out in one piece rather than chunked.
    length = (b"content-length", str(len(body)).encode())
    await send({"type": "http.response.start", "status": status, "headers": [*headers, length]})
    await send({"type": "http.response.body", "body": body})
    return status


def build_app(config: ServerConfig) -> App:
    """Loads the tokenizer and builds the app over its ``Derenderer``."""
    from . import Detokenizer

    detokenizer = Detokenizer.from_file(config.tokenizer)
    derenderer = Derenderer(
        detokenizer,
        served_model_name=config.served_model_name,
        max_model_len=config.max_model_len,
        reasoning_parser=config.reasoning_parser,
        tool_parser=config.tool_parser,
        parser_state=config.parser_state,
        response_template=config.response_template,
    )
    return App(
        derenderer,
        max_body_bytes=config.max_body_bytes,
        offload_bytes=config.offload_bytes,
    )


def exit_now(abandoned: bool = True) -> None:
    """Leaves the process at once, without waiting for threads (every request has had its
    answer); with ``abandoned``, says that a derender thread still ran after the grace period
    (the interpreter would wait for it at exit)."""
    if abandoned:
        print(
            "tokstream serve: a derender still running after the grace period was abandoned",
            file=sys.stderr,
            flush=True,
        )
    sys.stdout.flush()
    os._exit(0)
