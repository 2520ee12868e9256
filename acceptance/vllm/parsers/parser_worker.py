"""tokstream's side of the parser-test adapter: chat derender bodies in, answers out, as JSON lines.

Runs under the interpreter that has tokstream installed (``TOKSTREAM_PYTHON``); the adapter
(``tokstream_parsers.py``, in the acceptance virtualenv) starts it once per test session and
writes one request a line to its stdin::

    {"tokenizer": DIR, "reasoning": NAME|null, "tool": NAME|null, "body": {...}}

and reads one answer a line from its stdout: ``{"status": 200, "body": {...}}``, the status and
JSON of ``Derenderer.handle_json`` on the chat derender endpoint, or ``{"error": "..."}`` when
the derenderer cannot be built (a parser name tokstream refuses, say). One ``Derenderer`` is
built per tokenizer file and parser pair, with no end-of-sequence ids (the tests' texts
are whole outputs; none of their ids is an engine's stop token to leave out).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import tokstream

_DERENDERERS: dict[tuple[str, str | None, str | None], Any] = {}


def _derenderer(tokenizer: str, reasoning: str | None, tool: str | None) -> Any:
    # Several model names are laid out as one fixture (their files linked): built once.
    path = (Path(tokenizer) / "tokenizer.json").resolve()
    key = (str(path), reasoning, tool)
    if key not in _DERENDERERS:
        detokenizer = tokstream.Detokenizer.from_file(str(path))
        _DERENDERERS[key] = tokstream.Derenderer(
            detokenizer,
            served_model_name="test-model",
            eos_token_ids=[],
            reasoning_parser=reasoning,
            tool_parser=tool,
        )
    return _DERENDERERS[key]


def main() -> None:
    out = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        try:
            r = _derenderer(request["tokenizer"], request["reasoning"], request["tool"])
        except ValueError as e:
            answer: dict[str, Any] = {"error": str(e)}
        else:
            status, body = r.handle_json(
                tokstream.derender.CHAT_PATH, json.dumps(request["body"]).encode()
            )
            answer = {"status": status, "body": json.loads(body)}
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
