"""Inkling's built-in template under vLLM's parser name ``inkling`` (reasoning and tools).

Inkling writes blocks, ``<|message_model|>`` then an optional header (dropped), a content-kind
marker and the block's text up to ``<|end_message|>`` (or ``<|content_model_end_sampling|>``):
``<|content_thinking|>`` blocks are reasoning, ``<|content_invoke_tool_json|>`` blocks a call
(``{"name": ..., "args": {...}}``, the arguments as written; none: ``{}``), ``<|content_text|>``,
``<|content_invoke_tool_text|>`` and ``<|content_tool_error|>`` blocks content. The output goes
on from the prompt's ``<|message_model|>`` (the prompt is read after its last
``<|end_message|>``). A thinking block where reasoning is not parsed, and a call block where
the request turns calls off (``tool_choice: "none"``), are dropped.

The markers are special tokens of ``inkling-derived`` (Qwen3's vocabulary with Inkling's eight
markers added). Each case's expected message is vLLM 0.33.0's whole answer for the same text,
names, prompt and fixture (``vllm/parser/inkling.py`` through its engine adapters, run on CPU from
the 0.33.0 wheel; ``acceptance/vllm/parsers_oracle.py``), except where a comment says how vLLM's
differs and why the answer here is kept. Every case runs whole and streamed at 1, 3 and random ids
a chunk, in both ``parser_state`` modes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from helpers.family_cases import Case, case_named, check
from helpers.parsers_oracle import Message

MODEL, TEXT, THINK = "<|message_model|>", "<|content_text|>", "<|content_thinking|>"
CALL, END, END_SAMPLING = (
    "<|content_invoke_tool_json|>",
    "<|end_message|>",
    "<|content_model_end_sampling|>",
)
HEAD = "Weather?" + END + MODEL
PARIS = ("get_weather", '{"city":"Paris"}')
WEATHER = CALL + '{"name":"get_weather","args":{"city":"Paris"}}' + END
GET_TIME = CALL + '{"name":"get_time","args":{}}' + END


def _i(label: str, text: str, expected: Message, **kw: Any) -> Case:
    reasoning = kw.pop("reasoning", "inkling")
    tool = kw.pop("tool", "inkling")
    prompt = kw.pop("prompt", HEAD)
    return Case(
        f"inkling-{label}", "inkling-derived", reasoning, tool, prompt, text, expected, **kw
    )


CASES = [
    _i(
        "thinking-then-text",
        THINK + "Plan." + END + MODEL + TEXT + "It is sunny." + END,
        Message("It is sunny.", "Plan.", ()),
    ),
    _i("text", TEXT + "It is sunny." + END, Message("It is sunny.", "", ())),
    _i(
        "a-header-is-dropped",
        "get_weather" + WEATHER,
        Message("", "", (PARIS,)),
    ),
    _i(
        "thinking-then-call",
        THINK + "Plan." + END + MODEL + WEATHER,
        Message("", "Plan.", (PARIS,)),
    ),
    _i(
        "thinking-call-text",
        THINK + "Plan." + END + MODEL + WEATHER + MODEL + TEXT + "Done." + END,
        Message("Done.", "Plan.", (PARIS,)),
    ),
    _i("two-calls", WEATHER + MODEL + GET_TIME, Message("", "", (PARIS, ("get_time", "{}")))),
    _i("no-args", CALL + '{"name":"get_time"}' + END, Message("", "", (("get_time", "{}"),))),
    _i(
        "arguments-as-written",
        CALL + '{ "name" : "get_weather" , "args" : { "city" : "Paris" } }' + END,
        Message("", "", (("get_weather", '{ "city" : "Paris" }'),)),
    ),
    _i(
        "end-of-sampling-ends-a-block",
        THINK + "Plan." + END_SAMPLING + MODEL + TEXT + "Hi" + END_SAMPLING,
        Message("Hi", "Plan.", ()),
    ),
    _i(
        "tool-text-is-content",
        "<|content_invoke_tool_text|>raw call" + END,
        Message("raw call", "", ()),
    ),
    _i("tool-error-is-content", "<|content_tool_error|>oops" + END, Message("oops", "", ())),
    _i("the-prompt-opened-text", "Sunny." + END, Message("Sunny.", "", ()), prompt=HEAD + TEXT),
    _i("thinking-cut", THINK + "Plan it", Message("", "Plan it", ()), finish="length"),
    _i(
        "a-call-ends-thinking",
        THINK + "Plan." + WEATHER,
        Message("", "Plan.", (PARIS,)),
    ),
    _i(
        "as-written",
        THINK + "\nPlan.\n" + END + MODEL + TEXT + "\n It is sunny. \n" + END,
        Message("\n It is sunny. \n", "\nPlan.", ()),
    ),
    _i(
        "unicode",
        CALL + '{"name":"write_file","args":{"path":"ä.txt","content":"line 1\\nline ☃"}}' + END,
        Message("", "", (("write_file", '{"path":"ä.txt","content":"line 1\\nline ☃"}'),)),
    ),
    _i(
        "tool-parser-only-drops-thinking",
        THINK + "Plan." + END + MODEL + WEATHER,
        Message("", "", (PARIS,)),
        reasoning=None,
    ),
    _i(
        "text-then-call",
        TEXT + "Let me check." + END + MODEL + WEATHER,
        Message("Let me check.", "", (PARIS,)),
    ),
    # vLLM's whole answer does not read the prompt's thinking marker (its streams do): the
    # output's reasoning is content there.
    _i(
        "the-prompt-opened-thinking",
        "Plan." + END + MODEL + TEXT + "Sunny." + END,
        Message("Sunny.", "Plan.", ()),
        prompt=HEAD + THINK,
    ),
    # vLLM reads `args` given as a JSON string as the arguments' text; it is sent as written
    # here, a JSON string.
    _i(
        "args-as-a-string",
        CALL + '{"name":"get_weather","args":"{\\"city\\": \\"Paris\\"}"}' + END,
        Message("", "", (("get_weather", '"{\\"city\\": \\"Paris\\"}"'),)),
    ),
    # Without a tool parser the call block is content, as vLLM keeps it, but for its
    # `<|end_message|>`, which is dropped as everywhere.
    _i(
        "reasoning-parser-only-keeps-the-block",
        THINK + "Plan." + END + MODEL + WEATHER,
        Message(WEATHER[: -len(END)], "Plan.", ()),
        tool=None,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)


def test_tool_choice_none_and_parallel_tool_calls() -> None:
    case = case_named(CASES, "inkling-two-calls")
    check(replace(case, expected=Message("", "", (PARIS,))), "resumable", parallel_tool_calls=False)
    check(replace(case, expected=Message("", "", ())), "resumable", tool_choice="none")
