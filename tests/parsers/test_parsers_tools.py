"""Parsers: hermes tool calls and the request options, REFERENCE section 6's bug classes by name.

Tool-call ids stable across chunks, retries and paths; partial JSON neither dropped nor
duplicated on the final flush; a literal ``</tool_call>`` and braces inside a JSON string;
unicode and emoji, nested JSON and empty arguments; "arguments" before "name"; truncation by
``length`` mid-reasoning and mid-call; ``include_reasoning``, ``parallel_tool_calls``,
``tool_choice`` and the ``finish_reason`` rewrite; the EOS stop token.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.derender_util import CHAT, gen_choice, gen_chunk, ok
from helpers.parsers_oracle import (
    ARGS_FIRST,
    EMPTY_ARGS,
    END_TOOL,
    EOS,
    LITERAL,
    NAMES,
    QWEN,
    REASONING,
    SEARCH_NESTED,
    VARIANT,
    W_PARIS,
    W_TOKYO,
    build,
    call,
    cases,
    chat_request,
    cut_after,
    prompt_ids,
)
from helpers.parsers_util import (
    MODES,
    TOOL_ID,
    check_everywhere,
    derenderer,
    expect,
    singles,
    stream,
    whole,
)
from helpers.real_tokenizers import load_tokenizer


def case_of(name: str, label: str) -> Any:
    (found,) = [c for c in cases(name) if c.label == label]
    return found


def raw_arguments(obj: str) -> str:
    """The arguments value of a call object as written (objects here have it last)."""
    key = '"arguments": ' if '"arguments": ' in obj else '"parameters": '
    return obj[obj.index(key) + len(key) : obj.rindex("}")]


def only_call(name: str, obj: str) -> list[int]:
    """The ids of one tool call and nothing else."""
    return build(load_tokenizer(name), call(obj))[0]


@pytest.mark.parametrize("name", NAMES)
def test_tool_call_ids_are_deterministic_and_stable(name: str) -> None:
    """Ids derive from (request id, choice, tool index): distinct per call, the same in whole,
    resumable and replay answers and on a retried chunk; another request id gives others."""
    case = case_of(name, "open/three-calls")
    reasoning = VARIANT[name]
    first, runs = check_everywhere(name, reasoning, "hermes", case.prompt, case.gen)
    assert len(first.ids) == 3 and len(set(first.ids)) == 3, first.ids
    assert all(TOOL_ID.fullmatch(i) for i in first.ids), first.ids
    r = derenderer(name, reasoning, "hermes")
    again = whole(r, case.prompt, case.gen, chat_request(), "stop")
    assert again.ids == first.ids
    other = whole(r, case.prompt, case.gen, chat_request(), "stop", request_id="gen-2")
    assert not set(other.ids) & set(first.ids), (other.ids, first.ids)
    assert other.message == first.message
    for mode in MODES:
        run = runs[mode, "size1"]
        for k, delta in enumerate(run.deltas):
            if "tool_calls" not in delta:
                continue
            body = {
                "stream": True,
                "generate_chunk": gen_chunk([gen_choice([case.gen[k]])], request_id="gen-1"),
                "stream_state": run.states[k - 1],
                "chat_request": chat_request(),
                "prompt_token_ids": case.prompt,
            }
            retried = ok(derenderer(name, reasoning, "hermes", mode), CHAT, body)
            assert retried["chunk"]["choices"][0]["delta"] == delta, (mode, k)
            assert retried["stream_state"] == run.states[k], (mode, k)


@pytest.mark.parametrize("name", NAMES)
def test_partial_arguments_are_neither_dropped_nor_duplicated_on_the_final_flush(
    name: str,
) -> None:
    """The last chunk holds the end of the arguments (and, cut by length, an unfinished value):
    the arguments equal the text written, once, with or without a finish-only tail."""
    reasoning = VARIANT[name]
    cut = case_of(name, "cut/mid-arguments")
    done = case_of(name, "open/three-calls")
    for case in (cut, done):
        gen = case.gen
        shapes = {
            "last6": [*singles(gen[:-6]), gen[-6:]],
            "last6+tail": [*singles(gen[:-6]), gen[-6:], []],
            "last1+tail": [*singles(gen), []],
        }
        first, _ = check_everywhere(
            name, reasoning, "hermes", case.prompt, gen, finish=case.finish, chunkings=shapes
        )
        last = first.message.calls[-1]
        if case is cut:
            assert last[0] == "search" and last[1].endswith('"to": [2.5'), last
            assert raw_arguments(SEARCH_NESTED).startswith(last[1]), last
            assert first.finish_reason == "length"
        else:
            assert last == ("get_time", "{}"), last


@pytest.mark.parametrize("name", NAMES)
def test_literal_end_tag_and_braces_inside_a_json_string(name: str) -> None:
    """``</tool_call>``, ``<tool_call>`` and unbalanced braces inside a string argument do not
    end the call (on Qwen3 they are the tag ids themselves, as the tokenizer encodes them)."""
    case = case_of(name, "literal")
    tok = load_tokenizer(name)
    if name == QWEN:
        assert case.gen.count(tok.token_to_id(END_TOOL)) == 2, "the literal tag is not the id"
    first, _ = check_everywhere(name, VARIANT[name], "hermes", case.prompt, case.gen)
    ((fn, args),) = first.message.calls
    assert (fn, args) == ("write_file", raw_arguments(LITERAL))
    assert json.loads(args)["content"].startswith('<tool_call>{"name": "x"}</tool_call> and }')


@pytest.mark.parametrize("name", NAMES)
def test_unicode_and_emoji_in_arguments(name: str) -> None:
    """CJK, ZWJ emoji, flags and escapes in string arguments, one id at a time: never a U+FFFD
    in any delta, the arguments exactly as written."""
    prompt = prompt_ids(name, "closed")
    gen = only_call(name, W_TOKYO)
    first, runs = check_everywhere(name, VARIANT[name], "hermes", prompt, gen)
    assert first.message.calls == (("get_weather", raw_arguments(W_TOKYO)),)
    assert json.loads(first.message.calls[0][1])["note"] == '☔️ 雨 👨‍👩‍👧‍👦 🇯🇵 café\n\t"q"'
    for run in runs.values():
        for delta in run.deltas:
            for tool_call in delta.get("tool_calls", []):
                assert "\ufffd" not in tool_call["function"]["arguments"], delta


@pytest.mark.parametrize("name", NAMES)
def test_nested_json_arguments(name: str) -> None:
    prompt = prompt_ids(name, "closed")
    first, _ = check_everywhere(
        name, VARIANT[name], "hermes", prompt, only_call(name, SEARCH_NESTED)
    )
    ((fn, args),) = first.message.calls
    assert fn == "search" and args == raw_arguments(SEARCH_NESTED)
    assert json.loads(args)["filters"]["deep"] == {"a": {"b": {"c": [{}, [], {"d": "}{"}]}}}


@pytest.mark.parametrize("name", NAMES)
def test_empty_arguments(name: str) -> None:
    """``"arguments": {}`` is the text ``{}``, alone and as the first of two calls."""
    tok = load_tokenizer(name)
    prompt = prompt_ids(name, "closed")
    for pieces in (call(EMPTY_ARGS), [*call(EMPTY_ARGS), "\n", *call(W_PARIS)]):
        gen = build(tok, pieces)[0]
        first, _ = check_everywhere(name, VARIANT[name], "hermes", prompt, gen)
        assert first.message.calls[0] == ("get_time", "{}"), first.message.calls


@pytest.mark.parametrize("name", NAMES)
def test_arguments_before_name(name: str) -> None:
    """``{"arguments": {...}, "name": "f"}``: nothing is sent for the call until the name is
    known; then the name and the arguments, whole."""
    tok = load_tokenizer(name)
    prompt = prompt_ids(name, "closed")
    gen = only_call(name, ARGS_FIRST)
    first, runs = check_everywhere(name, VARIANT[name], "hermes", prompt, gen)
    assert first.message.calls == (("get_weather", '{"city": "Paris", "unit": "c"}'),)
    known = next(
        k
        for k in range(len(gen))
        if '"name": "get_weather"' in tok.decode(gen[: k + 1], skip_special_tokens=False)
    )
    for mode in MODES:
        deltas = runs[mode, "size1"].deltas
        sent = [k for k, d in enumerate(deltas) if "tool_calls" in d]
        assert sent and sent[0] >= known, (mode, sent, known)


@pytest.mark.parametrize("name", NAMES)
def test_truncated_mid_reasoning(name: str) -> None:
    case = case_of(name, "cut/mid-reasoning")
    first, _ = check_everywhere(
        name, VARIANT[name], "hermes", case.prompt, case.gen, finish="length"
    )
    thought = first.message.reasoning
    assert "(Tokyo)" in thought and REASONING.startswith(thought) and first.content_null
    assert not first.message.calls and first.finish_reason == "length"


@pytest.mark.parametrize("name", NAMES)
def test_truncated_mid_call_keeps_a_call_whose_name_is_known(name: str) -> None:
    """Cut by length inside the arguments, or right after the name: the call is kept with the
    arguments written so far ("" when none); finish_reason stays "length"."""
    tok = load_tokenizer(name)
    reasoning = VARIANT[name]
    prompt = prompt_ids(name, "closed")
    full = only_call(name, W_PARIS)
    for needle, args in (('"city": "Par', '{"city": "Par'), ('"get_weather",', "")):
        gen = cut_after(tok, full, needle)
        first, _ = check_everywhere(name, reasoning, "hermes", prompt, gen, finish="length")
        ((fn, got),) = first.message.calls
        assert fn == "get_weather" and got.startswith(args), first.message.calls
        assert first.finish_reason == "length"


@pytest.mark.parametrize("name", NAMES)
def test_truncated_call_without_a_name_is_dropped(name: str) -> None:
    """Cut before the name is complete (or before it comes, after the arguments): no call, no
    tool-call delta ever, ``tools_streamed`` false; the content before the call is kept."""
    tok = load_tokenizer(name)
    reasoning = VARIANT[name]
    prompt = prompt_ids(name, "closed")
    head = "Checking ☀️.\n\n"
    weather = build(tok, [head, *call(W_PARIS)])[0]
    first_args = build(tok, [head, *call(ARGS_FIRST)])[0]
    for full, needle in ((weather, '"get_wea'), (weather, '{"na'), (first_args, '}, "na')):
        gen = cut_after(tok, full, needle)
        first, runs = check_everywhere(name, reasoning, "hermes", prompt, gen, finish="length")
        assert first.message.calls == () and first.message.content == head, first
        assert first.finish_reason == "length"
        for (mode, _), run in runs.items():
            assert not any("tool_calls" in d for d in run.deltas), needle
            if mode == "replay":
                assert not run.states[-1]["tools_streamed"]


@pytest.mark.parametrize("name", NAMES)
def test_include_reasoning_false(name: str) -> None:
    """No reasoning at all (null whole, never a reasoning delta); content and calls unchanged."""
    reasoning = VARIANT[name]
    for label in ("open/content", "none/one-call"):
        case = case_of(name, label)
        request = chat_request(include_reasoning=False)
        shown = whole(
            derenderer(name, reasoning, "hermes"), case.prompt, case.gen, chat_request(), "stop"
        )
        first, runs = check_everywhere(
            name, reasoning, "hermes", case.prompt, case.gen, request=request
        )
        assert first.reasoning_null and shown.message.reasoning, label
        assert first.message.content == shown.message.content, label
        assert first.message.calls == shown.message.calls, label
        for run in runs.values():
            assert all(d["reasoning"] is None for d in run.deltas), label


@pytest.mark.parametrize("name", NAMES)
def test_parallel_tool_calls_false_keeps_the_first_call(name: str) -> None:
    case = case_of(name, "open/three-calls")
    request = chat_request(parallel_tool_calls=False)
    first, runs = check_everywhere(
        name, VARIANT[name], "hermes", case.prompt, case.gen, request=request
    )
    assert [n for n, _ in first.message.calls] == ["get_weather"], first.message.calls
    assert first.finish_reason == "tool_calls"
    for run in runs.values():
        indexes = {c["index"] for d in run.deltas for c in d.get("tool_calls", [])}
        assert indexes == {0}, indexes


@pytest.mark.parametrize("name", NAMES)
def test_no_tool_parsing_without_tools_or_with_tool_choice_none(name: str) -> None:
    """``tool_choice: "none"``, no ``tools`` or an empty list: the tags stay in the content,
    no calls, finish_reason "stop"."""
    case = case_of(name, "none/one-call")
    for request in (
        chat_request(tool_choice="none"),
        chat_request(tools=False),
        chat_request(tools=False) | {"tools": []},
    ):
        first, _ = check_everywhere(
            name, VARIANT[name], "hermes", case.prompt, case.gen, request=request
        )
        assert not first.message.calls and first.finish_reason == "stop", request
        assert '<tool_call>\n{"name": "get_weather"' in first.message.content, first.message


@pytest.mark.parametrize("name", NAMES)
def test_finish_reason_becomes_tool_calls_only_after_an_engine_stop(name: str) -> None:
    """ "tool_calls" when calls were parsed, the engine said "stop" and tool_choice is not a named
    function ("auto" and "required" are not); "length" stays, and so does "stop" without calls."""
    reasoning = VARIANT[name]
    case = case_of(name, "none/one-call")
    named = {"type": "function", "function": {"name": "get_weather"}}
    for tool_choice, finish, want in (
        ("auto", "stop", "tool_calls"),
        ("required", "stop", "tool_calls"),
        ("auto", "length", "length"),
        (named, "stop", "stop"),
    ):
        request = chat_request(tool_choice=tool_choice)
        first, runs = check_everywhere(
            name, reasoning, "hermes", case.prompt, case.gen, finish=finish, request=request
        )
        assert first.finish_reason == want, (tool_choice, finish, first.finish_reason)
        for run in runs.values():
            assert run.finishes == [None] * (len(run.finishes) - 1) + [want], (tool_choice, finish)
    plain = case_of(name, "open/content")
    first, _ = check_everywhere(name, reasoning, "hermes", plain.prompt, plain.gen)
    assert first.finish_reason == "stop"
    first, _ = check_everywhere(name, reasoning, None, case.prompt, case.gen)
    assert first.finish_reason == "stop" and not first.message.calls


@pytest.mark.parametrize("name", NAMES)
def test_eos_stop_token_ends_the_output(name: str) -> None:
    """A real output ends with the EOS id and "stop": the id is not text (no ``<|im_end|>`` in
    the content), stop_reason stays null, and the calls make it "tool_calls"."""
    tok = load_tokenizer(name)
    eos = tok.token_to_id(EOS[name])
    reasoning = VARIANT[name]
    for label in ("none/one-call", "open/content"):
        case = case_of(name, label)
        gen = [*case.gen, eos]
        want = expect(name, reasoning, "hermes", case.prompt, case.gen, chat_request())
        for mode in MODES:
            r = derenderer(name, reasoning, "hermes", mode)
            got = whole(r, case.prompt, gen, chat_request(), "stop")
            assert got.message == want and EOS[name] not in got.message.content, (mode, label)
            for chunks in (singles(gen), [gen[: len(gen) // 2], gen[len(gen) // 2 :]]):
                run = stream(r, case.prompt, chunks, chat_request(), "stop", mode=mode)
                assert run.result().message == want, (mode, label)
                assert run.finishes[-1] == ("tool_calls" if want.calls else "stop")
