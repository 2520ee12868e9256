"""MiMo's built-in template under vLLM's parser name ``mimo`` (reasoning and tools).

- Qwen3's ``<think>`` reasoning, on unless ``enable_thinking`` is off; a call's
  ``<tool_call>`` ends it;
- calls are Qwen3-Coder's ``<tool_call><function=NAME><parameter=KEY>VALUE</parameter>...``,
  each value as written (its newlines kept, where Qwen3-Coder drops one at each end), then
  typed by the tool's schema as vLLM types them.

Each case's expected message is vLLM 0.33.0's answer for the same text, names, prompt and
tokenizer fixture (``vllm/parser/mimo.py`` through its engine adapters, run on CPU from the
0.33.0 wheel; ``acceptance/vllm/parsers_oracle.py``), whole and streamed at 1 and 3 ids a chunk,
except where a comment says how vLLM's differs and why the answer here is kept. Every case runs
whole and streamed at 1, 3 and random ids a chunk, in both ``parser_state`` modes.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.family_cases import Case, check
from helpers.parsers_oracle import Message

HEAD = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
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
                    "l": {"type": "array"},
                },
            },
        },
    }
]


def _m(label: str, text: str, expected: Message, **kw: Any) -> Case:
    reasoning = kw.pop("reasoning", "mimo")
    tool = kw.pop("tool", "mimo")
    return Case(f"mimo-{label}", "qwen3", reasoning, tool, HEAD, text, expected, **kw)


def _call(name: str, **params: str) -> str:
    body = "".join(f"<parameter={k}>{v}</parameter>" for k, v in params.items())
    return f"<tool_call><function={name}>{body}</function></tool_call>"


CASES = [
    _m("plain", "<think>Plan it.</think>It is sunny.", Message("It is sunny.", "Plan it.", ())),
    _m("no-think", "Plan it.</think>It is sunny.", Message("It is sunny.", "Plan it.", ())),
    _m(
        "thinking-off",
        "It is sunny.",
        Message("It is sunny.", "", ()),
        kwargs={"enable_thinking": False},
    ),
    _m(
        "call",
        "<think>Plan.</think>" + _call("get_weather", city="Paris"),
        Message("", "Plan.", (("get_weather", '{"city": "Paris"}'),)),
    ),
    _m(
        "values-as-written",
        "</think>" + _call("write_file", path="\na.txt\n", content="line 1\nline 2"),
        Message("", "", (("write_file", '{"path": "\\na.txt\\n", "content": "line 1\\nline 2"}'),)),
    ),
    _m(
        "typed-by-schema",
        "</think>" + _call("calc", n="42", ok="true", l="[1, 2]"),
        Message("", "", (("calc", '{"n": 42, "ok": true, "l": [1, 2]}'),)),
        tools=CALC,
    ),
    _m(
        "two-calls",
        "</think>" + _call("get_weather", city="Paris") + "\n" + _call("get_time"),
        Message("", "", (("get_weather", '{"city": "Paris"}'), TIME)),
    ),
    _m(
        "call-ends-reasoning",
        "Plan." + _call("get_time"),
        Message("", "Plan.", (TIME,)),
    ),
    # vLLM's whole answer strips the content that comes with a call; its streams keep it as
    # written, as here.
    _m(
        "text-then-call",
        "</think>Let me check. " + _call("get_time"),
        Message("Let me check. ", "", (TIME,)),
    ),
    # A string value the output cuts ends there (its text is sent as it comes). vLLM's whole
    # answer drops it (`{}`); its streams send '{"city": "Pa', which is not JSON.
    _m(
        "cut-by-length",
        "</think><tool_call><function=get_weather><parameter=city>Pa",
        Message("", "", (("get_weather", '{"city": "Pa"}'),)),
        finish="length",
    ),
    _m(
        "tool-parser-only",
        "<think>Plan.</think>" + _call("get_time"),
        Message("<think>Plan.</think>", "", (TIME,)),
        reasoning=None,
    ),
    _m(
        "reasoning-parser-only",
        "<think>Plan.</think>Sunny.",
        Message("Sunny.", "Plan.", ()),
        tool=None,
    ),
    # A parameter left open ends where the next begins, as vLLM 0.33.0 reads it (whole and
    # streamed). One left open before `</function>` ends there (a string value's text is sent
    # as it comes); vLLM's whole answer drops it (`{}`), its streams send it open, not JSON.
    _m(
        "unclosed-before-the-next",
        "<think>r</think><tool_call><function=get_weather><parameter=city>Paris"
        "<parameter=unit>c</parameter></function></tool_call>",
        Message("", "r", (("get_weather", '{"city": "Paris", "unit": "c"}'),)),
    ),
    _m(
        "unclosed-before-function",
        "<think>r</think><tool_call><function=get_weather><parameter=city>Paris"
        "</function></tool_call>",
        Message("", "r", (("get_weather", '{"city": "Paris"}'),)),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)
