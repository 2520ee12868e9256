"""Parsers: the four rules where vLLM 0.33.0's parsers are right (issue 13, items 1 to 4).

1. Qwen3 thinks by default: the output starts in reasoning until ``</think>`` unless the request
   turns thinking off (``chat_template_kwargs.enable_thinking``, or ``reasoning_effort:
   "none"``) or the prompt closed reasoning in the current turn.
2. Reasoning ends once: a ``<think>`` block after it (a second block, or after a prompt that
   closed reasoning) is content, markers included.
3. Qwen3: ``<tool_call>`` while reasoning is open ends reasoning and the call is parsed.
4. A call without ``"arguments"`` has ``{}``.

``CASES`` holds each case's message and finish reason as vLLM 0.33.0's own derender route
answers these bodies (its ``OnlineDerenderer`` with ``reasoning_parser`` and ``tool_parser``
set and auto tool choice on, on the tokenizer fixtures), whole and streamed one id, three ids
and every id a chunk: the recorded values are the ones vLLM gave on every path (where its paths
disagree, the row is in the table of docs/differences.md and ``VLLM_DIFFERS`` says how). Each
case runs here whole and streamed at every chunking in both ``parser_state`` modes against the
recorded value and the parsers' oracle (``check_everywhere``), and through the plain-Python
replay reference.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import pytest
from helpers.parsers_oracle import (
    DEEPSEEK,
    END_THINK,
    QWEN,
    SERVED,
    THINK,
    Message,
    build,
    call,
    chat_request,
    cut_after,
    prompt_ids,
    thinking_of,
)
from helpers.parsers_util import check_everywhere, derenderer, singles, stream, whole
from helpers.real_tokenizers import load_tokenizer

from oracles.parser_reference import ReplayChatDerenderer

NO_ARGS = '{"name": "get_time"}'
PARIS_ARGS = '{"city": "Paris", "unit": "c"}'


@dataclass(frozen=True)
class VllmCase:
    """A generation, the request's extra fields, and what vLLM 0.33.0 answers for it."""

    label: str
    name: str
    reasoning: str | None
    tool: str | None
    kind: str
    pieces: tuple[str | None, ...]
    want: Message | None
    finish: str = "stop"
    want_finish: str = "stop"
    extra: dict[str, Any] = field(default_factory=dict)
    tools: bool = True
    cut: str | None = None

    def request(self) -> dict[str, Any]:
        return chat_request(tools=self.tools, **self.extra)

    def ids(self) -> tuple[list[int], list[int]]:
        """The prompt's ids and the output's."""
        tok = load_tokenizer(self.name)
        gen = build(tok, self.pieces)[0]
        if self.cut is not None:
            gen = cut_after(tok, gen, self.cut)
        return prompt_ids(self.name, self.kind), gen


THOUGHT = ("I should answer briefly.\n", END_THINK, "\n\nThe answer is 4.")
THOUGHT_SPLIT = Message("\n\nThe answer is 4.", "I should answer briefly.\n", ())
THOUGHT_AS_CONTENT = Message("I should answer briefly.\n</think>\n\nThe answer is 4.", "", ())
SECOND = (THINK, "\nplan\n", END_THINK, "\n\nAnswer. ", THINK, "again", END_THINK, " done")
PARIS = '{"name": "get_weather", "arguments": ' + PARIS_ARGS + "}"
CALL_IN_THOUGHT = ("I need the weather first.\n", *call(PARIS))
CALL_AS_CONTENT = Message(
    "<tool_call>\n" + PARIS + "\n</tool_call>", "I need the weather first.\n", ()
)
OFF = {"chat_template_kwargs": {"enable_thinking": False}}

