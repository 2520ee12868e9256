"""Command line: ``python -m tokstream stream --tokenizer PATH --text TEXT``.

Encodes the text with ``tokenizers`` (the oracle), streams the ids through tokstream one at a
time, prints each delta as it arrives, and checks the result against ``decode``.
"""

from __future__ import annotations

import argparse
import sys
import time

from . import Detokenizer


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
    parser = argparse.ArgumentParser(prog="python -m tokstream")
    sub = parser.add_subparsers(dest="command", required=True)
    stream = sub.add_parser("stream", help="stream a text's token ids through tokstream")
    stream.add_argument("--tokenizer", required=True, help="tokenizer.json or its directory")
    stream.add_argument("--text", default="Hello, 世界! 👋 Streaming never splits a character.")
    stream.add_argument("--skip-special-tokens", action="store_true")
    args = parser.parse_args(argv)
    return _stream(args)


if __name__ == "__main__":
    raise SystemExit(main())
