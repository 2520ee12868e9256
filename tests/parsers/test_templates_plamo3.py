"""PLaMo 3's built-in template under vLLM's parser name ``plamo3`` (reasoning and tools).

PLaMo 3's markers are built of pieces, ``<|plamo:begin_`` + ``think`` + ``:plamo|>``:

- reasoning between ``<|plamo:begin_think:plamo|>`` and ``<|plamo:end_think:plamo|>``, on unless
  ``chat_template_kwargs.enable_thinking`` is off: the output starts in it, each open reopens it,
  and a call block or the end-of-turn ``<|plamo:tag|>`` ends it; a stray ``end_think`` is dropped.
  Off, the think markers are content;
- calls in a ``<|plamo:begin_tool_requests:plamo|>`` block, each a ``begin_tool_request`` with
  its name between ``begin_tool_name`` and ``end_tool_name``, then JSON arguments after
  ``<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>`` (none: ``{}``);
  the block's other text is dropped, and so is the block under ``tool_choice: "none"`` (without
  a tool parser it is content); text after the block is content; whitespace-only content before
  it is dropped.

Each case's expected message is vLLM 0.33.0's whole answer for the same text, names, prompt and
fixture (``vllm/parser/plamo3.py`` through its engine adapters, run on CPU from the 0.33.0 wheel;
``acceptance/vllm/parsers_oracle.py``), on ``plamo3-derived`` (Qwen3's vocabulary with the marker
pieces and ``<|plamo:tag|>`` as special tokens) and on Qwen3's own (the markers as text): vLLM's
answers are the same on both. A comment says where vLLM's differs and why the answer here is
kept. Every case runs whole and streamed at 1, 3 and random ids a chunk, in both
``parser_state`` modes, on both vocabularies.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from helpers.family_cases import Case, case_named, check
from helpers.parsers_oracle import Message

HEAD = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
EOT = "<|plamo:tag|>"
OFF = {"enable_thinking": False}
PARIS = ("get_weather", '{"city": "Paris"}')
TIME = ("get_time", "{}")


def marker(name: str) -> str:
    return f"<|plamo:{name}:plamo|>"


THINK, END_THINK = marker("begin_think"), marker("end_think")


def call(name: str, arguments: str) -> str:
    return (
        marker("begin_tool_request")
        + marker("begin_tool_name")
        + name
        + marker("end_tool_name")
        + marker("begin_tool_arguments")
        + "<|plamo:constrain|>json<|plamo:msg|>"
        + arguments
        + marker("end_tool_arguments")
        + marker("end_tool_request")
    )


def block(*calls: str) -> str:
    return marker("begin_tool_requests") + "".join(calls) + marker("end_tool_requests")


WEATHER = call("get_weather", '{"city": "Paris"}')
GET_TIME = call("get_time", "{}")


def _p(label: str, text: str, expected: Message, **kw: Any) -> Case:
    reasoning = kw.pop("reasoning", "plamo3")
    tool = kw.pop("tool", "plamo3")
    return Case(f"plamo3-{label}", "plamo3-derived", reasoning, tool, HEAD, text, expected, **kw)


CASES = [
    _p("plain", "Plan." + END_THINK + "It is sunny." + EOT, Message("It is sunny.", "Plan.", ())),
    _p(
        "with-the-open",
        THINK + "Plan." + END_THINK + "It is sunny.",
        Message("It is sunny.", "Plan.", ()),
    ),
    _p(
        "thinking-off",
        THINK + "Plan." + END_THINK + "It is sunny.",
        Message(THINK + "Plan." + END_THINK + "It is sunny.", "", ()),
        kwargs=OFF,
    ),
    _p(
        "enable-thinking-null-is-off",
        "It is sunny.",
        Message("It is sunny.", "", ()),
        kwargs={"enable_thinking": None},
    ),
    _p("no-close", "Plan it", Message("", "Plan it", ()), finish="length"),
    _p(
        "as-written",
        "\nPlan.\n" + END_THINK + "\n\nIt is sunny.\n",
        Message("\n\nIt is sunny.\n", "\nPlan.\n", ()),
    ),
    _p(
        "each-open-reopens",
        "A" + END_THINK + "B" + THINK + "C" + END_THINK + "D",
        Message("BD", "AC", ()),
    ),
    _p("a-stray-end-dropped", "A" + END_THINK + "B" + END_THINK + "C", Message("BC", "A", ())),
    _p("the-turn-end-ends-reasoning", "Plan" + EOT, Message("", "Plan", ())),
    _p(
        "call",
        "P." + END_THINK + "Let me check." + block(WEATHER) + EOT,
        Message("Let me check.", "P.", (PARIS,)),
    ),
    _p("a-block-ends-reasoning", "P." + block(WEATHER), Message("", "P.", (PARIS,))),
    _p(
        "a-bare-request-in-reasoning-is-reasoning",
        "P." + WEATHER + END_THINK + "x",
        Message("x", "P." + WEATHER, ()),
    ),
    _p("two-calls", "P." + END_THINK + block(WEATHER, GET_TIME), Message("", "P.", (PARIS, TIME))),
    _p(
        "whitespace-before-the-block",
        "P." + END_THINK + "\n" + block(WEATHER),
        Message("", "P.", (PARIS,)),
    ),
    _p(
        "text-between-calls-dropped",
        "P."
        + END_THINK
        + marker("begin_tool_requests")
        + WEATHER
        + "\njunk"
        + GET_TIME
        + marker("end_tool_requests"),
        Message("", "P.", (PARIS, TIME)),
    ),
    _p(
        "arguments-stripped",
        "P." + END_THINK + block(call("get_weather", ' \n{"city": "Paris"} \n')),
        Message("", "P.", (PARIS,)),
    ),
    _p("no-arguments", "P." + END_THINK + block(call("get_time", "")), Message("", "P.", (TIME,))),
    _p(
        "nested-unicode",
        "P."
        + END_THINK
        + block(
            call(
                "write_file",
                '{"path": "ä.txt", "content": "line 1\\nline ☃", "o": {"a": [1, {"b": null}]}}',
            )
        ),
        Message(
            "",
            "P.",
            (
                (
                    "write_file",
                    '{"path": "ä.txt", "content": "line 1\\nline ☃", "o": {"a": [1, {"b": null}]}}',
                ),
            ),
        ),
    ),
    _p(
        "not-json-as-written",
        "P." + END_THINK + block(call("get_weather", "city=Paris")),
        Message("", "P.", (("get_weather", "city=Paris"),)),
    ),
    _p(
        "thinking-off-call",
        "Hi" + block(WEATHER),
        Message("Hi", "", (PARIS,)),
        kwargs=OFF,
    ),
    # vLLM's whole answer drops text after the block; its streams send it, as here.
    _p(
        "text-after-the-block",
        "P." + END_THINK + block(WEATHER) + "Done.",
        Message("Done.", "P.", (PARIS,)),
    ),
    # vLLM sends the arguments of a cut call with the start of the marker that was cut,
    # '{"city": "Paris"}<|plam' (not JSON); here they end where their JSON ends.
    _p(
        "cut-after-the-arguments",
        "P." + END_THINK + marker("begin_tool_requests") + WEATHER[:-60],
        Message("", "P.", (PARIS,)),
        finish="length",
    ),
    # vLLM makes a call of the cut name, `get_wea`; no call of a tool the model did not finish
    # naming is made here.
    _p(
        "cut-in-the-name",
        "P."
        + END_THINK
        + marker("begin_tool_requests")
        + marker("begin_tool_request")
        + marker("begin_tool_name")
        + "get_wea",
        Message("", "P.", ()),
        finish="length",
    ),
    # vLLM keeps text after the arguments' JSON in them, '{"city": "Paris"} extra' (not JSON);
    # here the arguments end where their JSON ends and the rest of the call is dropped.
    _p(
        "text-after-the-arguments",
        "P." + END_THINK + block(call("get_weather", '{"city": "Paris"} extra')),
        Message("", "P.", (PARIS,)),
    ),
    # A request outside a block is content in vLLM's answers; it is a call here.
    _p(
        "a-request-without-the-block",
        "P." + END_THINK + "Hi " + WEATHER,
        Message("Hi ", "P.", (PARIS,)),
    ),
    # Without a reasoning parser vLLM drops the think channel (content null); it stays content
    # here, as a part that is not named does.
    _p(
        "tool-parser-only",
        THINK + "P." + END_THINK + block(WEATHER),
        Message(THINK + "P." + END_THINK, "", (PARIS,)),
        reasoning=None,
    ),
    _p(
        "reasoning-parser-only-keeps-the-block",
        "P." + END_THINK + block(WEATHER),
        Message(block(WEATHER), "P.", ()),
        tool=None,
    ),
]


@pytest.mark.parametrize("fixture", ["plamo3-derived", "qwen3"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str, fixture: str) -> None:
    check(replace(case, fixture=fixture), mode)


def test_tool_choice_none_and_parallel_tool_calls() -> None:
    case = case_named(CASES, "plamo3-two-calls")
    check(
        replace(case, expected=Message("", "P.", (PARIS,))), "resumable", parallel_tool_calls=False
    )
    check(replace(case, expected=Message("", "P.", ())), "resumable", tool_choice="none")
