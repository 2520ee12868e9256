"""MiniMax-M3's built-in template under vLLM's parser name ``minimax_m3`` (reasoning and tools).

MiniMax-M3 reasons between ``<mm:think>`` and ``</mm:think>`` (the output starts in reasoning only
where ``chat_template_kwargs.thinking_mode`` is ``"enabled"``; a ``</mm:think>`` it begins with is
dropped and ends reasoning), and calls inside a ``]<]minimax[>[<tool_call>`` block:
``]<]minimax[>[<invoke name="NAME">`` with arguments as nested elements, every tag prefixed by the
namespace ``]<]minimax[>[`` (``<item>`` children are a list where the schema says array, a name
given twice a list), typed by the request's tool schema, up to ``]<]minimax[>[</invoke>``. Text in
and after a block is dropped; a call outside a block is content.

The markers are added tokens of ``minimax-m3-derived`` (Qwen3's vocabulary with ``<mm:think>``,
``</mm:think>`` and the namespace added, not special: vLLM's engine parsers drop the text of special
tokens they do not know, and vLLM's reasoning parser needs the two think markers in the
vocabulary); a few cases run on ``qwen3``, where the namespace is eight tokens. Each case's expected
message is vLLM 0.33.0's whole answer for the same text, names, prompt, request and fixture
(``vllm/parser/minimax_m3.py`` and ``vllm/reasoning/minimax_m3_reasoning_parser.py``, run on CPU
from the 0.33.0 wheel; ``acceptance/vllm/parsers_oracle.py``), except where a comment says how
vLLM's differs and why the answer here is kept. Every case runs whole and streamed at 1, 3 and
random ids a chunk, in both ``parser_state`` modes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from helpers.family_cases import Case, case_named, check, tools_of
from helpers.parsers_oracle import Message

NS = "]<]minimax[>["
BLOCK, END_BLOCK = NS + "<tool_call>", NS + "</tool_call>"
PROMPT = "]~b]user\nWeather?[e~[\n]~b]ai\n"
THINK_PROMPT = PROMPT + "<mm:think>\n"
ENABLED = {"thinking_mode": "enabled"}


def invoke(name: str, body: str, quote: str = '"') -> str:
    return f"{NS}<invoke name={quote}{name}{quote}>{body}{NS}</invoke>"


def el(name: str, value: str) -> str:
    return f"{NS}<{name}>{value}{NS}</{name}>"


def block(*calls: str) -> str:
    return BLOCK + "\n" + "\n".join(calls) + "\n" + END_BLOCK


def tool(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    (one,) = tools_of(name, properties)
    return one


WEATHER_TOOL = tool(
    "get_weather",
    {"city": {"type": "string"}, "unit": {"type": "string"}, "days": {"type": "integer"}},
)
ECHO = {"type": "function", "function": {"name": "echo", "parameters": {"type": "object"}}}
TOOLS = [WEATHER_TOOL, tool("get_time", {}), ECHO]
ORDER = tool(
    "create_order",
    {
        "user_id": {"type": "integer"},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
            },
        },
        "express": {"type": "boolean"},
        "meta": {
            "type": "object",
            "properties": {
                "priority": {"type": "number"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "codes": {"type": "array", "items": {"type": "integer"}},
            },
        },
    },
)
SCALARS = {
    "i": ("integer", "42"),
    "i_ws": ("integer", "\n 12 \n"),
    "i_us": ("integer", "1_000"),
    "i_bad": ("integer", "abc"),
    "i_float": ("integer", "1.5"),
    "n": ("number", "2.50"),
    "n_whole": ("number", "3.0"),
    "n_exp": ("number", "1e3"),
    "n_inf": ("number", "1e400"),
    "b_true": ("boolean", "True"),
    "b_zero": ("boolean", "0"),
    "b_bad": ("boolean", "yes"),
    "nul": (["null", "string"], "NULL"),
    "nul_sp": (["null", "string"], " null"),
    "s_num": ("string", "123"),
    "s_ws": ("string", "  padded  "),
    "u": (["integer", "string"], "007"),
    "alias": ("int", "5"),
    "obj": ("object", '{"a": [1, 2]}'),
    "arr": ("array", '[1, "x"]'),
    "i_quoted": ("integer", '"5"'),
}
TYPES = tool(
    "set_values", {k: {"type": t} for k, (t, _) in SCALARS.items()} | {"e": {"enum": [1, 2]}}
)
SHAPES = tool(
    "shapes",
    {
        "grid": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
        "maybe": {"anyOf": [{"type": "null"}, {"type": "array", "items": {"type": "integer"}}]},
        "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
        "label": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "integer"}},
        "empty_s": {"type": "string"},
        "empty_o": {"type": "object"},
        "empty_a": {"type": "array", "items": {"type": "string"}},
        "empty_ws": {"type": "object"},
        "empty_i": {"type": "integer"},
    },
)
LABEL = tool("set_label", {"days": {"type": "string"}})

WEATHER = invoke("get_weather", "\n" + el("city", "Paris") + "\n" + el("days", "3") + "\n")
PARIS = ("get_weather", '{"city": "Paris", "days": 3}')
TIME = ("get_time", "{}")


def _m(label: str, text: str, expected: Message, **kw: Any) -> Case:
    kw.setdefault("tools", TOOLS)
    return Case(
        f"minimax_m3-{label}",
        kw.pop("fixture", "minimax-m3-derived"),
        kw.pop("reasoning", "minimax_m3"),
        kw.pop("tool", "minimax_m3"),
        kw.pop("prompt", PROMPT),
        text,
        expected,
        **kw,
    )


CASES = [
    _m(
        "reasoning-only",
        "<mm:think>Let me think.\nThe user wants weather.\n</mm:think>",
        Message("", "Let me think.\nThe user wants weather.\n", ()),
    ),
    _m(
        "content-only",
        "Hello there.\nHow can I help?",
        Message("Hello there.\nHow can I help?", "", ()),
    ),
    _m(
        "think-then-content",
        "<mm:think>Plan: answer.</mm:think>\n\nThe answer is 4.",
        Message("\n\nThe answer is 4.", "Plan: answer.", ()),
    ),
    # vLLM's streams end reasoning at the first content, so the later block is content there (or
    # loses its marker, three ids a chunk); its whole answer is kept.
    _m(
        "content-before-think",
        "Intro <mm:think>hidden</mm:think> outro",
        Message("Intro  outro", "hidden", ()),
    ),
    _m("stray-closer-at-start", "</mm:think>\nAnswer text.", Message("\nAnswer text.", "", ())),
    # vLLM's streams hold back the `<` that could begin `</mm:think>` and never send it.
    _m(
        "think-cut-in-a-marker",
        "<mm:think>Thinking about x <",
        Message("", "Thinking about x <", ()),
        finish="length",
    ),
    _m(
        "thinking-mode-enabled",
        "I should call the tool.\n</mm:think>\n" + block(WEATHER),
        Message("", "I should call the tool.\n", (PARIS,)),
        prompt=THINK_PROMPT,
        kwargs=ENABLED,
    ),
    _m(
        "thinking-mode-enabled-unclosed",
        "Still thinking, no end",
        Message("", "Still thinking, no end", ()),
        prompt=THINK_PROMPT,
        kwargs=ENABLED,
        finish="length",
    ),
    # vLLM's whole answer reads a `<mm:think>` anywhere as the reasoning's open, so the closed
    # reasoning becomes content; its streams give this answer.
    _m(
        "thinking-mode-enabled-marker-in-content",
        "r1</mm:think>See <mm:think> tag.",
        Message("See <mm:think> tag.", "r1", ()),
        prompt=THINK_PROMPT,
        kwargs=ENABLED,
    ),
    _m(
        "thinking-mode-disabled",
        "<mm:think>x</mm:think>Answer.",
        Message("Answer.", "x", ()),
        kwargs={"thinking_mode": "disabled"},
    ),
    _m("empty-think-block", "<mm:think></mm:think>Answer.", Message("Answer.", "", ())),
    _m(
        "thinking-mode-enabled-closes-at-once",
        "</mm:think>Answer.",
        Message("Answer.", "", ()),
        prompt=THINK_PROMPT,
        kwargs=ENABLED,
    ),
    # After a leading stray close everything is content; vLLM's stream of three ids a chunk,
    # whose first chunk holds the close and the block, makes `x` reasoning.
    _m(
        "stray-closer-then-think",
        "</mm:think><mm:think>x</mm:think>y",
        Message("<mm:think>x</mm:think>y", "", ()),
    ),
    # vLLM's whole answer ignores the prompt; its streams skip reasoning after a prompt that
    # closed it. The output's own markers decide here, as in the whole answer.
    _m(
        "prompt-closed-reasoning",
        "<mm:think>x</mm:think>Answer.",
        Message("Answer.", "x", ()),
        prompt=PROMPT + "<mm:think>\n</mm:think>\n",
    ),
    _m(
        "one-call",
        "<mm:think>Need the weather.</mm:think>\n" + block(WEATHER),
        Message("", "Need the weather.", (PARIS,)),
    ),
    _m(
        "content-then-call",
        "Let me check.\n" + block(WEATHER),
        Message("Let me check.\n", "", (PARIS,)),
    ),
    _m("two-calls", block(WEATHER, invoke("get_time", "")), Message("", "", (PARIS, TIME))),
    # Text after a block is dropped, and a call in a later block is a call.
    _m(
        "two-blocks-text-between",
        block(WEATHER) + "\nand also\n" + block(invoke("get_time", "\n")) + "\nDone.",
        Message("", "", (PARIS, TIME)),
    ),
    _m(
        "text-after-call",
        "Checking.\n" + block(WEATHER) + "\nI called it for you.",
        Message("Checking.\n", "", (PARIS,)),
    ),
    _m(
        "invoke-without-block",
        "Plain " + WEATHER + " text",
        Message("Plain " + WEATHER + " text", "", ()),
    ),
    _m(
        "name-quotes",
        block(
            invoke("get_weather", el("city", "Rome"), quote="'"), invoke("get_time", "", quote="")
        ),
        Message("", "", (("get_weather", '{"city": "Rome"}'), TIME)),
    ),
    _m(
        "nested-object-and-items",
        block(
            invoke(
                "create_order",
                "\n"
                + el("user_id", "42")
                + "\n"
                + el(
                    "items",
                    el("item", el("sku", "book-001") + el("qty", "2"))
                    + el("item", el("sku", "pen-7") + el("qty", "10")),
                )
                + "\n"
                + el("express", "true")
                + "\n"
                + el(
                    "meta",
                    "\n"
                    + el("priority", "2.5")
                    + "\n"
                    + el("tags", el("item", "red") + el("item", "42"))
                    + "\n"
                    + el("codes", el("item", "7") + el("item", "x"))
                    + "\n",
                )
                + "\n",
            )
        ),
        Message(
            "",
            "",
            (
                (
                    "create_order",
                    '{"user_id": 42, "items": [{"sku": "book-001", "qty": 2}, {"sku": "pen-7", '
                    '"qty": 10}], "express": true, "meta": {"priority": 2.5, "tags": ["red", '
                    '"42"], "codes": [7, "x"]}}',
                ),
            ),
        ),
        tools=[ORDER],
    ),
    _m(
        "array-without-schema",
        block(
            invoke(
                "echo", el("list", el("item", "a") + el("item", "b")) + el("one", el("item", "1"))
            )
        ),
        Message("", "", (("echo", '{"list": {"item": ["a", "b"]}, "one": {"item": "1"}}'),)),
    ),
    _m(
        "repeated-names",
        block(
            invoke(
                "shapes",
                "".join(el(k, v) for k, v in [("tags", "1"), ("tags", "2"), ("tags", "x")])
                + el("label", "a")
                + el("label", "b")
                + "".join(el("other", v) for v in "pqr"),
            )
        ),
        Message(
            "",
            "",
            (("shapes", '{"tags": [1, 2, "x"], "label": ["a", "b"], "other": ["p", "q", "r"]}'),),
        ),
        tools=[SHAPES],
    ),
    _m(
        "mixed-text",
        block(
            invoke(
                "echo",
                el("note", "Hello " + el("b", "bold") + " world")
                + el("clash", "hi " + el("$text", "x") + " there")
                + el("spaces", "\n  " + el("k", "v") + "\n  "),
            )
        ),
        Message(
            "",
            "",
            (
                (
                    "echo",
                    '{"note": {"b": "bold", "$text": "Hello  world"}, "clash": {"$text": "x", '
                    '"$$text": "hi  there"}, "spaces": {"k": "v"}}',
                ),
            ),
        ),
    ),
    _m(
        "empty-elements",
        block(
            invoke(
                "shapes",
                el("empty_s", "")
                + el("empty_o", "")
                + el("empty_a", "")
                + el("empty_ws", " \n ")
                + el("empty_i", "")
                + el("untyped", ""),
            )
        ),
        Message(
            "",
            "",
            (
                (
                    "shapes",
                    '{"empty_s": "", "empty_o": {}, "empty_a": [], "empty_ws": {}, "empty_i": "", '
                    '"untyped": ""}',
                ),
            ),
        ),
        tools=[SHAPES],
    ),
    _m(
        "typed-scalars",
        block(
            invoke("set_values", "".join(el(k, v) for k, (_, v) in SCALARS.items()) + el("e", "2"))
        ),
        Message(
            "",
            "",
            (
                (
                    "set_values",
                    '{"i": 42, "i_ws": 12, "i_us": 1000, "i_bad": "abc", "i_float": 1.5, '
                    '"n": 2.5, "n_whole": 3, "n_exp": 1000, "n_inf": "1e400", "b_true": true, '
                    '"b_zero": false, "b_bad": "yes", "nul": null, "nul_sp": " null", '
                    '"s_num": "123", "s_ws": "  padded  ", "u": 7, "alias": 5, '
                    '"obj": {"a": [1, 2]}, "arr": [1, "x"], "i_quoted": 5, "e": 2}',
                ),
            ),
        ),
        tools=[TYPES],
    ),
    _m(
        "container-schemas",
        block(
            invoke(
                "shapes",
                el(
                    "grid",
                    el("item", el("item", "1") + el("item", "2")) + el("item", el("item", "3")),
                )
                + el("maybe", el("item", "4") + el("item", "5"))
                + el("counts", el("a", "1") + el("b", "two"))
                + el("label", el("k", "v")),
            )
        ),
        Message(
            "",
            "",
            (
                (
                    "shapes",
                    '{"grid": [[1, 2], [3]], "maybe": [4, 5], "counts": {"a": 1, "b": "two"}, '
                    '"label": {"k": "v"}}',
                ),
            ),
        ),
        tools=[SHAPES],
    ),
    _m(
        "unicode-and-escapes",
        block(
            invoke(
                "get_weather",
                el("city", 'Zürich "Q" \\ back\ttab & a<b>c 東京 🌸') + el("unit", "line1\nline2"),
            )
        ),
        Message(
            "",
            "",
            (
                (
                    "get_weather",
                    '{"city": "Zürich \\"Q\\" \\\\ back\\ttab & a<b>c 東京 🌸", '
                    '"unit": "line1\\nline2"}',
                ),
            ),
        ),
    ),
    # A malformed element, or text between elements, ends the arguments there.
    _m(
        "malformed-element-stops",
        block(
            invoke(
                "get_weather",
                el("city", "Oslo") + NS + "<unit>C" + NS + "</units>" + el("days", "2"),
            )
        ),
        Message("", "", (("get_weather", '{"city": "Oslo"}'),)),
    ),
    _m(
        "text-between-parameters",
        block(invoke("get_weather", el("city", "Paris") + " junk " + el("days", "2"))),
        Message("", "", (("get_weather", '{"city": "Paris"}'),)),
    ),
    # vLLM types a call by the schema of the first call whose arguments' text is the same: `echo`,
    # which declares nothing, gets `{"days": 3}` there. Each call is typed by its own tool here.
    _m(
        "same-arguments-another-tool",
        block(
            invoke("get_weather", el("days", "3")),
            invoke("echo", el("days", "3")),
            invoke("set_label", el("days", "3")),
        ),
        Message(
            "",
            "",
            (
                ("get_weather", '{"days": 3}'),
                ("echo", '{"days": "3"}'),
                ("set_label", '{"days": "3"}'),
            ),
        ),
        tools=[WEATHER_TOOL, ECHO, LABEL],
    ),
    _m(
        "call-cut-in-its-arguments",
        "Sure.\n"
        + BLOCK
        + "\n"
        + NS
        + '<invoke name="get_weather">'
        + el("city", "Paris")
        + NS
        + "<days>3",
        Message("Sure.\n", "", (("get_weather", '{"city": "Paris"}'),)),
        finish="length",
    ),
    # vLLM sends a call whose name the output cut (`get_wea`, `{}`); a name is whole here only
    # once its `>` came, so no call is sent.
    _m(
        "call-cut-in-its-name",
        BLOCK + "\n" + NS + '<invoke name="get_wea',
        Message("", "", ()),
        finish="length",
    ),
    # vLLM's whole answer gives the raw text where its reasoning parser is named and no call was
    # found (`Hi ` and the block marker); its streams drop the block, as here.
    _m("block-cut-before-a-call", "Hi " + BLOCK + "\n", Message("Hi ", "", ()), finish="length"),
    # Beside the reasoning parser a block stays content where calls are off; the tool parser
    # alone drops it (and all after it), as vLLM does on each path.
    _m(
        "tool-choice-none",
        "Let me check.\n" + block(WEATHER) + "\nafter",
        Message("Let me check.\n" + block(WEATHER) + "\nafter", "", ()),
        request={"tool_choice": "none"},
    ),
    _m(
        "tool-choice-none-tool-parser-alone",
        "Let me check.\n" + block(WEATHER) + "\nafter",
        Message("Let me check.\n", "", ()),
        reasoning=None,
        fixture="qwen3",
        request={"tool_choice": "none"},
    ),
    _m(
        "tool-parser-alone",
        "<mm:think>x</mm:think>Ok.\n" + block(WEATHER, invoke("get_time", "")) + "\ntail",
        Message("<mm:think>x</mm:think>Ok.\n", "", (PARIS, TIME)),
        reasoning=None,
        fixture="qwen3",
    ),
    _m(
        "tool-parser-alone-typed-nested",
        block(
            invoke(
                "create_order",
                el("user_id", "7")
                + el("items", el("item", el("sku", "a") + el("qty", "1")))
                + el("express", "0")
                + el("meta", el("priority", "1.0")),
            )
        ),
        Message(
            "",
            "",
            (
                (
                    "create_order",
                    '{"user_id": 7, "items": [{"sku": "a", "qty": 1}], "express": false, '
                    '"meta": {"priority": 1}}',
                ),
            ),
        ),
        reasoning=None,
        fixture="qwen3",
        tools=[ORDER],
    ),
    _m(
        "call-inside-reasoning",
        "<mm:think>Maybe " + block(WEATHER) + " no.</mm:think>Final.",
        Message("Final.", "Maybe " + block(WEATHER) + " no.", ()),
    ),
    _m(
        "second-think-block",
        "<mm:think>a</mm:think>b<mm:think>c</mm:think>d",
        Message("b<mm:think>c</mm:think>d", "a", ()),
    ),
    # vLLM's streams send the name unstripped; its whole answer strips it, as here.
    _m(
        "name-with-spaces",
        block(invoke(" get_weather ", el("days", "4"))),
        Message("", "", (("get_weather", '{"days": 4}'),)),
    ),
    _m(
        "reasoning-parser-alone",
        "<mm:think>r</mm:think>Ok.\n" + block(WEATHER),
        Message("Ok.\n" + block(WEATHER), "r", ()),
        tool=None,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)


def test_parallel_tool_calls() -> None:
    case = case_named(CASES, "minimax_m3-two-calls")
    check(replace(case, expected=Message("", "", (PARIS,))), "resumable", parallel_tool_calls=False)
