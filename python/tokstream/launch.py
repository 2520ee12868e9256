"""Starting ``tokstream serve``: the listening socket, the open-file limit, the front, the workers.

The socket is bound here, before the server starts, so a port in use or a bad host is one clear
line and the banner is printed only once the server really listens. The front is the HTTP server
of the native core (``_core.Front``), no Python on a request's path; ``--workers N`` is N worker
threads in this process, sharing the socket and one set of counters, so ``/metrics`` sees them
all.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ._core import Front
from .server import DEFAULT_KEEP_ALIVE_TIMEOUT, EXIT_MARGIN, App, ServerConfig, exit_now

__all__ = [
    "BACKLOG",
    "BindError",
    "Listen",
    "bind",
    "bind_unix",
    "connection_cap",
    "front_for",
    "log_line",
    "raise_open_file_limit",
    "run",
]

BACKLOG = 2048
#: File descriptors the process keeps for itself beyond its connections (tokenizer, logs, pipes).
_RESERVED_FDS = 64


class BindError(Exception):
    """The address cannot be listened on; the message is one line for the user."""


@dataclass(frozen=True)
class Listen:
    """Where and how ``tokstream serve`` runs (what its ``ServerConfig`` does not carry)."""

    host: str
    port: int
    workers: int
    log_level: str
    keep_alive_timeout: float
    shutdown_grace: float
    #: A Unix domain socket path to listen on instead of ``host:port``.
    uds: str | None = None
    #: ``"text"`` or ``"json"``: how the front and the startup and shutdown lines log.
    log_format: str = "text"
    #: The front logs every request, not only the refused ones.
    access_log: bool = False


def log_line(level: str, event: str, **fields: Any) -> str:
    """One log line in the JSON form the front writes: ``time`` (UTC, milliseconds), ``level``,
    ``logger``, ``event``, then ``fields``."""
    now = datetime.now(timezone.utc)
    record = {
        "time": now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z",
        "level": level.upper(),
        "logger": "tokstream.serve",
        "event": event,
        **fields,
    }
    return json.dumps(record, ensure_ascii=False)


def raise_open_file_limit() -> int:
    """Raises this process's soft open-file limit to the hard limit; returns the soft limit."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return 1 << 20
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if soft == resource.RLIM_INFINITY or soft >= target:
        return 1 << 20 if soft == resource.RLIM_INFINITY else soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError):
        return soft
    return target


