"""Parsers: REFERENCE section 6's marker bug classes, each a named test.

Markers split across chunks (the DeepSeek-R1 hermes tags are text: ``<tool_`` | ``call>``),
markers never leaking into content or reasoning, multi-token deltas holding a marker with text on
both sides, several markers in one chunk, the initial reasoning state read from the prompt (open,
closed, none, an earlier turn's ``</think>``), thinking disabled by the prompt, marker text that
is not the marker token, and tool tags inside reasoning (qwen3's reasoning ends there). Every
test checks whole and streamed answers, in both ``parser_state`` modes, against the oracle of
``parsers_util``.
"""

from __future__ import annotations

import pytest
from helpers.parsers_oracle import (
    BREAK,
    DEEPSEEK,
    END_THINK,
    END_TOOL,
    NAMES,
    QWEN,
    STARTS_IN_REASONING,
    THINK,
    TOOL,
    VARIANT,
    VARIANTS,
    W_PARIS,
    build,
    call,
    cases,
    chat_request,
    encode,
    oracle,
    prompt_ids,
    starts_in_reasoning,
)
from helpers.parsers_util import (
    MODES,
    Streamed,
    check_everywhere,
    derenderer,
    singles,
    stream,
)
from helpers.real_tokenizers import load_tokenizer

PLAIN = "Paris is sunny ☀️ and 東京 is rainy 雨 today; 👨‍👩‍👧‍👦 stay in."


def split_at(ids: list[int], breaks: list[int], middle_whole: bool = True) -> list[list[int]]:
    """Single ids, except the span between the first two breaks as one chunk."""
    a, b = breaks[0], breaks[1]
    return [*singles(ids[:a]), list(ids[a:b]) if middle_whole else [], *singles(ids[b:])]


def one_delta(delta: dict[str, object]) -> Streamed:
    """A stream of one delta, to read it with ``Streamed.result``."""
    return Streamed(deltas=[delta], finishes=[None], states=[])  # type: ignore[list-item]


def test_hermes_tag_split_across_chunks_is_held_back() -> None:
    """DeepSeek-R1: ``<tool_`` ends one chunk and ``call>`` starts the next (and the same for
    ``</tool_`` | ``call>``): the chunk ending in ``<tool_`` sends the content before it and holds
    back only what could begin a tag; nothing of the tags reaches content; the call is whole."""
    tok = load_tokenizer(DEEPSEEK)
    assert tok.token_to_id(TOOL) is None, "the hermes tags must be text on DeepSeek-R1"
    pieces = ["Sure, checking 東京 now.\n\n<tool_", BREAK, "call>\n" + W_PARIS + "\n</tool_"]
    ids, breaks = build(tok, [*pieces, BREAK, "call>"])
    prompt = prompt_ids(DEEPSEEK, "closed")
    content = "Sure, checking 東京 now.\n\n"
    three = [ids[: breaks[0]], ids[breaks[0] : breaks[1]], ids[breaks[1] :]]
    shapes = {"at-the-splits": three, "size1": singles(ids), "tail": [*three, []]}
    for reasoning in (None, "deepseek_r1"):
        check_everywhere(DEEPSEEK, reasoning, "hermes", prompt, ids, chunkings=shapes)
        for mode in MODES:
            r = derenderer(DEEPSEEK, reasoning, "hermes", mode)
            run = stream(r, prompt, three, chat_request(), "stop", mode=mode)
            first, second, third = run.deltas
            assert first["content"] == content, (mode, first)
            assert "tool_calls" not in first, (mode, first)
            assert second["content"] is None and third["content"] is None, (mode, run.deltas)
            assert run.result().message.calls == (
                ("get_weather", '{"city": "Paris", "unit": "c"}'),
            )


@pytest.mark.parametrize("name", NAMES)
def test_every_two_chunk_split(name: str) -> None:
    """Each generation cut into two chunks at every id: the answer never depends on the cut."""
    reasoning = VARIANT[name]
    for case in cases(name):
        if case.label not in ("none/one-call", "literal", "none/partial-tag"):
            continue
        shapes = {f"cut{k}": [case.gen[:k], case.gen[k:]] for k in range(1, len(case.gen))}
        check_everywhere(
            name,
            reasoning,
            "hermes",
            case.prompt,
            case.gen,
            finish=case.finish,
            chunkings=shapes,
            where=case.label,
        )


