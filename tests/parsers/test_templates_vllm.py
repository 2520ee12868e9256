"""Built-in templates under vLLM's parser names, with vLLM 0.33.0's answers.

- every parser name is checked against the names of its kind, also beside a template;
  an unknown one is refused (``ValueError`` from ``Derenderer``, a usage error from
  ``tokstream serve``) with the names there are.
- ``deepseek_v3`` for reasoning with ``deepseek_v31`` for tool calls (DeepSeek-V3.1's
  pair) parse together: reasoning and content as ``deepseek_v3`` says, calls as
  ``deepseek_v31`` says.
- a call's JSON arguments end where the JSON value ends (``llama3_json``, ``mistral``,
  ``mistral_v11``); the text after the call is content.
- ``deepseek_v3`` reasoning follows the request's thinking switch: off unless
  ``chat_template_kwargs`` has a true ``thinking`` or ``enable_thinking`` (or, without
  ``enable_thinking``, a ``reasoning_effort`` other than ``"none"``); on, the output starts in
  reasoning until ``</think>``.

Each case's expected message is vLLM 0.33.0's whole answer for the same text, names and
tokenizer fixture (its ``ParserManager.get_parser`` with auto tool choice on, then ``parse``, run
on CPU from the 0.33.0 wheel), except where a comment says how vLLM's differs: where vLLM drops
text or whitespace, the answer here keeps it. Every case runs whole and streamed at 1, 3 and
random ids a chunk, in both ``parser_state`` modes, against the whole answer.
"""

# DeepSeek's markers are spelled with full-width bars.
# ruff: noqa: RUF001

from __future__ import annotations

import functools
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import pytest
from helpers.family_cases import chunks as _chunks
from helpers.family_cases import encode as _encode
from helpers.parsers_oracle import SERVED, Message, chat_request
from helpers.parsers_util import derenderer_class, stream, whole
from helpers.real_tokenizers import tokenizer_path
from helpers.stream_util import import_tokstream, load_detokenizer

DS_PROMPT = "<｜begin▁of▁sentence｜><｜User｜>Weather?<｜Assistant｜>"
LLAMA_PROMPT = "<|start_header_id|>assistant<|end_header_id|>\n\n"
MISTRAL_PROMPT = "[INST]Weather?[/INST]"
QWEN_PROMPT = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
CALL_V31 = (
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
    '{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
)
CALL_V3 = (
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
    '{"city": "Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
)
TAIL = "\nI have called the tool."
PARIS = (("get_weather", '{"city": "Paris"}'),)


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
    extra: dict[str, Any] | None = None


