"""Parsers: what a configured parser requires and what it leaves alone.

With any parser configured, a chat request needs ``chat_request`` and the full prompt ids (for
whole responses, a stream's first chunk, and every chunk in replay mode), and a carried parser
state is checked before it is continued; completions answer exactly what a derenderer without
parsers answers. User parsers are in ``test_parsers_user*.py``, the typed faces with a parser in
``test_derender_faces.py``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
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
    VARIANT,
    cases,
    chat_request,
)
from helpers.parsers_util import (
    MODES,
    derenderer,
    singles,
    whole,
    whole_body,
)
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import c1_target, load_detokenizer

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