@pytest.mark.parametrize("name", NAMES)
def test_markers_never_leak_into_any_delta(name: str) -> None:
    """No chunk's content or reasoning holds a marker of an active parser, or a part of one
    that the next chunks complete (one id per chunk, both parsers)."""
    reasoning = VARIANT[name]
    for mode in MODES:
        r = derenderer(name, reasoning, "hermes", mode)
        for case in cases(name):
            run = stream(r, case.prompt, singles(case.gen), chat_request(), case.finish, mode=mode)
            content = "".join(d["content"] or "" for d in run.deltas)
            thought = "".join(d["reasoning"] or "" for d in run.deltas)
            for marker in (THINK, END_THINK, TOOL, END_TOOL):
                assert marker not in content, f"{marker} in content: {mode} {case.label}"
                assert marker not in thought, f"{marker} in reasoning: {mode} {case.label}"
            for delta in run.deltas:
                for text in (delta["content"] or "", delta["reasoning"] or ""):
                    assert not any(m in text for m in (THINK, END_THINK, TOOL, END_TOOL)), delta


@pytest.mark.parametrize("name", NAMES)
def test_multi_token_delta_with_a_marker_and_text_on_both_sides(name: str) -> None:
    """One chunk holds reasoning text, ``</think>``, then content text: its delta carries both,
    each exactly; the same with content, ``<tool_call>`` and the start of a call."""
    tok = load_tokenizer(name)
    variant = VARIANT[name]
    prompt = prompt_ids(name, "none")
    head = [THINK, "\nShort thought about 東京"]
    ids, breaks = build(
        tok, [*head, BREAK, " and Paris 🤔.\n", END_THINK, "\n\nAnswer: sunny ☀️", BREAK, " ok."]
    )
    for tool in (None, "hermes"):
        chunks = split_at(ids, breaks)
        _, runs = check_everywhere(name, variant, tool, prompt, ids, chunkings={"mid": chunks})
        for mode in MODES:
            delta = runs[mode, "mid"].deltas[breaks[0]]
            assert delta["reasoning"] == " and Paris 🤔.\n", (mode, delta)
            assert delta["content"] == "\n\nAnswer: sunny ☀️", (mode, delta)
    closed = prompt_ids(name, "closed")
    pieces = ["Checking", BREAK, " now 🌦️.\n\n", TOOL, '\n{"name": "get_weather", ', BREAK]
    ids, breaks = build(tok, [*pieces, '"arguments": {"city": "Paris"}}\n', END_TOOL])
    for reasoning in (None, variant):
        chunks = split_at(ids, breaks)
        _, runs = check_everywhere(
            name, reasoning, "hermes", closed, ids, chunkings={"mid": chunks}
        )
        for mode in MODES:
            delta = runs[mode, "mid"].deltas[breaks[0]]
            assert delta["content"] == " now 🌦️.\n\n", (mode, delta)
            calls = one_delta(delta).result().message.calls
            assert [n for n, _ in calls] == ["get_weather"], (mode, delta)


@pytest.mark.parametrize("name", NAMES)
def test_several_markers_in_one_chunk(name: str) -> None:
    """``</think>``, ``<tool_call>``, ``</tool_call>`` and another ``<tool_call>`` in one chunk:
    its delta has the reasoning tail, the content between, the whole first call and the second
    call's name; the rest streams on."""
    tok = load_tokenizer(name)
    prompt = prompt_ids(name, "open")
    middle = [" done.", END_THINK, "\n\n", *call('{"name": "get_time", "arguments": {}}'), "\n"]
    pieces = ["\nThinking 🤔", BREAK, *middle, TOOL, '\n{"name": "get_weather", ', BREAK]
    ids, breaks = build(tok, [*pieces, '"arguments": {"city": "Paris"}}\n', END_TOOL])
    chunks = split_at(ids, breaks)
    _, runs = check_everywhere(
        name, VARIANT[name], "hermes", prompt, ids, chunkings={"mid": chunks}
    )
    for mode in MODES:
        delta = runs[mode, "mid"].deltas[breaks[0]]
        assert delta["reasoning"] == " done." and delta["content"] == "\n\n", (mode, delta)
        calls = one_delta(delta).result().message.calls
        assert calls[0] == ("get_time", "{}") and calls[1][0] == "get_weather", (mode, delta)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kind", ["none", "open", "closed", "history"])
