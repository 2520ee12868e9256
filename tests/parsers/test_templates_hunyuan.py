"""Hunyuan's built-in templates under vLLM's parser names ``hy_v3`` and ``hy_v4`` (reasoning and
tools).

``hy_v3`` (Hunyuan 3):

- ``<think>`` reasoning, on where the request's ``reasoning_effort`` (else
  ``chat_template_kwargs.reasoning_effort``) is given and not ``"no_think"``; off, the whole
  text, a ``<think>`` block included, is content. On, the output starts in reasoning and the
  prompt after ``<｜hy_Assistant｜>`` moves it on; reasoning ends once, and a call does not end it;
- calls are ``<tool_call>NAME<tool_sep><arg_key>KEY</arg_key><arg_value>VALUE</arg_value>...
  </tool_call>`` in a ``<tool_calls>`` block: the name stripped, each key and value as written,
  then typed by the tool's schema as vLLM's parser types them (Hunyuan's type names, ``int64``
  an integer, ``dict`` an object; a number with ``.`` or ``e`` a float; a value no declared
  type reads is JSON, a Python literal or its text). The text of the block around its calls,
  and all text after a call, is dropped; whitespace-only content before a call too.

``hy_v4`` (Hunyuan 4): as ``hy_v3``, but reasoning is on unless the effort is ``"no_think"``
(the chat template's default is ``"high"``), a call has no ``<tool_sep>`` (its name is what comes
before its first ``<arg_key>``, stripped), an argument's ``</arg_key>`` and ``<arg_value>`` are
adjacent, and a call is sent once it closes. Each marker may carry the checkpoint's suffix
(``<tool_call:6124c78e>``); the fixture's have none.

The markers are special tokens of ``hy-v3-derived`` (Qwen3's vocabulary, whose ``<think>`` and
``<tool_call>`` tokens Hunyuan's share, with the block, separator and argument markers added).
Each case's expected message is vLLM 0.33.0's whole answer for the same text, names, prompt and
fixture (``vllm/tool_parsers/hy_v3_tool_parser.py``, ``hy_v4_tool_parser.py`` and their
reasoning parsers, run on CPU from the 0.33.0 wheel;
``acceptance/vllm/parsers_oracle.py``), except where a comment says how vLLM's differs and why
the answer here is kept. Every case runs whole and streamed at 1, 3 and random ids a chunk, in
both ``parser_state`` modes.
"""

# ruff: noqa: RUF001, RUF002
# (Full-width bars are the real spelling of Hunyuan's turn markers.)
from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from helpers.family_cases import Case, case_named, check, tools_of
from helpers.parsers_oracle import Message

HEAD = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
HY_HEAD = "<｜hy_User｜>Weather?<｜hy_Assistant｜>"
HIGH = {"reasoning_effort": "high"}
PARIS = ("get_weather", '{"city": "Paris"}')
TIME = ("get_time", "{}")


def arg(key: str, value: str) -> str:
    return f"<arg_key>{key}</arg_key><arg_value>{value}</arg_value>"


def call(name: str, *args: str) -> str:
    return f"<tool_call>{name}<tool_sep>" + "".join(args) + "</tool_call>"


def block(*calls: str) -> str:
    return "<tool_calls>" + "".join(calls) + "</tool_calls>"


WEATHER = call("get_weather", arg("city", "Paris"))


CALC = tools_of(
    "calc",
    {
        "i": {"type": "integer"},
        "n": {"type": "number"},
        "f": {"type": "float"},
        "b": {"type": "boolean"},
        "l": {"type": "array"},
        "o": {"type": "object"},
        "s": {"type": "string"},
        "u": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "t": {"type": ["boolean", "string"]},
        "x": {},
        "big": {"type": "int64"},
        "d": {"type": "dict"},
    },
)


def _h(label: str, text: str, expected: Message, **kw: Any) -> Case:
    reasoning = kw.pop("reasoning", "hy_v3")
    tool = kw.pop("tool", "hy_v3")
    prompt = kw.pop("prompt", HEAD)
    return Case(f"hy_v3-{label}", "hy-v3-derived", reasoning, tool, prompt, text, expected, **kw)


