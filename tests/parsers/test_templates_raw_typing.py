"""Raw JSON arguments of a response template given as JSON, typed as ``parse_response`` types them.

A template whose call opens on ``{"name": "NAME", "parameters": `` and closes on
``}<|eot_id|>`` (the shape of TRL 1.16's Llama 3 template, ``trl/chat_template_utils.py``)
needs the end-of-turn token's text to close a call, and the engine's stop token is not part of
the text a derender parses. The call still ends where its JSON does, with no stray ``}``.
Where the request declares the tool's properties, the arguments are typed as transformers'
``parse_response(text, template, tools=...)`` types them (``"days": "3"`` for an integer is
``3``), and are then sent when the call closes; a call of a tool the request does not declare
streams its arguments as written. A request without tools has no tool parsing (the wire's
rule): the text is content.

The oracle is transformers' ``parse_response`` on the same text with the end-of-turn token
(as a checkpoint's template expects it). Every case runs whole and streamed at 1, 3 and 7 ids a
chunk.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from helpers.parsers_oracle import SERVED
from helpers.parsers_util import derenderer_class, stream, whole
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import load_detokenizer

FIXTURE = "llama-3.2-instruct"
ANCHOR = "<|start_header_id|>assistant<|end_header_id|>\n\n"
EOT = "<|eot_id|>"
TEMPLATE = {
    "start_anchor": ANCHOR,
    "fields": {
        "tool_calls": {
            "open_pattern": r'\{"name":\s*"(?P<name>[^"]+)",\s*"parameters":\s*',
            "close_pattern": r"\}<\|eot_id\|>\s*",
            "repeats": True,
            "content": "json",
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
        "content": {"close_pattern": r"<\|eot_id\|>\s*", "content": "text"},
    },
}
PROPERTIES = {
    "city": {"type": "string"},
    "days": {"type": "integer"},
    "metric": {"type": "boolean"},
    "ratio": {"type": "number"},
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": PROPERTIES},
        },
    }
]
TEXTS = [
    '{"name": "get_weather", "parameters": {"city": "Paris", "days": "3"}}',
    '{"name": "get_weather", "parameters": {"city": "東京", "days": 3, "metric": "true", '
    '"ratio": "0.5"}}',
    '{"name": "get_weather", "parameters": {"city": "Pa\\"ris", "days": "three"}}',
    '{"name": "get_weather", "parameters": {"city": {"nested": [1, 2]}}}',
    '{"name": "other_tool", "parameters": {"days": "3"}}',
    "It is sunny in Paris.",
]


@functools.cache
def _derenderer() -> Any:
    return derenderer_class()(
        load_detokenizer(FIXTURE), served_model_name=SERVED, response_template=json.dumps(TEMPLATE)
    )


def _ids(text: str) -> list[int]:
    return list(load_tokenizer(FIXTURE).encode(text, add_special_tokens=False).ids)


def _expected(text: str, tools: list[Any] | None) -> tuple[str, list[tuple[str, Any]]]:
    from transformers.utils.chat_parsing import parse_response

    parsed = parse_response(text + EOT, TEMPLATE, prefix=ANCHOR, tools=tools)
    calls = [
        (c["function"]["name"], c["function"]["arguments"]) for c in parsed.get("tool_calls", [])
    ]
    return parsed.get("content") or "", calls


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("with_tools", [True, False], ids=["tools", "no-tools"])
def test_a_raw_call_ends_and_is_typed_as_parse_response_says(text: str, with_tools: bool) -> None:
    tools = TOOLS if with_tools else None
    request: dict[str, Any] = {"model": SERVED, "messages": [{"role": "user", "content": "?"}]}
    if tools is not None:
        request |= {"tools": tools, "tool_choice": "auto"}
    eot = load_tokenizer(FIXTURE).token_to_id(EOT)
    prompt, gen = _ids(ANCHOR), [*_ids(text), eot]
    r = _derenderer()
    got = whole(r, prompt, gen, request, "stop")
    if tools is None:
        assert (got.message.content, got.message.calls) == (text, ())
    else:
        content, calls = _expected(text, tools)
        assert got.message.content == content
        assert [(n, json.loads(a)) for n, a in got.message.calls] == calls
        if calls and calls[0][0] == "other_tool":
            # No schema: the arguments are the model's text.
            assert got.message.calls[0][1] in text
    for size in (1, 3, 7):
        chunks = [gen[i : i + size] for i in range(0, len(gen), size)]
        streamed = stream(r, prompt, chunks, request, "stop").result()
        assert streamed.message == got.message, size
