"""The plain-Python reference derender behind tokstream's own web stack: the load test's peer.

``oracles/derender_reference.py``'s ``ReferenceDerenderer`` is derender the way vLLM's server does
it (pydantic request validation, vLLM's windowed algorithm in Python, pydantic serialization).
This module serves it with ``tokstream.server.App``, the embeddable ASGI app, on uvicorn: the
load test's Python peer of ``tokstream serve``::

    python benches/server/reference_server.py \\
        --tokenizer target/fixtures/tokenizers/qwen3 --port 8001

More than one worker goes through an app factory: the config travels to uvicorn's worker
processes as JSON in ``TOKSTREAM_REFERENCE_CONFIG``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    # The reference lives in `oracles/`, beside the benches; import it, never copy it.
    sys.path.append(str(ROOT))

CONFIG_ENV = "TOKSTREAM_REFERENCE_CONFIG"
_STATE_KEY = b'"stream_state":'
_IDS_KEY = b'"token_ids":['


@dataclasses.dataclass(frozen=True)
class ReferenceConfig:
    """What a worker needs to build the reference app (passed to workers as JSON)."""

    tokenizer: str
    served_model_name: str
    max_model_len: int | None = None


class ReferenceAdapter:
    """``ReferenceDerenderer`` with the face ``tokstream.server.App`` uses.

    ``handle_json_stats`` adds the two figures the app's metrics read. They are found with byte
    searches rather than a second parse, so the peer pays next to nothing for them: the ids of
    every ``"token_ids"`` list in the body, and the size of the answer's trailing
    ``stream_state`` object.
    """

    def __init__(self, reference: Any) -> None:
        self.reference = reference
        self.served_model_name: str = reference.served_model_name
        self.max_model_len: int | None = reference.max_model_len

    def handle_json_stats(self, path: str, body: bytes) -> tuple[int, bytes, int, int]:
        """``(status, answer, output ids, state bytes)`` for one POST body."""
        status, answer = self.reference.handle_json(path, body)
        if status != 200:
            return status, answer, 0, 0
        at = answer.rfind(_STATE_KEY)
        state_bytes = len(answer) - at - len(_STATE_KEY) - 1 if at >= 0 else 0
        return status, answer, count_ids(body), state_bytes


def count_ids(body: bytes) -> int:
    """The ids of every ``"token_ids":[...]`` list in a JSON body (prompt ids not included)."""
    total = 0
    at = body.find(_IDS_KEY)
    while at >= 0:
        start = at + len(_IDS_KEY)
        end = body.find(b"]", start)
        if end < 0:
            break
        if end > start:
            total += body.count(b",", start, end) + 1
        at = body.find(_IDS_KEY, end)
    return total


def eos_token_ids(tokenizer: Any, folder: Path) -> tuple[int, ...]:
    """EOS ids as ``tokstream serve`` finds them: ``generation_config.json``, else the
    ``eos_token`` of ``tokenizer_config.json``, else none."""
    try:
        value = json.loads((folder / "generation_config.json").read_text()).get("eos_token_id")
        ids = [value] if isinstance(value, int) else list(value or [])
        if ids and all(isinstance(i, int) for i in ids):
            return tuple(ids)
    except (OSError, ValueError, AttributeError, TypeError):
        pass
    try:
        token = json.loads((folder / "tokenizer_config.json").read_text()).get("eos_token")
    except (OSError, ValueError, AttributeError):
        return ()
    if isinstance(token, dict):
        token = token.get("content")
    found = tokenizer.token_to_id(token) if isinstance(token, str) else None
    return () if found is None else (found,)


def config_max_len(folder: Path) -> int | None:
    """``model_max_length`` of ``tokenizer_config.json`` when sensible, as ``tokstream serve``."""
    try:
        value = json.loads((folder / "tokenizer_config.json").read_text()).get("model_max_length")
    except (OSError, ValueError, AttributeError):
        return None
    return int(value) if isinstance(value, (int, float)) and 0 < value <= 1 << 24 else None


def tokenizer_file(path: str) -> Path:
    """The ``tokenizer.json`` of a file or folder path."""
    p = Path(path)
    return p / "tokenizer.json" if p.is_dir() else p


def build_app(config: ReferenceConfig) -> Any:
    """Loads the tokenizer and builds ``tokstream.server.App`` over the reference."""
    from tokenizers import Tokenizer
    from tokstream.server import App

    from oracles.derender_reference import ReferenceDerenderer

    file = tokenizer_file(config.tokenizer)
    tok = Tokenizer.from_file(str(file))
    tok.no_padding()
    tok.no_truncation()
    reference = ReferenceDerenderer(
        tok,
        config.served_model_name,
        eos_token_ids=eos_token_ids(tok, file.parent),
        max_model_len=config.max_model_len,
    )
    return App(ReferenceAdapter(reference))  # type: ignore[arg-type]


def create_app() -> Any:
    """The app factory worker processes call: the config comes from ``CONFIG_ENV``."""
    raw = os.environ.get(CONFIG_ENV)
    if raw is None:
        raise RuntimeError(
            f"{CONFIG_ENV} is not set; start with benches/server/reference_server.py"
        )
    return build_app(ReferenceConfig(**json.loads(raw)))


def main(argv: list[str] | None = None) -> int:
    """Serves the reference; the options are those of ``tokstream serve`` that apply."""
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", required=True, help="tokenizer.json or its folder")
    parser.add_argument("--served-model-name", help="default: the tokenizer's folder name")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--max-model-len", type=int)
    parser.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    args = parser.parse_args(argv)
    file = tokenizer_file(args.tokenizer)
    config = ReferenceConfig(
        tokenizer=str(file),
        served_model_name=args.served_model_name or file.parent.name,
        max_model_len=args.max_model_len or config_max_len(file.parent),
    )
    app = build_app(config)  # load once here: a bad tokenizer fails before any worker starts
    print(
        f"reference server: listening on http://{args.host}:{args.port}, model "
        f"{config.served_model_name!r}, {args.workers} worker(s)",
        flush=True,
    )
    options: dict[str, Any] = {
        "host": args.host,
        "port": args.port,
        "log_level": args.log_level,
        "access_log": False,
        "lifespan": "on",
        "timeout_graceful_shutdown": 10,
    }
    if args.workers == 1:
        uvicorn.run(app, **options)
    else:
        os.environ[CONFIG_ENV] = json.dumps(dataclasses.asdict(config))
        uvicorn.run("reference_server:create_app", factory=True, workers=args.workers, **options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
