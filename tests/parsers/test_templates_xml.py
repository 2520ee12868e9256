"""Built-in templates of two XML-call families under vLLM's parser names.

- ``minimax_m2`` (reasoning and tools): the output starts in reasoning until ``</think>`` (the
  prompt opens ``<think>``) or a call block; ``<minimax:tool_call>`` blocks of
  ``<invoke name="NAME">`` calls (a bare ``<invoke`` in content too) with
  ``<parameter name="KEY">VALUE</parameter>`` arguments, each value as written, then typed by
  the tool's schema. ``minimax_m2_append_think`` (reasoning): no reasoning, the output is
  content after a ``<think>``.
- ``seed_oss`` (reasoning and tools): Qwen3-Coder's format with Seed-OSS's markers:
  ``<seed:think>`` reasoning (on unless ``enable_thinking`` is off), ``<seed:tool_call>``
  blocks of ``<function=NAME>`` calls (a bare ``<function=`` in content too) with
  ``<parameter=KEY>`` values, one newline each side of a value dropped, then typed by the
  tool's schema.
- under both names only the block's marker ends reasoning (a bare call there is reasoning
  text), also with a reasoning parser alone (the block is then content); text is kept as
  written, reasoning without (``minimax_m2``) or with (``seed_oss``) its trailing whitespace.

Each case's expected message is vLLM 0.33.0's whole answer for the same text, names, prompt
and tokenizer fixture (``vllm/parser/minimax_m2.py`` and ``vllm/parser/seed_oss.py`` over
``vllm/parser/qwen3.py``, through their engine adapters, run on CPU from the 0.33.0 wheel;
``acceptance/vllm/parsers_oracle.py``), except where a comment says how vLLM's differs and why
the answer here is kept. Every case runs whole and streamed at 1, 3 and random ids a chunk, in
both ``parser_state`` modes.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.family_cases import Case, check
from helpers.parsers_oracle import Message

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
                    "s": {"type": "string"},
                    "o": {"type": "object"},
                    "l": {"type": "array"},
                },
            },
        },
    }
]
TYPED = '{"n": 42, "ok": true, "f": 1.5, "s": "7", "o": {"a": 1}, "l": [1, "x"]}'

# --- MiniMax-M2 ------------------------------------------------------------------------------

MINIMAX_HEAD = "]~b]user\nWeather?[e~[\n]~b]ai\n<think>\n"


def _m(label: str, text: str, expected: Message, **kw: Any) -> Case:
    reasoning = kw.pop("reasoning", "minimax_m2")
    tool = kw.pop("tool", "minimax_m2")
    head = kw.pop("head", MINIMAX_HEAD)
    return Case(
        f"minimax_m2-{label}", "minimax-m2-derived", reasoning, tool, head, text, expected, **kw
    )


def _invoke(name: str, **params: str) -> str:
    body = "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in params.items())
    return f'<invoke name="{name}">\n{body}</invoke>\n'


def _block(*invokes: str) -> str:
    return "<minimax:tool_call>\n" + "".join(invokes) + "</minimax:tool_call>"


MINIMAX = [
    _m("plain", "Plan.\n</think>\n\nIt is sunny.", Message("\n\nIt is sunny.", "Plan.", ())),
    _m("no-think-end", "It is sunny.", Message("", "It is sunny.", ())),
    _m(
        "one-call",
        "Plan.\n</think>\n\n" + _block(_invoke("get_weather", city="Paris")),
        Message("", "Plan.", (PARIS,)),
    ),
    _m(
        "two-calls",
        "Two.</think>\n" + _block(_invoke("get_weather", city="Paris"), _invoke("get_time")),
        Message("", "Two.", (PARIS, TIME)),
    ),
    _m(
        "two-blocks",
        "Two.</think>"
        + _block(_invoke("get_weather", city="Paris"))
        + "\n"
        + _block(_invoke("get_time")),
        Message("", "Two.", (PARIS, TIME)),
    ),
    # vLLM's whole answer strips the content that comes with a call ("Let me check."); its
    # streams keep it as written, as here.
    _m(
        "text-then-call",
        "Plan.</think>Let me check.\n" + _block(_invoke("get_weather", city="Paris", unit="c")),
        Message("Let me check.\n", "Plan.", (("get_weather", '{"city": "Paris", "unit": "c"}'),)),
    ),
    # vLLM's whole answer drops the text after the call; its stream at 1 id a chunk gives it as
    # here (at 3, with the newline after the block).
    _m(
        "text-after-call",
        "Plan.</think>" + _block(_invoke("get_time")) + "\nDone.",
        Message("Done.", "Plan.", (TIME,)),
    ),
    _m(
        "typed",
        "Plan.</think>"
        + _block(_invoke("calc", n="42", ok="true", f="1.5", s="7", o='{"a": 1}', l='[1, "x"]')),
        Message("", "Plan.", (("calc", TYPED),)),
        tools=CALC,
    ),
    _m(
        "values-as-written",
        "Plan.</think>" + _block(_invoke("write_file", path=" a.txt ", content='\nx = "1"\n')),
        Message(
            "", "Plan.", (("write_file", '{"path": " a.txt ", "content": "\\nx = \\"1\\"\\n"}'),)
        ),
    ),
    _m(
        "quotes",
        "Plan.</think><minimax:tool_call><invoke name='get_weather'>"
        "<parameter name='city'>Paris</parameter></invoke></minimax:tool_call>",
        Message("", "Plan.", (PARIS,)),
    ),
    _m(
        "call-ends-reasoning",
        "Plan.\n" + _block(_invoke("get_time")),
        Message("", "Plan.", (TIME,)),
    ),
    # vLLM's streams send the cut value as far as it came, '{"city": "Pa' (not JSON); its whole
    # answer drops it (`{}`). Here the cut ends it: '{"city": "Pa"}'.
    _m(
        "cut-in-value",
        'Plan.</think><minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Pa',
        Message("", "Plan.", (("get_weather", '{"city": "Pa"}'),)),
        finish="length",
    ),
    _m(
        "unclosed-invoke",
        'Plan.</think><minimax:tool_call>\n<invoke name="get_weather">\n'
        '<parameter name="city">Paris</parameter>\n',
        Message("", "Plan.", (PARIS,)),
    ),
    # vLLM drops a call to a tool the request did not offer; it is kept here, its value a
    # string (no schema).
    _m(
        "unknown-tool",
        "Plan.</think>" + _block(_invoke("nope", x="1")),
        Message("", "Plan.", (("nope", '{"x": "1"}'),)),
    ),
    _m(
        "whitespace",
        "\nPlan.\n\n</think>\n\nSunny.\n",
        Message("\n\nSunny.\n", "\nPlan.", ()),
    ),
    _m(
        "tool-parser-only",
        "Plan.</think>Sunny." + _block(_invoke("get_time")),
        Message("Plan.</think>Sunny.", "", (TIME,)),
        reasoning=None,
    ),
    _m(
        "reasoning-parser-only",
        "Plan.</think>Sunny." + _block(_invoke("get_time")),
        Message("Sunny." + _block(_invoke("get_time")), "Plan.", ()),
        tool=None,
    ),
    _m(
        "thinking-off",
        "Plan.</think>Sunny.",
        Message("Sunny.", "Plan.", ()),
        kwargs={"enable_thinking": False},
    ),
    # vLLM drops a second </think> (in content); it is text here.
    _m(
        "second-think-end",
        "Plan.</think>Sunny.</think>",
        Message("Sunny.</think>", "Plan.", ()),
    ),
    # A call without its block marker. vLLM's whole answer strips the content before it; its
    # streams keep it as written, as here.
    _m(
        "bare-invoke",
        "Plan.</think>Sure. " + _invoke("get_time"),
        Message("Sure. ", "Plan.", (TIME,)),
    ),
    # Only the block marker ends reasoning.
    _m(
        "invoke-in-reasoning",
        "Plan " + _invoke("get_time") + "</think>Sunny.",
        Message("Sunny.", "Plan " + _invoke("get_time").rstrip(), ()),
    ),
    # vLLM drops the text between two calls of a block; it is content here.
    _m(
        "text-between-invokes",
        "Plan.</think><minimax:tool_call>\n"
        + _invoke("get_time")
        + "and "
        + _invoke("get_weather", city="Paris")
        + "</minimax:tool_call>",
        Message("and ", "Plan.", (TIME, PARIS)),
    ),
    _m(
        "unquoted-name",
        "Plan.</think><minimax:tool_call><invoke name=get_weather>"
        "<parameter name=city>Paris</parameter></invoke></minimax:tool_call>",
        Message("", "Plan.", (PARIS,)),
    ),
    # vLLM's whole answer reads no prompt: all of this output is reasoning; its streams start
    # in content after a prompt that closed reasoning, as here.
    _m(
        "prompt-closed",
        "It is sunny.",
        Message("It is sunny.", "", ()),
        head=MINIMAX_HEAD + "</think>\n",
    ),
    _m("reasoning-cut", "Plan", Message("", "Plan", ()), finish="length"),
    # minimax_m2_append_think parses no reasoning: the output is content after the <think> the
    # prompt opened.
    _m(
        "append-think",
        "Plan.</think>Sunny.",
        Message("<think>Plan.</think>Sunny.", "", ()),
        reasoning="minimax_m2_append_think",
        tool=None,
    ),
    # The first id is part of a character: the <think> still comes first.
    _m(
        "append-think-split",
        "🫠 ok",
        Message("<think>🫠 ok", "", ()),
        reasoning="minimax_m2_append_think",
        tool=None,
    ),
    # vLLM's tool parser drops the </think> of the content; it is kept here.
    _m(
        "append-think-call",
        "Plan.</think>Sunny." + _block(_invoke("get_time")),
        Message("<think>Plan.</think>Sunny.", "", (TIME,)),
        reasoning="minimax_m2_append_think",
    ),
    # A reasoning parser alone: the block's marker still ends reasoning; the block is content.
    _m(
        "reasoning-only-block",
        "Plan." + _block(_invoke("get_time")),
        Message(_block(_invoke("get_time")), "Plan.", ()),
        tool=None,
    ),
    # An earlier turn's closed reasoning does not count: this turn's prompt opened it.
    _m(
        "history-closed",
        "Plan.</think>Sunny.",
        Message("Sunny.", "Plan.", ()),
        head="]~b]user\nHi[e~[\n]~b]ai\n<think>\nOld.\n</think>\n\nHello.[e~[\n" + MINIMAX_HEAD,
    ),
    # A parameter left open ends where the next begins, its value as written, as vLLM 0.33.0
    # reads it (whole and streamed). One left open before `</invoke>` ends there (a string
    # value's text is sent as it comes); vLLM's whole answer drops it (`{}`), its streams send
    # it open, not JSON.
    _m(
        "unclosed-before-the-next",
        'Plan.</think><minimax:tool_call>\n<invoke name="get_weather">\n'
        '<parameter name="city">Paris\n<parameter name="unit">c</parameter>\n</invoke>\n'
        "</minimax:tool_call>",
        Message("", "Plan.", (("get_weather", '{"city": "Paris\\n", "unit": "c"}'),)),
    ),
    _m(
        "unclosed-before-invoke",
        'Plan.</think><minimax:tool_call>\n<invoke name="get_weather">\n'
        '<parameter name="city">Paris\n</invoke>\n</minimax:tool_call>',
        Message("", "Plan.", (("get_weather", '{"city": "Paris"}'),)),
    ),
]

# --- Seed-OSS --------------------------------------------------------------------------------

SEED_HEAD = "<seed:bos>user\nWeather?<seed:eos><seed:bos>assistant\n"


def _s(label: str, text: str, expected: Message, **kw: Any) -> Case:
    reasoning = kw.pop("reasoning", "seed_oss")
    tool = kw.pop("tool", "seed_oss")
    head = kw.pop("head", SEED_HEAD)
    return Case(
        f"seed_oss-{label}", "seed-oss-derived", reasoning, tool, head, text, expected, **kw
    )


def _fn(name: str, **params: str) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"<seed:tool_call>\n<function={name}>\n{body}</function>\n</seed:tool_call>"


SEED = [
    _s("plain", "It is sunny.", Message("", "It is sunny.", ())),
    _s(
        "think",
        "<seed:think>Plan.</seed:think>It is sunny.",
        Message("It is sunny.", "Plan.", ()),
    ),
    _s(
        "thinking-off",
        "It is sunny.",
        Message("It is sunny.", "", ()),
        kwargs={"enable_thinking": False},
    ),
    # With thinking off, vLLM drops </seed:think> (it keeps <seed:think>); both are text here.
    _s(
        "thinking-off-think",
        "<seed:think>Plan.</seed:think>It is sunny.",
        Message("<seed:think>Plan.</seed:think>It is sunny.", "", ()),
        kwargs={"enable_thinking": False},
    ),
    _s(
        "one-call",
        "<seed:think>Plan.</seed:think>\n" + _fn("get_weather", city="Paris"),
        Message("", "Plan.", (PARIS,)),
    ),
    _s(
        "two-calls",
        "<seed:think>Two.</seed:think>" + _fn("get_weather", city="Paris") + "\n" + _fn("get_time"),
        Message("", "Two.", (PARIS, TIME)),
    ),
    # vLLM's whole answer strips the content that comes with a call ("Let me check."); its
    # streams keep it as written, as here.
    _s(
        "text-then-call",
        "<seed:think>Plan.</seed:think>Let me check.\n"
        + _fn("get_weather", city="Paris", unit="c"),
        Message("Let me check.\n", "Plan.", (("get_weather", '{"city": "Paris", "unit": "c"}'),)),
    ),
    # vLLM's whole answer drops the text after the call; its stream at 1 id a chunk gives it as
    # here (at 3, with the newline after the block).
    _s(
        "text-after-call",
        "<seed:think>Plan.</seed:think>" + _fn("get_time") + "\nDone.",
        Message("Done.", "Plan.", (TIME,)),
    ),
    _s(
        "typed",
        "<seed:think>Plan.</seed:think>"
        + _fn("calc", n="42", ok="true", f="1.5", s="7", o='{"a": 1}', l='[1, "x"]'),
        Message("", "Plan.", (("calc", TYPED),)),
        tools=CALC,
    ),
    _s(
        "call-ends-reasoning",
        "<seed:think>Plan." + _fn("get_time"),
        Message("", "Plan.", (TIME,)),
    ),
    # vLLM's streams send the cut value as far as it came, '{"city": "Pa' (not JSON); its whole
    # answer drops it (`{}`). Here the cut ends it: '{"city": "Pa"}'.
    _s(
        "cut-in-value",
        "<seed:think>Plan.</seed:think><seed:tool_call>\n<function=get_weather>\n"
        "<parameter=city>\nPa",
        Message("", "Plan.", (("get_weather", '{"city": "Pa"}'),)),
        finish="length",
    ),
    _s(
        "unclosed-call",
        "<seed:think>Plan.</seed:think><seed:tool_call>\n<function=get_weather>\n"
        "<parameter=city>\nParis\n</parameter>\n</function>\n",
        Message("", "Plan.", (PARIS,)),
    ),
    _s(
        "unknown-tool",
        "<seed:think>Plan.</seed:think>" + _fn("nope", x="1"),
        Message("", "Plan.", (("nope", '{"x": "1"}'),)),
    ),
    _s(
        "whitespace",
        "<seed:think>\nPlan.\n</seed:think>\n\nSunny.\n",
        Message("\n\nSunny.\n", "\nPlan.\n", ()),
    ),
    # vLLM's whole answer reads no prompt: all of this output is reasoning; its streams start
    # in content after a prompt that closed reasoning, as here.
    _s(
        "prompt-closed",
        "It is sunny.",
        Message("It is sunny.", "", ()),
        head=SEED_HEAD + "<seed:think></seed:think>",
    ),
    _s(
        "tool-parser-only",
        "<seed:think>Plan.</seed:think>" + _fn("get_time"),
        Message("<seed:think>Plan.</seed:think>", "", (TIME,)),
        reasoning=None,
    ),
    _s(
        "reasoning-parser-only",
        "<seed:think>Plan.</seed:think>" + _fn("get_time"),
        Message(_fn("get_time"), "Plan.", ()),
        tool=None,
    ),
    # A call without its block marker. vLLM's whole answer strips the content before it; its
    # streams keep it as written, as here.
    _s(
        "bare-function",
        "<seed:think>Plan.</seed:think>Sure. <function=get_time>\n</function>",
        Message("Sure. ", "Plan.", (TIME,)),
    ),
    # Only the block marker ends reasoning.
    _s(
        "function-in-reasoning",
        "<seed:think>Plan <function=get_time>\n</function></seed:think>Sunny.",
        Message("Sunny.", "Plan <function=get_time>\n</function>", ()),
    ),
    _s(
        "two-calls-one-block",
        "<seed:think>Two.</seed:think><seed:tool_call>\n<function=get_weather>\n"
        "<parameter=city>\nParis\n</parameter>\n</function>\n<function=get_time>\n"
        "</function>\n</seed:tool_call>",
        Message("", "Two.", (PARIS, TIME)),
    ),
    _s(
        "thinking-off-call",
        "Sure." + _fn("get_weather", city="Paris"),
        Message("Sure.", "", (PARIS,)),
        kwargs={"enable_thinking": False},
    ),
    _s("reasoning-cut", "<seed:think>Plan", Message("", "Plan", ()), finish="length"),
    _s(
        "prompt-opened",
        "Plan.</seed:think>Sunny.",
        Message("Sunny.", "Plan.", ()),
        head=SEED_HEAD + "<seed:think>",
    ),
    # A reasoning parser alone: the block's marker still ends reasoning; the block is content.
    _s(
        "reasoning-only-block",
        "<seed:think>Plan." + _fn("get_time"),
        Message(_fn("get_time"), "Plan.", ()),
        tool=None,
    ),
    # An earlier turn's closed reasoning does not count.
    _s(
        "history-closed",
        "<seed:think>Plan.</seed:think>Sunny.",
        Message("Sunny.", "Plan.", ()),
        head="<seed:bos>user\nHi<seed:eos><seed:bos>assistant\n<seed:think>Old.</seed:think>"
        "Hello.<seed:eos>" + SEED_HEAD,
    ),
    # A parameter left open ends where the next begins, as vLLM 0.33.0 reads it (whole and
    # streamed). One left open before `</function>` ends there (a string value's text is sent
    # as it comes); vLLM's whole answer drops it (`{}`), its streams send it open, not JSON.
    _s(
        "unclosed-before-the-next",
        "<seed:think>Plan.</seed:think><seed:tool_call>\n<function=get_weather>\n"
        "<parameter=city>\nParis\n<parameter=unit>\nc\n</parameter>\n</function>\n"
        "</seed:tool_call>",
        Message("", "Plan.", (("get_weather", '{"city": "Paris", "unit": "c"}'),)),
    ),
    _s(
        "unclosed-before-function",
        "<seed:think>Plan.</seed:think><seed:tool_call>\n<function=get_weather>\n"
        "<parameter=city>\nParis\n</function>\n</seed:tool_call>",
        Message("", "Plan.", (("get_weather", '{"city": "Paris"}'),)),
    ),
]

CASES = [*MINIMAX, *SEED]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)