def test_initial_reasoning_state_from_the_prompt(name: str, variant: str, kind: str) -> None:
    """The prompt sets the state the output starts in (``STARTS_IN_REASONING``; qwen3 reads only
    the current turn, so on DeepSeek-R1's tokenizer, which has no ChatML turn markers, an earlier
    turn's ``</think>`` closes it). Then ``</think>`` in the output ends reasoning (dropped); once
    in content it is content text, as vLLM streams it."""
    tok = load_tokenizer(name)
    prompt = prompt_ids(name, kind)
    thinking = STARTS_IN_REASONING[kind, variant] and not (
        (kind, variant, name) == ("history", "qwen3", DEEPSEEK)
    )
    assert starts_in_reasoning(tok, variant, prompt) == thinking
    plain = encode(tok, PLAIN)
    want = oracle(name, prompt, plain, reasoning=variant, tools=False)
    assert (want.reasoning, want.content) == ((PLAIN, "") if thinking else ("", PLAIN))
    for tool in (None, "hermes"):
        first, _ = check_everywhere(name, variant, tool, prompt, plain, where=kind)
        assert (first.reasoning_null, first.content_null) == (not thinking, thinking)
        ids, _ = build(tok, ["Weighing 東京 🤔", END_THINK, "\n\nAnswer: ☀️"])
        first, _ = check_everywhere(name, variant, tool, prompt, ids, where=kind)
        if thinking:
            assert first.message.reasoning == "Weighing 東京 🤔"
            assert first.message.content == "\n\nAnswer: ☀️"
        else:
            assert first.reasoning_null, first
            assert first.message.content == "Weighing 東京 🤔</think>\n\nAnswer: ☀️", first


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("variant", VARIANTS)
def test_thinking_disabled_by_the_prompt(name: str, variant: str) -> None:
    """``<think>\\n\\n</think>\\n\\n`` closes reasoning in the prompt: no reasoning at all (null
    whole, never a reasoning delta), content and calls as written."""
    prompt = prompt_ids(name, "closed")
    ids, _ = build(load_tokenizer(name), ["Checking Paris ☀️.\n\n", *call(W_PARIS)])
    for tool in (None, "hermes"):
        first, runs = check_everywhere(name, variant, tool, prompt, ids)
        assert first.reasoning_null, first
        for run in runs.values():
            assert all(d["reasoning"] is None for d in run.deltas)
        if tool:
            assert first.message.content == "Checking Paris ☀️.\n\n"
            assert first.message.calls == (("get_weather", '{"city": "Paris", "unit": "c"}'),)


@pytest.mark.parametrize("name", NAMES)
def test_marker_text_that_is_not_the_marker_token_stays_text(name: str) -> None:
    """Markers that are one token are detected by id only: ``<think>`` spelled with other
    tokens is content (both models), and so is ``<tool_call>`` on Qwen3."""
    tok = load_tokenizer(name)
    words = ["Write ", "<", "think", ">", " and ", "</", "think", ">", " tags 🤖."]
    if name == QWEN:
        words += [" Or ", "<", "tool_call", ">", "{}", "</", "tool_call", ">", "."]
    ids = [i for w in words for i in encode(tok, w)]
    markers = {tok.token_to_id(m) for m in (THINK, END_THINK, TOOL, END_TOOL)}
    assert not markers & set(ids), "the spelled-out markers must not be the marker ids"
    prompt = prompt_ids(name, "closed")
    first, _ = check_everywhere(name, VARIANT[name], "hermes", prompt, ids)
    assert first.message.content == "".join(words) and not first.message.calls, first


@pytest.mark.parametrize("name", NAMES)
def test_tool_tags_inside_reasoning(name: str) -> None:
    """deepseek_r1's tool parser reads content only: a ``<tool_call>`` while reasoning (text on
    DeepSeek-R1) is reasoning text, and the call after ``</think>`` is the only call. qwen3's
    reasoning ends at a ``<tool_call>`` (the id on Qwen3): that call is parsed, the text after it
    and the ``</think>`` are dropped as text outside calls, and the second call is parsed too."""
    tok = load_tokenizer(name)
    thought = ["\nMaybe ", *call('{"name": "search", "arguments": {"q": "x"}}'), " later.\n"]
    ids, _ = build(tok, [*thought, END_THINK, "\n\n", *call(W_PARIS)])
    prompt = prompt_ids(name, "open")
    first, _ = check_everywhere(name, VARIANT[name], "hermes", prompt, ids)
    paris = ("get_weather", '{"city": "Paris", "unit": "c"}')
    if VARIANT[name] == "qwen3":
        assert first.message.reasoning == "\nMaybe "
        assert first.message.calls == (("search", '{"q": "x"}'), paris)
    else:
        assert first.message.reasoning == "".join(thought)
        assert first.message.calls == (paris,)
