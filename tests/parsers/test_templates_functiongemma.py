"""FunctionGemma's built-in template under vLLM's tool parser name ``functiongemma``.

Calls are ``<start_function_call>call:NAME{key:<escape>value<escape>,...}<end_function_call>``;
each value is read as JSON, else kept as its text, whatever the tool's schema says (as vLLM's
parser reads it); a value without ``<escape>`` delimiters is not read. Text around the calls
is content, stripped.

Each case's expected message is vLLM 0.33.0's whole answer for the same text, prompt and
tokenizer fixture (``vllm/tool_parsers/functiongemma_tool_parser.py``, run on CPU from the
0.33.0 wheel; ``acceptance/vllm/parsers_oracle.py``), except where a comment says how vLLM's
differs and why the answer here is kept. vLLM's streams of this parser are not its whole
answer: with two or more arguments their JSON is invalid (``{"city": "Paris"} "unit": "c"}``),
a second call's arguments are lost, and a cut call has none; its whole answer is the one
matched here. Every case runs whole and streamed at 1, 3 and random ids a chunk, in both
``parser_state`` modes.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.family_cases import Case, check
from helpers.parsers_oracle import Message

HEAD = "<start_of_turn>user\nWeather?<end_of_turn>\n<start_of_turn>model\n"
E = "<escape>"


def _f(label: str, text: str, expected: Message, **kw: Any) -> Case:
    return Case(
        f"functiongemma-{label}",
        "functiongemma-derived",
        None,
        "functiongemma",
        HEAD,
        text,
        expected,
        **kw,
    )


def _call(name: str, *args: tuple[str, str]) -> str:
    body = ",".join(f"{k}:{E}{v}{E}" for k, v in args)
    return f"<start_function_call>call:{name}{{{body}}}<end_function_call>"


PARIS = ("get_weather", '{"city": "Paris"}')

CASES = [
    _f("plain", "It is sunny.", Message("It is sunny.", "", ())),
    _f(
        "one-call",
        _call("get_weather", ("city", "Paris"), ("unit", "c")),
        Message("", "", (("get_weather", '{"city": "Paris", "unit": "c"}'),)),
    ),
    # vLLM's whole answer drops "Done." after the call; here it is content.
    _f(
        "text-around-call",
        "Let me check.\n" + _call("get_weather", ("city", "Paris")) + "\nDone.",
        Message("Let me check.Done.", "", (PARIS,)),
    ),
    # Values are read as JSON whatever the schema says ("city" is a string).
    _f(
        "json-values",
        _call("get_weather", ("city", "75001"), ("unit", "true")),
        Message("", "", (("get_weather", '{"city": 75001, "unit": true}'),)),
    ),
    _f(
        "nested-and-unicode",
        _call("search", ("query", 'café "x"'), ("filters", '{"a": [1, 2]}')),
        Message("", "", (("search", '{"query": "café \\"x\\"", "filters": {"a": [1, 2]}}'),)),
    ),
    _f(
        "two-calls",
        _call("get_weather", ("city", "Paris")) + _call("get_time"),
        Message("", "", (PARIS, ("get_time", "{}"))),
    ),
    _f(
        "cut-by-length",
        f"<start_function_call>call:get_weather{{city:{E}Pa",
        Message("", "", (("get_weather", "{}"),)),
        finish="length",
    ),
    _f(
        "bare-value-unread",
        f"<start_function_call>call:get_weather{{city:Paris,unit:{E}c{E}}}<end_function_call>",
        Message("", "", (("get_weather", '{"unit": "c"}'),)),
    ),
    _f(
        "braces-in-values",
        _call("write_file", ("path", "a}b"), ("content", "x}")),
        Message("", "", (("write_file", '{"path": "a}b", "content": "x}"}'),)),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)
