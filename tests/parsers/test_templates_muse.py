"""Muse's built-in templates under vLLM's parser names ``muse`` (and its alias ``musespark1x``)
and ``muse_glimmer``, reasoning and tools.

Muse writes messages ``<|start|>assistant to=RECIPIENT<|message|>BODY<|eom|>`` (the first without
``<|start|>assistant``, which the prompt ends with; the turn's last ends with ``<|eot|>``, or the
next header). Under ``muse`` (Muse Spark), ``to=self`` and a bare header are reasoning,
``to=user`` and ``to=commentary`` content, ``to=developer`` dropped; under ``muse_glimmer``,
``to=self`` is reasoning (messages joined by a newline), ``to=user`` and a bare header content, and
commentary and developer messages are tools'. Any other recipient is a tool: its message holds
ATEM calls, ``<atem:invoke name="NAME">`` with ``<atem:parameter name="KEY">VALUE</atem:parameter>``
tags, each sent once ``</atem:invoke>`` closes it; a message's end ends a call left open, which is
dropped. Values are read as JSON, else as written, but (``muse``) where the tool declares the key
``"type": "string"``; a doubled name ``X.X`` is ``X`` where the request declares ``X``.

The markers are special tokens of ``muse-derived`` (Qwen3's vocabulary with ``<|start|>``,
``<|message|>``, ``<|eom|>``, ``<|eot|>`` and ``<|end_of_text|>`` added; ``to=`` and the ATEM tags
are text, as in Muse's vocabulary). Each case's expected message is vLLM 0.33.0's whole answer for
the same text, names, prompt and request (``vllm/tool_parsers/muse_tool_parser.py``,
``vllm/reasoning/muse_reasoning_parser.py`` and their Glimmer subclasses, run on CPU from the 0.33.0
wheel; ``acceptance/vllm/parsers_oracle.py``), except where a comment says how vLLM's differs and
why the answer here is kept. Every case runs whole and streamed at 1, 3 and random ids a chunk, in
both ``parser_state`` modes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from helpers.family_cases import Case, case_named, check
from helpers.parsers_oracle import Message

START = "<|start|>assistant"
EOM, EOT = "<|eom|>", "<|eot|>"
SYSTEM = "<|start|>system<|message|>You are a helpful AI assistant." + EOT
TURN = SYSTEM + "<|start|>user<|message|>Weather?" + EOT
PROMPT = TURN + START


def first(recipient: str) -> str:
    """The header of a turn's first message (the prompt ends with ``<|start|>assistant``)."""
    return f" to={recipient}<|message|>"


def head(recipient: str) -> str:
    return f"{START} to={recipient}<|message|>"


def invoke(name: str, **params: str) -> str:
    tags = "".join(f'<atem:parameter name="{k}">{v}</atem:parameter>\n' for k, v in params.items())
    return f'<atem:invoke name="{name}">\n{tags}</atem:invoke>\n'


def block(*invokes: str) -> str:
    return "<atem:function_calls>\n" + "".join(invokes) + "</atem:function_calls>"


WEATHER = block(invoke("get_weather", city="Paris", unit="celsius"))
THINK = first("self") + "The user wants the weather." + EOM
THOUGHT = "The user wants the weather."
PARIS = ("get_weather", '{"city": "Paris", "unit": "celsius"}')
TIME = ("get_time", "{}")
LOOKUP = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "parameters": {
                "type": "object",
                "properties": {
                    "zip": {"type": "string"},
                    "note": {"type": "string"},
                    "count": {"type": "integer"},
                    "flag": {"type": "boolean"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "maybe": {"type": ["string", "null"]},
                },
            },
        },
    }
]
LOOKUP_TEXT = (
    THINK
    + head("lookup")
    + block(
        invoke(
            "lookup",
            zip="75001",
            note="null",
            count="3",
            flag="true",
            tags='["a", "b"]',
            maybe="12",
        )
    )
    + EOT
)
ANSWERED = THINK + head("get_weather") + WEATHER + EOM + head("user")


