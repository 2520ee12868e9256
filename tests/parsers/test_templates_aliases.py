"""vLLM's parser names that another name's parser serves, and ``mistral`` chosen by vocabulary.

- vLLM 0.33.0's registries (``vllm/tool_parsers/__init__.py``, ``vllm/reasoning/__init__.py``)
  map these names to the class of another name: tool ``openai`` and reasoning ``openai_gptoss``
  (``gpt_oss``), ``glm47`` (``glm45``), ``llama4_json`` (``llama3_json``), ``qwen3_json``
  (``hermes``), ``qwen3_xml`` (``qwen3_coder``), ``hf`` (``auto``), reasoning ``step5``
  (``deepseek_r1``). Each gives the answers of the name it stands for, whole and streamed.
- reasoning ``holo2`` is ``deepseek_v3``'s reasoning with thinking on unless the request
  switches it off (``DeepSeekV3ReasoningWithThinkingParser``).
- gpt-oss (``gpt_oss``, vLLM's ``openai`` and ``openai_gptoss``): a ``commentary`` message
  without a recipient (a preamble before a call) is content, and messages of one kind are
  joined by a newline, as ``vllm/parser/harmony.py`` gives them. vLLM parses harmony with
  ``openai_harmony`` over the o200k_harmony vocabulary, which cannot be shipped; these expected
  messages are read from that source (its ``parse``), on a derived fixture with the harmony
  markers as special tokens.
- ``mistral`` follows the vocabulary, as vLLM's ``vllm/parser/mistral.py`` does: tool calls are
  ``[TOOL_CALLS]NAME[ARGS]{...}`` where ``[ARGS]`` is a token, else the v0.3 JSON list;
  reasoning is ``[THINK]...[/THINK]`` where ``[THINK]`` is a token, else not parsed.

Each expected message is vLLM 0.33.0's whole answer (``acceptance/vllm/parsers_oracle.py``
over vLLM's derender route). Two fixtures read differently in vLLM than in ``tokenizers``:
vLLM's tokenizer of the DeepSeek-R1 fixture decodes byte-level text unmapped (``Ċ`` for a
newline) and its markers' ``▁`` as spaces, so its V3.1 calls are not found there; the expected
messages here are vLLM's answers for the text as ``tokenizers`` decodes it. Every case runs
whole and streamed at 1, 3 and random ids a chunk, in both ``parser_state`` modes.
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
from helpers.stream_util import import_tokstream, load_detokenizer

DS_PROMPT = "<｜begin▁of▁sentence｜><｜User｜>Weather?<｜Assistant｜>"
GLM_PROMPT = "[gMASK]<sop><|user|>\nWeather?<|assistant|>"
QWEN_PROMPT = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
MISTRAL_PROMPT = "[INST]Weather?[/INST]"
PARIS = ("get_weather", '{"city": "Paris"}')
CALL_V31 = (
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
    '{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
)


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


CASES = [
    Case(
        "glm47",
        "qwen3",
        "glm47",
        "glm47",
        GLM_PROMPT,
        "<think>Plan.</think>Hi<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris"
        '</arg_value><arg_key>unit</arg_key><arg_value>"C"</arg_value></tool_call>',
        Message("Hi", "Plan.", (("get_weather", '{"city": "Paris", "unit": "\\"C\\""}'),)),
    ),
    Case(
        "glm47-tools-only",
        "qwen3",
        None,
        "glm47",
        GLM_PROMPT,
        "<think>Plan.</think>Hi<tool_call>get_weather\n<arg_key>city</arg_key>\n"
        "<arg_value>東京</arg_value>\n</tool_call>",
        Message("<think>Plan.</think>Hi", "", (("get_weather", '{"city": "東京"}'),)),
    ),
    # vLLM's whole answer strips the content; its streams give "\n\nLet me check.\n".
    Case(
        "qwen3_xml",
        "qwen3",
        "qwen3",
        "qwen3_xml",
        QWEN_PROMPT,
        "<think>\nPlan.\n</think>\n\nLet me check.\n<tool_call>\n<function=get_weather>\n"
        "<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
        Message("\n\nLet me check.\n", "\nPlan.\n", (PARIS,)),
    ),
    Case(
        "qwen3_json",
        "qwen3",
        "qwen3",
        "qwen3_json",
        QWEN_PROMPT,
        "<think>\nPlan.\n</think>\n\nLet me check.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        Message("\n\nLet me check.\n", "\nPlan.\n", (PARIS,)),
    ),
    Case(
        "llama4_json",
        "llama-3.2-instruct",
        None,
        "llama4_json",
        "<|start_header_id|>assistant<|end_header_id|>\n\n",
        '{"name": "get_weather", "parameters": {"city": "Paris"}}',
        Message("", "", (PARIS,)),
    ),
    Case(
        "holo2-default",
        "deepseek-r1",
        "holo2",
        None,
        DS_PROMPT,
        "Plan.\n</think>\n\nSunny.",
        Message("\n\nSunny.", "Plan.\n", ()),
    ),
    Case(
        "holo2-thinking-off",
        "deepseek-r1",
        "holo2",
        None,
        DS_PROMPT,
        "<think>\nPlan.\n</think>\n\nSunny.",
        Message("<think>\nPlan.\n</think>\n\nSunny.", "", ()),
        {"thinking": False},
    ),
    Case(
        "holo2-with-deepseek_v31",
        "deepseek-r1",
        "holo2",
        "deepseek_v31",
        DS_PROMPT,
        "Plan.</think>Hi" + CALL_V31,
        Message("Hi", "Plan.", (PARIS,)),
        {"enable_thinking": True},
    ),
    Case(
        "step5",
        "deepseek-r1",
        "step5",
        None,
        DS_PROMPT + "<think>\n",
        "Plan.\n</think>\n\nSunny.",
        Message("\n\nSunny.", "Plan.\n", ()),
    ),
    Case(
        "mistral-v13",
        "mistral-v13-derived",
        "mistral",
        "mistral",
        MISTRAL_PROMPT,
        '[THINK]Plan.[/THINK]Let me check.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'
        "[TOOL_CALLS]get_time[ARGS]{}",
        Message("Let me check.", "Plan.", (PARIS, ("get_time", "{}"))),
    ),
    Case(
        "mistral-v13-tools-only",
        "mistral-v13-derived",
        None,
        "mistral",
        MISTRAL_PROMPT,
        '[THINK]Plan.[/THINK]Let me check.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
        Message("[THINK]Plan.[/THINK]Let me check.", "", (PARIS,)),
    ),
    Case(
        "mistral-v13-reasoning-only",
        "mistral-v13-derived",
        "mistral",
        None,
        MISTRAL_PROMPT,
        "[THINK]Plan.[/THINK]Sunny.",
        Message("Sunny.", "Plan.", ()),
    ),
    # No [THINK] token: vLLM parses no reasoning, and the v0.3 JSON list of calls.
    Case(
        "mistral-v03",
        "mistral-7b-instruct-v0.3",
        "mistral",
        "mistral",
        MISTRAL_PROMPT,
        '[THINK]Plan.[/THINK]Hi[TOOL_CALLS] [{"name": "get_weather", "arguments": '
        '{"city": "Paris"}}]',
        Message(" [THINK]Plan.[/THINK]Hi", "", (PARIS,)),
    ),
]

HARMONY_PROMPT = "<|start|>user<|message|>Weather?<|end|><|start|>assistant"
CASES += [
    Case(
        "gpt_oss-preamble-then-call",
        "gpt-oss-derived",
        "openai_gptoss",
        "openai",
        HARMONY_PROMPT,
        "<|channel|>analysis<|message|>Plan.<|end|><|start|>assistant<|channel|>commentary"
        "<|message|>Let me check the weather.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>',
        Message("Let me check the weather.", "Plan.", (PARIS,)),
    ),
    Case(
        "gpt_oss-two-analyses-and-final",
        "gpt-oss-derived",
        "openai_gptoss",
        "openai",
        HARMONY_PROMPT,
        "<|channel|>analysis<|message|>Plan.<|end|><|start|>assistant<|channel|>analysis"
        "<|message|>More.<|end|><|start|>assistant<|channel|>final<|message|>Sunny.<|return|>",
        Message("Sunny.", "Plan.\nMore.", ()),
    ),
    Case(
        "gpt_oss-preamble-and-final",
        "gpt-oss-derived",
        None,
        "openai",
        HARMONY_PROMPT,
        "<|channel|>commentary<|message|>Checking.<|end|><|start|>assistant<|channel|>final"
        "<|message|>Sunny.<|return|>",
        Message("Checking.\nSunny.", "", ()),
    ),
]

#: vLLM's alias, the name it stands for, and a case the pair is compared on.
SAME = [
    ("tool", "openai", "gpt_oss"),
    ("reasoning", "openai_gptoss", "gpt_oss"),
    ("tool", "glm47", "glm45"),
    ("reasoning", "glm47", "glm45"),
    ("tool", "llama4_json", "llama3_json"),
    ("tool", "qwen3_json", "hermes"),
    ("tool", "qwen3_xml", "qwen3_coder"),
    ("reasoning", "step5", "deepseek_r1"),
]


@functools.cache
def _derenderer(fixture: str, reasoning: str | None, tool: str | None, mode: str) -> Any:
    return derenderer_class()(
        load_detokenizer(fixture),
        served_model_name=SERVED,
        reasoning_parser=reasoning,
        tool_parser=tool,
        parser_state=mode,
    )


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    r = _derenderer(case.fixture, case.reasoning, case.tool, mode)
    extra = {} if case.kwargs is None else {"chat_template_kwargs": case.kwargs}
    request = chat_request(**extra)
    prompt, gen = _encode(case.fixture, case.prompt), _encode(case.fixture, case.text)
    got = whole(r, prompt, gen, request, "stop")
    assert got.message == case.expected
    assert got.finish_reason == ("tool_calls" if case.expected.calls else "stop")
    for shape in ("1", "3", "random"):
        streamed = stream(r, prompt, _chunks(gen, shape), request, "stop", mode=mode)
        assert streamed.result() == got, shape


#: Generations each alias pair is compared on, by the name stood for.
TEXTS = {
    "gpt_oss": (
        "<|start|>assistant",
        "<|channel|>analysis<|message|>Plan.<|end|><|start|>assistant<|channel|>final"
        "<|message|>Sunny.<|return|>",
    ),
    "glm45": (GLM_PROMPT, CASES[0].text),
    "llama3_json": (CASES[4].prompt, CASES[4].text),
    "hermes": (QWEN_PROMPT, CASES[3].text),
    "qwen3_coder": (QWEN_PROMPT, CASES[2].text),
    "deepseek_r1": (DS_PROMPT, CASES[8].text),
}
FIXTURE = {"llama3_json": "llama-3.2-instruct", "deepseek_r1": "deepseek-r1"}


@pytest.mark.parametrize(("kind", "alias", "target"), SAME, ids=lambda v: str(v))
def test_an_alias_answers_as_the_name_it_stands_for(kind: str, alias: str, target: str) -> None:
    fixture = FIXTURE.get(target, "qwen3")
    prompt_text, text = TEXTS[target]
    prompt, gen = _encode(fixture, prompt_text), _encode(fixture, text)
    request = chat_request()
    answers = []
    for name in (alias, target):
        names = {"reasoning": name, "tool": None} if kind == "reasoning" else {"tool": name}
        r = _derenderer(fixture, names.get("reasoning"), names["tool"], "resumable")
        got = whole(r, prompt, gen, request, "stop")
        streamed = stream(r, prompt, _chunks(gen, "3"), request, "stop").result()
        answers.append((got.message, got.finish_reason, streamed.message))
    assert answers[0] == answers[1]


def test_an_alias_is_reported_by_its_own_name() -> None:
    r = _derenderer("qwen3", "glm47", "glm47", "resumable")
    assert (r.reasoning_parser, r.tool_parser) == ("glm47", "glm47")
    r = _derenderer("mistral-v13-derived", "mistral", "mistral", "resumable")
    assert (r.reasoning_parser, r.tool_parser) == ("mistral", "mistral")


def test_every_alias_is_an_accepted_name() -> None:
    core = import_tokstream()._core
    for kind, alias, _ in SAME:
        names = core.REASONING_NAMES if kind == "reasoning" else core.TOOL_NAMES
        assert alias in names, (kind, alias)
    assert "hf" in core.REASONING_NAMES and "hf" in core.TOOL_NAMES
    assert "holo2" in core.REASONING_NAMES and "holo2" not in core.TOOL_NAMES


def test_hf_and_beam_need_a_response_template_as_auto_does() -> None:
    for name in ("hf", "beam", "auto"):
        with pytest.raises(ValueError, match="response_template"):
            derenderer_class()(load_detokenizer("qwen3"), tool_parser=name)
