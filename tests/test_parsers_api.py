"""Parsers: what a configured parser requires (400s), completions left alone, user parsers, faces.

With any parser configured, a chat request needs ``chat_request`` and the full prompt ids (for
whole responses, a stream's first chunk, and every chunk in replay mode); completions answer
exactly what a derenderer without parsers answers. A user parser (``tokstream.parsers``) runs on
the replay path: a fresh parser per call, fed every earlier chunk's text with the original
boundaries before the current one. The typed faces carry the parser state like ``handle_json``.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from typing import Any

import pytest
from conftest import c1_target, load_detokenizer
from helpers.derender_util import (
    CHAT,
    COMPLETION,
    assert_error,
    gen_choice,
    gen_chunk,
    gen_response,
    generate_chunks,
    ok,
    post,
    run_stream_calls,
)
from helpers.derender_util import whole_body as plain_whole_body
from helpers.parsers_oracle import (
    NAMES,
    QWEN,
    SERVED,
    VARIANT,
    cases,
    chat_request,
)
from helpers.parsers_util import (
    MODES,
    Streamed,
    derenderer,
    derenderer_class,
    message_result,
    singles,
    stream,
    whole,
    whole_body,
)
from helpers.real_tokenizers import load_tokenizer

PARSERS = [("reasoning", "tool"), ("reasoning", None), (None, "tool")]


def configs(name: str) -> list[tuple[str | None, str | None, str]]:
    """(reasoning parser, tool parser, mode) for every configuration with a parser."""
    out = []
    for reasoning, tool in PARSERS:
        for mode in MODES:
            out.append((VARIANT[name] if reasoning else None, "hermes" if tool else None, mode))
    return out


def first_chunk(prompt: Sequence[int] | None, ids: Sequence[int], **fields: Any) -> dict[str, Any]:
    chunk = gen_chunk([gen_choice(ids)], prompt_token_ids=fields.pop("own_prompt", None))
    body = {"stream": True, "generate_chunk": chunk, "stream_state": None} | fields
    return body if prompt is None else body | {"prompt_token_ids": list(prompt)}


@pytest.mark.parametrize("name", NAMES)
def test_chat_request_is_required(name: str) -> None:
    case = cases(name)[1]
    for reasoning, tool, mode in configs(name):
        r = derenderer(name, reasoning, tool, mode)
        where = f"{reasoning} {tool} {mode}"
        status, answer = post(r, CHAT, whole_body(case.prompt, case.gen, None, "stop"))
        assert_error(status, answer, 400)
        status, answer = post(r, CHAT, first_chunk(case.prompt, case.gen[:3]))
        assert_error(status, answer, 400)
        body = first_chunk(case.prompt, case.gen[:3], chat_request=chat_request())
        assert ok(r, CHAT, body)["chunk"]["choices"], where


@pytest.mark.parametrize("name", NAMES)
def test_prompt_token_ids_are_required(name: str) -> None:
    """Whole: top-level or the generate response's, else the parser starts as on an empty
    prompt (vLLM's answer); first chunk: top-level or the generate chunk's; replay mode: on
    every chunk. Missing from a stream: 400."""
    case = cases(name)[1]
    request = chat_request()
    for reasoning, tool, mode in configs(name):
        r = derenderer(name, reasoning, tool, mode)
        where = f"{reasoning} {tool} {mode}"
        empty = whole(r, [], case.gen, request, "stop")
        assert whole(r, None, case.gen, request, "stop") == empty, where
        top = whole(r, case.prompt, case.gen, request, "stop")
        own = whole(r, None, case.gen, request, "stop", own_prompt=case.prompt)
        assert own == top, where
        status, answer = post(r, CHAT, first_chunk(None, case.gen[:2], chat_request=request))
        assert_error(status, answer, 400)
        body = first_chunk(None, case.gen[:2], chat_request=request, own_prompt=case.prompt)
        state = ok(r, CHAT, body)["stream_state"]
        later = {
            "stream": True,
            "generate_chunk": gen_chunk([gen_choice(case.gen[2:4])]),
            "stream_state": state,
            "chat_request": request,
        }
        status, answer = post(r, CHAT, later)
        if mode == "replay":
            assert_error(status, answer, 400)
        else:
            assert status == 200, (where, answer)


@pytest.mark.parametrize("name", NAMES)
def test_completions_are_unaffected_by_parsers(name: str) -> None:
    """Completion answers, whole and streamed, equal a derenderer's without parsers: the text
    with the markers, decoded with the request's ``skip_special_tokens`` (default true)."""
    tok = load_tokenizer(name)
    plain = derenderer(name)
    case = cases(name)[3]
    target = c1_target(tok, case.prompt, case.gen, True)
    response = gen_response([gen_choice(case.gen, finish_reason="stop")])
    body = plain_whole_body(COMPLETION, response, prompt_token_ids=case.prompt)
    expected = drop_created(ok(plain, COMPLETION, body))
    assert expected["choices"][0]["text"] == target
    chunks = generate_chunks([*singles(case.gen), []], finish_reason="stop")
    want = run_stream_calls(plain, COMPLETION, chunks, prompt_token_ids=case.prompt)
    assert want.text == target
    for reasoning, tool, mode in configs(name):
        r = derenderer(name, reasoning, tool, mode)
        assert drop_created(ok(r, COMPLETION, body)) == expected, (reasoning, tool, mode)
        got = run_stream_calls(r, COMPLETION, chunks, prompt_token_ids=case.prompt)
        assert [drop_created(a) for a in got.answers] == [drop_created(a) for a in want.answers]


def drop_created(answer: dict[str, Any]) -> dict[str, Any]:
    answer = json.loads(json.dumps(answer))
    for holder in (answer, answer.get("chunk") or {}):
        holder.pop("created", None)
    return answer


# --- user parsers ------------------------------------------------------------------------------


class Upper:
    """A user parser: content upper-cased, ">>" before the first delta it returns; whole
    responses report the id count as reasoning. It records every call, to check the replay."""

    def __init__(self, log: list[Upper]) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.requests: list[str] = []
        log.append(self)

    def parse_delta(
        self,
        delta_text: str,
        delta_token_ids: Sequence[int],
        request: Any,
        prompt_token_ids: Sequence[int],
        finished: bool,
    ) -> Any:
        from tokstream.protocol import DeltaMessage

        self.requests.append(type(request).__name__)
        self.calls.append((delta_text, list(delta_token_ids), finished, list(prompt_token_ids)))
        text = (">>" if len(self.calls) == 1 else "") + delta_text.upper()
        return DeltaMessage(content=text) if text else None

    def parse(self, text: str, request: Any, token_ids: Sequence[int]) -> Any:
        self.requests.append(type(request).__name__)
        self.calls.append(("parse", text, list(token_ids)))
        return f"{len(token_ids)} ids", text.upper(), []


@pytest.mark.parametrize("parser_state", [None, "replay"])
def test_a_user_parser_is_registered_and_replayed(parser_state: str | None) -> None:
    """Part of the contract (issue 4, item 1): ``tokstream.parsers.register`` and
    ``Derenderer(parser=factory)``. Whole: ``parse`` decides the message. Streamed: one fresh
    parser per call, fed every earlier chunk's text and ids (the original boundaries, not
    finished) before the current chunk; only the current chunk's delta is sent."""
    derenderer_class()
    parsers = importlib.import_module("tokstream.parsers")
    log: list[Upper] = []

    def factory() -> Upper:
        return Upper(log)

    registered = f"upper-test-{parser_state}"
    parsers.register(registered, factory)
    assert parsers.get(registered) is factory
    assert registered in parsers.names()
    extra = {} if parser_state is None else {"parser_state": parser_state}
    r = derenderer_class()(
        load_detokenizer(QWEN), served_model_name=SERVED, parser=factory, **extra
    )
    tok = load_tokenizer(QWEN)
    case = cases(QWEN)[1]
    text = c1_target(tok, case.prompt, case.gen, False)
    assert "<think>" in text and "<tool_call>" in text  # decoded without skipping
    got = message_result(
        ok(r, CHAT, whole_body(case.prompt, case.gen, chat_request(), "length"))["choices"][0]
    )
    assert (got.message.content, got.message.reasoning) == (text.upper(), f"{len(case.gen)} ids")
    assert got.message.calls == () and got.finish_reason == "length"
    assert log[-1].calls == [("parse", text, case.gen)]
    assert log[-1].requests == ["ChatCompletionRequest"]
    chunks = [*[case.gen[i : i + 2] for i in range(0, len(case.gen), 2)], []]
    log.clear()
    run = Streamed()
    state = None
    live: list[tuple[Any, ...]] = []
    for n, ids in enumerate(chunks):
        last = n == len(chunks) - 1
        body = {
            "stream": True,
            "generate_chunk": gen_chunk(
                [gen_choice(ids, finish_reason="length" if last else None)]
            ),
            "stream_state": state,
            "chat_request": chat_request(),
            "prompt_token_ids": case.prompt,
        }
        answer = ok(r, CHAT, body)
        state = answer["stream_state"]
        assert state["output_token_ids"] == case.gen[: sum(len(c) for c in chunks[: n + 1])]
        assert len(log) == n + 1, f"chunk {n}: {len(log)} parsers for {n + 1} calls"
        calls = log[-1].calls
        assert calls[:-1] == live, f"chunk {n}: the replayed history differs from what was live"
        assert calls[-1][1:] == (list(ids), last, case.prompt), calls[-1]
        live.append((calls[-1][0], list(ids), False, case.prompt))
        assert set(log[-1].requests) == {"ChatCompletionRequest"}, log[-1].requests
        run.deltas.append(answer["chunk"]["choices"][0]["delta"])
        run.finishes.append(answer["chunk"]["choices"][0]["finish_reason"])
    assert "".join(c[0] for c in live) == text
    assert run.result().message.content == ">>" + text.upper()
    assert run.finishes[-1] == "length"


# --- the typed faces ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", NAMES)
def test_typed_faces_carry_the_parser_state(name: str, mode: str) -> None:
    """``derender_chat`` / ``derender_chat_stream`` answer what ``handle_json`` answers, the
    state passed back as the typed ``DerenderStreamState`` (so it must keep the parser state)."""
    from tokstream import protocol as P

    r = derenderer(name, VARIANT[name], "hermes", mode)
    case = cases(name)[3]
    body = whole_body(case.prompt, case.gen, chat_request(), "stop")
    typed = r.derender_chat(P.DerenderChatRequest.model_validate(body))
    want = whole(r, case.prompt, case.gen, chat_request(), "stop")
    (choice,) = json.loads(typed.model_dump_json())["choices"]
    assert message_result(choice) == want
    chunks = [case.gen[i : i + 3] for i in range(0, len(case.gen), 3)]
    json_run = stream(r, case.prompt, chunks, chat_request(), "stop", mode=mode)
    run = Streamed()
    state = None
    for n, ids in enumerate(chunks):
        last = n == len(chunks) - 1
        chunk = gen_chunk([gen_choice(ids, finish_reason="stop" if last else None)])
        fields = {"chat_request": chat_request(), "stream_state": state}
        if n == 0 or mode == "replay":
            fields["prompt_token_ids"] = case.prompt
        request = P.DerenderChatStreamRequest.model_validate(
            {"stream": True, "generate_chunk": chunk} | fields
        )
        answer = r.derender_chat_stream(request)
        state = answer.stream_state
        wire = json.loads(answer.model_dump_json())
        (chosen,) = wire["chunk"]["choices"]
        run.deltas.append(chosen["delta"])
        run.finishes.append(chosen["finish_reason"])
    assert run.result() == json_run.result()
    assert run.result().message == want.message


@pytest.mark.parametrize("name", NAMES)
def test_hostile_parser_states_are_refused(name: str) -> None:
    """A carried parser state is checked: unknown shapes and oversize fields get a 400, and a
    well-formed one is continued."""
    case = cases(name)[1]
    r = derenderer(name, VARIANT[name], "hermes")
    first = ok(r, CHAT, first_chunk(case.prompt, case.gen[:3], chat_request=chat_request()))
    state = first["stream_state"]
    assert state["parser"] is not None
    # The chars of text parsed so far, as without a parser.
    text = load_detokenizer(name).decode(case.gen[:3])
    assert state["logprob_text_offset"] == len(text) > 0
    hostile = [
        {"r": "yes"},
        {"r": True, "h": "<" * 100_000},
        {"r": True, "t": {"a": "no such place"}},
        {"r": True, "t": {"n": 1, "i": True, "h": "x" * 5_000}},
        {"r": True, "t": {"n": 1, "i": True, "p": "1" * 100_000}},
        [],
    ]
    for parser in hostile:
        body = first_chunk(case.prompt, case.gen[3:5], chat_request=chat_request())
        body["stream_state"] = {**state, "parser": parser}
        status, answer = post(r, CHAT, body)
        assert_error(status, answer, 400)
    body = first_chunk(case.prompt, case.gen[3:5], chat_request=chat_request())
    body["stream_state"] = state
    assert ok(r, CHAT, body)["chunk"]["choices"]