CASES = [
    # vLLM 0.33.0 (tool_parsers/llama_tool_parser.py) gives the call with these
    # arguments and content None: the text after the object is dropped (streamed at 3 ids a
    # chunk its arguments come out empty).
    Case(
        "llama3_json-text-after-the-call",
        "llama-3.2-instruct",
        None,
        "llama3_json",
        LLAMA_PROMPT,
        '{"name": "get_weather", "parameters": {"city": "Paris"}}' + TAIL,
        Message("I have called the tool.", "", PARIS),
    ),
    # vLLM 0.33.0 gives these two calls (a `}` or `;` inside a string is text of the call).
    Case(
        "llama3_json-two-calls",
        "llama-3.2-instruct",
        None,
        "llama3_json",
        LLAMA_PROMPT,
        '{"name": "get_weather", "parameters": {"city": "Paris"}}; '
        '{"name": "search", "parameters": {"query": "} ; {"}}',
        Message("", "", (*PARIS, ("search", '{"query": "} ; {"}'))),
    ),
    # Arguments that are not JSON are sent as written, whole and streamed: vLLM 0.33.0's whole
    # answer has no call (the text as content), its stream a call with arguments "" (its test
    # `test_extract_tool_calls_invalid_json`).
    Case(
        "llama3_json-arguments-that-are-not-json",
        "llama-3.2-instruct",
        None,
        "llama3_json",
        LLAMA_PROMPT,
        '{"name": "get_weather", "parameters": {invalid json}',
        Message("", "", (("get_weather", "{invalid json}"),)),
    ),
    # vLLM 0.33.0 (parser/mistral.py, pre-v11 tokenizer): whole, the call and content None;
    # streamed, the call and content "\nI have called the tool.", the answer here.
    Case(
        "mistral-text-after-the-calls",
        "mistral-7b-instruct-v0.3",
        None,
        "mistral",
        MISTRAL_PROMPT,
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]' + TAIL,
        Message(TAIL, "", PARIS),
    ),
    # vLLM 0.33.0 (parser/mistral.py, `_extract_args_json`) keeps the first JSON value of the
    # arguments and drops the text after it (streamed, it sends that text as arguments); here it
    # is content, as written.
    Case(
        "mistral_v11-text-after-the-call",
        "mistral-nemo-tekken",
        None,
        "mistral_v11",
        MISTRAL_PROMPT,
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}' + TAIL,
        Message(TAIL, "", PARIS),
    ),
    # vLLM 0.33.0 (reasoning/deepseek_v3_reasoning_parser.py): without thinking, the
    # identity parser: the whole text is content.
    Case(
        "deepseek_v3-thinking-unset",
        "deepseek-r1",
        "deepseek_v3",
        "deepseek_v3",
        DS_PROMPT,
        "<think>\nPlan.\n</think>\n\nSunny.",
        Message("<think>\nPlan.\n</think>\n\nSunny.", "", ()),
    ),
    # Python truth: false and 0 are off.
    Case(
        "deepseek_v3-thinking-false",
        "deepseek-r1",
        "deepseek_v3",
        "deepseek_v3",
        DS_PROMPT,
        "<think>\nPlan.\n</think>\n\nSunny.",
        Message("<think>\nPlan.\n</think>\n\nSunny.", "", ()),
        kwargs={"thinking": False, "enable_thinking": 0},
    ),
    # With thinking, DeepSeek-R1's parser, which keeps whitespace.
    Case(
        "deepseek_v3-thinking",
        "deepseek-r1",
        "deepseek_v3",
        "deepseek_v3",
        DS_PROMPT,
        "<think>\nPlan.\n</think>\n\nSunny.",
        Message("\n\nSunny.", "\nPlan.\n", ()),
        kwargs={"thinking": True},
    ),
    Case(
        "deepseek_v3-enable_thinking-call",
        "deepseek-r1",
        "deepseek_v3",
        "deepseek_v3",
        DS_PROMPT + "<think>",
        "Plan.</think>" + CALL_V3,
        Message("", "Plan.", PARIS),
        kwargs={"enable_thinking": 1},
    ),
    # vLLM's chat parameters put enable_thinking = (reasoning_effort != "none") into the kwargs
    # the parser gets when the request does not set it.
    Case(
        "deepseek_v3-reasoning_effort",
        "deepseek-r1",
        "deepseek_v3",
        None,
        DS_PROMPT,
        "Plan.</think>Sunny.",
        Message("Sunny.", "Plan.", ()),
        extra={"reasoning_effort": "high"},
    ),
    Case(
        "deepseek_v3-reasoning_effort-none",
        "deepseek-r1",
        "deepseek_v3",
        None,
        DS_PROMPT,
        "Plan.</think>Sunny.",
        Message("Plan.</think>Sunny.", "", ()),
        extra={"reasoning_effort": "none"},
    ),
    # vLLM 0.33.0 (DelegatingParser over the deepseek_v3 reasoning parser and
    # tool_parsers/deepseekv31_tool_parser.py) gives exactly these whole answers.
    Case(
        "deepseek_v3+v31-thinking",
        "deepseek-r1",
        "deepseek_v3",
        "deepseek_v31",
        DS_PROMPT + "<think>",
        "Plan.</think>Let me check." + CALL_V31,
        Message("Let me check.", "Plan.", PARIS),
        kwargs={"thinking": True},
    ),
    Case(
        "deepseek_v3+v31-no-thinking",
        "deepseek-r1",
        "deepseek_v3",
        "deepseek_v31",
        DS_PROMPT + "</think>",
        "<think>x</think>Let me check." + CALL_V31,
        Message("<think>x</think>Let me check.", "", PARIS),
    ),
    # A `<parameter=` before the open one's `</parameter>` ends it, as vLLM 0.33.0's
    # `qwen3_coder` and `step3p5` read it (whole and streamed). One left open before
    # `</function>` or the call's end ends there (a string value's text is sent as it comes);
    # their whole answers drop it (`{}`) and their streams send it half-open (`{"city": "Paris`).
    *(
        Case(
            f"{name}-{label}",
            "qwen3",
            name,
            name,
            QWEN_PROMPT,
            f"<think>r</think>\n<tool_call>\n<function=get_weather>\n{params}</tool_call>",
            Message("", "r", (("get_weather", arguments),)),
        )
        for name in ("qwen3_coder", "step3p5")
        for label, params, arguments in (
            (
                "unclosed-before-the-next",
                "<parameter=city>\nParis\n<parameter=unit>\nc\n</parameter>\n</function>\n",
                '{"city": "Paris", "unit": "c"}',
            ),
            (
                "unclosed-before-function",
                "<parameter=city>\nParis\n</function>\n",
                '{"city": "Paris"}',
            ),
            ("unclosed-at-the-end", "<parameter=city>\nParis\n", '{"city": "Paris"}'),
        )
    ),
    # A `<function=...>` call without its `<tool_call>` is a call, as vLLM reads it.
    *(
        Case(
            f"{name}-a-call-without-its-tool-call",
            "qwen3",
            None,
            name,
            QWEN_PROMPT,
            "Sure.\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>",
            Message("Sure.\n", "", PARIS),
        )
        for name in ("qwen3_coder", "step3p5")
    ),
    # Kimi K2's call section ends reasoning, also with the reasoning parser alone (its text is
    # then content).
    Case(
        "kimi_k2-reasoning-alone-ends-at-the-call-section",
        "kimi-k2-derived",
        "kimi_k2",
        None,
        "<|im_assistant|>assistant<|im_middle|>",
        "some reasoning<|tool_calls_section_begin|>tool call data",
        Message("<|tool_calls_section_begin|>tool call data", "some reasoning", ()),
    ),
    # A call whose JSON never closes ends at `<|tool_call_end|>`, as vLLM's `kimi_k2` ends it
    # (its test `test_invalid_json_still_extracted`): its arguments as they came, and the next
    # call is read.
    Case(
        "kimi_k2-a-call-whose-json-never-closes",
        "kimi-k2-derived",
        None,
        "kimi_k2",
        "<|im_assistant|>assistant<|im_middle|>",
        "Help. <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0 "
        '<|tool_call_argument_begin|>{"city": "Beijing"<|tool_call_end|><|tool_call_begin|>'
        'functions.get_weather:1 <|tool_call_argument_begin|>{"city": "Shanghai"}'
        "<|tool_call_end|><|tool_calls_section_end|>",
        Message(
            "Help. ",
            "",
            (("get_weather", '{"city": "Beijing"'), ("get_weather", '{"city": "Shanghai"}')),
        ),
    ),
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
    extra = dict(case.extra or {})
    if case.kwargs is not None:
        extra["chat_template_kwargs"] = case.kwargs
    request = chat_request(**extra)
    prompt, gen = _encode(case.fixture, case.prompt), _encode(case.fixture, case.text)
    got = whole(r, prompt, gen, request, "stop")
    assert got.message == case.expected
    assert got.finish_reason == ("tool_calls" if case.expected.calls else "stop")
    for shape in ("1", "3", "random"):
        streamed = stream(r, prompt, _chunks(gen, shape), request, "stop", mode=mode)
        assert streamed.result() == got, shape


