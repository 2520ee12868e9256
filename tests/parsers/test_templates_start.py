"""Where a built-in template's reasoning starts, under vLLM's reasoning parser names.

- ``qwen3`` (also beside the ``qwen3_coder`` template, and the Qwen3 templates as reasoning
  parsers): the output starts in reasoning unless ``chat_template_kwargs.enable_thinking`` is
  off; ``thinking`` is not read.
- ``glm45``, ``kimi_k2``: in reasoning unless ``thinking`` or ``enable_thinking`` is given and
  neither is true.
- ``deepseek_r1_template``: always in reasoning.
- everywhere: a prompt that opened ``<think>`` keeps the output in reasoning, one that closed
  it starts the output in content; where thinking is off, a ``<think>`` block is content,
  markers included; reasoning ends once.

Each expected message is vLLM 0.33.0's answer for the same text, names, prompt and request
(``vllm/parser/qwen3.py``, ``vllm/parser/glm47_moe.py``, ``vllm/parser/kimi_k2.py`` over
``vllm/parser/engine/parser_engine.py``, and ``vllm/reasoning/deepseek_r1_reasoning_parser.py``,
run on CPU from the 0.33.0 wheel), streamed where vLLM's whole and streamed answers differ, and
keeping the text where vLLM drops a marker (a comment says so). Every case runs whole and
streamed at 1, 3 and random ids a chunk, in both ``parser_state`` modes, against the whole
answer.
"""

# DeepSeek's markers are spelled with full-width bars.
# ruff: noqa: RUF001

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import pytest
from helpers.family_cases import chunks as _chunks
from helpers.family_cases import encode as _encode
from helpers.parsers_oracle import SERVED, Message, chat_request
from helpers.parsers_util import derenderer_class, stream, whole
from helpers.stream_util import load_detokenizer

TEXT = "The answer is 42, no thinking at all."
MARKED = "<think>Plan.</think>" + TEXT
HEADS = {
    "qwen3": "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n",
    "glm45": "[gMASK]<sop><|user|>\nWeather?<|assistant|>",
    "kimi_k2": (
        "<|im_user|>user<|im_middle|>Weather?<|im_end|><|im_assistant|>assistant<|im_middle|>"
    ),
    "deepseek_r1": "<｜begin▁of▁sentence｜><｜User｜>Weather?<｜Assistant｜>",
}
EOS = {"qwen3": "<|im_end|>", "deepseek-r1": "<｜end▁of▁sentence｜>"}
PROMPTS = {"none": "", "open": "<think>\n", "closed": "<think>\n\n</think>\n\n"}
KWARGS: dict[str, dict[str, Any] | None] = {
    "default": None,
    "enable_off": {"enable_thinking": False},
    "thinking_off": {"thinking": False},
    "enable_on": {"enable_thinking": True},
}


@dataclass(frozen=True)
class Names:
    """A name pair, its chat format, its fixture, and which switches turn its thinking off."""

    label: str
    reasoning: str
    tool: str | None
    head: str
    fixture: str
    off: tuple[str, ...]


NAMES = [
    # vllm/parser/qwen3.py: the qwen3 reasoning parser beside the qwen3_coder tool parser.
    Names("qwen3+qwen3_coder", "qwen3", "qwen3_coder", "qwen3", "qwen3", ("enable_off",)),
    Names("qwen3_coder", "qwen3_coder", "qwen3_coder", "qwen3", "qwen3", ("enable_off",)),
    Names("qwen3_template", "qwen3_template", "qwen3_template", "qwen3", "qwen3", ("enable_off",)),
    # vllm/parser/glm47_moe.py (glm45 and glm47).
    Names("glm45", "glm45", "glm45", "glm45", "qwen3", ("enable_off", "thinking_off")),
    # vllm/parser/kimi_k2.py.
    Names("kimi_k2", "kimi_k2", "kimi_k2", "kimi_k2", "qwen3", ("enable_off", "thinking_off")),
    # vllm/reasoning/deepseek_r1_reasoning_parser.py: no thinking switch.
    Names("deepseek_r1_template", "deepseek_r1_template", None, "deepseek_r1", "deepseek-r1", ()),
]