CASES = (
    # 1. Qwen3's start state.
    VllmCase("qwen3/thinks-by-default", QWEN, "qwen3", "hermes", "none", THOUGHT, THOUGHT_SPLIT),
    VllmCase(
        "qwen3/after-an-earlier-turn", QWEN, "qwen3", "hermes", "history", THOUGHT, THOUGHT_SPLIT
    ),
    VllmCase(
        "qwen3/thinking-off",
        QWEN,
        "qwen3",
        "hermes",
        "none",
        THOUGHT,
        THOUGHT_AS_CONTENT,
        extra=OFF,
    ),
    VllmCase(
        "qwen3/thinking-null",
        QWEN,
        "qwen3",
        "hermes",
        "open",
        THOUGHT,
        THOUGHT_AS_CONTENT,
        extra={"chat_template_kwargs": {"enable_thinking": None}},
    ),
    VllmCase(
        "qwen3/thinking-on",
        QWEN,
        "qwen3",
        "hermes",
        "none",
        THOUGHT,
        THOUGHT_SPLIT,
        extra={"chat_template_kwargs": {"enable_thinking": True, "other": 1}},
    ),
    VllmCase(
        "qwen3/effort-none",
        QWEN,
        "qwen3",
        "hermes",
        "none",
        THOUGHT,
        THOUGHT_AS_CONTENT,
        extra={"reasoning_effort": "none"},
    ),
    VllmCase(
        "qwen3/effort-low",
        QWEN,
        "qwen3",
        "hermes",
        "none",
        THOUGHT,
        THOUGHT_SPLIT,
        extra={"reasoning_effort": "low"},
    ),
    VllmCase("qwen3/closed-prompt", QWEN, "qwen3", "hermes", "closed", THOUGHT, THOUGHT_AS_CONTENT),
    VllmCase("qwen3/no-tool-parser", QWEN, "qwen3", None, "none", THOUGHT, THOUGHT_SPLIT),
    VllmCase(
        "deepseek/ignores-enable-thinking",
        DEEPSEEK,
        "deepseek_r1",
        "hermes",
        "none",
        THOUGHT,
        THOUGHT_SPLIT,
        extra=OFF,
    ),
    # 2. A <think> block after reasoning ended.
    VllmCase(
        "qwen3/second-block",
        QWEN,
        "qwen3",
        "hermes",
        "none",
        SECOND,
        Message("\n\nAnswer. <think>again</think> done", "\nplan\n", ()),
    ),
    VllmCase(
        "qwen3/block-after-closed-prompt",
        QWEN,
        "qwen3",
        "hermes",
        "closed",
        (THINK, "x", END_THINK, "y"),
        Message("<think>x</think>y", "", ()),
    ),
    VllmCase(
        "deepseek/second-block",
        DEEPSEEK,
        "deepseek_r1",
        "hermes",
        "open",
        ("plan", END_THINK, "ans ", THINK, "more", END_THINK, " end"),
        Message("ans <think>more</think> end", "plan", ()),
    ),
    VllmCase(
        "deepseek/block-after-closed-prompt",
        DEEPSEEK,
        "deepseek_r1",
        "hermes",
        "closed",
        (THINK, "x", END_THINK, "y"),
        Message("<think>x</think>y", "", ()),
    ),
    # 3. <tool_call> while reasoning is open.
    VllmCase(
        "qwen3/call-ends-reasoning",
        QWEN,
        "qwen3",
        "hermes",
        "none",
        CALL_IN_THOUGHT,
        Message("", "I need the weather first.\n", (("get_weather", PARIS_ARGS),)),
        want_finish="tool_calls",
    ),
    VllmCase(
        "qwen3/call-ends-reasoning-open-prompt",
        QWEN,
        "qwen3",
        "hermes",
        "open",
        CALL_IN_THOUGHT,
        Message("", "I need the weather first.\n", (("get_weather", PARIS_ARGS),)),
        want_finish="tool_calls",
    ),
    VllmCase(
        "qwen3/call-ends-reasoning-no-tools",
        QWEN,
        "qwen3",
        "hermes",
        "none",
        CALL_IN_THOUGHT,
        CALL_AS_CONTENT,
        tools=False,
    ),
    VllmCase(
        "qwen3/call-ends-reasoning-no-tool-parser",
        QWEN,
        "qwen3",
        None,
        "none",
        CALL_IN_THOUGHT,
        CALL_AS_CONTENT,
    ),
    VllmCase(
        "deepseek/call-stays-in-reasoning",
        DEEPSEEK,
        "deepseek_r1",
        "hermes",
        "open",
        ("plan ", *call(NO_ARGS), " more", END_THINK, "x"),
        Message("x", 'plan <tool_call>\n{"name": "get_time"}\n</tool_call> more', ()),
    ),
    # 4. A call without "arguments".
    VllmCase(
        "qwen3/no-arguments",
        QWEN,
        "qwen3",
        "hermes",
        "closed",
        tuple(call(NO_ARGS)),
        Message("", "", (("get_time", "{}"),)),
        want_finish="tool_calls",
    ),
    VllmCase(
        "qwen3/no-arguments-twice",
        QWEN,
        "qwen3",
        "hermes",
        "closed",
        (*call(NO_ARGS), "\n", *call(NO_ARGS)),
        Message("", "", (("get_time", "{}"), ("get_time", "{}"))),
        want_finish="tool_calls",
    ),
    VllmCase(
        "qwen3/cut-before-arguments",
        QWEN,
        "qwen3",
        "hermes",
        "closed",
        tuple(call(PARIS)),
        Message("", "", (("get_weather", "{}"),)),
        finish="length",
        want_finish="length",
        cut='"get_weather",',
    ),
    VllmCase(
        "hermes/no-arguments",
        QWEN,
        None,
        "hermes",
        "none",
        ("Checking.\n", *call(NO_ARGS)),
        Message("Checking.\n", "", (("get_time", "{}"),)),
        want_finish="tool_calls",
    ),
    VllmCase(
        "deepseek/no-arguments",
        DEEPSEEK,
        "deepseek_r1",
        "hermes",
        "closed",
        tuple(call(NO_ARGS)),
        Message("", "", (("get_time", "{}"),)),
        want_finish="tool_calls",
    ),
)
#: Where vLLM 0.33.0's own paths disagree on a case (the recorded value is the path named first;
#: each is a row of the table of docs/differences.md).
VLLM_DIFFERS = {
    "qwen3/closed-prompt": "streams; whole responses ignore the prompt and make it reasoning",
    "qwen3/block-after-closed-prompt": "streams; whole responses ignore the prompt",
    "deepseek/block-after-closed-prompt": "streams; whole responses ignore the prompt",
    "qwen3/second-block": "streams of 1 or 3 ids; whole and one-chunk drop the second </think>",
    "deepseek/second-block": "streams of 1 or 3 ids; whole makes the second block reasoning",
    "qwen3/no-arguments": 'one-chunk streams; 1-id streams send "", whole makes it content',
    "qwen3/no-arguments-twice": "{} only on a call a final delta carries; whole: content",
    "qwen3/cut-before-arguments": "streams; whole makes the cut call content",
    "hermes/no-arguments": 'one-chunk streams; 1-id streams send "", whole makes it content',
    "deepseek/no-arguments": "none: whole makes it reasoning, streams drop it",
}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
def test_vllm_case_whole_and_streamed(case: VllmCase) -> None:
    """vLLM's answer, whole and at every chunking, in both modes; and the oracle's."""
    prompt, gen = case.ids()
    first, _ = check_everywhere(
        case.name,
        case.reasoning,
        case.tool,
        prompt,
        gen,
        finish=case.finish,
        request=case.request(),
        where=case.label,
    )
    assert first.message == case.want, case.label
    assert first.finish_reason == case.want_finish, case.label


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
def test_vllm_case_through_the_replay_reference(case: VllmCase) -> None:
    """The plain-Python replay reference gives vLLM's answer too, whole and one id a chunk."""
    prompt, gen = case.ids()
    ref = reference(case.name, case.reasoning, case.tool)
    request = case.request()
    got = whole(ref, prompt, gen, request, case.finish)
    assert (got.message, got.finish_reason) == (case.want, case.want_finish), case.label
    run = stream(ref, prompt, singles(gen), request, case.finish, mode="replay")
    got = run.result()
    assert (got.message, got.finish_reason) == (case.want, case.want_finish), case.label


