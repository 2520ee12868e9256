"""Poolside's Laguna built-in template under vLLM's parser name ``poolside_v1`` (both kinds).

- ``<think>`` reasoning as ``deepseek_v3`` reads it: only where the request switches thinking
  on (``chat_template_kwargs.thinking`` or ``enable_thinking``); the prompt after its last
  ``<assistant>`` moves it on (a ``</think>`` of an earlier turn does not);
- calls are GLM-4.5's, ``<tool_call>NAME`` then ``<arg_key>KEY</arg_key><arg_value>VALUE
  </arg_value>`` arguments: the name and keys stripped, a value as written where the tool's
  schema says ``"type": "string"``, else stripped and read as JSON, a Python literal or its text
  (a key without a schema, and a tool the request does not declare, too). A call is sent once
  it closes; the text after a call is dropped, and whitespace-only content before one.

The markers are tokens of ``poolside-v1-derived`` (Qwen3's vocabulary, whose ``<think>`` and
``<tool_call>`` tokens Laguna's share, with ``<assistant>`` and the argument markers added).
Each case's expected message is vLLM 0.33.0's whole answer for the same text, names, prompt and
fixture (``vllm/tool_parsers/poolside_v1_tool_parser.py`` and
``vllm/reasoning/poolside_v1_reasoning_parser.py``, run on CPU from the 0.33.0 wheel;
``acceptance/vllm/parsers_oracle.py``), except where a comment says how vLLM's differs and why
the answer here is kept. Every case runs whole and streamed at 1, 3 and random ids a chunk, in
both ``parser_state`` modes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from helpers.family_cases import Case, case_named, check, tools_of
from helpers.parsers_oracle import Message

HEAD = "<|im_start|>user\nWeather?<|im_end|>\n<assistant>"
ON = {"thinking": True}
PARIS = ("get_weather", '{"city": "Paris"}')
TIME = ("get_time", "{}")
CALC = tools_of(
    "calc",
    {
        "i": {"type": "integer"},
        "s": {"type": "string"},
        "b": {"type": "boolean"},
        "l": {"type": "array"},
        "u": {"type": ["string", "null"]},
    },
)


def arg(key: str, value: str) -> str:
    return f"<arg_key>{key}</arg_key><arg_value>{value}</arg_value>"


def call(name: str, *args: str) -> str:
    return f"<tool_call>{name}\n" + "".join(args) + "</tool_call>"


WEATHER = call("get_weather", arg("city", "Paris"))


def _l(label: str, text: str, expected: Message, **kw: Any) -> Case:
    reasoning = kw.pop("reasoning", "poolside_v1")
    tool = kw.pop("tool", "poolside_v1")
    prompt = kw.pop("prompt", HEAD)
    return Case(
        f"poolside_v1-{label}", "poolside-v1-derived", reasoning, tool, prompt, text, expected, **kw
    )


CASES = [
    _l(
        "thinking-not-asked",
        "<think>Plan.</think>It is sunny.",
        Message("<think>Plan.</think>It is sunny.", "", ()),
    ),
    _l(
        "thinking",
        "<think>Plan.</think>It is sunny.",
        Message("It is sunny.", "Plan.", ()),
        kwargs=ON,
    ),
    _l(
        "enable-thinking",
        "Plan.</think>It is sunny.",
        Message("It is sunny.", "Plan.", ()),
        kwargs={"enable_thinking": True},
    ),
    _l("no-close", "Plan it", Message("", "Plan it", ()), kwargs=ON, finish="length"),
    _l(
        "as-written",
        "\nPlan.\n</think>\n\nIt is sunny.\n",
        Message("\n\nIt is sunny.\n", "\nPlan.\n", ()),
        kwargs=ON,
    ),
    _l(
        "the-prompt-opened-think",
        "Plan.</think>Sunny.",
        Message("Sunny.", "Plan.", ()),
        kwargs=ON,
        prompt=HEAD + "<think>",
    ),
    _l(
        "an-earlier-turns-think-is-not-read",
        "Plan.</think>Sunny.",
        Message("Sunny.", "Plan.", ()),
        kwargs=ON,
        prompt="<assistant><think>a</think>b</assistant><|im_start|>user\nx<|im_end|>\n<assistant>",
    ),
    _l("call", "Let me check." + WEATHER, Message("Let me check.", "", (PARIS,))),
    _l(
        "call-after-reasoning",
        "P.</think>Let me check." + WEATHER,
        Message("Let me check.", "P.", (PARIS,)),
        kwargs=ON,
    ),
    _l("two-calls", WEATHER + "\n" + call("get_time"), Message("", "", (PARIS, TIME))),
    _l("whitespace-before-a-call", "\n" + WEATHER, Message("", "", (PARIS,))),
    _l(
        "name-stripped",
        "<tool_call>  get_weather  \n\n<arg_key>city</arg_key>"
        "<arg_value>Paris</arg_value></tool_call>",
        Message("", "", (PARIS,)),
    ),
    _l(
        "name-without-a-newline",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
        Message("", "", (PARIS,)),
    ),
    _l(
        "key-stripped-string-value-as-written",
        "<tool_call>get_weather\n<arg_key> city </arg_key>\n"
        "<arg_value> Paris </arg_value></tool_call>",
        Message("", "", (("get_weather", '{"city": " Paris "}'),)),
    ),
    _l("text-after-a-call-dropped", WEATHER + "Done.", Message("", "", (PARIS,))),
    _l(
        "text-between-calls-dropped",
        WEATHER + "junk" + call("get_time"),
        Message("", "", (PARIS, TIME)),
    ),
    _l(
        "typed-by-the-schema",
        call(
            "calc",
            arg("i", " 42 "),
            arg("s", " 007 "),
            arg("b", "True"),
            arg("l", "[1, 'a']"),
            arg("u", "x"),
            arg("z", "{'a': (1,)}"),
        ),
        Message(
            "",
            "",
            (
                (
                    "calc",
                    '{"i": 42, "s": " 007 ", "b": true, "l": [1, "a"], "u": "x", "z": {"a": [1]}}',
                ),
            ),
        ),
        tools=CALC,
    ),
    _l(
        "a-tool-not-declared",
        call("nope", arg("a", "1"), arg("b", "x y")),
        Message("", "", (("nope", '{"a": 1, "b": "x y"}'),)),
    ),
    _l(
        "strings-as-written",
        call("write_file", arg("path", " a.txt "), arg("content", 'line 1\nline 2 ☃ "q"')),
        Message(
            "", "", (("write_file", '{"path": " a.txt ", "content": "line 1\\nline 2 ☃ \\"q\\""}'),)
        ),
    ),
    _l(
        "a-key-without-a-schema-read",
        call("get_weather", arg("city", "Paris"), arg("days", "3")),
        Message("", "", (("get_weather", '{"city": "Paris", "days": 3}'),)),
    ),
    _l(
        "a-second-call-cut-dropped",
        WEATHER + call("get_time")[:-5],
        Message("", "", (PARIS,)),
        finish="length",
    ),
    _l(
        "a-call-without-a-name-is-content",
        "<tool_call>\n<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
        Message(
            "<tool_call>\n<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>", "", ()
        ),
    ),
    _l("a-stray-close-is-content", "a</tool_call>b", Message("a</tool_call>b", "", ())),
    _l(
        "a-repeated-key-takes-the-last-value",
        call("get_weather", arg("city", "Paris"), arg("city", "Rome")),
        Message("", "", (("get_weather", '{"city": "Rome"}'),)),
    ),
    _l(
        "tool-parser-only",
        "<think>P.</think>" + WEATHER,
        Message("<think>P.</think>", "", (PARIS,)),
        reasoning=None,
        kwargs=ON,
    ),
    _l(
        "reasoning-parser-only",
        "P.</think>" + WEATHER,
        Message(WEATHER, "P.", ()),
        tool=None,
        kwargs=ON,
    ),
    # vLLM reads the prompt's `<think></think>` in its streams but not in its whole answer.
    _l(
        "the-prompt-closed-think",
        "Sunny.",
        Message("Sunny.", "", ()),
        kwargs=ON,
        prompt=HEAD + "<think></think>",
    ),
    # vLLM's whole answer gives all of an output whose only call is cut as content, markup
    # included; the cut call is dropped here, as a call is sent only once it closes.
    _l(
        "a-call-cut-by-length",
        "Hi" + WEATHER[:-20],
        Message("Hi", "", ()),
        finish="length",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)


def test_tool_choice_none_and_parallel_tool_calls() -> None:
    case = case_named(CASES, "poolside_v1-two-calls")
    check(replace(case, expected=Message("", "", (PARIS,))), "resumable", parallel_tool_calls=False)
    check(replace(case, expected=Message(case.text, "", ())), "resumable", tool_choice="none")