def expected(n: Names, prompt: str, kwargs: str, text: str) -> Message:
    """vLLM's answer (see the module docstring for where it differs)."""
    if kwargs in n.off:
        # Thinking off: no reasoning, the think block is content as written (vLLM's qwen3
        # beside qwen3_coder drops its `</think>`).
        return Message(text, "", ())
    if prompt == "closed":
        # vLLM's streams; its whole answer for glm45 (with this fixture, which lacks GLM's
        # turn markers), kimi_k2 (no turn markers) and deepseek_r1 ignores the prompt and gives
        # reasoning. qwen3 drops the block's `</think>` in its whole answer.
        return Message(text, "", ())
    if text == MARKED:
        return Message(TEXT, "Plan.", ())
    return Message("", TEXT, ())


CASES = [
    (n, prompt, kwargs, text)
    for n in NAMES
    for prompt in PROMPTS
    for kwargs in KWARGS
    for text in (TEXT, MARKED)
]


def _label(case: tuple[Names, str, str, str]) -> str:
    n, prompt, kwargs, text = case
    return f"{n.label}/{prompt}/{kwargs}/{'marked' if text == MARKED else 'plain'}"


@functools.cache
def _derenderer(fixture: str, reasoning: str | None, tool: str | None, mode: str) -> Any:
    return derenderer_class()(
        load_detokenizer(fixture),
        served_model_name=SERVED,
        reasoning_parser=reasoning,
        tool_parser=tool,
        parser_state=mode,
    )


def _run(r: Any, n: Names, prompt: str, kwargs: str, text: str, mode: str) -> Any:
    request = chat_request()
    if KWARGS[kwargs] is not None:
        request["chat_template_kwargs"] = KWARGS[kwargs]
    ids = _encode(n.fixture, HEADS[n.head] + PROMPTS[prompt])
    gen = _encode(n.fixture, text + EOS[n.fixture])
    got = whole(r, ids, gen, request, "stop")
    for shape in ("1", "3", "random"):
        streamed = stream(r, ids, _chunks(gen, shape), request, "stop", mode=mode)
        assert streamed.result() == got, shape
    return got


@pytest.mark.parametrize("case", CASES, ids=_label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_start_whole_and_streamed(case: tuple[Names, str, str, str], mode: str) -> None:
    n, prompt, kwargs, text = case
    r = _derenderer(n.fixture, n.reasoning, n.tool, mode)
    got = _run(r, n, prompt, kwargs, text, mode)
    assert got.message == expected(n, prompt, kwargs, text)


@pytest.mark.parametrize("case", [c for c in CASES if c[0].reasoning == "qwen3"], ids=_label)
def test_the_pair_reasons_as_the_hand_written_qwen3(case: tuple[Names, str, str, str]) -> None:
    n, prompt, kwargs, text = case
    pair = _run(_derenderer(n.fixture, "qwen3", "qwen3_coder", "resumable"), n, prompt, kwargs,
                text, "resumable")  # fmt: skip
    alone = _run(_derenderer(n.fixture, "qwen3", None, "resumable"), n, prompt, kwargs, text,
                 "resumable")  # fmt: skip
    assert pair.message == alone.message
    assert (pair.content_null, pair.reasoning_null) == (alone.content_null, alone.reasoning_null)


def test_a_call_ends_reasoning_that_thinking_opened() -> None:
    # vllm/parser/qwen3.py: `<tool_call>` while reasoning ends it and starts the call.
    r = _derenderer("qwen3", "qwen3", "qwen3_coder", "resumable")
    call = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    gen = _encode("qwen3", "Let me look." + call + "</function>\n</tool_call>")
    got = whole(r, _encode("qwen3", HEADS["qwen3"]), gen, chat_request(), "stop")
    assert got.message == Message("", "Let me look.", (("get_weather", '{"city": "Paris"}'),))
