"""The derender server: a plain ASGI app over ``Derenderer.handle_json``.

No framework: the app routes six paths by hand, reads the body, hands the raw bytes to the native
core and sends back what it answers. A framework's request objects, validation and dependency
injection would cost more per chunk than derendering it does (see the README).

Endpoints: ``POST /v1/chat/completions/derender``, ``POST /v1/completions/derender`` (both
shapes), ``GET /v1/models``, ``GET /health``, ``GET /metrics`` (Prometheus text). Errors are
OpenAI-style objects: 400 bad input, 404 unknown path or model, 405 wrong method, 413 a body over
the limit. Bodies of ``offload_bytes`` or more are derendered on a thread (the core releases the
interpreter lock for them), so a large whole response never stalls the event loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from bisect import bisect_left
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from .derender import CHAT_PATH, COMPLETION_PATH, Derenderer

__all__ = ["DEFAULT_MAX_BODY_BYTES", "App", "Metrics", "ServerConfig", "create_app"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024
"""Largest request body accepted (413 above it): an 8,000-token whole response with 20
alternatives per logprob position is about 10 MB."""

DEFAULT_OFFLOAD_BYTES = 64 * 1024
"""Bodies at least this large are derendered on a worker thread, off the event loop."""

_JSON = [(b"content-type", b"application/json")]
_TEXT = [(b"content-type", b"text/plain; version=0.0.4; charset=utf-8")]


def _error_body(status: int, kind: str, message: str) -> bytes:
    error = {"message": message, "type": kind, "param": None, "code": status}
    return json.dumps({"error": error}).encode()


class Histogram:
    """A Prometheus histogram: cumulative bucket counts, sum and count."""

    __slots__ = ("bounds", "count", "counts", "total")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.total += value
        self.count += 1

    def render(self, name: str, labels: str) -> list[str]:
        lines = []
        running = 0
        sep = "," if labels else ""
        for bound, n in zip(self.bounds, self.counts[:-1], strict=True):
            running += n
            lines.append(f'{name}_bucket{{{labels}{sep}le="{bound:g}"}} {running}')
        running += self.counts[-1]
        lines.append(f'{name}_bucket{{{labels}{sep}le="+Inf"}} {running}')
        lines.append(f"{name}_sum{{{labels}}} {self.total:.9g}")
        lines.append(f"{name}_count{{{labels}}} {self.count}")
        return lines


_LATENCY_BOUNDS = (
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
)  # fmt: skip
_BYTES_BOUNDS = (128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 16384.0, 65536.0)


class Metrics:
    """This worker process's counters, rendered as Prometheus text (``worker`` label: its pid)."""

    def __init__(self) -> None:
        self.requests: dict[tuple[str, int], int] = {}
        self.errors: dict[str, int] = {}
        self.tokens = 0
        self.request_seconds: dict[str, Histogram] = {}
        self.chunk_seconds = Histogram(_LATENCY_BOUNDS)
        self.state_bytes = Histogram(_BYTES_BOUNDS)
        self.pid = os.getpid()

    def record(self, endpoint: str, status: int, seconds: float) -> None:
        key = (endpoint, status)
        self.requests[key] = self.requests.get(key, 0) + 1
        hist = self.request_seconds.get(endpoint)
        if hist is None:
            hist = self.request_seconds[endpoint] = Histogram(_LATENCY_BOUNDS)
        hist.observe(seconds)

    def error(self, reason: str) -> None:
        self.errors[reason] = self.errors.get(reason, 0) + 1

    def render(self) -> bytes:
        w = f'worker="{self.pid}"'
        out = [
            "# HELP tokstream_requests_total HTTP requests answered, by endpoint and status.",
            "# TYPE tokstream_requests_total counter",
        ]
        for (endpoint, status), n in sorted(self.requests.items()):
            out.append(
                f'tokstream_requests_total{{{w},endpoint="{endpoint}",status="{status}"}} {n}'
            )
        out += [
            "# HELP tokstream_errors_total Requests refused, by reason.",
            "# TYPE tokstream_errors_total counter",
        ]
        for reason, n in sorted(self.errors.items()):
            out.append(f'tokstream_errors_total{{{w},reason="{reason}"}} {n}')
        out += [
            "# HELP tokstream_tokens_derendered_total Output token ids derendered.",
            "# TYPE tokstream_tokens_derendered_total counter",
            f"tokstream_tokens_derendered_total{{{w}}} {self.tokens}",
            "# HELP tokstream_request_duration_seconds Time to answer a request, by endpoint.",
            "# TYPE tokstream_request_duration_seconds histogram",
        ]
        for endpoint, hist in sorted(self.request_seconds.items()):
            out += hist.render("tokstream_request_duration_seconds", f'{w},endpoint="{endpoint}"')
        out += [
            "# HELP tokstream_chunk_duration_seconds Time to derender one stream chunk.",
            "# TYPE tokstream_chunk_duration_seconds histogram",
            *self.chunk_seconds.render("tokstream_chunk_duration_seconds", w),
            "# HELP tokstream_stream_state_bytes Size of the stream_state returned per chunk.",
            "# TYPE tokstream_stream_state_bytes histogram",
            *self.state_bytes.render("tokstream_stream_state_bytes", w),
        ]
        return ("\n".join(out) + "\n").encode()


