"""Kimi K3's built-in template under vLLM's parser name ``kimi_k3`` (reasoning and tools).

K3 writes its output as XTML channels, each ``<|open|>NAME<|sep|>...<|close|>NAME<|sep|>``
(``<|open|>``, ``<|close|>`` and ``<|sep|>`` are special tokens of K3's vocabulary):

- ``think`` is reasoning, on unless ``chat_template_kwargs.thinking`` is given (not null) and
  false, or, without it, ``enable_thinking`` is false (or null); where it is on the output
  starts in it (the prompt may have opened it), and a ``response`` channel's open ends it too;
- ``response`` is content, as written; its markers and ``<|close|>message<|sep|>`` are dropped;
- a ``tools`` channel holds ``<|open|>call tool="NAME" index="N"<|sep|>`` elements whose
  ``<|open|>argument key="KEY" type="TYPE"<|sep|>VALUE<|close|>argument<|sep|>`` children are
  a string as written where the type is ``string`` (or not given), else JSON (the text where it
  is not JSON), never typed by the tool's schema; ``&quot;`` and ``&amp;`` in names and keys
  read as ``"`` and ``&``. A call is sent once it closes: one the output cuts is dropped. The
  text of the channel around its calls is dropped, and so is a think channel where reasoning is
  not parsed and a tools channel where calls are not (``tool_choice: "none"``).

Each case's expected message is vLLM 0.33.0's whole answer for the same text, names, prompt and
tokenizer fixture (``vllm/parser/kimi_k3.py`` with ``vllm/reasoning/kimi_k3_reasoning_parser.py``
and ``vllm/tool_parsers/kimi_k3_tool_parser.py``, run on CPU from the 0.33.0 wheel;
``acceptance/vllm/parsers_oracle.py``), except where a comment says how vLLM's differs and why the
answer here is kept. On ``kimi-k3-derived`` (``test_markers_as_special_tokens``), where each
marker is one special token as in K3's vocabulary, vLLM's streams at 1 and 3 ids a chunk give its
whole answers except in four cases (the response-only output, the think channel where reasoning
is not parsed, twice, and the reasoning parser alone); with the markers as text (several ids each
of Qwen3's vocabulary, the other cases here) its streams send them as content and no calls. The
test runs the cases again there; vLLM's whole answers are the same on both vocabularies. Every
case runs whole and streamed at 1, 3 and random ids a chunk, in both ``parser_state`` modes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from helpers.family_cases import Case, case_named, check
from helpers.parsers_oracle import Message

OPEN, CLOSE, SEP = "<|open|>", "<|close|>", "<|sep|>"
HEAD = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
END = f"{CLOSE}message{SEP}"
TIME = ("get_time", "{}")
PARIS = ("get_weather", '{"city": "Paris"}')
OFF = {"thinking": False}


def think(text: str) -> str:
    return f"{OPEN}think{SEP}{text}{CLOSE}think{SEP}"


def response(text: str) -> str:
    return f"{OPEN}response{SEP}{text}{CLOSE}response{SEP}"


def arg(key: str, value: str, kind: str | None = "string") -> str:
    typed = "" if kind is None else f' type="{kind}"'
    return f'{OPEN}argument key="{key}"{typed}{SEP}{value}{CLOSE}argument{SEP}'


def call(name: str, *args: str, index: int | None = 1) -> str:
    at = "" if index is None else f' index="{index}"'
    return f'{OPEN}call tool="{name}"{at}{SEP}' + "".join(args) + f"{CLOSE}call{SEP}"


def tools(*calls: str) -> str:
    return f"{OPEN}tools{SEP}" + "".join(calls) + f"{CLOSE}tools{SEP}"


WEATHER = call("get_weather", arg("city", "Paris"))


def _k(label: str, text: str, expected: Message, **kw: Any) -> Case:
    reasoning = kw.pop("reasoning", "kimi_k3")
    tool = kw.pop("tool", "kimi_k3")
    return Case(f"kimi_k3-{label}", "qwen3", reasoning, tool, HEAD, text, expected, **kw)


CASES = [
    _k(
        "plain",
        think("Plan it.") + response("It is sunny.") + END,
        Message("It is sunny.", "Plan it.", ()),
    ),
    _k(
        "as-written",
        think("\nPlan.\n") + response("\n It is sunny. \n") + END,
        Message("\n It is sunny. \n", "\nPlan.\n", ()),
    ),
    _k(
        "think-opened-by-the-prompt",
        f"Plan it.{CLOSE}think{SEP}" + response("It is sunny.") + END,
        Message("It is sunny.", "Plan it.", ()),
    ),
    _k(
        "response-opened-by-the-prompt",
        think("Plan.") + f"It is sunny.{CLOSE}response{SEP}" + END,
        Message("It is sunny.", "Plan.", ()),
    ),
    _k("response-only", response("It is sunny.") + END, Message("It is sunny.", "", ())),
    _k("empty-response", think("Plan.") + response("") + END, Message("", "Plan.", ())),
    _k(
        "reasoning-cut",
        f"{OPEN}think{SEP}Plan it and",
        Message("", "Plan it and", ()),
        finish="length",
    ),
    _k(
        "response-cut",
        think("P.") + f"{OPEN}response{SEP}It is su",
        Message("It is su", "P.", ()),
        finish="length",
    ),
    _k(
        "call",
        think("Plan.") + response("Let me check.") + tools(WEATHER) + END,
        Message("Let me check.", "Plan.", (PARIS,)),
    ),
    _k(
        "call-without-response",
        think("Plan.") + tools(WEATHER) + END,
        Message("", "Plan.", (PARIS,)),
    ),
    _k(
        "two-calls",
        think("P.") + response("") + tools(WEATHER, call("get_time", index=2)) + END,
        Message("", "P.", (PARIS, TIME)),
    ),
    _k(
        "typed-by-their-attribute",
        think("P.")
        + tools(
            call(
                "search",
                arg("query", "a b"),
                arg("filters", '{"n":1,"l":[1,2]}', "object"),
                arg("list", '[1, 2.5, "x"]', "array"),
                arg("a", "true", "boolean"),
                arg("b", "null", "null"),
                arg("c", "-1.5e3", "number"),
            )
        )
        + END,
        Message(
            "",
            "P.",
            (
                (
                    "search",
                    '{"query": "a b", "filters": {"n": 1, "l": [1, 2]}, "list": [1, 2.5, "x"], '
                    '"a": true, "b": null, "c": -1500.0}',
                ),
            ),
        ),
    ),
    _k(
        "not-typed-by-the-schema",
        think("P.")
        + tools(call("get_weather", arg("city", "75001"), arg("unit", "3", "integer")))
        + END,
        Message("", "P.", (("get_weather", '{"city": "75001", "unit": 3}'),)),
    ),
    _k(
        "not-json",
        think("P.")
        + tools(call("search", arg("query", "x"), arg("filters", "{oops", "object")))
        + END,
        Message("", "P.", (("search", '{"query": "x", "filters": "{oops"}'),)),
    ),
    _k(
        "strings-as-written",
        think("P.")
        + tools(
            call(
                "write_file",
                arg("path", 'ä/"q" <b>.txt'),
                arg("content", "line 1\nline 2 \\n ☃ x <| y"),
            )
        )
        + END,
        Message(
            "",
            "P.",
            (
                (
                    "write_file",
                    '{"path": "ä/\\"q\\" <b>.txt", "content": "line 1\\nline 2 \\\\n ☃ x <| y"}',
                ),
            ),
        ),
    ),
    _k(
        "untyped-argument-no-index-more-attributes",
        think("P.")
        + tools(
            call("get_weather", arg("city", "Paris", None), index=None),
            f'{OPEN}call tool="get_time" note="x"{SEP}{CLOSE}call{SEP}',
        )
        + END,
        Message("", "P.", (PARIS, TIME)),
    ),
    _k(
        "entities",
        think("P.") + tools(call("get&amp;weather", arg("ci&quot;ty", "a&amp;b"))) + END,
        Message("", "P.", (("get&weather", '{"ci\\"ty": "a&amp;b"}'),)),
    ),
    _k(
        "nested-unicode-key",
        think("P.") + tools(call("search", arg("clé ☃", '{"a": {"b": [true]}}', "object"))) + END,
        Message("", "P.", (("search", '{"clé ☃": {"a": {"b": [true]}}}'),)),
    ),
    _k(
        "call-without-a-name-dropped",
        think("P.") + tools(call("", arg("city", "Paris")), call("get_time", index=2)) + END,
        Message("", "P.", (TIME,)),
    ),
    _k(
        "call-cut-by-length-dropped",
        think("P.")
        + tools(
            f'{OPEN}call tool="get_weather" index="1"{SEP}'
            f'{OPEN}argument key="city" type="string"{SEP}Pa'
        ),
        Message("", "P.", ()),
        finish="length",
    ),
    _k(
        "text-after-the-tools-dropped",
        think("P.") + response("Hi") + tools(call("get_time")) + "trailing" + END,
        Message("Hi", "P.", (TIME,)),
    ),
    _k(
        "a-later-think-dropped",
        think("Plan.") + response("Sunny.") + think("More.") + END,
        Message("Sunny.", "Plan.", ()),
    ),
    _k(
        "calls-inside-reasoning-are-reasoning",
        f"{OPEN}think{SEP}Plan " + tools(WEATHER) + f"{CLOSE}think{SEP}" + response("Ok.") + END,
        Message("Ok.", "Plan " + tools(WEATHER), ()),
    ),
    _k("thinking-off", response("It is sunny.") + END, Message("It is sunny.", "", ()), kwargs=OFF),
    _k("thinking-off-bare", "It is sunny.", Message("It is sunny.", "", ()), kwargs=OFF),
    _k(
        "thinking-off-wins-over-enable-thinking",
        response("It is sunny.") + END,
        Message("It is sunny.", "", ()),
        kwargs={"thinking": False, "enable_thinking": True},
    ),
    _k(
        "thinking-on-wins-over-enable-thinking",
        think("Plan.") + response("Sunny.") + END,
        Message("Sunny.", "Plan.", ()),
        kwargs={"thinking": True, "enable_thinking": False},
    ),
    _k(
        "thinking-null-then-enable-thinking",
        response("Sunny.") + END,
        Message("Sunny.", "", ()),
        kwargs={"thinking": None, "enable_thinking": False},
    ),
    _k(
        "enable-thinking-null-is-off",
        response("Sunny.") + END,
        Message("Sunny.", "", ()),
        kwargs={"enable_thinking": None},
    ),
    _k(
        "thinking-off-drops-a-think-channel",
        think("Plan.") + response("Sunny.") + tools(WEATHER) + END,
        Message("Sunny.", "", (PARIS,)),
        kwargs=OFF,
    ),
    _k(
        "tool-parser-only-drops-the-think-channel",
        think("Plan.") + response("Sunny.") + tools(call("get_time")) + END,
        Message("Sunny.", "", (TIME,)),
        reasoning=None,
    ),
    # With the request's tools and no tool parser named, vLLM's reasoning parser keeps every
    # marker of the response and tools channels in the content (for a tool parser that is not
    # there): '<|open|>response<|sep|>Sunny.<|close|>response<|sep|><|open|>tools<|sep|>...'.
    # The markers are dropped here, as vLLM drops them for a request without tools.
    _k(
        "reasoning-parser-only",
        think("Plan.") + response("Sunny.") + tools(call("get_time")) + END,
        Message("Sunny.", "Plan.", ()),
        tool=None,
    ),
    # vLLM's whole answer drops text outside the response channel where there is one (its
    # streams send it); it is content here, as written.
    _k(
        "text-between-the-channels",
        think("P.") + "\n" + response("Hi") + "\n" + tools(call("get_time")) + "\n" + END,
        Message("\nHi", "P.", (TIME,)),
    ),
    # Text before the think channel's open, where the output starts in reasoning: vLLM's whole
    # answer drops it, and the reasoning is what follows the open. Here the reasoning keeps it,
    # with the open's text.
    _k(
        "text-before-the-think-open",
        "Hi" + think("Plan.") + response("Sunny.") + END,
        Message("Sunny.", "Hi" + OPEN + "think" + SEP + "Plan.", ()),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)


def _case(label: str, fixture: str = "qwen3", **kw: Any) -> Case:
    """A case of this file with another fixture or request."""
    return replace(case_named(CASES, f"kimi_k3-{label}"), fixture=fixture, **kw)


def test_tool_choice_none_drops_the_tools_channel() -> None:
    """``tool_choice: "none"``: no calls, and the tools channel dropped."""
    case = _case("tool-parser-only-drops-the-think-channel", reasoning="kimi_k3")
    check(replace(case, expected=Message("Sunny.", "Plan.", ())), "resumable", tool_choice="none")


def test_parallel_tool_calls_false_keeps_the_first() -> None:
    case = _case("two-calls")
    check(
        replace(case, expected=Message("", "P.", (PARIS,))), "resumable", parallel_tool_calls=False
    )


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.reasoning and c.tool and not c.kwargs], ids=lambda c: c.label
)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_markers_as_special_tokens(case: Case, mode: str) -> None:
    """Each marker one special-token id (``kimi-k3-derived``), as K3's vocabulary has them:
    the same answers as with the markers as text."""
    check(replace(case, fixture="kimi-k3-derived"), mode)
