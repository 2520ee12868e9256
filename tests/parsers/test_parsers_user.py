"""User parsers take the built-in parsers' path through the core.

A user parser (here the plain-Python hermes reference behind the ``Parser`` protocol) and the
built-in ``hermes`` parser, given the same generation, answer with the same tool-call ids, the
same ``finish_reason`` rewrite and the same error statuses; a hostile body gets the built-in
path's 400 and never raises out of ``handle_json``; a user parser that raises is a 500 answer;
and the typed ``derender_chat*`` methods honour ``parser=``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from helpers.derender_util import CHAT, assert_error, gen_choice, gen_chunk, ok, post
from helpers.parsers_oracle import QWEN, SERVED, cases, chat_request
from helpers.parsers_util import derenderer, derenderer_class, message_result, stream, whole_body
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import import_tokstream, load_detokenizer

from oracles.parser_reference import ChatStreamParser, HermesToolParser


class ReferenceHermes:
    """The plain-Python hermes parser as a user parser (vLLM's streaming parser shape)."""

    def __init__(self) -> None:
        self.tok = load_tokenizer(QWEN)
        self.parser: ChatStreamParser | None = None

    def parse_delta(
        self,
        delta_text: str,
        delta_token_ids: Sequence[int],
        request: Any,
        prompt_token_ids: Sequence[int],
        finished: bool,
    ) -> Any:
        P = import_tokstream().protocol
        if self.parser is None:
            self.parser = ChatStreamParser(self.tok, None, True, list(prompt_token_ids))
        _, content, tools = self.parser.parse_delta(delta_text, delta_token_ids, finished)
        calls = [
            P.DeltaToolCall(
                index=index,
                id=None if name is None else "user-chosen-id",
                type=None if name is None else "function",
                function=P.DeltaFunctionCall(name=name, arguments=args),
            )
            for index, name, args in tools
        ]
        return P.DeltaMessage(content=content or None, tool_calls=calls)

    def parse(self, text: str, request: Any, token_ids: Sequence[int]) -> Any:
        P = import_tokstream().protocol
        content, calls = HermesToolParser(self.tok).scan(text, True)
        named = [P.FunctionCall(name=n, arguments=a) for n, a in calls if n is not None]
        return None, content or None, named


def user_derenderer(factory: Any = ReferenceHermes) -> Any:
    return derenderer_class()(load_detokenizer(QWEN), served_model_name=SERVED, parser=factory)


def tool_cases() -> list[Any]:
    """The qwen3 generations on which the built-in hermes parser finds tool calls."""
    built_in = derenderer(QWEN, None, "hermes")
    found = []
    for case in cases(QWEN):
        answer = ok(built_in, CHAT, whole_body(case.prompt, case.gen, chat_request(), "stop"))
        if answer["choices"][0]["message"].get("tool_calls"):
            found.append(case)
    assert found, "no case calls a tool"
    return found


def test_user_and_built_in_parsers_give_the_same_ids_and_finish_reason() -> None:
    """Whole and streamed: identical tool-call ids (the core derives them, whatever id the user
    parser chose), and ``finish_reason`` rewritten to ``"tool_calls"`` alike."""
    built_in, user = derenderer(QWEN, None, "hermes", "replay"), user_derenderer()
    for case in tool_cases():
        for request_id in ("gen-2", "gen-1"):  # the stream below is gen-1
            body = whole_body(case.prompt, case.gen, chat_request(), "stop", request_id=request_id)
            want = message_result(ok(built_in, CHAT, body)["choices"][0])
            got = message_result(ok(user, CHAT, body)["choices"][0])
            assert got.ids == want.ids and len(got.ids) > 0, case.label
            assert got.finish_reason == want.finish_reason == "tool_calls", case.label
            assert [n for n, _ in got.message.calls] == [n for n, _ in want.message.calls]
        chunks = [case.gen[i : i + 3] for i in range(0, len(case.gen), 3)]
        want_run = stream(built_in, case.prompt, chunks, chat_request(), "stop", mode="replay")
        got_run = stream(user, case.prompt, chunks, chat_request(), "stop", mode="replay")
        assert got_run.result().ids == want_run.result().ids == want.ids, case.label
        assert got_run.finishes == want_run.finishes, case.label
        assert got_run.states[-1]["last_tool_call_ids"] == list(want.ids), case.label
        assert got_run.states[-1]["tools_streamed"] is True


def error_bodies(state: dict[str, Any]) -> list[tuple[str, dict[str, Any] | bytes]]:
    """Bodies the parser path refuses, with a well-formed first state to spoil."""
    case = cases(QWEN)[1]
    chunk = {
        "stream": True,
        "generate_chunk": gen_chunk([gen_choice(case.gen[3:5])]),
        "chat_request": chat_request(),
        "prompt_token_ids": case.prompt,
    }
    whole = whole_body(case.prompt, case.gen, chat_request(), "stop")
    hostile_parser = [{"r": "yes"}, {"r": True, "h": "<" * 100_000}, []]
    return [
        ("not JSON", b"{"),
        ("an array", b"[]"),
        ("no chat_request", {k: v for k, v in whole.items() if k != "chat_request"}),
        # A whole response takes both (vLLM's answer); a stream refuses both.
        ("no prompt", {**chunk, "prompt_token_ids": None}),
        ("empty ids", whole_body(case.prompt, [], chat_request(), "stop")),
        ("bad window", {**chunk, "stream_state": {**state, "read_offset": 10_000}}),
        ("bad chunk lens", {**chunk, "stream_state": {**state, "output_chunk_lens": [0]}}),
        *[
            (f"hostile parser state {i}", {**chunk, "stream_state": {**state, "parser": p}})
            for i, p in enumerate(hostile_parser)
        ],
        ("hostile state type", {**chunk, "stream_state": "x"}),
    ]


def test_user_and_built_in_parsers_refuse_the_same_bodies() -> None:
    built_in, user = derenderer(QWEN, None, "hermes"), user_derenderer()
    case = cases(QWEN)[1]
    first = {
        "stream": True,
        "generate_chunk": gen_chunk([gen_choice(case.gen[:3])]),
        "stream_state": None,
        "chat_request": chat_request(),
        "prompt_token_ids": case.prompt,
    }
    state = ok(built_in, CHAT, first)["stream_state"]
    for label, body in error_bodies(state):
        want_status, want = post(built_in, CHAT, body)
        got_status, got = post(user, CHAT, body)
        assert_error(want_status, want, 400)
        assert_error(got_status, got, 400)
        assert got["error"]["param"] == want["error"]["param"], label
    # A user parser replays its history, where stop strings are not applied (the built-in
    # parsers apply them: test_parsers_stop.py).
    stops = {**first, "chat_request": chat_request(stop=["x"])}
    got_status, got = post(user, CHAT, stops)
    assert_error(got_status, got, 400)
    assert got["error"]["param"] == "chat_request.stop"


def test_hostile_bytes_to_a_user_parser_get_answers() -> None:
    """Every one-byte mutation of a parser stream body is answered (200 or a JSON error)."""
    user = user_derenderer()
    case = cases(QWEN)[1]
    body = json.dumps(
        {
            "stream": True,
            "generate_chunk": gen_chunk([gen_choice(case.gen[:4], finish_reason="stop")]),
            "stream_state": {"prev_tokens": ["a"], "read_offset": 1, "output_token_ids": [1],
                             "output_chunk_lens": [1]},
            "chat_request": chat_request(),
            "prompt_token_ids": case.prompt[:5],
        }
    ).encode()  # fmt: skip
    for at in range(0, len(body), 7):
        for byte in (b"\x00", b"}", b'"', b"9"):
            status, answer = user.handle_json(CHAT, body[:at] + byte + body[at + 1 :])
            assert status in (200, 400), (status, answer[:300])
            if status != 200:
                assert_error(status, json.loads(answer), 400)


class Raising:
    def parse_delta(self, *args: Any) -> Any:
        raise KeyError("oops")

    def parse(self, *args: Any) -> Any:
        raise KeyError("oops")


def test_a_user_parser_that_raises_is_a_500_answer() -> None:
    tokstream = import_tokstream()
    user = user_derenderer(Raising)
    case = cases(QWEN)[1]
    body = whole_body(case.prompt, case.gen, chat_request(), "stop")
    status, answer = post(user, CHAT, body)
    assert status == 500, answer
    assert answer["error"]["type"] == "InternalServerError"
    assert "KeyError" in answer["error"]["message"]
    with pytest.raises(tokstream.ParserError) as raised:
        user.derender_chat(tokstream.protocol.DerenderChatRequest.model_validate(body))
    assert raised.value.status_code == 500


class Shout:
    """Content upper-cased; whole responses report the text's length as reasoning."""

    def parse_delta(
        self, delta_text: str, ids: Sequence[int], request: Any, prompt: Sequence[int], last: bool
    ) -> Any:
        return import_tokstream().protocol.DeltaMessage(content=delta_text.upper() or None)

    def parse(self, text: str, request: Any, token_ids: Sequence[int]) -> Any:
        return f"{len(text)} chars", text.upper(), []


def test_typed_faces_honour_a_user_parser() -> None:
    P = import_tokstream().protocol
    user = user_derenderer(Shout)
    case = cases(QWEN)[1]
    text = load_detokenizer(QWEN).decode(case.gen)
    body = whole_body(case.prompt, case.gen, chat_request(), "length")
    answer = user.derender_chat(P.DerenderChatRequest.model_validate(body))
    assert answer.choices[0].message.content == text.upper()
    assert answer.choices[0].message.reasoning == f"{len(text)} chars"
    first = {
        "stream": True,
        "generate_chunk": gen_chunk([gen_choice(case.gen, finish_reason="length")]),
        "chat_request": chat_request(),
        "prompt_token_ids": case.prompt,
    }
    chunk = user.derender_chat_stream(P.DerenderChatStreamRequest.model_validate(first))
    assert chunk.chunk.choices[0].delta.content == text.upper()
    assert chunk.stream_state.output_token_ids == case.gen


def test_fields_the_core_skips_do_not_refuse_a_user_parser() -> None:
    """A 4,301-digit number (past Python's int conversion) or a wrongly typed field in the chat
    request, which the core skips: both paths answer 200 with the same parsed calls."""
    built_in, user = derenderer(QWEN, None, "hermes"), user_derenderer()
    case = tool_cases()[0]
    body = whole_body(case.prompt, case.gen, chat_request(), "stop")
    raw = json.dumps(body).replace('"messages":', '"x_big": 7, "messages":', 1)
    bodies = {
        "a 4,301-digit number": raw.replace('"x_big": 7', '"x_big": ' + "9" * 4301).encode(),
        "a negative one": raw.replace('"x_big": 7', '"x_big": -' + "9" * 5000).encode(),
        "a wrongly typed field": raw.replace('"x_big": 7', '"temperature": "hot"').encode(),
    }
    for label, sent in bodies.items():
        assert b'"messages":' in sent and len(sent) > len(json.dumps(body)), label
        want = message_result(ok(built_in, CHAT, sent)["choices"][0])
        got = message_result(ok(user, CHAT, sent)["choices"][0])
        assert got.ids == want.ids and len(want.ids) > 0, label
        assert got.message.calls == want.message.calls, label
        assert got.finish_reason == want.finish_reason == "tool_calls", label
