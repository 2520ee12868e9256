"""vLLM 0.33.0's own derender server, on CPU, on a tokenizer fixture: the peer that
``benches/server/vllm_server.py`` measures tokstream's server against.

It serves the app of ``oracle.app`` (vLLM's derender router, exception handlers and serving
objects; stand-ins for the renderer and model config only) with uvicorn as vLLM's server runs it:
one process, uvloop, httptools (``fastapi[standard]``), vLLM's h11 header limits, no access log.
It needs the acceptance virtualenv (see ``oracle.py``)::

    PYTHONPATH=acceptance/vllm/standins:acceptance/vllm:. \\
        target/vllm-acceptance/venv/bin/python acceptance/vllm/derender_server.py \\
        --port 8100 --fixture qwen3 --served-model-name m
"""

from __future__ import annotations

import argparse

import oracle
import uvicorn
from vllm.entrypoints.launchers.utils.constants import (
    H11_MAX_HEADER_COUNT_DEFAULT,
    H11_MAX_INCOMPLETE_EVENT_SIZE_DEFAULT,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--fixture", default="qwen3", help="a tokenizer fixture's name")
    parser.add_argument("--served-model-name", default=oracle.MODEL)
    parser.add_argument("--reasoning-parser")
    parser.add_argument("--tool-call-parser")
    args = parser.parse_args()
    oracle.MODEL = args.served_model_name
    app = oracle.app(args.fixture, None, args.reasoning_parser, args.tool_call_parser)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=args.port,
        loop="uvloop",
        http="httptools",
        log_level="warning",
        access_log=False,
    )
    config.h11_max_incomplete_event_size = H11_MAX_INCOMPLETE_EVENT_SIZE_DEFAULT
    config.h11_max_header_count = H11_MAX_HEADER_COUNT_DEFAULT
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
