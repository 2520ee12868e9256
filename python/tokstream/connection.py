"""The server's HTTP connections: uvicorn's httptools protocol with the limits it lacks.

uvicorn closes a keep-alive connection that stays idle (``timeout_keep_alive``), but nothing
else: a client that connects and sends nothing, or sends its headers a byte at a time, holds a
socket forever, and httptools buffers a header of any size. This protocol adds, per connection:

- a header deadline: the request line and headers must arrive within ``header_timeout`` seconds
  of the connection opening or of the request's first byte; past it the client gets 408 (or,
  if it sent nothing, the connection is just closed);
- a body idle timeout: a request whose body stops arriving for ``body_timeout`` seconds (the
  server not holding it back) gets 408 and the connection is closed;
- a header size limit: once more than ``max_header_bytes`` have arrived without the headers
  ending, the client gets 431 and the rest is read and dropped, never buffered;
- a cap on open connections (per worker process): a connection beyond ``max_connections`` is
  answered 503 once its headers arrive, and closed;
- the JSON error shape for malformed HTTP (a bad ``Content-Length``, say), where uvicorn answers
  plain text.

Every refusal is the OpenAI-style error object the app uses, with ``connection: close``; the
server then half-closes and drops what the client still sends for up to ``LINGER`` seconds and
``LINGER_BYTES`` bytes, so the client reads the answer instead of a reset.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from . import _core
from .server import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_HEADER_BYTES,
    error_body,
)

__all__ = ["LINGER", "LINGER_BYTES", "LimitedHttpProtocol", "Limits"]

#: How long, and how many bytes, a refused connection is drained for before it is closed (the
#: Rust front's, ``crate::limits``).
LINGER: float = _core.LINGER
LINGER_BYTES: int = _core.LINGER_BYTES

_REASONS = {
    400: "Bad Request",
    408: "Request Timeout",
    431: "Request Header Fields Too Large",
    503: "Service Unavailable",
}


@dataclass(frozen=True)
class Limits:
    """The connection limits; set as ``tokstream_limits`` on the uvicorn ``Config``, which
    carries them to worker processes."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    max_connections: int = DEFAULT_MAX_CONNECTIONS


class LimitedHttpProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` with header and body deadlines, a header size limit and a cap."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._limits: Limits = getattr(self.config, "tokstream_limits", None) or Limits()
        self._in_head = True  # waiting for a request line and headers
        self._head_bytes = 0
        self._head_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._over_cap = False
        self._refused = False
        self._drained = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._over_cap = len(self.connections) > self._limits.max_connections
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._stop_body_timer()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(
                self._limits.header_timeout, self._head_timed_out
            )

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self._refused:
            return
        if self._head_bytes == 0:
            self.transport.close()
            return
        seconds = f"{self._limits.header_timeout:g}"
        message = f"the request's headers did not arrive within {seconds} seconds"
        self._refuse(408, message)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            # Drained, not parsed: the answer is on its way. A client that keeps sending gets
            # a reset rather than the server's time.
            self._drained += len(data)
            if self._drained > LINGER_BYTES:
                self.transport.close()
            return
        if not self._in_head:
            super().data_received(data)
            self._body_progress()
            return
        total = self._head_bytes + len(data)
        if total > self._limits.max_header_bytes:
            self._head_too_large(data)
            return
        self._head_bytes = total
        super().data_received(data)
        # Armed only when a head is left unfinished (after a whole request, on_message_complete
        # has set the count back to 0): a head that arrives whole never touches the timer.
        if self._in_head and self._head_bytes and self._head_timer is None and not self._refused:
            self._arm()
        elif not self._in_head:
            self._body_progress()

    def _body_progress(self) -> None:
        """Restarts the body's idle timer while its body is incomplete (a bit of it came)."""
        cycle = self.cycle
        if cycle is None or not cycle.more_body or cycle.response_complete or self._refused:
            self._stop_body_timer()
            return
        if self._body_timer is not None:
            self._body_timer.cancel()
        self._body_timer = self.loop.call_later(self._limits.body_timeout, self._body_timed_out)

    def _stop_body_timer(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _body_timed_out(self) -> None:
        self._body_timer = None
        cycle = self.cycle
        if self.transport.is_closing() or self._refused or cycle is None:
            return
        if not cycle.more_body or cycle.response_complete:
            return
        if self.flow.read_paused:  # the server holds the body back, not the client
            self._body_progress()
            return
        self._refused = True
        if not cycle.response_started:
            seconds = f"{self._limits.body_timeout:g}"
            message = f"the request's body stopped arriving for {seconds} seconds"
            self.transport.write(_answer(408, message))
        # Closing tells the app, waiting for the body, that the client is gone.
        self.transport.close()

    def _head_too_large(self, data: bytes) -> None:
        # The headers may still end inside what fits; past that they are too large.
        room = max(self._limits.max_header_bytes - self._head_bytes, 0)
        self._head_bytes += room
        if room:
            super().data_received(data[:room])
        if self._refused or self.transport.is_closing():
            return
        if self._in_head:
            limit = self._limits.max_header_bytes
            message = f"the request's headers are larger than the limit of {limit} bytes"
            self._refuse(431, message)
            return
        self.data_received(data[room:])

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._disarm()
        if self._over_cap:
            limit = self._limits.max_connections
            message = f"the server has {limit} connections open, its limit; retry shortly"
            self._refuse(503, message)
            return
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if not self._refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self._refused:
            return
        super().on_message_complete()
        self._stop_body_timer()
        # What follows on this connection is the next request's head.
        self._in_head = True
        self._head_bytes = 0

    def send_400_response(self, msg: str) -> None:
        # uvicorn calls this for what httptools cannot parse; answer in the JSON shape.
        message = "the request is not valid HTTP/1.1 (for example a bad Content-Length)"
        self._refuse(400, message)

    def _refuse(self, status: int, message: str) -> None:
        """Answers ``status`` with the JSON error (its type follows from the status), half-closes,
        drains, then closes."""
        if self._refused:
            return
        self._refused = True
        self._disarm()
        transport = self.transport
        if transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete:
            # A pipelined request went wrong while the one before it is still being answered:
            # an answer now would cut into that one, so just close.
            transport.close()
            return
        transport.write(_answer(status, message))
        if transport.can_write_eof():
            transport.write_eof()
        transport.resume_reading()
        self.loop.call_later(LINGER, transport.close)


def _answer(status: int, message: str) -> bytes:
    """A whole ``connection: close`` response carrying the JSON error."""
    body = error_body(status, message)
    head = (
        f"HTTP/1.1 {status} {_REASONS[status]}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode() + body