_GET_PATHS = {"/health": "health", "/v1/models": "models", "/metrics": "metrics"}
_ERROR_REASONS = {400: "bad_request", 404: "not_found", 405: "method_not_allowed"}


@dataclass(frozen=True)
class ServerConfig:
    """What a worker needs to build its app (passed to worker processes as JSON)."""

    tokenizer: str
    served_model_name: str
    max_model_len: int | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    offload_bytes: int = DEFAULT_OFFLOAD_BYTES
    reasoning_parser: str | None = None
    tool_parser: str | None = None
    parser_state: str = "resumable"


class App:
    """The ASGI application.

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
                status = await self._refuse(send, 405, "MethodNotAllowedError", "use POST")
            else:
                status = await self._derender(scope, path, receive, send, start)
            endpoint = "chat" if path == CHAT_PATH else "completions"
        elif path in _GET_PATHS:
            endpoint = _GET_PATHS[path]
            if method not in ("GET", "HEAD"):
                status = await self._refuse(send, 405, "MethodNotAllowedError", "use GET")
            elif endpoint == "health":
                status = await _respond(send, 200, b"", _TEXT)
            elif endpoint == "models":
                status = await _respond(send, 200, self._models(), _JSON)
            else:
                status = await _respond(send, 200, self.metrics.render(), _TEXT)
        else:
            status = await self._refuse(send, 404, "NotFoundError", f"no endpoint at {path[:200]}")
            endpoint = "other"
        self.metrics.record(endpoint, status, time.perf_counter() - start)

    async def _refuse(self, send: Send, status: int, kind: str, message: str) -> int:
        self.metrics.error(_ERROR_REASONS.get(status, "payload_too_large"))
        return await _respond(send, status, _error_body(status, kind, message), _JSON)

    async def _derender(
        self, scope: Scope, path: str, receive: Receive, send: Send, start: float
    ) -> int:
        limit = self.max_body_bytes
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit() and int(value) > limit:
                return await self._too_large(send)
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
                    return await self._too_large(send)
                chunks.append(part)
            if not message.get("more_body", False):
                break
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        if len(body) >= self.offload_bytes:
            loop = asyncio.get_running_loop()
            answer = await loop.run_in_executor(self._pool, self._handle, path, body)
        else:
            answer = self._handle(path, body)
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

    async def _too_large(self, send: Send) -> int:
        message = f"the body is larger than the server's limit of {self.max_body_bytes} bytes"
        return await self._refuse(send, 413, "PayloadTooLargeError", message)

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


async def _respond(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> int:
    # With its length given, the body goes out in one piece rather than chunked.
    length = (b"content-length", str(len(body)).encode())
    await send({"type": "http.response.start", "status": status, "headers": [*headers, length]})
    await send({"type": "http.response.body", "body": body})
    return status


def build_app(config: ServerConfig) -> App:
    """Loads the tokenizer and builds the app a worker serves."""
    from . import Detokenizer

    detokenizer = Detokenizer.from_file(config.tokenizer)
    derenderer = Derenderer(
        detokenizer,
        served_model_name=config.served_model_name,
        max_model_len=config.max_model_len,
        reasoning_parser=config.reasoning_parser,
        tool_parser=config.tool_parser,
        parser_state=config.parser_state,
    )
    return App(derenderer, max_body_bytes=config.max_body_bytes, offload_bytes=config.offload_bytes)


CONFIG_ENV = "TOKSTREAM_SERVE_CONFIG"
"""The environment variable that carries a ``ServerConfig`` (JSON) to worker processes."""


def create_app() -> App:
    """The app factory worker processes call: reads the config from ``TOKSTREAM_SERVE_CONFIG``."""
    raw = os.environ.get(CONFIG_ENV)
    if raw is None:
        raise RuntimeError(f"{CONFIG_ENV} is not set; start the server with `tokstream serve`")
    return build_app(ServerConfig(**json.loads(raw)))