def _u(label: str, text: str, expected: Message, **kw: Any) -> Case:
    name = kw.pop("name", "muse")
    return Case(
        f"{name}-{label}",
        "muse-derived",
        kw.pop("reasoning", name),
        kw.pop("tool", name),
        kw.pop("prompt", PROMPT),
        text,
        expected,
        **kw,
    )


def _g(label: str, text: str, expected: Message, **kw: Any) -> Case:
    return _u(label, text, expected, name="muse_glimmer", **kw)


CASES = [
    _u(
        "reasoning-then-answer",
        THINK + head("user") + "Set x to=5 in a <b> tag; it is sunny.",
        Message("Set x to=5 in a <b> tag; it is sunny.", THOUGHT, ()),
    ),
    # vLLM's streams send nothing of an output without a header (its reasoning parser never
    # leaves its phase); its whole answer is kept.
    _u(
        "content-unframed",
        "Hello! Plain text, no header.",
        Message("Hello! Plain text, no header.", "", ()),
    ),
    _u("one-call", THINK + head("get_weather") + WEATHER + EOT, Message("", THOUGHT, (PARIS,))),
    _u(
        "two-calls-two-messages",
        THINK
        + head("get_weather")
        + block(invoke("get_weather", city="Paris"))
        + EOM
        + head("get_time")
        + block(invoke("get_time"))
        + EOT,
        Message("", THOUGHT, (("get_weather", '{"city": "Paris"}'), TIME)),
    ),
    _u(
        "two-invokes-one-block",
        THINK
        + head("get_weather")
        + block(invoke("get_weather", city="Paris"), invoke("get_weather", city="Oslo"))
        + EOT,
        Message(
            "", THOUGHT, (("get_weather", '{"city": "Paris"}'), ("get_weather", '{"city": "Oslo"}'))
        ),
    ),
    _u(
        "nested-and-array-values",
        THINK
        + head("search")
        + block(
            invoke(
                "search",
                query="best [1, 2] cafes",
                filters='{"open": true, "tags": ["wifi", "quiet"], '
                '"rank": {"min": 4.5, "x": null}}',
            )
        )
        + EOT,
        Message(
            "",
            THOUGHT,
            (
                (
                    "search",
                    '{"query": "best [1, 2] cafes", "filters": {"open": true, "tags": ["wifi", '
                    '"quiet"], "rank": {"min": 4.5, "x": null}}}',
                ),
            ),
        ),
    ),
    _u(
        "unicode-and-escapes",
        first("self")
        + "Ünïcödé thoughts “quoted” 東京."
        + EOM
        + head("write_file")
        + block(
            invoke(
                "write_file", path="C:\\dir\\naïve.txt", content='line1\nline2 "q" \\n tab\t東京 🚀'
            )
        )
        + EOT,
        Message(
            "",
            "Ünïcödé thoughts “quoted” 東京.",
            (
                (
                    "write_file",
                    '{"path": "C:\\\\dir\\\\naïve.txt", "content": "line1\\nline2 \\"q\\" \\\\n '
                    'tab\\t東京 🚀"}',
                ),
            ),
        ),
    ),
    _u(
        "text-after-call",
        ANSWERED + "Checking done: sunny.",
        Message("Checking done: sunny.", THOUGHT, (PARIS,)),
    ),
    # vLLM's whole answer gives the cut call's message, markers and markup, as content; its
    # streams drop it, as here.
    _u(
        "call-cut-by-length",
        THINK
        + head("get_weather")
        + '<atem:function_calls>\n<atem:invoke name="get_weather">\n'
        + '<atem:parameter name="city">Par',
        Message("", THOUGHT, ()),
        finish="length",
    ),
    # vLLM's streams hold back a body's tail that could begin a marker or a header (` to`, `<`)
    # and never send it; its whole answer is kept.
    _u(
        "open-bodies-end-like-markers",
        first("self") + "compare a <" + EOM + head("user") + "It is up to",
        Message("It is up to", "compare a <", ()),
    ),
    _u(
        "reasoning-cut-ends-like-a-header",
        first("self") + "I want to go t",
        Message("", "I want to go t", ()),
        finish="length",
    ),
    # Where calls are off, a tool's message is dropped; vLLM gives the text from it on, markers
    # included, as content.
    _u(
        "tool-choice-none",
        ANSWERED + "Done.",
        Message("Done.", THOUGHT, ()),
        request={"tool_choice": "none"},
    ),
    # The tool parser alone reports reasoning too, as vLLM's streams do (its whole answer drops
    # it with a call, and gives the raw output without one).
    _u(
        "tool-parser-alone",
        ANSWERED + "Sunny.",
        Message("Sunny.", THOUGHT, (PARIS,)),
        reasoning=None,
    ),
    _u(
        "tool-parser-alone-no-call",
        THINK + head("user") + "Sunny.",
        Message("Sunny.", THOUGHT, ()),
        reasoning=None,
    ),
    # vLLM's whole answer gives the text from the tool's message on, markers included, as
    # content; the message is a tool's, dropped without a tool parser.
    _u(
        "reasoning-parser-alone",
        ANSWERED + "Sunny.",
        Message("Sunny.", THOUGHT, ()),
        tool=None,
    ),
    _u(
        "musespark1x-call",
        ANSWERED + "Sunny.",
        Message("Sunny.", THOUGHT, (PARIS,)),
        reasoning="musespark1x",
        tool="musespark1x",
    ),
    _u(
        "string-parameters-look-like-json",
        LOOKUP_TEXT,
        Message(
            "",
            THOUGHT,
            (
                (
                    "lookup",
                    '{"zip": "75001", "note": "null", "count": 3, "flag": true, '
                    '"tags": ["a", "b"], "maybe": 12}',
                ),
            ),
        ),
        tools=LOOKUP,
    ),
    _u(
        "doubled-name",
        THINK
        + head("get_weather.get_weather")
        + block(
            invoke("get_weather.get_weather", city="75001"), invoke("weather.get", city="75001")
        )
        + EOT,
        Message(
            "", THOUGHT, (("get_weather", '{"city": "75001"}'), ("weather.get", '{"city": 75001}'))
        ),
    ),
    _u(
        "commentary-then-call",
        THINK
        + head("commentary")
        + "Let me check the weather."
        + EOM
        + head("get_weather")
        + WEATHER
        + EOT,
        Message("Let me check the weather.", THOUGHT, (PARIS,)),
    ),
    _u(
        "developer-message",
        THINK + head("developer") + "internal note" + EOM + head("user") + "Sunny.",
        Message("Sunny.", THOUGHT, ()),
    ),
    _u(
        "bare-message-header",
        first("self")
        + "plan"
        + EOM
        + START
        + "<|message|>bare thoughts"
        + EOM
        + head("user")
        + "Answer.",
        Message("Answer.", "planbare thoughts", ()),
    ),
    _u(
        "several-reasoning-and-answers",
        THINK
        + head("self")
        + "Second thought."
        + EOM
        + head("user")
        + "Part one. "
        + EOM
        + head("user")
        + "Part two.",
        Message("Part one. Part two.", THOUGHT + "Second thought.", ()),
    ),
    _u(
        "atem-echo-in-reasoning",
        first("self")
        + "I could write "
        + invoke("get_weather", city="Rome")
        + "but no."
        + EOM
        + head("user")
        + "No call needed.",
        Message(
            "No call needed.", "I could write " + invoke("get_weather", city="Rome") + "but no.", ()
        ),
    ),
    # A call in the answer's text is text (vLLM's whole answer also makes it a call; its streams
    # do not).
    _u(
        "atem-echo-in-answer",
        THINK + head("user") + "Write: " + invoke("get_weather", city="Rome") + "to call it.",
        Message("Write: " + invoke("get_weather", city="Rome") + "to call it.", THOUGHT, ()),
    ),
    # Calls outside a tool's message are text: vLLM's whole answer makes this one a call and
    # keeps its markup as content too; its streams send nothing.
    _u(
        "atem-without-framing",
        block(invoke("get_weather", city="Paris")),
        Message(block(invoke("get_weather", city="Paris")), "", ()),
    ),
    _u(
        "unterminated-reasoning-then-call",
        first("self") + "Need the time" + head("get_time") + block(invoke("get_time")) + EOT,
        Message("", "Need the time", (TIME,)),
    ),
    _u(
        "prompt-with-an-earlier-call",
        first("user") + "It is sunny.",
        Message("It is sunny.", "", ()),
        prompt=TURN
        + head("get_weather")
        + WEATHER
        + EOT
        + '<|start|>tool get_weather<|message|><tool_output name="get_weather">\nsunny\n'
        + "</tool_output>"
        + EOT
        + START,
    ),
    _u(
        "header-without-start-mid-body",
        first("self") + "thinking to=get_time<|message|>" + block(invoke("get_time")) + EOT,
        Message("", "thinking ", (TIME,)),
    ),
    # vLLM writes Python's NaN and Infinity into the arguments, which are then not JSON; they
    # are strings here.
    _u(
        "typed-edge-values",
        THINK
        + head("lookup")
        + block(
            invoke("lookup", zip=" 75001 ", count=" 3\n", flag="NaN", tags="", maybe="Infinity")
        )
        + EOT,
        Message(
            "",
            THOUGHT,
            (
                (
                    "lookup",
                    '{"zip": " 75001 ", "count": 3, "flag": "NaN", "tags": "", '
                    '"maybe": "Infinity"}',
                ),
            ),
        ),
        tools=LOOKUP,
    ),
    _u(
        "second-call-cut",
        THINK
        + head("get_weather")
        + block(invoke("get_weather", city="Paris"))
        + EOM
        + head("get_weather")
        + '<atem:function_calls>\n<atem:invoke name="get_weather">\n<atem:parameter name="city">Os',
        Message("", THOUGHT, (("get_weather", '{"city": "Paris"}'),)),
        finish="length",
    ),
    # A message's end ends a call left open, which is dropped; vLLM's whole answer gives the
    # text from its message on as content, its streams this answer.
    _u(
        "open-call-then-answer",
        THINK
        + head("get_weather")
        + '<atem:function_calls>\n<atem:invoke name="get_weather">\n'
        + '<atem:parameter name="city">Paris</atem:parameter>\n'
        + EOM
        + head("user")
        + "Sorry, no call.",
        Message("Sorry, no call.", THOUGHT, ()),
    ),
    _u(
        "tool-message-without-atem",
        THINK + head("get_weather") + '{"city": "Paris"}' + EOM + head("user") + "Sunny.",
        Message("Sunny.", THOUGHT, ()),
    ),
    _u(
        "named-tool-choice-another-call",
        THINK + head("get_time") + block(invoke("get_time")) + EOT,
        Message("", THOUGHT, (TIME,)),
        request={"tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
    ),
    # The prompt decides where the output starts: a prompt inside a call's message, or inside
    # reasoning, goes on there (vLLM reads neither: the call, or ` think.`, is lost).
    _u(
        "prompt-opened-a-call",
        '<atem:parameter name="city">Paris</atem:parameter>\n</atem:invoke>\n</atem:function_calls>'
        + EOM
        + head("user")
        + "Sunny.",
        Message("Sunny.", "", (("get_weather", '{"city": "Paris"}'),)),
        prompt=PROMPT
        + ' to=get_weather<|message|><atem:function_calls>\n<atem:invoke name="get_weather">\n',
    ),
    _u(
        "prompt-opened-reasoning",
        " think." + EOM + head("user") + "Sunny.",
        Message("Sunny.", " think.", ()),
        prompt=PROMPT + " to=self<|message|>Let me",
    ),
    _g(
        "reasoning-then-answer",
        THINK + head("user") + "It is sunny in Paris.",
        Message("It is sunny in Paris.", THOUGHT, ()),
    ),
    _g("one-call-then-answer", ANSWERED + "Sunny.", Message("Sunny.", THOUGHT, (PARIS,))),
    _g(
        "string-parameters-look-like-json",
        LOOKUP_TEXT,
        Message(
            "",
            THOUGHT,
            (
                (
                    "lookup",
                    '{"zip": 75001, "note": null, "count": 3, "flag": true, "tags": ["a", "b"], '
                    '"maybe": 12}',
                ),
            ),
        ),
        tools=LOOKUP,
    ),
    _g(
        "commentary-then-call",
        THINK
        + head("commentary")
        + "Let me check the weather."
        + EOM
        + head("get_weather")
        + WEATHER
        + EOT,
        Message("", THOUGHT, (PARIS,)),
    ),
    _g(
        "commentary-only",
        THINK + head("commentary") + "Let me check." + EOM + head("user") + "Sunny.",
        Message("Sunny.", THOUGHT, ()),
    ),
    # A bare message is content; vLLM's whole answer drops it before any call (and keeps it
    # after one).
    _g(
        "bare-message-header",
        first("self")
        + "plan"
        + EOM
        + START
        + "<|message|>bare text"
        + EOM
        + head("user")
        + "Answer.",
        Message("bare textAnswer.", "plan", ()),
    ),
    _g(
        "bare-after-call",
        ANSWERED[: -len(head("user"))]
        + START
        + "<|message|>bare after"
        + EOM
        + head("user")
        + "Answer.",
        Message("bare afterAnswer.", THOUGHT, (PARIS,)),
    ),
    # vLLM's whole answer keeps only the first answer message; its streams join the reasoning
    # messages without the whole answer's newline.
    _g(
        "several-reasoning-and-answers",
        THINK
        + head("self")
        + "Second thought."
        + EOM
        + head("user")
        + "Part one. "
        + EOM
        + head("user")
        + "Part two.",
        Message("Part one. Part two.", THOUGHT + "\nSecond thought.", ()),
    ),
    # vLLM's whole answer gives the answer's framing as content; its streams cut the answer where
    # the echoed call begins.
    _g(
        "atem-echo-in-answer",
        THINK + head("user") + "Write: " + invoke("get_weather", city="Rome") + "to call it.",
        Message("Write: " + invoke("get_weather", city="Rome") + "to call it.", THOUGHT, ()),
    ),
    _g(
        "tool-choice-none",
        ANSWERED + "Done.",
        Message("Done.", THOUGHT, ()),
        request={"tool_choice": "none"},
    ),
    _g(
        "tool-parser-alone",
        ANSWERED + "Sunny.",
        Message("Sunny.", THOUGHT, (PARIS,)),
        reasoning=None,
    ),
    _g(
        "developer-call",
        THINK + head("developer") + block(invoke("get_time")) + EOT,
        Message("", THOUGHT, (TIME,)),
    ),
    # vLLM's whole answer keeps `<|message|>` in the content; its streams send nothing.
    _g("bare-only", "<|message|>Just a bare message.", Message("Just a bare message.", "", ())),
    # vLLM's whole answer loses the first reasoning message; its streams join the two without
    # the newline.
    _g(
        "reasoning-cut-after-a-closed-one",
        first("self") + "A" + EOM + head("self") + "B",
        Message("", "A\nB", ()),
        finish="length",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)


def test_parallel_tool_calls() -> None:
    case = case_named(CASES, "muse-two-invokes-one-block")
    only = Message("", THOUGHT, (("get_weather", '{"city": "Paris"}'),))
    check(replace(case, expected=only), "resumable", parallel_tool_calls=False)


def test_the_tool_parser_alone_names_its_reasoning() -> None:
    from helpers.family_cases import _derenderer

    r = _derenderer("muse-derived", None, "musespark1x", "resumable")
    assert (r.reasoning_parser, r.tool_parser) == ("musespark1x", "musespark1x")
