"""The derender endpoints as an ASGI app, to embed in your own ASGI server (uvicorn, Granian, ...).

The app answers the contract of ``tokstream serve`` (endpoints, statuses and error bodies come
from the native core: ``Derenderer.handle_json`` and ``_core.error_body``)::

    from tokstream.asgi import create_app

    app = create_app("path/to/model", served_model_name="my-model")
    # uvicorn.run(app, ...), or mount it in another ASGI application

It routes ``POST /v1/chat/completions/derender``, ``POST /v1/completions/derender``,
``GET /v1/models``, ``GET /health`` and ``GET /metrics`` (this app's counters), and answers 413 to
a body over ``App``'s ``max_body_bytes`` (32 MiB by default). It has no HTTP limits of its own:
header and body timeouts, header size, the connection cap, keep-alive and the drain on shutdown
are the host server's.
``tokstream serve`` does not run it; its front serves the same derenderer natively.
"""

from __future__ import annotations

from .derender import DEFAULT_PARSER_STATE
from .server import App, ServerConfig, build_app

__all__ = ["App", "ServerConfig", "build_app", "create_app"]


def create_app(
    tokenizer: str,
    *,
    served_model_name: str | None = None,
    max_model_len: int | None = None,
    reasoning_parser: str | None = None,
    tool_parser: str | None = None,
    parser_state: str = DEFAULT_PARSER_STATE,
) -> App:
    """The ASGI app serving ``tokenizer`` (a ``tokenizer.json`` or a model directory)."""
    from pathlib import Path

    name = served_model_name or Path(tokenizer).resolve().name.removesuffix(".json")
    return build_app(
        ServerConfig(
            tokenizer=tokenizer,
            served_model_name=name,
            max_model_len=max_model_len,
            reasoning_parser=reasoning_parser,
            tool_parser=tool_parser,
            parser_state=parser_state,
        )
    )