CASES = [
    _h(
        "effort-not-given-all-content",
        "<think>Plan.</think>It is sunny.",
        Message("<think>Plan.</think>It is sunny.", "", ()),
    ),
    _h(
        "no-think",
        "<think>Plan.</think>It is sunny.",
        Message("<think>Plan.</think>It is sunny.", "", ()),
        kwargs={"reasoning_effort": "no_think"},
    ),
    _h(
        "empty-effort",
        "<think>Plan.</think>It is sunny.",
        Message("<think>Plan.</think>It is sunny.", "", ()),
        kwargs={"reasoning_effort": ""},
    ),
    _h(
        "high",
        "<think>Plan.</think>It is sunny.",
        Message("It is sunny.", "Plan.", ()),
        kwargs=HIGH,
    ),
    _h(
        "low",
        "<think>Plan.</think>It is sunny.",
        Message("It is sunny.", "Plan.", ()),
        kwargs={"reasoning_effort": "low"},
    ),
    _h(
        "none-is-not-no-think",
        "<think>Plan.</think>It is sunny.",
        Message("It is sunny.", "Plan.", ()),
        kwargs={"reasoning_effort": "none"},
    ),
    _h("no-open", "Plan.</think>It is sunny.", Message("It is sunny.", "Plan.", ()), kwargs=HIGH),
    _h("no-close", "Plan it", Message("", "Plan it", ()), kwargs=HIGH, finish="length"),
    _h(
        "as-written",
        "<think>\nPlan.\n</think>\n\nIt is sunny.\n",
        Message("\n\nIt is sunny.\n", "\nPlan.\n", ()),
        kwargs=HIGH,
    ),
    _h(
        "a-later-think-is-content",
        "<think>A</think>B<think>C</think>D",
        Message("B<think>C</think>D", "A", ()),
        kwargs=HIGH,
    ),
    _h(
        "the-prompt-opened-think",
        "Plan.</think>It is sunny.",
        Message("It is sunny.", "Plan.", ()),
        kwargs=HIGH,
        prompt=HY_HEAD + "<think>",
    ),
    _h(
        "call",
        "<think>P.</think>Let me check." + block(WEATHER),
        Message("Let me check.", "P.", (PARIS,)),
        kwargs=HIGH,
    ),
    _h(
        "call-thinking-off",
        "Let me check." + block(WEATHER),
        Message("Let me check.", "", (PARIS,)),
    ),
    _h("two-calls", block(WEATHER, call("get_time")), Message("", "", (PARIS, TIME))),
    _h("whitespace-before-the-block", "\n" + block(WEATHER), Message("", "", (PARIS,))),
    _h(
        "content-as-written",
        "\nOk. \n" + block(WEATHER) + "\n",
        Message("\nOk. \n", "", (PARIS,)),
    ),
    _h(
        "name-stripped",
        block(
            "<tool_call> get_weather \n<tool_sep>\n<arg_key>city</arg_key>\n"
            "<arg_value>Paris</arg_value>\n</tool_call>"
        ),
        Message("", "", (PARIS,)),
    ),
    _h(
        "keys-and-values-as-written",
        block(call("get_weather", "<arg_key> city </arg_key><arg_value> Paris </arg_value>")),
        Message("", "", (("get_weather", '{" city ": " Paris "}'),)),
    ),
    _h("text-after-the-block-dropped", block(WEATHER) + "Done.", Message("", "", (PARIS,))),
    _h(
        "text-between-calls-dropped",
        "<tool_calls>" + WEATHER + "junk" + call("get_time") + "</tool_calls>",
        Message("", "", (PARIS, TIME)),
    ),
    _h("block-without-calls", "Hi<tool_calls></tool_calls>", Message("Hi", "", ())),
    _h(
        "cut-after-an-argument",
        block(WEATHER)[: -len("</tool_call></tool_calls>")],
        Message("", "", (PARIS,)),
        finish="length",
    ),
    # A string value the output cuts ends there (its text is sent as it comes); vLLM's whole
    # answer drops it (`{}`).
    _h(
        "cut-in-a-value",
        "<tool_calls><tool_call>get_weather<tool_sep><arg_key>city</arg_key><arg_value>Pa",
        Message("", "", (("get_weather", '{"city": "Pa"}'),)),
        finish="length",
    ),
    _h(
        "typed-by-the-schema",
        block(
            call(
                "calc",
                arg("i", "42"),
                arg("n", "5"),
                arg("f", "5.0"),
                arg("b", "TRUE"),
                arg("l", "[1, 2]"),
                arg("o", '{"a": 1}'),
                arg("s", "007"),
                arg("u", "7"),
                arg("t", "false"),
                arg("x", "[1]"),
                arg("big", "9"),
                arg("d", "{'a': 1}"),
            )
        ),
        Message(
            "",
            "",
            (
                (
                    "calc",
                    '{"i": 42, "n": 5, "f": 5.0, "b": true, "l": [1, 2], "o": {"a": 1}, '
                    '"s": "007", "u": 7, "t": false, "x": "[1]", "big": 9, "d": {"a": 1}}',
                ),
            ),
        ),
        tools=CALC,
    ),
    _h(
        "not-of-the-declared-type",
        block(
            call(
                "calc",
                arg("i", "4.5"),
                arg("n", "x"),
                arg("b", "yes"),
                arg("l", "[1,"),
                arg("u", "abc"),
                arg("x", "{'k': (1, 2)}"),
                arg("big", " 12 "),
            )
        ),
        Message(
            "",
            "",
            (
                (
                    "calc",
                    '{"i": 4.5, "n": "x", "b": "yes", "l": "[1,", "u": "abc", '
                    '"x": "{\'k\': (1, 2)}", "big": 12}',
                ),
            ),
        ),
        tools=CALC,
    ),
    _h(
        "python-integers-and-floats",
        block(call("calc", arg("i", " 42 "), arg("n", "1e3"), arg("u", "+5"), arg("big", "1_000"))),
        Message("", "", (("calc", '{"i": 42, "n": 1000.0, "u": 5, "big": 1000}'),)),
        tools=CALC,
    ),
    _h(
        "python-literals-and-type-names",
        block(
            call(
                "calc",
                arg("d", "(1, 2)"),
                arg("e", "{'a': [None, True]}"),
                arg("a", "5"),
                arg("c", "x"),
            )
        ),
        Message("", "", (("calc", '{"d": [1, 2], "e": {"a": [null, true]}, "a": 5, "c": "x"}'),)),
        tools=tools_of(
            "calc",
            {
                "d": {"type": "tuple"},
                "e": {"type": "thing"},
                "a": {"type": "INT"},
                "c": {"type": "STR"},
            },
        ),
    ),
    _h(
        "unknown-tool-strings",
        block(call("nope", arg("a", "1"), arg("b", "[1]"), arg("c", "x"))),
        Message("", "", (("nope", '{"a": "1", "b": "[1]", "c": "x"}'),)),
    ),
    _h(
        "keys-without-a-schema-strings",
        block(call("get_weather", arg("city", "Paris"), arg("days", "3"), arg("extra", "true"))),
        Message("", "", (("get_weather", '{"city": "Paris", "days": "3", "extra": "true"}'),)),
    ),
    # A key given twice is sent twice, as written (each tag is sent as it comes); read as JSON,
    # the last value counts. vLLM's whole answer is '{"city": "Rome"}'.
    _h(
        "a-repeated-key-is-sent-twice",
        block(call("get_weather", arg("city", "Paris"), arg("city", "Rome"))),
        Message("", "", (("get_weather", '{"city": "Paris", "city": "Rome"}'),)),
    ),
    _h(
        "unicode",
        block(call("write_file", arg("path", "ä.txt"), arg("content", 'line 1\nline 2 ☃ "q"'))),
        Message(
            "", "", (("write_file", '{"path": "ä.txt", "content": "line 1\\nline 2 ☃ \\"q\\""}'),)
        ),
    ),
    _h(
        "calls-inside-reasoning-are-reasoning",
        "<think>P." + block(WEATHER),
        Message("", "P." + block(WEATHER), ()),
        kwargs=HIGH,
    ),
    _h(
        "tool-parser-only",
        "<think>P.</think>" + block(WEATHER),
        Message("<think>P.</think>", "", (PARIS,)),
        reasoning=None,
    ),
    _h(
        "reasoning-parser-only",
        "<think>P.</think>" + block(WEATHER),
        Message(block(WEATHER), "P.", ()),
        kwargs=HIGH,
        tool=None,
    ),
    # vLLM reads the prompt's `<think></think>` in its streams (content) but not in its whole
    # answer (all of the output reasoning); the prompt decides here, whole and streamed.
    _h(
        "the-prompt-closed-think",
        "It is sunny.",
        Message("It is sunny.", "", ()),
        kwargs=HIGH,
        prompt=HY_HEAD + "<think></think>",
    ),
    # A call outside a `<tool_calls>` block is content in vLLM's whole answer (where a block
    # follows it is parsed as well, and kept in the content; its streams parse only the
    # block's). It is a call here.
    _h("a-call-without-the-block", "Hi " + WEATHER, Message("Hi ", "", (PARIS,))),
    # A call cut inside its name: vLLM drops its text; it is content here, as no call of a
    # tool the model did not finish naming is made.
    _h(
        "cut-in-the-name",
        "<tool_calls><tool_call>get_wea",
        Message("<tool_call>get_wea", "", ()),
        finish="length",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)


def test_the_requests_reasoning_effort_comes_first() -> None:
    """The request's ``reasoning_effort`` is read before ``chat_template_kwargs``' (vLLM's
    chat parameters put it in the kwargs the parser gets)."""
    case = case_named(CASES, "hy_v3-no-think")
    check(
        replace(case, expected=Message("It is sunny.", "Plan.", ())),
        "resumable",
        reasoning_effort="high",
    )
    case = case_named(CASES, "hy_v3-effort-not-given-all-content")
    check(
        replace(case, expected=Message("It is sunny.", "Plan.", ())),
        "resumable",
        reasoning_effort="none",
    )


def test_tool_choice_none_and_parallel_tool_calls() -> None:
    case = case_named(CASES, "hy_v3-two-calls")
    check(replace(case, expected=Message("", "", (PARIS,))), "resumable", parallel_tool_calls=False)
    check(replace(case, expected=Message(case.text, "", ())), "resumable", tool_choice="none")


def call4(name: str, *args: str) -> str:
    return f"<tool_call>{name}" + "".join(args) + "</tool_call>"


WEATHER4 = call4("get_weather", arg("city", "Paris"))
NO_THINK = {"reasoning_effort": "no_think"}


def _h4(label: str, text: str, expected: Message, **kw: Any) -> Case:
    reasoning = kw.pop("reasoning", "hy_v4")
    tool = kw.pop("tool", "hy_v4")
    prompt = kw.pop("prompt", HEAD)
    return Case(f"hy_v4-{label}", "hy-v3-derived", reasoning, tool, prompt, text, expected, **kw)


V4_CASES = [
    _h4("on-by-default", "Plan.</think>It is sunny.", Message("It is sunny.", "Plan.", ())),
    _h4("with-the-open", "<think>Plan.</think>It is sunny.", Message("It is sunny.", "Plan.", ())),
    _h4(
        "no-think",
        "<think>Plan.</think>It is sunny.",
        Message("<think>Plan.</think>It is sunny.", "", ()),
        kwargs=NO_THINK,
    ),
    _h4("no-close", "Plan it", Message("", "Plan it", ()), finish="length"),
    _h4(
        "as-written",
        "\nPlan.\n</think>\n\nIt is sunny.\n",
        Message("\n\nIt is sunny.\n", "\nPlan.\n", ()),
    ),
    _h4(
        "the-prompt-opened-think",
        "Plan.</think>It is sunny.",
        Message("It is sunny.", "Plan.", ()),
        prompt=HY_HEAD + "<think>",
    ),
    _h4(
        "call",
        "P.</think>Let me check." + block(WEATHER4),
        Message("Let me check.", "P.", (PARIS,)),
    ),
    _h4(
        "call-no-think",
        "Let me check." + block(WEATHER4),
        Message("Let me check.", "", (PARIS,)),
        kwargs=NO_THINK,
    ),
    _h4(
        "two-calls",
        "P.</think>" + block(WEATHER4, call4("get_time")),
        Message("", "P.", (PARIS, TIME)),
    ),
    _h4(
        "whitespace-before-the-block", "P.</think>\n" + block(WEATHER4), Message("", "P.", (PARIS,))
    ),
    _h4(
        "name-stripped",
        "P.</think>"
        + block(
            "<tool_call> get_weather \n<arg_key>city</arg_key>"
            "<arg_value>Paris</arg_value></tool_call>"
        ),
        Message("", "P.", (PARIS,)),
    ),
    _h4(
        "whitespace-between-arguments",
        "P.</think>" + block(call4("get_weather", arg("city", "Paris") + "\n" + arg("unit", "c"))),
        Message("", "P.", (("get_weather", '{"city": "Paris", "unit": "c"}'),)),
    ),
    _h4(
        "keys-and-values-as-written",
        "P.</think>"
        + block(call4("get_weather", "<arg_key> city </arg_key><arg_value> Paris </arg_value>")),
        Message("", "P.", (("get_weather", '{" city ": " Paris "}'),)),
    ),
    _h4(
        "text-after-the-block-dropped",
        "P.</think>" + block(WEATHER4) + "Done.",
        Message("", "P.", (PARIS,)),
    ),
    _h4(
        "text-between-calls-dropped",
        "P.</think><tool_calls>" + WEATHER4 + "junk" + call4("get_time") + "</tool_calls>",
        Message("", "P.", (PARIS, TIME)),
    ),
    _h4(
        "typed-by-the-schema",
        "P.</think>"
        + block(
            call4(
                "calc",
                arg("i", "42"),
                arg("n", "1e3"),
                arg("b", "True"),
                arg("l", "[1, 2]"),
                arg("d", "{'a': 1}"),
                arg("x", "5"),
            )
        ),
        Message(
            "",
            "P.",
            (("calc", '{"i": 42, "n": 1000.0, "b": true, "l": [1, 2], "d": {"a": 1}, "x": "5"}'),),
        ),
        tools=CALC,
    ),
    _h4(
        "unicode",
        "P.</think>"
        + block(call4("write_file", arg("path", "ä.txt"), arg("content", 'line 1\nline 2 ☃ "q"'))),
        Message(
            "", "P.", (("write_file", '{"path": "ä.txt", "content": "line 1\\nline 2 ☃ \\"q\\""}'),)
        ),
    ),
    _h4(
        "a-repeated-key-takes-the-last-value",
        "P.</think>" + block(call4("get_weather", arg("city", "Paris"), arg("city", "Rome"))),
        Message("", "P.", (("get_weather", '{"city": "Rome"}'),)),
    ),
    _h4(
        "calls-inside-reasoning-are-reasoning",
        "P." + block(WEATHER4),
        Message("", "P." + block(WEATHER4), ()),
    ),
    _h4(
        "tool-parser-only",
        "<think>P.</think>" + block(WEATHER4),
        Message("<think>P.</think>", "", (PARIS,)),
        reasoning=None,
    ),
    _h4(
        "reasoning-parser-only",
        "P.</think>" + block(WEATHER4),
        Message(block(WEATHER4), "P.", ()),
        tool=None,
    ),
    # vLLM reads the prompt's `<think></think>` in its streams but not in its whole answer.
    _h4(
        "the-prompt-closed-think",
        "It is sunny.",
        Message("It is sunny.", "", ()),
        prompt=HY_HEAD + "<think></think>",
    ),
    # vLLM reads a block strictly: one that is not closed, holds no call, or holds a call
    # without a name or with argument tags apart, makes its whole answer all of the output
    # from the block on as content. Here the calls that close well are sent (a stream cannot
    # take back what it sent), the others dropped with the block's other text.
    _h4(
        "a-block-cut-by-length",
        "P.</think>" + block(WEATHER4)[: -len("</tool_calls>")],
        Message("", "P.", (PARIS,)),
        finish="length",
    ),
    _h4(
        "a-call-cut-by-length",
        "P.</think><tool_calls><tool_call>get_weather<arg_key>city</arg_key><arg_value>Pa",
        Message("", "P.", ()),
        finish="length",
    ),
    _h4(
        "a-call-without-a-name",
        "P.</think>" + block(call4("", arg("city", "Paris")), call4("get_time")),
        Message("", "P.", (TIME,)),
    ),
    _h4(
        "argument-tags-apart",
        "P.</think>"
        + block(
            "<tool_call>get_weather<arg_key>city</arg_key>\n<arg_value>Paris</arg_value></tool_call>"
        ),
        Message("", "P.", (("get_weather", "{}"),)),
    ),
    _h4("a-block-without-calls", "P.</think>Hi<tool_calls></tool_calls>", Message("Hi", "P.", ())),
    # As for `hy_v3`: a call outside a block is content in vLLM's whole answer.
    _h4("a-call-without-the-block", "P.</think>Hi " + WEATHER4, Message("Hi ", "P.", (PARIS,))),
]


@pytest.mark.parametrize("case", V4_CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_v4_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)


def test_v4_effort_tool_choice_none_and_parallel_tool_calls() -> None:
    case = case_named(V4_CASES, "hy_v4-no-think")
    # The request's effort comes first.
    check(
        replace(case, expected=Message("It is sunny.", "Plan.", ())),
        "resumable",
        reasoning_effort="low",
    )
    case = case_named(V4_CASES, "hy_v4-two-calls")
    check(
        replace(case, expected=Message("", "P.", (PARIS,))), "resumable", parallel_tool_calls=False
    )
    check(
        replace(case, expected=Message(block(WEATHER4, call4("get_time")), "P.", ())),
        "resumable",
        tool_choice="none",
    )


def test_v4_markers_with_the_checkpoints_suffix() -> None:
    """``<tool_calls:SUFFIX>`` and the other markers with a suffix read as without one."""
    case = case_named(V4_CASES, "hy_v4-two-calls")
    suffixed = case.text
    for marker in ("tool_calls", "tool_call", "arg_key", "arg_value", "think"):
        suffixed = suffixed.replace(f"<{marker}>", f"<{marker}:6124c78e>")
        suffixed = suffixed.replace(f"</{marker}>", f"</{marker}:6124c78e>")
    check(replace(case, text=suffixed), "resumable")
