"""Starting ``tokstream serve``: the listening socket, the open-file limit, uvicorn, the workers.

The socket is bound here, before uvicorn starts, so a port in use or a bad host is one clear line
and the banner is printed only once the server really listens. The workers (``--workers N``)
share that socket, and a temporary directory of Unix sockets through which ``/metrics`` adds up
every worker's counters (``tokstream.metrics``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .server import CONFIG_ENV, App, ServerConfig

__all__ = [
    "BACKLOG",
    "BindError",
    "Listen",
    "bind",
    "connection_cap",
    "raise_open_file_limit",
    "run",
]

BACKLOG = 2048
#: File descriptors a worker keeps for itself beyond its connections (tokenizer, logs, pipes).
_RESERVED_FDS = 64


class BindError(Exception):
    """The address cannot be listened on; the message is one line for the user."""


@dataclass(frozen=True)
class Listen:
    """Where and how ``tokstream serve`` runs (what is not part of a worker's ``ServerConfig``)."""

    host: str
    port: int
    workers: int
    log_level: str
    keep_alive_timeout: float
    shutdown_grace: float


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


def connection_cap(wanted: int, open_files: int) -> int:
    """``wanted``, lowered to what the open-file limit leaves for connections."""
    return max(1, min(wanted, open_files - _RESERVED_FDS))


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening; raises ``BindError`` with one line."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as e:
        raise BindError(f"cannot listen on {host}:{port}: not a valid host ({e})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as e:
        sock.close()
        reason = e.strerror or str(e)
        raise BindError(f"cannot listen on {host}:{port}: {reason.lower()}") from None
    sock.set_inheritable(True)
    return sock


def run(app: App, config: ServerConfig, listen: Listen, banner: Callable[[str], str]) -> int:
    """Binds, prints ``banner(url)``, and serves until SIGTERM or SIGINT; returns the status."""
    import uvicorn

    from .connection import LimitedHttpProtocol, Limits

    try:
        sock = bind(listen.host, listen.port)
    except BindError as e:
        print(f"tokstream serve: {e}", file=sys.stderr)
        return 1
    port = sock.getsockname()[1]
    host = f"[{listen.host}]" if ":" in listen.host else listen.host
    print(banner(f"http://{host}:{port}"), flush=True)
    options: dict[str, Any] = {
        "host": listen.host,
        "port": port,
        "http": LimitedHttpProtocol,
        "ws": "none",  # the app serves HTTP only; no upgrade may slip past the limits
        "log_level": listen.log_level,
        "access_log": False,
        "server_header": False,
        "lifespan": "on",
        "backlog": BACKLOG,
        "timeout_keep_alive": listen.keep_alive_timeout,
        # The app answers 503 and exits before this (``App.shutdown_grace``); uvicorn's own
        # cancellation, a second later, is only a fallback.
        "timeout_graceful_shutdown": listen.shutdown_grace + 1,
    }
    # uvicorn shuts down gracefully on SIGTERM, then re-raises the signal under the handler that
    # was there before; with this one the process exits 0 after a clean shutdown.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    limits = Limits(
        header_timeout=config.header_timeout,
        body_timeout=config.body_timeout,
        max_header_bytes=config.max_header_bytes,
        max_connections=config.max_connections,
    )
    if listen.workers == 1:
        uv_config = uvicorn.Config(app, **options)
        uv_config.tokstream_limits = limits  # type: ignore[attr-defined]
        with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises SIGINT after its drain
            uvicorn.Server(uv_config).run(sockets=[sock])
        return 0
    from uvicorn.supervisors import Multiprocess

    metrics_dir = tempfile.mkdtemp(prefix="tokstream-metrics-")
    try:
        worker_config = dataclasses.replace(config, metrics_dir=metrics_dir)
        os.environ[CONFIG_ENV] = json.dumps(dataclasses.asdict(worker_config))
        uv_config = uvicorn.Config(
            "tokstream.server:create_app", factory=True, workers=listen.workers, **options
        )
        uv_config.tokstream_limits = limits  # type: ignore[attr-defined]
        supervisor = Multiprocess(uv_config, sockets=[sock])
        _forward_at_once(supervisor)
        supervisor.run()
    finally:
        shutil.rmtree(metrics_dir, ignore_errors=True)
    return 0


def _forward_at_once(supervisor: Any) -> None:
    # uvicorn's supervisor looks at its signals every half second; the workers' grace period
    # starts when they get SIGTERM, so pass it on at once.
    def handler(num: int, frame: object) -> None:
        supervisor.should_exit.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, handler)
