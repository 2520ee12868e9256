"""Gemma 4's built-in template under vLLM's parser name ``gemma4`` (reasoning and tools).

- reasoning is a ``<|channel>`` block closed by ``<channel|>``; the ``thought`` line it opens
  with is dropped; the output starts in content (thinking on or off), in reasoning only where
  the prompt ends inside an open ``<|channel>``; a call also ends reasoning;
- calls are ``<|tool_call>call:NAME{key:value,...}<tool_call|>`` (``(...)`` and a bare
  ``:NAME`` too); strings are delimited by ``<|"|>``; bare values are strings, then typed by
  the tool's schema as vLLM types them (at the top, and inside objects and lists whose schema
  gives ``properties`` or ``items``);
- whitespace as vLLM's streams keep it: reasoning without its trailing whitespace, content as
  written.

Each case's expected message is vLLM 0.33.0's answer for the same text, names, prompt and
tokenizer fixture (``vllm/parser/gemma4.py`` through its engine adapters, run on CPU from the
0.33.0 wheel; ``acceptance/vllm/parsers_oracle.py``), whole and streamed at 1 and 3 ids a chunk,
except where a comment says how vLLM's differs and why the answer here is kept. Every case runs
whole and streamed at 1, 3 and random ids a chunk, in both ``parser_state`` modes.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.family_cases import Case, check
from helpers.parsers_oracle import Message

HEAD = "<|turn>user\nWeather?<turn|>\n<|turn>model\n"
Q = '<|"|>'
PARIS = ("get_weather", '{"city": "Paris"}')
TIME = ("get_time", "{}")
CALC: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "calc",
            "parameters": {
                "type": "object",
                "properties": {
                    "n": {"type": "integer"},
                    "ok": {"type": "boolean"},
                    "f": {"type": "number"},
                    "s": {"type": "string"},
                    "o": {"type": "object"},
                    "l": {"type": "array"},
                    "deep": {
                        "type": "object",
                        "properties": {"k": {"type": "integer"}},
                    },
                    "ints": {"type": "array", "items": {"type": "integer"}},
                },
            },
        },
    }
]


def _g(label: str, text: str, expected: Message, **kw: Any) -> Case:
    reasoning = kw.pop("reasoning", "gemma4")
    tool = kw.pop("tool", "gemma4")
    head = kw.pop("head", "")
    return Case(
        f"gemma4-{label}", "gemma4-derived", reasoning, tool, HEAD + head, text, expected, **kw
    )


def _call(name: str, args: str) -> str:
    return f"<|tool_call>call:{name}{args}<tool_call|>"


CASES = [
    _g("plain", "It is sunny.", Message("It is sunny.", "", ())),
    _g(
        "thought",
        "<|channel>thought\nPlan it.<channel|>It is sunny.",
        Message("It is sunny.", "Plan it.", ()),
    ),
    _g(
        "thinking-on",
        "<|channel>thought\nPlan it.<channel|>It is sunny.",
        Message("It is sunny.", "Plan it.", ()),
        kwargs={"enable_thinking": True},
    ),
    # With thinking on, an answer without a channel block is content.
    _g(
        "thinking-on-plain",
        "It is sunny.",
        Message("It is sunny.", "", ()),
        kwargs={"enable_thinking": True},
    ),
    _g(
        "text-then-call",
        "Let me check." + _call("get_weather", f"{{city:{Q}Paris{Q},unit:{Q}c{Q}}}"),
        Message("Let me check.", "", (("get_weather", '{"city": "Paris", "unit": "c"}'),)),
    ),
    # Nested bare values stay strings where the schema does not type them.
    _g(
        "nested",
        _call(
            "search",
            f'{{query:{Q}café "x"{Q},filters:{{n:42,ok:true,f:1.5,z:null,l:[{Q}a{Q},2]}}}}',
        ),
        Message(
            "",
            "",
            (
                (
                    "search",
                    '{"query": "café \\"x\\"", "filters": {"n": "42", "ok": "true", "f": "1.5", '
                    '"z": "null", "l": ["a", "2"]}}',
                ),
            ),
        ),
    ),
    _g(
        "bare-string-schema",
        _call("get_weather", "{city:75001,unit:true}"),
        Message("", "", (("get_weather", '{"city": "75001", "unit": "true"}'),)),
    ),
    _g(
        "typed-by-schema",
        _call("calc", "{n:42,ok:true,f:1.5,s:7,o:{a:1},l:[1,2]}"),
        Message(
            "",
            "",
            (
                (
                    "calc",
                    '{"n": 42, "ok": true, "f": 1.5, "s": "7", "o": {"a": "1"}, "l": ["1", "2"]}',
                ),
            ),
        ),
        tools=CALC,
    ),
    _g(
        "typed-nested-schema",
        _call("calc", "{deep:{k:5,j:6},ints:[1,2]}"),
        Message("", "", (("calc", '{"deep": {"k": 5, "j": "6"}, "ints": [1, 2]}'),)),
        tools=CALC,
    ),
    _g(
        "delimited-braces",
        _call("write_file", f"{{path:{Q}a}}b.txt{Q},content:{Q}x, y: {{z}}{Q}}}"),
        Message("", "", (("write_file", '{"path": "a}b.txt", "content": "x, y: {z}"}'),)),
    ),
    # vLLM's whole answer drops "Done." after the calls; its streams keep it, as here.
    _g(
        "two-calls",
        "<|channel>thought\nTwo.<channel|>"
        + _call("get_weather", f"{{city:{Q}Paris{Q}}}")
        + _call("get_time", "{}")
        + "Done.",
        Message("Done.", "Two.", (PARIS, TIME)),
    ),
    # vLLM's whole answer drops "B."; its streams keep it, as here.
    _g(
        "text-between-calls",
        "A." + _call("get_time", "{}") + "B." + _call("get_time", "{}"),
        Message("A.B.", "", (TIME, TIME)),
    ),
    _g(
        "cut-by-length",
        f"<|tool_call>call:get_weather{{city:{Q}Pa",
        Message("", "", (("get_weather", '{"city": "Pa"}'),)),
        finish="length",
    ),
    _g(
        "prompt-opened",
        "Plan.<channel|>Sunny.",
        Message("Sunny.", "Plan.", ()),
        head="<|channel>thought\n",
    ),
    # A tool parser alone: the channel block is content, as written.
    _g(
        "tool-parser-only",
        "<|channel>thought\nPlan.<channel|>" + _call("get_time", "{}"),
        Message("<|channel>thought\nPlan.<channel|>", "", (TIME,)),
        reasoning=None,
    ),
    # A reasoning parser alone: the call's markup is content. vLLM's streams give the whole
    # text as content; its whole answer is this one.
    _g(
        "reasoning-parser-only",
        "<|channel>thought\nPlan.<channel|>" + _call("get_time", "{}"),
        Message("<|tool_call>call:get_time{}<tool_call|>", "Plan.", ()),
        tool=None,
    ),
    _g(
        "no-thought-line",
        "<|channel>Plan.<channel|>\n\nSunny.\n",
        Message("\n\nSunny.\n", "Plan.", ()),
    ),
    # vLLM's whole answer strips the content that comes with a call ("Sunny."); its streams
    # keep it as written, as here.
    _g(
        "whitespace",
        "<|channel>thought\n\nPlan.\n<channel|>\nSunny." + _call("get_time", "{}") + "\n",
        Message("\nSunny.\n", "\nPlan.", (TIME,)),
    ),
    _g("reasoning-cut", "<|channel>thought\nPlan", Message("", "Plan", ()), finish="length"),
    _g(
        "call-ends-reasoning",
        "<|channel>thought\nPlan." + _call("get_time", "{}"),
        Message("", "Plan.", (TIME,)),
    ),
    _g(
        "parenthesised",
        f"<|tool_call>call:get_weather(city:{Q}Paris{Q})<tool_call|>",
        Message("", "", (PARIS,)),
    ),
    _g("bare-colon", "<|tool_call>:get_time{}<tool_call|>", Message("", "", (TIME,))),
    _g("empty-thought", "<|channel>thought\n<channel|>Sunny.", Message("Sunny.", "", ())),
    _g(
        "unknown-tool",
        _call("nope", f"{{x:{Q}1{Q}}}"),
        Message("", "", (("nope", '{"x": "1"}'),)),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)
