"""Step-3.5's built-in template under vLLM's parser name ``step3p5`` (reasoning and tools).

- the output starts in ``<think>`` reasoning (the prompt opens it), whatever
  ``enable_thinking`` says; ``</think>`` or a call's ``<tool_call>`` ends it;
- calls are Qwen3-Coder's ``<tool_call><function=NAME><parameter=KEY>VALUE</parameter>...``,
  values typed by the tool's schema as vLLM types them;
- whitespace as vLLM keeps it: reasoning without its trailing whitespace (the model closes it
  with ``\\n</think>\\n``), content as written.

Each case's expected message is vLLM 0.33.0's answer for the same text, names, prompt and
tokenizer fixture (``vllm/parser/step3p5.py`` through its engine adapters, run on CPU from the
0.33.0 wheel; ``acceptance/vllm/parsers_oracle.py``), whole and streamed at 1 and 3 ids a chunk,
except where a comment says how vLLM's differs and why the answer here is kept. Every case runs
whole and streamed at 1, 3 and random ids a chunk, in both ``parser_state`` modes.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.family_cases import Case, check
from helpers.parsers_oracle import Message

HEAD = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<think>\n"
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
                    "zip": {"type": "string"},
                    "l": {"type": "array"},
                },
            },
        },
    }
]


def _s(label: str, text: str, expected: Message, **kw: Any) -> Case:
    reasoning = kw.pop("reasoning", "step3p5")
    tool = kw.pop("tool", "step3p5")
    return Case(f"step3p5-{label}", "qwen3", reasoning, tool, HEAD, text, expected, **kw)


def _call(name: str, **params: str) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


CASES = [
    _s("plain", "Plan it.\n</think>\n\nIt is sunny.", Message("\n\nIt is sunny.", "Plan it.", ())),
    # enable_thinking is ignored: the output still starts in reasoning.
    _s(
        "thinking-off",
        "Plan it.\n</think>\n\nIt is sunny.",
        Message("\n\nIt is sunny.", "Plan it.", ()),
        kwargs={"enable_thinking": False},
    ),
    _s("no-close", "The answer is 42.", Message("", "The answer is 42.", ())),
    _s(
        "call",
        "Plan.\n</think>\n\n" + _call("get_weather", city="Paris"),
        Message("", "Plan.", (PARIS,)),
    ),
    # vLLM's whole answer strips the content that comes with a call; its streams keep it as
    # written, as here.
    _s(
        "text-then-call",
        "Plan.\n</think>\n\nLet me check.\n" + _call("get_weather", city="Paris"),
        Message("\n\nLet me check.\n", "Plan.", (PARIS,)),
    ),
    _s(
        "call-ends-reasoning",
        "Plan.\n" + _call("get_time"),
        Message("", "Plan.", (TIME,)),
    ),
    _s(
        "two-calls",
        "Two.\n</think>\n\n" + _call("get_weather", city="Paris") + "\n" + _call("get_time"),
        Message("", "Two.", (PARIS, TIME)),
    ),
    _s(
        "typed-by-schema",
        "</think>\n" + _call("calc", n="42", ok="true", f="1.5", zip="75001", l="[1, 2]"),
        Message(
            "", "", (("calc", '{"n": 42, "ok": true, "f": 1.5, "zip": "75001", "l": [1, 2]}'),)
        ),
        tools=CALC,
    ),
    # A string value the output cuts ends there (its text is sent as it comes). vLLM's whole
    # answer drops it (`{}`); its streams send '{"city": "Pa', which is not JSON.
    _s(
        "cut-by-length",
        "</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nPa",
        Message("", "", (("get_weather", '{"city": "Pa"}'),)),
        finish="length",
    ),
    _s("reasoning-cut", "Plan", Message("", "Plan", ()), finish="length"),
    # A tool parser alone: the reasoning is content. vLLM's whole answer strips the content that
    # comes with a call; its streams keep it, as here.
    _s(
        "tool-parser-only",
        "Plan.\n</think>\n\n" + _call("get_time"),
        Message("Plan.\n</think>\n\n", "", (TIME,)),
        reasoning=None,
    ),
    _s(
        "reasoning-parser-only",
        "Plan.\n</think>\n\nSunny.",
        Message("\n\nSunny.", "Plan.", ()),
        tool=None,
    ),
    _s(
        "multiline-value",
        "</think>\n" + _call("write_file", path="a.txt", content="line 1\nline 2"),
        Message("", "", (("write_file", '{"path": "a.txt", "content": "line 1\\nline 2"}'),)),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)
