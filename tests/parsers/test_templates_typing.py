"""Tag-form tool-call arguments typed by the request's tool schema.

- under vLLM's tool parser names (``qwen3_coder``, ``glm45``) each value is the tag's text,
  typed as vLLM types it: by the types the key's schema allows (``type``, ``enum``,
  ``anyOf``/``oneOf``/``allOf``), tried null, integer, number, boolean, object, array, string;
  text no allowed type takes is JSON if it parses, else a string; keys without a schema, and
  calls of a tool without properties or not in the request, keep strings.
- a response template given as JSON types like transformers' ``parse_response(...,
  tools=...)``: string values, after the value parser, by the declared types in order.

Each vLLM case's expected message is vLLM 0.33.0's whole answer for the same text and tools
(``vllm/parser/qwen3.py`` and ``vllm/parser/glm47_moe.py`` over ``vllm/parser/engine/
parser_engine.py``'s ``_fix_arg_types`` and ``vllm/tool_parsers/utils.py``'s
``coerce_to_schema_type``, run on CPU from the 0.33.0 wheel). Every case runs whole and
streamed at 1, 3 and random ids a chunk, in both ``parser_state`` modes, against the whole
answer.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

import pytest
from helpers.family_cases import chunks as _chunks
from helpers.parsers_oracle import SERVED, Message
from helpers.parsers_util import derenderer_class, stream, whole
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import load_detokenizer
from helpers.templates_util import oracle, parsed, template_json

QWEN_PROMPT = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
GLM_PROMPT = "<|user|>\nWeather?<|assistant|>"
PROPERTIES = {
    "zip": {"type": "string"},
    "days": {"type": "integer"},
    "temp": {"type": "number"},
    "ok": {"type": "boolean"},
    "opts": {"type": "object"},
    "tags": {"type": "array"},
    "none": {"type": "null"},
    "u": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    "nt": {"description": "no type"},
    "lst": {"type": ["string", "integer"]},
    "e": {"enum": [1, 2]},
    "n2": {"type": ["null", "number"]},
}


def _tool(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


TOOLS = [_tool("f", PROPERTIES), _tool("bare", {})]
REQUEST = {
    "model": SERVED,
    "messages": [{"role": "user", "content": "hi"}],
    "tools": TOOLS,
    "tool_choice": "auto",
}

Pairs = list[tuple[str, str]]


def qwen_call(pairs: Pairs, name: str = "f") -> str:
    params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in pairs)
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


def glm_call(pairs: Pairs, name: str = "f") -> str:
    args = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in pairs)
    return f"<tool_call>{name}\n{args}</tool_call>"


TYPED: Pairs = [
    ("zip", "75001"),
    ("days", "3"),
    ("temp", "21.5"),
    ("ok", "true"),
    ("opts", '{"b": [1, 2.50], "a": null}'),
    ("tags", '["x", 1]'),
    ("none", "null"),
    ("u", "7"),
    ("nt", "8"),
    ("lst", "9"),
    ("e", "2"),
    ("n2", "NULL"),
    ("unknown", "10"),
]
UNPARSED: Pairs = [
    ("days", "three"),
    ("temp", "2.0"),
    ("ok", "1"),
    ("opts", "not json"),
    ("tags", '{"a":1}'),
    ("none", "None"),
    ("u", "x"),
    ("e", "3.5"),
    ("n2", "1e3"),
]
# A repeated key is sent twice, as written (each tag is sent as it comes): read as JSON, the
# last value counts. vLLM's whole answer keeps the key's first place with the last value,
# '{"days": 0, "temp": 1e-05, "ok": false, "zip": " 007 "}'.
ODD: Pairs = [("days", " 1_000 "), ("temp", "0.00001"), ("ok", " FALSE "), ("zip", " 007 "),
              ("days", "-0")]  # fmt: skip

TYPED_ARGS = (
    '{"zip": "75001", "days": 3, "temp": 21.5, "ok": true, "opts": {"b": [1, 2.5], "a": null}, '
    '"tags": ["x", 1], "none": null, "u": 7, "nt": "8", "lst": 9, "e": 2, "n2": null, '
    '"unknown": "10"}'
)
UNPARSED_ARGS = (
    '{"days": "three", "temp": 2, "ok": true, "opts": "not json", "tags": {"a": 1}, '
    '"none": "None", "u": "x", "e": 3.5, "n2": 1000}'
)
ODD_ARGS = '{"days": 1000, "temp": 1e-05, "ok": false, "zip": " 007 ", "days": 0}'
STRINGS = '{"zip": "75001", "days": "3", "temp": "21.5", "ok": "true"}'


@dataclass(frozen=True)
class Case:
    label: str
    tool: str
    prompt: str
    text: str
    expected: Message


def _cases(tool: str, prompt: str, call: Any) -> list[Case]:
    def case(label: str, text: str, content: str, *calls: tuple[str, str]) -> Case:
        return Case(f"{tool}/{label}", tool, prompt, text, Message(content, "", calls))

    two = call(TYPED[:2]) + "\n" + call([("days", "4"), ("zip", "10")])
    out = [
        case("typed", call(TYPED), "", ("f", TYPED_ARGS)),
        case("unparsed", call(UNPARSED), "", ("f", UNPARSED_ARGS)),
        # vLLM's streams of this case lose the last value (`"zip": " 007 `).
        case("odd", call(ODD), "", ("f", ODD_ARGS)),
        case("no-properties", call(TYPED[:4], "bare"), "", ("bare", STRINGS)),
        # vLLM's whole answer strips content that comes with calls; its stream cannot know
        # that a call follows, and keeps "Checking.\n", the answer here.
        case(
            "content-then-two",
            "Checking.\n" + two,
            "Checking.\n",
            ("f", '{"zip": "75001", "days": 3}'),
            ("f", '{"days": 4, "zip": "10"}'),
        ),
    ]
    if tool == "qwen3_coder":
        # glm45 validates the name: vLLM drops a call of a tool the request does not have.
        out.append(case("unknown-tool", call(TYPED[:4], "g"), "", ("g", STRINGS)))
    return out


CASES = [*_cases("qwen3_coder", QWEN_PROMPT, qwen_call), *_cases("glm45", GLM_PROMPT, glm_call)]


@functools.cache
def _derenderer(mode: str, **names: str) -> Any:
    return derenderer_class()(
        load_detokenizer("qwen3"), served_model_name=SERVED, parser_state=mode, **names
    )


def _encode(text: str) -> list[int]:
    return list(load_tokenizer("qwen3").encode(text, add_special_tokens=False).ids)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_vllm_typing_whole_and_streamed(case: Case, mode: str) -> None:
    r = _derenderer(mode, tool_parser=case.tool)
    prompt, gen = _encode(case.prompt), _encode(case.text)
    got = whole(r, prompt, gen, REQUEST, "stop")
    assert got.message == case.expected
    for shape in ("1", "3", "random"):
        streamed = stream(r, prompt, _chunks(gen, shape), REQUEST, "stop", mode=mode)
        assert streamed.result() == got, shape


def test_without_tools_in_the_request_values_are_not_typed() -> None:
    r = _derenderer("resumable", tool_parser="qwen3_coder")
    request = REQUEST | {"tools": [_tool("other", PROPERTIES)]}
    got = whole(r, _encode(QWEN_PROMPT), _encode(qwen_call(TYPED[:4])), request, "stop")
    assert got.message.calls == (("f", STRINGS),)


# --- a template given as JSON: transformers' rules -------------------------------------------

HF_PROPERTIES = {
    "days": {"type": "integer"},
    "temp": {"type": "number"},
    "ok": {"type": "boolean"},
    "none": {"type": "string", "nullable": True},
    "opts": {"type": "object"},
    "tags": {"type": "array"},
    "u": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    "zip": {"type": "string"},
}
HF_TOOLS = [_tool("f", HF_PROPERTIES)]
HF_PAIRS: Pairs = [
    ("days", "3.0"),
    ("temp", "2.0"),
    ("ok", " True "),
    ("none", "None"),
    ("opts", "[1]"),
    ("tags", "[1, 2]"),
    ("u", "5"),
    ("zip", "75001"),
    ("other", "4"),
]


def _as_written(value_parser: dict[str, Any] | None) -> str:
    """The qwen3_coder template as written, with this value parser (none: raw text)."""
    template = json.loads(template_json("qwen3_coder"))
    args = template["fields"]["tool_calls"]["content_args"]
    if value_parser is None:
        args.pop("value_parser")
    else:
        args["value_parser"] = value_parser
    return json.dumps(template)


@pytest.mark.parametrize("value_parser", [None, {"name": "json", "args": {"allow_non_json": True}}])
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_a_template_types_as_parse_response_with_tools(
    value_parser: dict[str, Any] | None, mode: str
) -> None:
    from transformers.utils.chat_parsing import parse_response

    template = _as_written(value_parser)
    r = _derenderer(mode, response_template=template)
    request = REQUEST | {"tools": HF_TOOLS}
    text = qwen_call(HF_PAIRS)
    prompt, gen = _encode(QWEN_PROMPT), _encode(text)
    got = whole(r, prompt, gen, request, "stop")
    want = parse_response(text, json.loads(template), prefix=QWEN_PROMPT, tools=HF_TOOLS)
    ((name, arguments),) = parsed(got)[2]
    assert (name, arguments) == (
        want["tool_calls"][0]["function"]["name"],
        want["tool_calls"][0]["function"]["arguments"],
    )
    # Without tools the oracle leaves the strings as they are, and so does the template.
    untyped = whole(r, prompt, gen, REQUEST | {"tools": [_tool("g", {})]}, "stop")
    assert parsed(untyped)[2] == oracle(template, text, QWEN_PROMPT)[2]
    for shape in ("1", "3", "random"):
        streamed = stream(r, prompt, _chunks(gen, shape), request, "stop", mode=mode)
        assert streamed.result() == got, shape