@functools.cache
def reference(name: str, reasoning: str | None, tool: str | None) -> ReplayChatDerenderer:
    return ReplayChatDerenderer(
        load_tokenizer(name), SERVED, reasoning_parser=reasoning, tool_parser=tool
    )


def test_thinking_follows_python_truth() -> None:
    """``enable_thinking`` is read as vLLM's parser reads it: by Python truth when the key is
    there (``0``, ``0.0`` and ``""`` are off; ``1`` and ``"false"``, a non-empty string, are on),
    over ``reasoning_effort`` (each measured on vLLM 0.33.0). A list or an object is read by
    Python truth too, where vLLM answers 400 ("unhashable type", its parser config is cached by
    argument)."""
    prompt = prompt_ids(QWEN, "none")
    gen = build(load_tokenizer(QWEN), THOUGHT)[0]
    r = derenderer(QWEN, "qwen3", "hermes")
    for value, on in [
        (0, False),
        (0.0, False),
        ("", False),
        (1, True),
        ("false", True),
        ([], False),
        ({}, False),
        ([0], True),
    ]:
        kwargs = {"chat_template_kwargs": {"enable_thinking": value}, "reasoning_effort": "none"}
        got = whole(r, prompt, gen, chat_request(**kwargs), "stop")
        assert got.message == (THOUGHT_SPLIT if on else THOUGHT_AS_CONTENT), value
        assert thinking_of(chat_request(**kwargs)) == on, value
    # Null kwargs say nothing: thinking stays on.
    got = whole(r, prompt, gen, chat_request(chat_template_kwargs=None), "stop")
    assert got.message == THOUGHT_SPLIT


def test_the_differences_name_cases() -> None:
    """Every note of ``VLLM_DIFFERS`` is about a case here."""
    assert set(VLLM_DIFFERS) <= {c.label for c in CASES}, set(VLLM_DIFFERS)
