"""Cohere Command's built-in templates under vLLM's parser names ``cohere_command3`` (Command R7B,
Command A) and ``cohere_command4`` (Command A Reasoning, Vision, MoE), reasoning and tools.

Command writes marker-delimited sections, each marker ending the one before it wherever it comes:
``<|START_THINKING|>`` reasoning, ``<|END_THINKING|>`` and ``<|START_RESPONSE|>`` content (also
``<|START_TEXT|>`` under ``cohere_command4``, whose output starts in reasoning),
``<|START_ACTION|>`` a JSON list of ``{"tool_call_id", "tool_name", "parameters"}`` calls; text
after ``<|END_RESPONSE|>`` or ``<|END_ACTION|>`` is dropped up to the next marker. Content keeps its
leading whitespace and loses its trailing whitespace; reasoning is stripped; citation tags
(``<co>``, ``</co: 0:[1]>``) are dropped, their text kept. As vLLM's parser (which runs
``cohere_melody``), both parts are parsed whichever of the names is given, the action is dropped
wherever calls are not parsed, two of the names parse with the reasoning parser's, and another
reasoning parser beside a Cohere tool parser is refused.

The markers are special tokens of ``cohere-derived`` (Qwen3's vocabulary with Command's turn,
reasoning, action, response and text markers added); two cases run on ``qwen3``, where they are
text. Each case's expected message is vLLM 0.33.0's whole answer for the same text, names, prompt
and request (``vllm/parser/cohere_command.py`` with ``cohere-melody`` 0.15.3, run on CPU from the
0.33.0 wheel; ``acceptance/vllm/parsers_oracle.py``), except where a comment says how vLLM's differs
and why the answer here is kept. Every case runs whole and streamed at 1, 3 and random ids a chunk,
in both ``parser_state`` modes.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from helpers.family_cases import Case, case_named, check
from helpers.parsers_oracle import Message
from helpers.parsers_util import derenderer_class
from helpers.stream_util import load_detokenizer

PROMPT = (
    "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Weather?<|END_OF_TURN_TOKEN|>"
    "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"
)
THINK, END_THINK = "<|START_THINKING|>", "<|END_THINKING|>"
RESPONSE, END_RESPONSE = "<|START_RESPONSE|>", "<|END_RESPONSE|>"
TEXT, END_TEXT = "<|START_TEXT|>", "<|END_TEXT|>"
ACTION, END_ACTION = "<|START_ACTION|>", "<|END_ACTION|>"


def call(i: int, name: str, params: Any = None, raw: str | None = None) -> str:
    p = raw if raw is not None else json.dumps(params, ensure_ascii=False)
    return f'{{"tool_call_id": "{i}", "tool_name": "{name}", "parameters": {p}}}'


def action(*calls: str) -> str:
    """An action as the model lays it out: one call a line, indented by 4."""
    return ACTION + "[\n    " + ",\n    ".join(calls) + "\n]" + END_ACTION


WEATHER = call(0, "get_weather", {"city": "Paris", "unit": "celsius"})
SEARCH = call(
    1, "search", {"query": "Paris events", "filters": {"month": "June", "tags": ["music", "art"]}}
)
PARIS = ("get_weather", '{"city": "Paris", "unit": "celsius"}')
EVENTS = (
    "search",
    '{"query": "Paris events", "filters": {"month": "June", "tags": ["music", "art"]}}',
)
NESTED = {
    "query": "museums",
    "filters": {
        "open": ["mon", "tue"],
        "price": {"max": 20, "free": True},
        "ids": [[1, 2], [3]],
        "note": None,
    },
}
# The call of NESTED laid out over lines, as the model may write it.
NESTED_PARAMETERS = json.dumps(NESTED, indent=4).replace("\n", "\n        ")
NESTED_CALL = (
    '{\n        "tool_call_id": "0",\n        "tool_name": "search",\n        "parameters": '
    + NESTED_PARAMETERS
    + "\n    }"
)


def _c(label: str, text: str, expected: Message, **kw: Any) -> Case:
    name = kw.pop("name", "cohere_command3")
    return Case(
        f"{name}-{label}",
        kw.pop("fixture", "cohere-derived"),
        kw.pop("reasoning", name),
        kw.pop("tool", name),
        PROMPT,
        text,
        expected,
        **kw,
    )


def _c4(label: str, text: str, expected: Message, **kw: Any) -> Case:
    return _c(label, text, expected, name="cohere_command4", **kw)


CASES = [
    _c(
        "reasoning-only",
        THINK + "The user wants the weather. I should call a tool." + END_THINK,
        Message("", "The user wants the weather. I should call a tool.", ()),
    ),
    _c(
        "content-plain",
        "It is sunny in Paris today.\n\nEnjoy!",
        Message("It is sunny in Paris today.\n\nEnjoy!", "", ()),
    ),
    _c(
        "content-response",
        RESPONSE + "It is sunny in Paris today." + END_RESPONSE,
        Message("It is sunny in Paris today.", "", ()),
    ),
    _c(
        "reasoning-and-response-whitespace",
        THINK
        + "\n  Simple question.  \n"
        + END_THINK
        + "\n\n"
        + RESPONSE
        + "\n It is sunny. \n"
        + END_RESPONSE
        + "\n",
        Message("\n It is sunny.", "Simple question.", ()),
    ),
    _c(
        "one-call",
        THINK + "I will check the weather." + END_THINK + action(WEATHER),
        Message("", "I will check the weather.", (PARIS,)),
    ),
    _c(
        "two-calls",
        THINK + "Two independent lookups." + END_THINK + action(WEATHER, SEARCH),
        Message("", "Two independent lookups.", (PARIS, EVENTS)),
    ),
    # vLLM takes eight columns of indentation off each line of the arguments; they are sent as
    # written here (the same JSON).
    _c(
        "nested-over-lines",
        THINK
        + "Search with filters."
        + END_THINK
        + ACTION
        + "[\n    "
        + NESTED_CALL
        + "\n]"
        + END_ACTION,
        Message("", "Search with filters.", (("search", NESTED_PARAMETERS),)),
    ),
    _c(
        "unicode-and-escapes",
        action(
            call(
                0,
                "write_file",
                raw='{"path": "C:\\\\tmp\\\\é.txt", "content": "line1\\nline2 \\"quoted\\" '
                '\\u00e9 日本語 😀 }]"}',
            )
        ),
        Message(
            "",
            "",
            (
                (
                    "write_file",
                    '{"path": "C:\\\\tmp\\\\é.txt", "content": "line1\\nline2 \\"quoted\\" '
                    '\\u00e9 日本語 😀 }]"}',
                ),
            ),
        ),
    ),
    # Text after an action is dropped up to the next marker; content sections join with nothing.
    _c(
        "text-after-a-call",
        "Let me check. "
        + action(WEATHER)
        + " stray text "
        + RESPONSE
        + "Done: sunny."
        + END_RESPONSE,
        Message("Let me check.Done: sunny.", "", (PARIS,)),
    ),
    _c(
        "call-cut-in-its-arguments",
        THINK
        + "Checking."
        + END_THINK
        + ACTION
        + '[\n    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Par',
        Message("", "Checking.", (("get_weather", '{"city": "Par'),)),
        finish="length",
    ),
    # vLLM's whole answer has a call without a name (its streams have none).
    _c(
        "call-cut-in-its-name",
        THINK
        + "Checking."
        + END_THINK
        + ACTION
        + '[\n    {"tool_call_id": "0", "tool_name": "get_wea',
        Message("", "Checking.", ()),
        finish="length",
    ),
    _c(
        "second-call-cut",
        action(WEATHER, SEARCH)[: -len(END_ACTION) - 40],
        Message("", "", (PARIS, ("search", '{"query": "Paris events", "filters": {"month'))),
        finish="length",
    ),
    _c(
        "reasoning-cut",
        THINK + "I am still thinking about the answer and",
        Message("", "I am still thinking about the answer and", ()),
        finish="length",
    ),
    _c(
        "tool-choice-none-drops-the-action",
        THINK + "Call it." + END_THINK + action(WEATHER),
        Message("", "Call it.", ()),
        request={"tool_choice": "none"},
    ),
    _c(
        "tool-parser-alone-parses-reasoning",
        THINK + "Plan." + END_THINK + action(WEATHER),
        Message("", "Plan.", (PARIS,)),
        reasoning=None,
    ),
    _c(
        "reasoning-parser-alone-drops-the-action",
        THINK + "Plan." + END_THINK + action(WEATHER) + RESPONSE + "ok" + END_RESPONSE,
        Message("ok", "Plan.", ()),
        tool=None,
    ),
    _c(
        "citations-in-the-response",
        THINK
        + "Grounding."
        + END_THINK
        + RESPONSE
        + "Paris is <co>sunny</co: 0:[0]> and <co>warm (25 °C)</co: 0:[1,2],1:[0]>."
        + END_RESPONSE,
        Message("Paris is sunny and warm (25 °C).", "Grounding.", ()),
    ),
    _c(
        "citation-in-reasoning",
        THINK
        + "The tool said <co>it is sunny</co: 0:[0]>."
        + END_THINK
        + RESPONSE
        + "Sunny."
        + END_RESPONSE,
        Message("Sunny.", "The tool said it is sunny.", ()),
    ),
    _c(
        "markers-as-text",
        THINK
        + "Think."
        + END_THINK
        + "Use <|START_RESP or <co and </co: tags."
        + RESPONSE
        + "Fine <code>x</code>."
        + END_RESPONSE,
        Message("Use <|START_RESP or <co and </co: tags.Fine <code>x</code>.", "Think.", ()),
    ),
    # vLLM's parser reads a call only from its `tool_call_id`: it drops the first call here.
    _c(
        "call-without-an-id",
        action(
            '{"tool_name": "get_weather", "parameters": {"city": "Paris"}}',
            WEATHER.replace('"0"', '"1"'),
        ),
        Message("", "", (("get_weather", '{"city": "Paris"}'), PARIS)),
    ),
    # vLLM gives `""` (not JSON) for empty parameters.
    _c(
        "empty-parameters",
        action(call(0, "get_time", {})),
        Message("", "", (("get_time", "{}"),)),
    ),
    _c(
        "two-actions",
        action(WEATHER) + THINK + "Now search." + END_THINK + action(SEARCH),
        Message("", "Now search.", (PARIS, EVENTS)),
    ),
    # vLLM ends the action at a marker's text inside a JSON string, and sends the cut JSON; the
    # call's JSON is read whole here.
    _c(
        "a-marker-inside-a-string",
        action(call(0, "write_file", raw='{"path": "a.txt", "content": "x<|END_ACTION|>y"}')),
        Message("", "", (("write_file", '{"path": "a.txt", "content": "x<|END_ACTION|>y"}'),)),
    ),
    # Two of the names parse with the reasoning parser's.
    _c(
        "command3-reasoning-with-command4-tools",
        THINK + "Plan." + END_THINK + TEXT + "Sunny." + END_TEXT,
        Message(TEXT + "Sunny." + END_TEXT, "Plan.", ()),
        tool="cohere_command4",
    ),
    # vLLM's streams lose a `</` that ends a chunk inside a citation.
    _c(
        "a-close-like-text-inside-a-citation",
        RESPONSE + "Close it with <co>the </b> tag</co: 0:[0]> now." + END_RESPONSE,
        Message("Close it with the </b> tag now.", "", ()),
    ),
    _c(
        "empty-reasoning-trims-the-content",
        THINK + END_THINK + "\n   Sunny." + END_RESPONSE + " dropped",
        Message("Sunny.", "", ()),
    ),
    _c(
        "markers-split-into-text",
        THINK + "Plan." + END_THINK + action(WEATHER) + RESPONSE + "Done." + END_RESPONSE,
        Message("Done.", "Plan.", (PARIS,)),
        fixture="qwen3",
    ),
    _c4(
        "plain-output-is-reasoning",
        "The user asks about weather. No tool is needed.",
        Message("", "The user asks about weather. No tool is needed.", ()),
    ),
    _c4(
        "reasoning-then-text",
        "I should answer directly."
        + END_THINK
        + TEXT
        + "It is sunny. <co>25 °C</co: 0:[0]>"
        + END_TEXT,
        Message("It is sunny. 25 °C", "I should answer directly.", ()),
    ),
    _c4(
        "response-marker",
        THINK + "Plan." + END_THINK + RESPONSE + "Sunny." + END_RESPONSE,
        Message("Sunny.", "Plan.", ()),
    ),
    _c4(
        "calls",
        "I need the weather." + END_THINK + action(WEATHER, SEARCH),
        Message("", "I need the weather.", (PARIS, EVENTS)),
    ),
    _c4(
        "tool-parser-alone",
        "Thinking first." + END_THINK + TEXT + "Sunny." + END_TEXT,
        Message("Sunny.", "Thinking first.", ()),
        reasoning=None,
    ),
    _c4(
        "markers-split-into-text",
        "Plan." + END_THINK + TEXT + "Sunny." + END_TEXT,
        Message("Sunny.", "Plan.", ()),
        fixture="qwen3",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)


def test_include_reasoning_false_and_parallel_tool_calls() -> None:
    case = case_named(CASES, "cohere_command3-two-calls")
    check(
        replace(case, expected=Message("", "", (PARIS, EVENTS))),
        "resumable",
        include_reasoning=False,
    )
    expected = Message("", "Two independent lookups.", (PARIS,))
    check(replace(case, expected=expected), "resumable", parallel_tool_calls=False)


def test_names_are_paired_as_vllm_pairs_them() -> None:
    make = derenderer_class()
    detok = load_detokenizer("cohere-derived")
    r = make(detok, reasoning_parser="cohere_command3", tool_parser="cohere_command4")
    assert (r.reasoning_parser, r.tool_parser) == ("cohere_command3", "cohere_command4")
    r = make(detok, tool_parser="cohere_command4")
    assert (r.reasoning_parser, r.tool_parser) == ("cohere_command4", "cohere_command4")
    # A Cohere reasoning parser parses the calls beside another tool parser's name.
    assert make(detok, reasoning_parser="cohere_command3", tool_parser="hermes") is not None
    with pytest.raises(ValueError, match='name the reasoning parser "cohere_command3"'):
        make(detok, reasoning_parser="qwen3", tool_parser="cohere_command3")
