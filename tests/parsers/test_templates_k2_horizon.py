"""K2 Horizon's built-in template under vLLM's parser name ``k2_horizon`` (reasoning and tools).

K2 Horizon reasons between ``<ifm|think>`` and ``</ifm|think>`` (``<ifm|think_fast>`` at the
request's ``reasoning_effort`` ``medium``, ``<ifm|think_faster>`` at ``low``; another effort is a
400), from where its prompt leaves it, and writes one call block, ``<ifm|tool_calls>`` …
``</ifm|tool_calls>``, that also ends reasoning. The block is read whole when it closes: all of
its calls (``<ifm|tool_call>NAME`` with ``<ifm|arg_key>``/``<ifm|arg_value>`` pairs, with
``<ifm|arg_type>`` at ``chat_template_kwargs.tool_call_format`` ``xml_typed``, or a JSON object at
``json``; another format is a 400), or, where one of them is malformed or names another tool, its
text as content; later blocks are text. Values are typed by the tool's schema.

The markers are special tokens of ``k2-horizon-derived`` (Qwen3's vocabulary with K2 Horizon's
turn, think, call and argument markers added). Each case's expected message is vLLM 0.33.0's whole
answer for the same text, names, prompt and request (``vllm/tool_parsers/k2_horizon_tool_parser.py``
and ``vllm/reasoning/k2_horizon_reasoning_parser.py``, run on CPU from the 0.33.0 wheel;
``acceptance/vllm/parsers_oracle.py``), except where a comment says how vLLM's differs and why the
answer here is kept. Every case runs whole and streamed at 1, 3 and random ids a chunk, in both
``parser_state`` modes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from helpers.derender_util import CHAT, gen_choice, gen_chunk, post
from helpers.family_cases import CALC, Case, case_named, check, encode
from helpers.parsers_oracle import SERVED, Message, chat_request
from helpers.parsers_util import derenderer_class, whole_body
from helpers.stream_util import load_detokenizer

HEAD = "<|ifm|im_start|>user\nWeather?<|ifm|im_end|>\n<|ifm|im_start|>assistant\n"
HIGH, MEDIUM, LOW = (
    HEAD + "<ifm|think>\n",
    HEAD + "<ifm|think_fast>\n",
    HEAD + "<ifm|think_faster>\n",
)
END = "</ifm|think>"
JSON = {"tool_call_format": "json"}
TYPED = {"tool_call_format": "xml_typed"}


def arg(key: str, value: str, kind: str | None = None) -> str:
    t = f"<ifm|arg_type>{kind}</ifm|arg_type>\n" if kind is not None else ""
    return f"<ifm|arg_key>{key}</ifm|arg_key>\n{t}<ifm|arg_value>{value}</ifm|arg_value>\n"


def call(name: str, *args: str) -> str:
    return f"<ifm|tool_call>{name}\n" + "".join(args) + "</ifm|tool_call>\n"


def block(*calls: str) -> str:
    return "<ifm|tool_calls>\n" + "".join(calls) + "</ifm|tool_calls>"


WEATHER = call("get_weather", arg("city", "Paris"))
PARIS = ("get_weather", '{"city": "Paris"}')


def _k(label: str, text: str, expected: Message, **kw: Any) -> Case:
    return Case(
        f"k2_horizon-{label}",
        "k2-horizon-derived",
        kw.pop("reasoning", "k2_horizon"),
        kw.pop("tool", "k2_horizon"),
        kw.pop("prompt", HIGH),
        text,
        expected,
        **kw,
    )


CASES = [
    _k(
        "reasoning-then-content",
        "Plan the answer." + END + "\n\nIt is sunny.",
        Message("\n\nIt is sunny.", "Plan the answer.", ()),
    ),
    # vLLM's whole answer makes reasoning that never closed content (`reasoning: ""`); the
    # prompt opened it, as its streams read it.
    _k(
        "reasoning-cut",
        "Still weighing the options",
        Message("", "Still weighing the options", ()),
        finish="length",
    ),
    _k("reasoning-only", "Nothing to add." + END, Message("", "Nothing to add.", ())),
    _k(
        "content-tool-parser-alone",
        "It is sunny.\n",
        Message("It is sunny.\n", "", ()),
        reasoning=None,
    ),
    _k("one-call", "Need weather." + END + block(WEATHER), Message("", "Need weather.", (PARIS,))),
    _k(
        "two-calls-text-around",
        "Two lookups."
        + END
        + "Checking both.\n"
        + block(
            WEATHER,
            call("search", arg("query", "rust"), arg("filters", '{"lang": ["en"], "n": 2}')),
        )
        + "\nDone.",
        Message(
            "Checking both.\n\nDone.",
            "Two lookups.",
            (PARIS, ("search", '{"query": "rust", "filters": {"lang": ["en"], "n": 2}}')),
        ),
    ),
    _k(
        "a-call-ends-reasoning",
        "Need weather." + block(WEATHER) + "\nAfter.",
        Message("\nAfter.", "Need weather.", (PARIS,)),
    ),
    _k(
        "json-nested",
        "Plan."
        + END
        + "<ifm|tool_calls>\n<ifm|tool_call>"
        + '{"name": "search", "arguments": {"query": "rust", '
        + '"filters": {"deep": {"n": 2, "ok": true}}}}'
        + "</ifm|tool_call>\n</ifm|tool_calls>",
        Message(
            "",
            "Plan.",
            (("search", '{"query": "rust", "filters": {"deep": {"n": 2, "ok": true}}}'),),
        ),
        kwargs=JSON,
    ),
    _k(
        "json-typing",
        "Plan."
        + END
        + "<ifm|tool_calls><ifm|tool_call>"
        + '{"name": "calc", "arguments": {"i": "5", "n": "2.50", "b": "true", "s": 7, '
        + '"o": "{\\"a\\": 1}", "l": [1, "x"], "e": "2", "extra": [1]}}'
        + "</ifm|tool_call></ifm|tool_calls>",
        Message(
            "",
            "Plan.",
            (
                (
                    "calc",
                    '{"i": 5, "n": 2.5, "b": true, "s": "7", "o": {"a": 1}, "l": [1, "x"], "e": 2, '
                    '"extra": [1]}',
                ),
            ),
        ),
        kwargs=JSON,
        tools=CALC,
    ),
    _k(
        "xml-typing",
        "Plan."
        + END
        + block(
            call(
                "calc",
                arg("i", " 5 "),
                arg("n", "2.5"),
                arg("b", "True"),
                arg("l", "[1, 2]"),
                arg("o", '{"a": {"b": [1]}}'),
                arg("u", "null"),
                arg("s", "  padded  "),
                arg("extra", " 42 "),
            )
        ),
        Message(
            "",
            "Plan.",
            (
                (
                    "calc",
                    '{"i": 5, "n": 2.5, "b": true, "l": [1, 2], "o": {"a": {"b": [1]}}, "u": null, '
                    '"s": "  padded  ", "extra": " 42 "}',
                ),
            ),
        ),
        tools=CALC,
    ),
    _k(
        "xml-typed",
        "Plan."
        + END
        + block(
            call(
                "calc",
                arg("i", "7", "integer"),
                arg("u", "null", "string"),
                arg("s", "12", "string"),
                arg("free", " raw text ", "any"),
                arg("arr", '["a", "b"]', "array[string]"),
                arg("num", "3", "number"),
            )
        ),
        Message(
            "",
            "Plan.",
            (
                (
                    "calc",
                    '{"i": 7, "u": "null", "s": "12", "free": " raw text ", "arr": ["a", "b"], '
                    '"num": 3}',
                ),
            ),
        ),
        kwargs=TYPED,
        tools=CALC,
    ),
    # A block with a malformed call, or a call of an unknown tool, is text, all of it.
    _k(
        "xml-typed-without-a-type",
        "Plan." + END + block(WEATHER),
        Message(block(WEATHER), "Plan.", ()),
        kwargs=TYPED,
    ),
    _k(
        "xml-with-a-type",
        "Plan." + END + block(call("get_weather", arg("city", "Paris", "string"))),
        Message(block(call("get_weather", arg("city", "Paris", "string"))), "Plan.", ()),
    ),
    _k(
        "an-unknown-tool",
        "Plan." + END + block(call("get_stock", arg("sym", "X"))),
        Message(block(call("get_stock", arg("sym", "X"))), "Plan.", ()),
    ),
    _k(
        "text-between-calls",
        "Plan." + END + block(WEATHER + "stray text\n" + call("get_time")),
        Message(block(WEATHER + "stray text\n" + call("get_time")), "Plan.", ()),
    ),
    _k(
        "unicode-and-escapes",
        "Idée."
        + END
        + "Voilà 🌦️ "
        + block(
            call(
                "write_file", arg("path", "dir/東京.txt"), arg("content", 'He said "hi"\n\tb\\s é')
            )
        ),
        Message(
            "Voilà 🌦️ ",
            "Idée.",
            (
                (
                    "write_file",
                    '{"path": "dir/東京.txt", "content": "He said \\"hi\\"\\n\\tb\\\\s é"}',
                ),
            ),
        ),
    ),
    _k(
        "a-block-cut",
        "Plan."
        + END
        + "Looking.<ifm|tool_calls>\n<ifm|tool_call>get_weather\n<ifm|arg_key>city</ifm|arg_key>\n"
        + "<ifm|arg_value>Par",
        Message(
            "Looking.<ifm|tool_calls>\n<ifm|tool_call>get_weather\n<ifm|arg_key>city</ifm|arg_key>\n"
            "<ifm|arg_value>Par",
            "Plan.",
            (),
        ),
        finish="length",
    ),
    _k(
        "tool-choice-none",
        "Plan." + END + "Sure: " + block(WEATHER),
        Message("Sure: " + block(WEATHER), "Plan.", ()),
        request={"tool_choice": "none"},
    ),
    _k(
        "reasoning-parser-alone",
        "Plan." + END + "Sure. " + block(WEATHER),
        Message("Sure. " + block(WEATHER), "Plan.", ()),
        tool=None,
    ),
    _k(
        "reasoning-parser-alone-the-block-ends-reasoning",
        "Plan. " + block(WEATHER),
        Message(block(WEATHER), "Plan. ", ()),
        tool=None,
    ),
    # Another effort's markers are text.
    _k(
        "effort-medium",
        "Quick plan.</ifm|think_fast>Answer: <ifm|think>x" + END,
        Message("Answer: <ifm|think>x" + END, "Quick plan.", ()),
        prompt=MEDIUM,
        kwargs={"reasoning_effort": "medium"},
    ),
    _k(
        "effort-low-from-the-request",
        "Tiny plan.</ifm|think_faster>" + block(WEATHER),
        Message("", "Tiny plan.", (PARIS,)),
        prompt=LOW,
        request={"reasoning_effort": "low"},
    ),
    # vLLM's whole answer ends reasoning at a `</ifm|think>` anywhere, the block before it
    # reasoning text; its streams end it at the block, as here.
    _k(
        "a-call-then-the-end-marker",
        "Plan." + block(WEATHER) + "More thought." + END + "Answer.",
        Message("More thought." + END + "Answer.", "Plan.", (PARIS,)),
    ),
    _k(
        "a-second-block-is-text",
        "Plan." + END + block(WEATHER) + "\n" + block(call("get_time")),
        Message("\n" + block(call("get_time")), "Plan.", (PARIS,)),
    ),
    _k(
        "whitespace-around-a-call",
        "Plan." + END + "\n\n" + block(call("get_time")) + "\n",
        Message("", "Plan.", (("get_time", "{}"),)),
    ),
    _k(
        "named-choice-another-tool",
        "Plan." + END + block(WEATHER),
        Message(block(WEATHER), "Plan.", ()),
        request={"tool_choice": {"type": "function", "function": {"name": "search"}}},
    ),
    _k(
        "named-choice",
        "Plan." + END + block(WEATHER),
        Message("", "Plan.", (PARIS,)),
        request={"tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
    ),
    _k(
        "json-not-json",
        "Plan."
        + END
        + '<ifm|tool_calls><ifm|tool_call>{"name": "get_time", </ifm|tool_call></ifm|tool_calls>',
        Message(
            '<ifm|tool_calls><ifm|tool_call>{"name": "get_time", </ifm|tool_call></ifm|tool_calls>',
            "Plan.",
            (),
        ),
        kwargs=JSON,
    ),
    _k(
        "the-output-opens-reasoning",
        "<ifm|think>Plan." + END + "Hi.",
        Message("Hi.", "Plan.", ()),
        prompt=HEAD,
    ),
    # An earlier turn's close in the prompt starts the output in content (vLLM's whole answer
    # gets there with `reasoning: ""`).
    _k(
        "the-prompt-closed-reasoning-in-an-earlier-turn",
        "It is sunny.",
        Message("It is sunny.", "", ()),
        prompt=HEAD[: -len("<|ifm|im_start|>assistant\n")]
        + "<|ifm|im_start|>assistant\n<ifm|think>\nx"
        + END
        + "Hi<|ifm|im_end|>\n<|ifm|im_start|>user\nAnd?<|ifm|im_end|>\n<|ifm|im_start|>assistant\n",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)


def test_parallel_tool_calls() -> None:
    case = replace(
        case_named(CASES, "k2_horizon-one-call"),
        text="Plan." + END + block(WEATHER, call("get_time")),
    )
    check(
        replace(case, expected=Message("", "Plan.", (PARIS,))),
        "resumable",
        parallel_tool_calls=False,
    )


@pytest.mark.parametrize(
    ("kwargs", "param", "message"),
    [
        (
            {"reasoning_effort": "max"},
            "reasoning_effort",
            "Unsupported reasoning_effort 'max'. Supported values: high, medium, low.",
        ),
        (
            {"tool_call_format": "yaml"},
            "chat_template_kwargs",
            "Unsupported tool_call_format 'yaml'. Supported values: json, xml, xml_typed.",
        ),
    ],
)
def test_an_unsupported_effort_or_format_is_the_requests_error(
    kwargs: dict[str, str], param: str, message: str
) -> None:
    r = derenderer_class()(
        load_detokenizer("k2-horizon-derived"),
        served_model_name=SERVED,
        reasoning_parser="k2_horizon",
        tool_parser="k2_horizon",
    )
    request = chat_request(chat_template_kwargs=kwargs)
    prompt, gen = encode("k2-horizon-derived", HIGH), encode("k2-horizon-derived", "Plan." + END)
    # vLLM's message, with the field at fault (vLLM's `param` is null).
    chunk = {
        "stream": True,
        "generate_chunk": gen_chunk([gen_choice(gen, finish_reason="stop")]),
        "chat_request": request,
        "prompt_token_ids": prompt,
    }
    for body in (whole_body(prompt, gen, request, "stop"), chunk):
        status, answer = post(r, CHAT, body)
        error = answer["error"]
        assert (status, error["message"], error["param"]) == (400, message, param)