def connection_cap(wanted: int, open_files: int, shares: int = 1) -> int:
    """``wanted``, lowered to what the open-file limit leaves for connections, split in
    ``shares`` (the worker threads of the front)."""
    return max(1, min(wanted, (open_files - _RESERVED_FDS) // max(shares, 1)))


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening; raises ``BindError`` with one line."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as e:
        raise BindError(f"cannot listen on {host}:{port}: not a valid host ({e})") from None
    family, kind, proto, _, address = infos[0]
    return _listening(socket.socket(family, kind, proto), address, f"{host}:{port}", reuse=True)


def bind_unix(path: str) -> socket.socket:
    """A Unix domain socket listening at ``path``; raises ``BindError`` with one line.

    A socket file left by a server that is gone is replaced; a live server's socket, or a file
    that is not a socket, is refused."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        pass
    except OSError as e:
        raise BindError(f"cannot listen on {path}: {_reason(e)}") from None
    else:
        if not stat.S_ISSOCK(mode):
            raise BindError(f"cannot listen on {path}: the file exists and is not a socket")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(path)
            except OSError:
                os.unlink(path)  # nothing answers there: a socket left behind
            else:
                raise BindError(f"cannot listen on {path}: address already in use")
    return _listening(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), path, path, reuse=False)


def _listening(sock: socket.socket, address: Any, where: str, *, reuse: bool) -> socket.socket:
    """``sock`` bound to ``address`` and listening; closed, and ``BindError`` naming ``where``,
    when it cannot be."""
    try:
        if reuse:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as e:
        sock.close()
        raise BindError(f"cannot listen on {where}: {_reason(e)}") from None
    return sock


def _reason(e: OSError) -> str:
    return (e.strerror or str(e)).lower()


def run(app: App, config: ServerConfig, listen: Listen, banner: Callable[[str], str]) -> int:
    """Binds, prints ``banner(url)``, and serves until SIGTERM or SIGINT; returns the status."""
    try:
        sock = bind_unix(listen.uds) if listen.uds else bind(listen.host, listen.port)
    except BindError as e:
        print(f"tokstream serve: {e}", file=sys.stderr)
        return 1
    try:
        if listen.uds:
            print(banner(f"unix:{listen.uds}"), flush=True)
        else:
            port = sock.getsockname()[1]
            host = f"[{listen.host}]" if ":" in listen.host else listen.host
            print(banner(f"http://{host}:{port}"), flush=True)
        return _run_front(app, config, listen, sock)
    finally:
        _remove_socket_file(listen)


def _remove_socket_file(listen: Listen) -> None:
    if listen.uds:
        with contextlib.suppress(OSError):
            os.unlink(listen.uds)


def front_for(
    app: App,
    config: ServerConfig,
    sock: socket.socket,
    *,
    threads: int = 1,
    keep_alive_timeout: float = DEFAULT_KEEP_ALIVE_TIMEOUT,
    log_level: str = "info",
    log_format: str = "text",
    access_log: bool = False,
) -> Front:
    """A started ``_core.Front`` serving ``app``'s derenderer, models and metrics on ``sock``
    (``threads`` worker threads); the caller may close ``sock`` then. The front writes its own
    log lines to standard error (refused requests, and every request with ``access_log``)."""
    from .metrics import BYTES_BOUNDS, LATENCY_BOUNDS, Metrics, render

    def render_all(snapshots: str) -> bytes:
        total = Metrics()
        parts = json.loads(snapshots)
        for part in parts:
            total.add(part)
        return render(total, len(parts))

    return Front(
        app.derenderer._core,  # the native derenderer: the front calls it with no Python
        sock.fileno(),
        app.models_body(),
        render_all,
        unix=sock.family == socket.AF_UNIX,
        threads=threads,
        header_timeout=config.header_timeout,
        body_timeout=config.body_timeout,
        keep_alive_timeout=keep_alive_timeout,
        send_timeout=config.send_timeout,
        max_header_bytes=config.max_header_bytes,
        max_body_bytes=config.max_body_bytes,
        max_connections=config.max_connections,
        offload_bytes=config.offload_bytes,
        latency_bounds=LATENCY_BOUNDS,
        bytes_bounds=BYTES_BOUNDS,
        log_level=log_level,
        log_format=log_format,
        access_log=access_log,
    )


def _run_front(app: App, config: ServerConfig, listen: Listen, sock: socket.socket) -> int:
    """Serves with the front until SIGTERM or SIGINT, then drains within the grace."""
    front = front_for(
        app,
        config,
        sock,
        threads=listen.workers,
        keep_alive_timeout=listen.keep_alive_timeout,
        log_level=listen.log_level,
        log_format=listen.log_format,
        access_log=listen.access_log,
    )
    sock.close()  # the front holds its own descriptor
    grace = listen.shutdown_grace
    signalled: list[float] = []
    before: list[tuple[int, int]] = []

    def handler(num: int, frame: object) -> None:
        if not signalled:
            signalled.append(time.monotonic())
            before.append(_answered(front))
            front.drain(grace)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, handler)
    # Python runs signal handlers between waits; the worker threads serve meanwhile.
    while not front.wait(0.05):
        if signalled and time.monotonic() - signalled[0] > grace + EXIT_MARGIN:
            break
    ended = front.wait(0)
    if signalled:
        _log_drain(listen, front, time.monotonic() - signalled[0], before[0], ended)
    if not ended or front.busy:
        # A derender still runs on the pool after every request had its answer: leave
        # without waiting for it.
        _remove_socket_file(listen)
        exit_now(abandoned=front.busy)
    return 0


def _answered(front: Front) -> tuple[int, int]:
    """Requests answered so far, and of them the 503s of the drain."""
    total = late = 0
    for part in json.loads(front.snapshot()):
        total += sum(int(n) for _, _, n in part["requests"])
        late += int(part["errors"].get("shutting_down", 0))
    return total, late


def _log_drain(
    listen: Listen, front: Front, seconds: float, before: tuple[int, int], ended: bool
) -> None:
    """The shutdown's line: how long the drain took and what it answered."""
    total, late = _answered(front)
    answered, refused = total - before[0], late - before[1]
    if listen.log_level in ("error", "critical"):
        return
    if listen.log_format == "json":
        line = log_line(
            "info",
            "drained",
            seconds=round(seconds, 3),
            answered=answered,
            refused_late=refused,
            every_connection_closed=ended,
            abandoned_derender=front.busy,
        )
    else:
        line = (
            f"tokstream serve: drained in {seconds:.2f} s: {answered} request(s) answered "
            f"during the grace, {refused} answered 503 as it ended"
            + ("" if ended else "; connections still open were dropped")
        )
    print(line, flush=True)
