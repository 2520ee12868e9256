"""Parsers (issue 4, item 4): every chunking equals the whole response, which equals the oracle.

On the real Qwen3 and DeepSeek-R1 tokenizers, for reasoning only (``deepseek_r1`` / ``qwen3``),
tools only (``hermes``) and both: the whole response's message equals ``oracle`` (the contract in
plain Python over ``tokenizers``' decode). For every chunking (1, 2, 3 ids, random 1-5, random
with a finish-only tail, everything in one chunk) in both ``parser_state`` modes, the stream's
aggregate (content and reasoning concatenated, null as "", tool names in order, arguments
concatenated per index, tool-call ids, finish reason) equals the whole response's; and the
resumable and replay paths send the same deltas chunk by chunk.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.derender_util import chunkings
from helpers.parsers_oracle import (
    END_THINK,
    END_TOOL,
    NAMES,
    THINK,
    TOOL,
    VARIANT,
    Case,
    Message,
    cases,
    chat_request,
    oracle,
)
from helpers.parsers_util import (
    MODES,
    Result,
    Streamed,
    derenderer,
    expected_finish,
    singles,
    stream,
    whole,
)
from helpers.real_tokenizers import load_tokenizer
from hypothesis import given, settings
from hypothesis import strategies as st

CONFIGS = ("reasoning", "tools", "both")


def configured(name: str, config: str, mode: str) -> tuple[Any, str | None, bool]:
    """The derenderer of ``config`` in ``mode``, its reasoning parser, whether it parses tools."""
    reasoning = VARIANT[name] if config in ("reasoning", "both") else None
    tool = "hermes" if config in ("tools", "both") else None
    return derenderer(name, reasoning, tool, mode), reasoning, tool is not None


def shapes(gen: list[int], seed: object) -> dict[str, list[list[int]]]:
    """The chunkings of ``derender_util`` (1, 2, 3, random, finish-only tail) plus one chunk."""
    return {**chunkings(gen, seed), "one": [list(gen)]}


def expected(name: str, config: str, case: Case) -> Message:
    _, reasoning, tools = configured(name, config, "resumable")
    return oracle(name, case.prompt, case.gen, reasoning=reasoning, tools=tools)


def assert_no_marker_text(message: Message, reasoning: bool, tools: bool, where: str) -> None:
    """Markers of an active parser never show in content or reasoning (none of these
    generations writes marker text outside a JSON string)."""
    for marker in (THINK, END_THINK) if reasoning else ():
        assert marker not in message.content + message.reasoning, f"{marker} leaked: {where}"
    for marker in (TOOL, END_TOOL) if tools else ():
        assert marker not in message.content + message.reasoning, f"{marker} leaked: {where}"


def assert_same(got: Result, want: Result, where: str) -> None:
    assert got.message.reasoning == want.message.reasoning, f"reasoning: {where}"
    assert got.message.content == want.message.content, f"content: {where}"
    assert [n for n, _ in got.message.calls] == [n for n, _ in want.message.calls], where
    assert got.message.calls == want.message.calls, f"arguments: {where}"
    assert got.ids == want.ids, f"tool-call ids: {where}"
    assert got.finish_reason == want.finish_reason, f"finish_reason: {where}"
    assert (got.content_null, got.reasoning_null) == (want.content_null, want.reasoning_null), where


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("name", NAMES)
def test_whole_response_matches_the_oracle(name: str, config: str) -> None:
    for case in cases(name):
        want = expected(name, config, case)
        answers = []
        for mode in MODES:
            r, reasoning, tools = configured(name, config, mode)
            where = f"{name} {config} {mode} {case.label}"
            got = whole(r, case.prompt, case.gen, chat_request(), case.finish)
            assert got.message.reasoning == want.reasoning, where
            assert got.message.content == want.content, where
            assert got.message.calls == want.calls, where
            assert got.finish_reason == expected_finish(want, case.finish), where
            assert got.content_null == (want.content == ""), f"content null when empty: {where}"
            assert got.reasoning_null == (want.reasoning == ""), f"reasoning null: {where}"
            assert len(set(got.ids)) == len(got.ids), f"tool-call ids repeat: {where}"
            assert_no_marker_text(got.message, reasoning is not None, tools, where)
            answers.append(got)
        assert answers[0] == answers[1], f"whole answers differ between modes: {name} {case}"


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("name", NAMES)
def test_every_chunking_equals_the_whole_response(name: str, config: str) -> None:
    for case in cases(name):
        want = expected(name, config, case)
        r, _, _ = configured(name, config, "resumable")
        whole_result = whole(r, case.prompt, case.gen, chat_request(), case.finish)
        for mode in MODES:
            r, reasoning, tools = configured(name, config, mode)
            for shape, chunks in shapes(case.gen, case.label).items():
                where = f"{name} {config} {mode} {case.label} {shape}"
                run = stream(r, case.prompt, chunks, chat_request(), case.finish, mode=mode)
                got = run.result()
                assert got.message == want, f"stream != oracle: {where}"
                assert_same(got, whole_result, where)
                assert_no_marker_text(got.message, reasoning is not None, tools, where)
                if mode == "replay":
                    final = run.states[-1]
                    assert final["tools_streamed"] == bool(want.calls), where
                    assert final["last_tool_call_ids"] == list(got.ids), where


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("name", NAMES)
def test_resumable_and_replay_send_the_same_deltas(name: str, config: str) -> None:
    """The replay path rebuilds the same parser from the history, so every chunk's delta (and
    finish reason) is the resumable path's, not only the aggregate."""
    for case in cases(name):
        for shape, chunks in shapes(case.gen, case.label).items():
            runs = []
            for mode in MODES:
                r, _, _ = configured(name, config, mode)
                runs.append(stream(r, case.prompt, chunks, chat_request(), case.finish, mode=mode))
            resumable, replay = runs
            where = f"{name} {config} {case.label} {shape}"
            for n, (a, b) in enumerate(zip(resumable.deltas, replay.deltas, strict=True)):
                assert a == b, f"chunk {n} of {len(chunks)} ({chunks[n]}): {where}"
            assert resumable.finishes == replay.finishes, where