def test_the_pair_goes_by_both_names() -> None:
    r = _derenderer("deepseek-r1", "deepseek_v3", "deepseek_v31", "resumable")
    assert (r.reasoning_parser, r.tool_parser) == ("deepseek_v3", "deepseek_v31")


UNKNOWN = [
    ("deepseek_v3", "nonsense_xyz", "tool", "nonsense_xyz"),
    ("nonsense_abc", "qwen3_coder", "reasoning", "nonsense_abc"),
    ("hermes", None, "reasoning", "hermes"),
    (None, "qwen3", "tool", "qwen3"),
]


@pytest.mark.parametrize(("reasoning", "tool", "kind", "bad"), UNKNOWN)
def test_unknown_names_are_refused(
    reasoning: str | None, tool: str | None, kind: str, bad: str
) -> None:
    with pytest.raises(ValueError, match=f'unknown {kind} parser "{bad}"; known: ') as e:
        derenderer_class()(
            load_detokenizer("deepseek-r1"), reasoning_parser=reasoning, tool_parser=tool
        )
    core = import_tokstream()._core
    known = [*core.REASONING_PARSERS] if kind == "reasoning" else [*core.TOOL_PARSERS]
    for name in [*known, *core.TEMPLATES, "auto"]:
        assert f'"{name}"' in str(e.value), name


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("nonsense_xyz", ["invalid choice: 'nonsense_xyz'", "'deepseek_v31'"]),
    ],
)
def test_serve_refuses_an_unserved_name_at_startup(name: str, says: list[str]) -> None:
    folder = tokenizer_path("deepseek-r1").parent
    args = ["--reasoning-parser", "deepseek_v3", "--tool-call-parser", name]
    done = subprocess.run(
        [sys.executable, "-m", "tokstream", "serve", "--tokenizer", str(folder), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "argument --tool-call-parser: " in done.stderr, done.stderr
    for text in says:
        assert text in done.stderr, done.stderr


@pytest.mark.parametrize("name", ["qwen3_coder", "glm45", "minimax_m2"])
def test_a_closed_call_has_whole_arguments_before_the_finish(name: str) -> None:
    """A tag-form call's arguments, sent tag by tag, end with the call's close, not with the
    stream's next text or its finish (a stream whose last chunk carries no finish yet)."""
    calls = {
        "qwen3_coder": "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
        "</parameter>\n</function>\n</tool_call>",
        "glm45": "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>"
        "\n</tool_call>",
        "minimax_m2": '<minimax:tool_call>\n<invoke name="get_weather">\n'
        '<parameter name="city">Paris</parameter>\n</invoke>\n</minimax:tool_call>',
    }
    r = _derenderer("qwen3", None, name, "resumable")
    gen = _encode("qwen3", calls[name])
    streamed = stream(r, _encode("qwen3", QWEN_PROMPT), _chunks(gen, "1"), chat_request(), None)
    arguments = "".join(
        call["function"].get("arguments") or ""
        for delta in streamed.deltas
        for call in delta.get("tool_calls") or []
    )
    assert arguments == '{"city": "Paris"}'
