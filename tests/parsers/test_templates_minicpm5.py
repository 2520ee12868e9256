"""MiniCPM5's built-in template under vLLM's tool parser name ``minicpm5``.

MiniCPM5 writes calls as ``<function name="NAME"><param name="KEY">VALUE</param></function>``
(values with markup in ``<![CDATA[...]]>``), with text around them. Each call is read whole when it
closes: as XML where it is well-formed (entities and CDATA read, values as written), else by
patterns (values stripped), then checked against the request's tools as vLLM's parser checks it
(undeclared keys dropped, ``properties``/``arguments`` wrappers unwrapped, a key given twice or a
required key missing spoils the call, τ-bench's telecom aliases mapped); a call that is not one,
or that the output cuts, stays text. A value is its text where the tool declares it a string,
else JSON, else a Python literal, else its text.

The tag pieces (``<function``, ``</function>``, ``<param``, ``</param>``) are special tokens of
``minicpm5-derived`` (Qwen3's vocabulary with them added); one case runs on ``qwen3``, where they
are text. Each case's expected message is vLLM 0.33.0's answer for the same text, names, prompt and
request (``vllm/tool_parsers/minicpm5xml_tool_parser.py``, run on CPU from the 0.33.0 wheel;
``acceptance/vllm/parsers_oracle.py``), except where a comment says how vLLM's differs and why the
answer here is kept. Where vLLM's whole answer and its streams disagree, the text is the streams'
(text around calls kept) and the calls the whole answer's (the streams' arguments are not JSON
there). Every case runs whole and streamed at 1, 3 and random ids a chunk, in both
``parser_state`` modes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from helpers.family_cases import CALC, Case, case_named, check, tools_of
from helpers.parsers_oracle import Message

PROMPT = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"


def fn(name: str, *params: str, q: str = '"') -> str:
    return f"<function name={q}{name}{q}>" + "".join(params) + "</function>"


def pm(key: str, value: str, q: str = '"') -> str:
    return f"<param name={q}{key}{q}>{value}</param>"


def tool(name: str, props: dict[str, Any]) -> dict[str, Any]:
    """The function ``name``, of these properties, the first required."""
    (one,) = tools_of(name, props, required=list(props)[:1])
    return one


TELECOM = [
    tool("get_customer_by_phone", {"phone_number": {"type": "string"}}),
    tool("toggle_roaming", {"line_id": {"type": "string"}, "enabled": {"type": "boolean"}}),
    tool(
        "refuel_data",
        {
            "customer_id": {"type": "string"},
            "line_id": {"type": "string"},
            "amount_gb": {"type": "number"},
        },
    ),
]
WEATHER = fn("get_weather", pm("city", "Paris"))
PARIS = ("get_weather", '{"city": "Paris"}')


def _m(label: str, text: str, expected: Message, **kw: Any) -> Case:
    return Case(
        f"minicpm5-{label}",
        kw.pop("fixture", "minicpm5-derived"),
        kw.pop("reasoning", None),
        "minicpm5",
        kw.pop("prompt", PROMPT),
        text,
        expected,
        **kw,
    )


CASES = [
    _m("content-only", "It is sunny in Paris.\n", Message("It is sunny in Paris.\n", "", ())),
    _m("one-call", WEATHER, Message("", "", (PARIS,))),
    # vLLM's whole answer drops all text once a call stands; its streams keep it, as here.
    _m(
        "text-around-a-call",
        "Let me check.\n" + WEATHER + "\nDone.",
        Message("Let me check.\n\nDone.", "", (PARIS,)),
    ),
    # vLLM's whole answer drops the newline between the calls (all text with a call).
    _m(
        "two-calls",
        WEATHER
        + "\n"
        + fn("search", pm("query", "rust"), pm("filters", '{"lang": ["en"], "n": 2}')),
        Message(
            "\n", "", (PARIS, ("search", '{"query": "rust", "filters": {"lang": ["en"], "n": 2}}'))
        ),
    ),
    # vLLM's streams read values by patterns as they come (stripped) and never close the object.
    _m(
        "typing",
        fn(
            "calc",
            pm("i", "5"),
            pm("n", " 2.5 "),
            pm("b", "true"),
            pm("l", "[1, 'two']"),
            pm("o", "{'a': 1}"),
            pm("u", "123"),
            pm("s", " 42 "),
            pm("e", "True"),
        ),
        Message(
            "",
            "",
            (
                (
                    "calc",
                    '{"i": 5, "n": 2.5, "b": true, "l": [1, "two"], "o": {"a": 1}, "u": 123, '
                    '"s": " 42 ", "e": true}',
                ),
            ),
        ),
        tools=CALC,
    ),
    _m(
        "cdata",
        fn(
            "write_file",
            pm("path", "a.txt"),
            pm("content", "<![CDATA[if a < b && c:\n    x()\n]]>"),
        ),
        Message(
            "", "", (("write_file", '{"path": "a.txt", "content": "if a < b && c:\\n    x()\\n"}'),)
        ),
    ),
    _m(
        "xml-entities",
        fn("search", pm("query", "fish &amp; chips &lt;3")),
        Message("", "", (("search", '{"query": "fish & chips <3"}'),)),
    ),
    _m(
        "not-xml-read-by-patterns",
        fn("search", pm("query", " fish & chips <3 ")),
        Message("", "", (("search", '{"query": "fish & chips <3"}'),)),
    ),
    _m(
        "value-whitespace",
        fn("get_weather", pm("city", " Paris "), pm("unit", "\nC\n")),
        Message("", "", (("get_weather", '{"city": " Paris ", "unit": "\\nC\\n"}'),)),
    ),
    _m(
        "arguments-wrapper",
        fn("get_weather", pm("arguments", '{"city": "Paris", "unit": "C", "x": 1}')),
        Message("", "", (("get_weather", '{"city": "Paris", "unit": "C"}'),)),
    ),
    _m(
        "properties-wrapper-as-a-python-literal",
        fn("search", pm("properties", "{'query': 'rust', 'other': 2}")),
        Message("", "", (("search", '{"query": "rust"}'),)),
    ),
    # A call that is not one is text (vLLM's streams send it as a call, then its text).
    _m(
        "a-wrapper-that-is-not-an-object",
        fn("get_weather", pm("city", "Paris"), pm("arguments", "[1]")),
        Message(fn("get_weather", pm("city", "Paris"), pm("arguments", "[1]")), "", ()),
    ),
    _m(
        "an-undeclared-key-is-dropped",
        fn("get_weather", pm("city", "Paris"), pm("foo", "1")),
        Message("", "", (PARIS,)),
    ),
    _m(
        "a-key-given-twice",
        "Checking. " + fn("get_weather", pm("city", "Paris"), pm("city", "Lyon")),
        Message("Checking. " + fn("get_weather", pm("city", "Paris"), pm("city", "Lyon")), "", ()),
    ),
    _m(
        "a-required-key-missing",
        "Checking. " + fn("get_weather", pm("unit", "C")),
        Message("Checking. " + fn("get_weather", pm("unit", "C")), "", ()),
    ),
    _m(
        "an-unknown-tool",
        "Checking. " + fn("get_stock", pm("sym", "X")),
        Message("Checking. " + fn("get_stock", pm("sym", "X")), "", ()),
    ),
    # vLLM's whole answer drops the text of the call that is not one with all text.
    _m(
        "one-call-and-one-that-is-not",
        fn("get_stock", pm("sym", "X")) + "\n" + WEATHER,
        Message(fn("get_stock", pm("sym", "X")) + "\n", "", (PARIS,)),
    ),
    _m(
        "alias-phone",
        fn("get_details_by_phone", pm("phone", "555-0100")),
        Message("", "", (("get_customer_by_phone", '{"phone_number": "555-0100"}'),)),
        tools=TELECOM,
    ),
    _m(
        "alias-roaming",
        fn("enable_roaming", pm("line_id", "L1")),
        Message("", "", (("toggle_roaming", '{"line_id": "L1", "enabled": true}'),)),
        tools=TELECOM,
    ),
    _m(
        "alias-refuel",
        fn("add_data_to_line", pm("id", "L2"), pm("gb", "2.5"), pm("customer_id", "C9")),
        Message(
            "", "", (("refuel_data", '{"customer_id": "C9", "line_id": "L2", "amount_gb": 2.5}'),)
        ),
        tools=TELECOM,
    ),
    # vLLM's streams hold a `<function` that never closes, and lose all that follows.
    _m(
        "the-word-function-in-prose",
        "Wrap it in a <function> element.",
        Message("Wrap it in a <function> element.", "", ()),
    ),
    _m(
        "collapsed-tags",
        '<functionname="get_weather"><paramname="city">Paris</param></function>',
        Message("", "", (PARIS,)),
    ),
    # vLLM's streams read `Ġ` and `Ċ` as a space and a newline in content; text is as decoded.
    _m(
        "byte-level-marks-in-text",
        "HelloĠworldĊbye and naïve",
        Message("HelloĠworldĊbye and naïve", "", ()),
    ),
    _m(
        "think-without-a-reasoning-parser",
        "<think>Plan.</think>\n\nIt is sunny.",
        Message("<think>Plan.</think>\n\nIt is sunny.", "", ()),
    ),
    # vLLM's streams send a call without arguments for a cut call; it is text here, as in its
    # whole answer.
    _m(
        "a-call-cut",
        'Checking. <function name="get_weather"><param name="city">Par',
        Message('Checking. <function name="get_weather"><param name="city">Par', "", ()),
        finish="length",
    ),
    _m(
        "arguments-element",
        '<function name="get_weather"><arguments><param name="city">Paris</param></arguments>'
        "</function>",
        Message("", "", (PARIS,)),
    ),
    _m(
        "single-quotes",
        fn("get_weather", pm("city", "Paris", q="'"), q="'"),
        Message("", "", (PARIS,)),
    ),
    _m("no-parameters", fn("get_time"), Message("", "", (("get_time", "{}"),))),
    _m(
        "unicode",
        fn("write_file", pm("path", "東京.txt"), pm("content", 'Café "quoted" \\n 🌦️')),
        Message(
            "",
            "",
            (("write_file", '{"path": "東京.txt", "content": "Café \\"quoted\\" \\\\n 🌦️"}'),),
        ),
    ),
    # With the tags as text, vLLM's streams send the call's markup as content too (or lose text).
    _m(
        "tags-split-into-text",
        "Let me check.\n" + WEATHER + "\nDone.",
        Message("Let me check.\n\nDone.", "", (PARIS,)),
        fixture="qwen3",
    ),
    # vLLM's whole answer drops the content beside the call.
    _m(
        "beside-qwen3-reasoning",
        "Plan.\n</think>\n\nSure.\n" + WEATHER,
        Message("\n\nSure.\n", "Plan.\n", (PARIS,)),
        reasoning="qwen3",
        prompt=PROMPT + "<think>\n",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)


def test_tool_choice_none_and_parallel_tool_calls() -> None:
    case = case_named(CASES, "minicpm5-two-calls")
    check(
        replace(case, expected=Message("\n", "", (PARIS,))), "resumable", parallel_tool_calls=False
    )
    text = case_named(CASES, "minicpm5-text-around-a-call")
    check(replace(text, expected=Message(text.text, "", ())), "resumable", tool_choice="none")
