"""Reasoning-only vLLM parser names: ``olmo3``, ``nemotron_v3``, ``granite_thinking_parser``.

- ``olmo3``: ``<think>``/``</think>`` are plain text; the output starts in reasoning (a
  ``<think>`` it begins with dropped) until the first ``</think>``, then content (a later
  ``<think>`` is text); text kept as written; a prompt that closed ``<think>`` starts the output
  in content.
- ``nemotron_v3``: Qwen3's reasoning (on unless ``enable_thinking`` is false; off, the markers
  are content), its reasoning without trailing whitespace; beside ``qwen3_coder`` its calls.
- ``granite_thinking_parser``: ``nemotron_v3``'s, the output's first content without its
  leading newlines.

Each case's expected message is vLLM 0.33.0's whole answer for the same text, names, prompt and
tokenizer fixture (``vllm/reasoning/olmo3_reasoning_parser.py``, ``vllm/parser/nemotron_v3.py``,
``vllm/parser/granite_thinking.py`` over ``vllm/parser/qwen3.py``, run on CPU from the 0.33.0
wheel), except where a comment says how vLLM's differs and why the answer here is kept. vLLM's
``nemotron_v3`` swaps reasoning and content when the content is empty and the request has
``force_nonempty_content`` (or thinking off): a stream cannot, so that is not done here. Every
case runs whole and streamed at 1, 3 and random ids a chunk, in both ``parser_state`` modes,
against the whole answer.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from typing import Any

import pytest
from helpers.parsers_oracle import SERVED, Message, chat_request
from helpers.parsers_util import derenderer_class, expected_finish, stream, whole
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import load_detokenizer

HEAD = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"


@dataclass(frozen=True)
class Case:
    label: str
    fixture: str
    reasoning: str | None
    tool: str | None
    prompt: str
    text: str
    expected: Message
    kwargs: dict[str, Any] | None = None


@functools.cache
def _derenderer(fixture: str, reasoning: str | None, tool: str | None, mode: str) -> Any:
    return derenderer_class()(
        load_detokenizer(fixture),
        served_model_name=SERVED,
        reasoning_parser=reasoning,
        tool_parser=tool,
        parser_state=mode,
    )


def _chunks(ids: list[int], shape: str) -> list[list[int]]:
    if shape == "random":
        rng, out, i = random.Random(len(ids)), [], 0
        while i < len(ids):
            width = rng.randint(1, 7)
            out.append(ids[i : i + width])
            i += width
        return out
    size = int(shape)
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def _encode(fixture: str, text: str) -> list[int]:
    return list(load_tokenizer(fixture).encode(text, add_special_tokens=False).ids)


def run(case: Case, mode: str) -> None:
    """Checks ``case`` whole, then streamed at 1, 3 and random ids a chunk against the whole."""
    r = _derenderer(case.fixture, case.reasoning, case.tool, mode)
    extra = {} if case.kwargs is None else {"chat_template_kwargs": case.kwargs}
    request = chat_request(**extra)
    prompt, gen = _encode(case.fixture, case.prompt), _encode(case.fixture, case.text)
    got = whole(r, prompt, gen, request, "stop")
    assert got.message == case.expected
    assert got.finish_reason == expected_finish(case.expected, "stop")
    for shape in ("1", "3", "random"):
        streamed = stream(r, prompt, _chunks(gen, shape), request, "stop", mode=mode)
        assert streamed.result() == got, shape


CASES = [
    Case(
        "olmo3-r-think",
        "llama-3.2-instruct",
        "olmo3",
        None,
        HEAD,
        "<think>I should check.</think>It is sunny.",
        Message("It is sunny.", "I should check.", ()),
    ),
    # vLLM reads only the output; here a prompt that closed `<think>` starts the output in content.
    Case(
        "olmo3-r-closedprompt-think",
        "llama-3.2-instruct",
        "olmo3",
        None,
        HEAD + "<think></think>",
        "<think>I should check.</think>It is sunny.",
        Message("<think>I should check.</think>It is sunny.", "", ()),
    ),
    Case(
        "olmo3-r-no-open",
        "llama-3.2-instruct",
        "olmo3",
        None,
        HEAD,
        "I should check.</think>It is sunny.",
        Message("It is sunny.", "I should check.", ()),
    ),
    # vLLM reads only the output; here a prompt that closed `<think>` starts the output in content.
    Case(
        "olmo3-r-closedprompt-no-open",
        "llama-3.2-instruct",
        "olmo3",
        None,
        HEAD + "<think></think>",
        "I should check.</think>It is sunny.",
        Message("I should check.</think>It is sunny.", "", ()),
    ),
    # vLLM's whole answer is the text as content (no `</think>`); its stream gives reasoning,
    # as here: the output starts in reasoning.
    Case(
        "olmo3-r-no-close",
        "llama-3.2-instruct",
        "olmo3",
        None,
        HEAD,
        "<think>I should check.",
        Message("", "I should check.", ()),
    ),
    Case(
        "olmo3-r-closedprompt-no-close",
        "llama-3.2-instruct",
        "olmo3",
        None,
        HEAD + "<think></think>",
        "<think>I should check.",
        Message("<think>I should check.", "", ()),
    ),
    # vLLM's whole answer is content (no `</think>`); its stream gives reasoning, as here.
    Case(
        "olmo3-r-plain",
        "llama-3.2-instruct",
        "olmo3",
        None,
        HEAD,
        "It is sunny.",
        Message("", "It is sunny.", ()),
    ),
    Case(
        "olmo3-r-closedprompt-plain",
        "llama-3.2-instruct",
        "olmo3",
        None,
        HEAD + "<think></think>",
        "It is sunny.",
        Message("It is sunny.", "", ()),
    ),
    Case(
        "olmo3-r-ws",
        "llama-3.2-instruct",
        "olmo3",
        None,
        HEAD,
        "<think>\nI should check.\n</think>\n\nIt is sunny.",
        Message("\n\nIt is sunny.", "\nI should check.\n", ()),
    ),
    # vLLM reads only the output; here a prompt that closed `<think>` starts the output in content.
    Case(
        "olmo3-r-closedprompt-ws",
        "llama-3.2-instruct",
        "olmo3",
        None,
        HEAD + "<think></think>",
        "<think>\nI should check.\n</think>\n\nIt is sunny.",
        Message("<think>\nI should check.\n</think>\n\nIt is sunny.", "", ()),
    ),
    Case(
        "olmo3-r-second-think",
        "llama-3.2-instruct",
        "olmo3",
        None,
        HEAD,
        "<think>a</think>b<think>c</think>d",
        Message("b<think>c</think>d", "a", ()),
    ),
    # vLLM reads only the output; here a prompt that closed `<think>` starts the output in content.
    Case(
        "olmo3-r-closedprompt-second-think",
        "llama-3.2-instruct",
        "olmo3",
        None,
        HEAD + "<think></think>",
        "<think>a</think>b<think>c</think>d",
        Message("<think>a</think>b<think>c</think>d", "", ()),
    ),
    Case(
        "nemotron_v3-think",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD,
        "<think>\nI should check.\n</think>\n\nIt is sunny.",
        Message("\n\nIt is sunny.", "\nI should check.", ()),
    ),
    Case(
        "nemotron_v3-off-think",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD,
        "<think>\nI should check.\n</think>\n\nIt is sunny.",
        Message("<think>\nI should check.\n</think>\n\nIt is sunny.", "", ()),
        kwargs={"enable_thinking": False},
    ),
    Case(
        "nemotron_v3-coder-think",
        "qwen3",
        "nemotron_v3",
        "qwen3_coder",
        HEAD,
        "<think>\nI should check.\n</think>\n\nIt is sunny.",
        Message("\n\nIt is sunny.", "\nI should check.", ()),
    ),
    Case(
        "nemotron_v3-openprompt-think",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD + "<think>\n",
        "<think>\nI should check.\n</think>\n\nIt is sunny.",
        Message("\n\nIt is sunny.", "\nI should check.", ()),
    ),
    Case(
        "nemotron_v3-no-open",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD,
        "I should check.\n</think>\n\nIt is sunny.",
        Message("\n\nIt is sunny.", "I should check.", ()),
    ),
    Case(
        "nemotron_v3-off-no-open",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD,
        "I should check.\n</think>\n\nIt is sunny.",
        Message("I should check.\n</think>\n\nIt is sunny.", "", ()),
        kwargs={"enable_thinking": False},
    ),
    Case(
        "nemotron_v3-coder-no-open",
        "qwen3",
        "nemotron_v3",
        "qwen3_coder",
        HEAD,
        "I should check.\n</think>\n\nIt is sunny.",
        Message("\n\nIt is sunny.", "I should check.", ()),
    ),
    Case(
        "nemotron_v3-openprompt-no-open",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD + "<think>\n",
        "I should check.\n</think>\n\nIt is sunny.",
        Message("\n\nIt is sunny.", "I should check.", ()),
    ),
    Case(
        "nemotron_v3-no-close",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD,
        "<think>I should check.",
        Message("", "I should check.", ()),
    ),
    Case(
        "nemotron_v3-off-no-close",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD,
        "<think>I should check.",
        Message("<think>I should check.", "", ()),
        kwargs={"enable_thinking": False},
    ),
    Case(
        "nemotron_v3-coder-no-close",
        "qwen3",
        "nemotron_v3",
        "qwen3_coder",
        HEAD,
        "<think>I should check.",
        Message("", "I should check.", ()),
    ),
    Case(
        "nemotron_v3-openprompt-no-close",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD + "<think>\n",
        "<think>I should check.",
        Message("", "I should check.", ()),
    ),
    Case(
        "nemotron_v3-plain",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD,
        "It is sunny.",
        Message("", "It is sunny.", ()),
    ),
    Case(
        "nemotron_v3-off-plain",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD,
        "It is sunny.",
        Message("It is sunny.", "", ()),
        kwargs={"enable_thinking": False},
    ),
    Case(
        "nemotron_v3-coder-plain",
        "qwen3",
        "nemotron_v3",
        "qwen3_coder",
        HEAD,
        "It is sunny.",
        Message("", "It is sunny.", ()),
    ),
    Case(
        "nemotron_v3-openprompt-plain",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD + "<think>\n",
        "It is sunny.",
        Message("", "It is sunny.", ()),
    ),
    Case(
        "nemotron_v3-only-think",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD,
        "<think>I should check.</think>",
        Message("", "I should check.", ()),
    ),
    Case(
        "nemotron_v3-off-only-think",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD,
        "<think>I should check.</think>",
        Message("<think>I should check.</think>", "", ()),
        kwargs={"enable_thinking": False},
    ),
    Case(
        "nemotron_v3-coder-only-think",
        "qwen3",
        "nemotron_v3",
        "qwen3_coder",
        HEAD,
        "<think>I should check.</think>",
        Message("", "I should check.", ()),
    ),
    Case(
        "nemotron_v3-openprompt-only-think",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD + "<think>\n",
        "<think>I should check.</think>",
        Message("", "I should check.", ()),
    ),
    Case(
        "nemotron_v3-nl-content",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD,
        "<think>r</think>\n\n\nIt is sunny.\n",
        Message("\n\n\nIt is sunny.\n", "r", ()),
    ),
    Case(
        "nemotron_v3-off-nl-content",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD,
        "<think>r</think>\n\n\nIt is sunny.\n",
        Message("<think>r</think>\n\n\nIt is sunny.\n", "", ()),
        kwargs={"enable_thinking": False},
    ),
    Case(
        "nemotron_v3-coder-nl-content",
        "qwen3",
        "nemotron_v3",
        "qwen3_coder",
        HEAD,
        "<think>r</think>\n\n\nIt is sunny.\n",
        Message("\n\n\nIt is sunny.\n", "r", ()),
    ),
    Case(
        "nemotron_v3-openprompt-nl-content",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD + "<think>\n",
        "<think>r</think>\n\n\nIt is sunny.\n",
        Message("\n\n\nIt is sunny.\n", "r", ()),
    ),
    Case(
        "nemotron_v3-call",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD,
        "<think>r</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
        Message(
            "\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
            "r",
            (),
        ),
    ),
    Case(
        "nemotron_v3-off-call",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD,
        "<think>r</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
        Message(
            "<think>r</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
            "",
            (),
        ),
        kwargs={"enable_thinking": False},
    ),
    Case(
        "nemotron_v3-coder-call",
        "qwen3",
        "nemotron_v3",
        "qwen3_coder",
        HEAD,
        "<think>r</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
        Message("", "r", (("get_weather", '{"city": "Paris"}'),)),
    ),
    Case(
        "nemotron_v3-openprompt-call",
        "qwen3",
        "nemotron_v3",
        None,
        HEAD + "<think>\n",
        "<think>r</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
        Message(
            "\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
            "r",
            (),
        ),
    ),
    Case(
        "granite_thinking_parser-think",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD,
        "<think>\nI should check.\n</think>\n\nIt is sunny.",
        Message("It is sunny.", "\nI should check.", ()),
    ),
    Case(
        "granite_thinking_parser-off-think",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD,
        "<think>\nI should check.\n</think>\n\nIt is sunny.",
        Message("<think>\nI should check.\n</think>\n\nIt is sunny.", "", ()),
        kwargs={"enable_thinking": False},
    ),
    Case(
        "granite_thinking_parser-coder-think",
        "qwen3",
        "granite_thinking_parser",
        "qwen3_coder",
        HEAD,
        "<think>\nI should check.\n</think>\n\nIt is sunny.",
        Message("It is sunny.", "\nI should check.", ()),
    ),
    Case(
        "granite_thinking_parser-openprompt-think",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD + "<think>\n",
        "<think>\nI should check.\n</think>\n\nIt is sunny.",
        Message("It is sunny.", "\nI should check.", ()),
    ),
    Case(
        "granite_thinking_parser-no-open",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD,
        "I should check.\n</think>\n\nIt is sunny.",
        Message("It is sunny.", "I should check.", ()),
    ),
    Case(
        "granite_thinking_parser-off-no-open",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD,
        "I should check.\n</think>\n\nIt is sunny.",
        Message("I should check.\n</think>\n\nIt is sunny.", "", ()),
        kwargs={"enable_thinking": False},
    ),
    Case(
        "granite_thinking_parser-coder-no-open",
        "qwen3",
        "granite_thinking_parser",
        "qwen3_coder",
        HEAD,
        "I should check.\n</think>\n\nIt is sunny.",
        Message("It is sunny.", "I should check.", ()),
    ),
    Case(
        "granite_thinking_parser-openprompt-no-open",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD + "<think>\n",
        "I should check.\n</think>\n\nIt is sunny.",
        Message("It is sunny.", "I should check.", ()),
    ),
    Case(
        "granite_thinking_parser-no-close",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD,
        "<think>I should check.",
        Message("", "I should check.", ()),
    ),
    Case(
        "granite_thinking_parser-off-no-close",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD,
        "<think>I should check.",
        Message("<think>I should check.", "", ()),
        kwargs={"enable_thinking": False},
    ),
    Case(
        "granite_thinking_parser-coder-no-close",
        "qwen3",
        "granite_thinking_parser",
        "qwen3_coder",
        HEAD,
        "<think>I should check.",
        Message("", "I should check.", ()),
    ),
    Case(
        "granite_thinking_parser-openprompt-no-close",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD + "<think>\n",
        "<think>I should check.",
        Message("", "I should check.", ()),
    ),
    Case(
        "granite_thinking_parser-plain",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD,
        "It is sunny.",
        Message("", "It is sunny.", ()),
    ),
    Case(
        "granite_thinking_parser-off-plain",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD,
        "It is sunny.",
        Message("It is sunny.", "", ()),
        kwargs={"enable_thinking": False},
    ),
    Case(
        "granite_thinking_parser-coder-plain",
        "qwen3",
        "granite_thinking_parser",
        "qwen3_coder",
        HEAD,
        "It is sunny.",
        Message("", "It is sunny.", ()),
    ),
    Case(
        "granite_thinking_parser-openprompt-plain",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD + "<think>\n",
        "It is sunny.",
        Message("", "It is sunny.", ()),
    ),
    Case(
        "granite_thinking_parser-only-think",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD,
        "<think>I should check.</think>",
        Message("", "I should check.", ()),
    ),
    Case(
        "granite_thinking_parser-off-only-think",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD,
        "<think>I should check.</think>",
        Message("<think>I should check.</think>", "", ()),
        kwargs={"enable_thinking": False},
    ),
    Case(
        "granite_thinking_parser-coder-only-think",
        "qwen3",
        "granite_thinking_parser",
        "qwen3_coder",
        HEAD,
        "<think>I should check.</think>",
        Message("", "I should check.", ()),
    ),
    Case(
        "granite_thinking_parser-openprompt-only-think",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD + "<think>\n",
        "<think>I should check.</think>",
        Message("", "I should check.", ()),
    ),
    Case(
        "granite_thinking_parser-nl-content",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD,
        "<think>r</think>\n\n\nIt is sunny.\n",
        Message("It is sunny.\n", "r", ()),
    ),
    Case(
        "granite_thinking_parser-off-nl-content",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD,
        "<think>r</think>\n\n\nIt is sunny.\n",
        Message("<think>r</think>\n\n\nIt is sunny.\n", "", ()),
        kwargs={"enable_thinking": False},
    ),
    Case(
        "granite_thinking_parser-coder-nl-content",
        "qwen3",
        "granite_thinking_parser",
        "qwen3_coder",
        HEAD,
        "<think>r</think>\n\n\nIt is sunny.\n",
        Message("It is sunny.\n", "r", ()),
    ),
    Case(
        "granite_thinking_parser-openprompt-nl-content",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD + "<think>\n",
        "<think>r</think>\n\n\nIt is sunny.\n",
        Message("It is sunny.\n", "r", ()),
    ),
    Case(
        "granite_thinking_parser-call",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD,
        "<think>r</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
        Message(
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
            "r",
            (),
        ),
    ),
    Case(
        "granite_thinking_parser-off-call",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD,
        "<think>r</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
        Message(
            "<think>r</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
            "",
            (),
        ),
        kwargs={"enable_thinking": False},
    ),
    Case(
        "granite_thinking_parser-coder-call",
        "qwen3",
        "granite_thinking_parser",
        "qwen3_coder",
        HEAD,
        "<think>r</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
        Message("", "r", (("get_weather", '{"city": "Paris"}'),)),
    ),
    Case(
        "granite_thinking_parser-openprompt-call",
        "qwen3",
        "granite_thinking_parser",
        None,
        HEAD + "<think>\n",
        "<think>r</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
        Message(
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
            "r",
            (),
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    run(case, mode)