@pytest.mark.parametrize("name", NAMES)
def test_replay_state_records_tools_and_ids_as_they_stream(name: str) -> None:
    """Replay mode (vLLM's state): ``tools_streamed`` turns true with the first tool-call delta,
    and ``last_tool_call_ids`` holds the ids sent so far, by index."""
    r = derenderer(name, VARIANT[name], "hermes", "replay")
    for case in cases(name):
        run = stream(r, case.prompt, singles(case.gen), chat_request(), case.finish, mode="replay")
        sent: list[str] = []
        for n, (delta, state) in enumerate(zip(run.deltas, run.states, strict=True)):
            sent += [c["id"] for c in delta.get("tool_calls", []) if c["id"] is not None]
            where = f"{name} {case.label} chunk {n}"
            assert state["tools_streamed"] == bool(sent), where
            assert state["last_tool_call_ids"] == sent, where


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("name", NAMES)
def test_nothing_is_held_back_but_what_could_begin_a_tag(name: str, config: str) -> None:
    """One id per chunk: after every chunk, the reasoning and content sent equal the oracle's
    for the output so far, except (DeepSeek-R1's text tags, content only) a held suffix that
    could begin ``<tool_call>``; every name is sent in the chunk that completes it, and the
    arguments sent are a prefix of the oracle's so far (append-only, never ahead)."""
    for mode in MODES:
        r, reasoning, tools = configured(name, config, mode)
        text_tags = tools and load_tokenizer(name).token_to_id(TOOL) is None
        for case in cases(name):
            run = stream(r, case.prompt, singles(case.gen), chat_request(), case.finish, mode=mode)
            sent = Streamed()
            for n, delta in enumerate(run.deltas):
                sent.deltas.append(delta)
                sent.finishes.append(None)
                got = sent.result().message
                prefix = case.gen[: n + 1]
                if n < len(run.deltas) - 1 and load_tokenizer(name).decode(
                    prefix, skip_special_tokens=False
                ).endswith("\ufffd"):
                    continue  # a character still incomplete
                so_far = oracle(name, case.prompt, prefix, reasoning=reasoning, tools=tools)
                where = f"{name} {config} {mode} {case.label} after chunk {n}"
                assert got.reasoning == so_far.reasoning, where
                held = so_far.content[len(got.content) :]
                assert so_far.content.startswith(got.content), where
                assert held == "" or (text_tags and TOOL.startswith(held) and held != TOOL), (
                    f"held back {held!r}: {where}"
                )
                assert [f for f, _ in got.calls] == [f for f, _ in so_far.calls], where
                for (_, a), (_, b) in zip(got.calls, so_far.calls, strict=True):
                    assert b.startswith(a), f"arguments ahead of the text: {a!r} {b!r} {where}"


@settings(max_examples=40)
@given(data=st.data())
def test_random_chunkings(data: st.DataObject) -> None:
    """Any chunking (sizes 1-8, empty chunks anywhere but first), either mode, any config."""
    name = data.draw(st.sampled_from(NAMES))
    config = data.draw(st.sampled_from(CONFIGS))
    mode = data.draw(st.sampled_from(MODES))
    case = data.draw(st.sampled_from(cases(name)))
    sizes = data.draw(st.lists(st.integers(0, 8), min_size=len(case.gen), max_size=len(case.gen)))
    chunks, i = [], 0
    for size in sizes:
        if i >= len(case.gen):
            break
        if size == 0 and chunks:
            chunks.append([])
            continue
        chunks.append(case.gen[i : i + max(size, 1)])
        i += max(size, 1)
    if i < len(case.gen):
        chunks.append(case.gen[i:])
    r, _, _ = configured(name, config, mode)
    run = stream(r, case.prompt, chunks, chat_request(), case.finish, mode=mode)
    want = expected(name, config, case)
    assert run.result().message == want, f"{name} {config} {mode} {case.label} {chunks}"
    whole_result = whole(r, case.prompt, case.gen, chat_request(), case.finish)
    assert_same(run.result(), whole_result, f"{name} {config} {mode} {case.label} {chunks}")
