"""A light HTTP/1.1 client for the load test: keep-alive POSTs over asyncio, pipelined on request.

aiohttp costs about 80-130 µs of client CPU per request, which on a 2-core machine makes the load
generator, not the server, the bottleneck. This client does only what the load test needs: it
writes a prebuilt request head and body, and parses the answer with ``httptools`` (the C parser
uvicorn uses), so a request costs a few tens of microseconds of client CPU. ``post_many`` writes
several requests at once and takes their answers in order (HTTP/1.1 pipelining, RFC 9112 9.3.2).
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

import httptools


class _Protocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: Any = None
        self.parser = httptools.HttpResponseParser(self)
        #: One per request written and not yet answered, in order.
        self.waiters: deque[asyncio.Future[tuple[int, bytes]]] = deque()
        self.parts: list[bytes] = []
        self.lost: Exception | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # uvloop's transports are not asyncio.Transport subclasses

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(exc)

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(exc or ConnectionError("the server closed the connection"))

    def _fail(self, exc: Exception) -> None:
        self.lost = exc
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_exception(exc)

    # httptools callbacks
    def on_body(self, body: bytes) -> None:
        self.parts.append(body)

    def on_message_complete(self) -> None:
        body = self.parts[0] if len(self.parts) == 1 else b"".join(self.parts)
        self.parts = []
        if self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result((self.parser.get_status_code(), body))


class Connection:
    """One keep-alive connection: a request at a time (``post``) or several at once."""

    def __init__(self, protocol: _Protocol, host: str) -> None:
        self._protocol = protocol
        self._host = host.encode()

    @classmethod
    async def open(cls, host: str, port: int) -> Connection:
        loop = asyncio.get_running_loop()
        _, protocol = await loop.create_connection(_Protocol, host, port)
        return cls(protocol, host)

    @classmethod
    async def open_url(cls, url: str) -> Connection:
        """A connection to ``http://host:port`` or to ``unix:PATH`` (a Unix domain socket)."""
        if url.startswith("unix:"):
            loop = asyncio.get_running_loop()
            _, protocol = await loop.create_unix_connection(_Protocol, url.removeprefix("unix:"))
            return cls(protocol, "localhost")
        return await cls.open(*split_url(url))

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        """POSTs a JSON body; returns the status and the response body."""
        (answer,) = await self.post_many([(path, body)])
        return answer

    async def post_many(self, requests: list[tuple[str, bytes]]) -> list[tuple[int, bytes]]:
        """POSTs ``(path, body)`` pairs in one write; returns their answers in order."""
        p = self._protocol
        if p.lost is not None or p.transport is None:
            raise ConnectionError("the connection is closed") from p.lost
        loop = asyncio.get_running_loop()
        parts: list[bytes] = []
        waiters = []
        for path, body in requests:
            parts += (
                b"POST " + path.encode() + b" HTTP/1.1\r\nHost: " + self._host
                + b"\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(body)).encode() + b"\r\n\r\n",
                body,
            )  # fmt: skip
            waiters.append(loop.create_future())
        p.waiters.extend(waiters)
        p.transport.writelines(parts)
        return [await w for w in waiters]

    def close(self) -> None:
        if self._protocol.transport is not None:
            self._protocol.transport.close()


def split_url(url: str) -> tuple[str, int]:
    """``http://host:port`` to ``(host, port)``."""
    rest = url.removeprefix("http://").rstrip("/")
    host, _, port = rest.partition(":")
    return host, int(port or 80)


__all__: Any = ["Connection", "split_url"]
