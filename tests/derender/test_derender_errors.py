"""Derender error contract: 400 ``BadRequestError`` / 404 ``NotFoundError`` bodies, never a crash.

Malformed JSON, wrong types, bad ids, empty whole responses, several choices in a stream chunk,
hostile carried states and size limits all answer 400 with ``{"error": {"message", "type",
"param", "code"}}``, and no message shows a traceback or Rust/Python internals. Each rejected
case has an accepted neighbour, so the test pins the limit, not just a failure.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from helpers.derender_util import (
    CHAT,
    COMPLETION,
    PATHS,
    assert_error,
    gen_choice,
    gen_chunk,
    gen_response,
    load_derenderer,
    ok,
    post,
    whole_body,
)

QWEN = "qwen3"
HELLO, WORLD = 9707, 1879
LIMIT = 8  # max_model_len of the limited Derenderer


def chat_whole(ids: list[int] | None = None, **choice: Any) -> dict[str, Any]:
    ids = [HELLO, WORLD] if ids is None else ids
    return whole_body(CHAT, gen_response([gen_choice(ids, finish_reason="length", **choice)]))


def completion_whole(ids: list[int] | None = None) -> dict[str, Any]:
    ids = [HELLO, WORLD] if ids is None else ids
    return whole_body(COMPLETION, gen_response([gen_choice(ids, finish_reason="length")]))


def stream(state: Any = None, **fields: Any) -> dict[str, Any]:
    chunk = gen_chunk([gen_choice([WORLD])])
    return {"stream": True, "generate_chunk": chunk, "stream_state": state, **fields}


def window(**fields: Any) -> dict[str, Any]:
    """A carried state: a valid one-token window unless ``fields`` override it."""
    return {"prev_tokens": ["Hello"], "prefix_offset": 0, "read_offset": 1} | fields


def by_id(ids: list[int], alternatives: int = 1) -> dict[str, Any]:
    tops = [{"token_id": HELLO, "logprob": -1.0, "rank": n + 1} for n in range(alternatives)]
    return {
        "content": [{"token_id": i, "logprob": -1.0, "rank": 1, "top_logprobs": tops} for i in ids]
    }


def at(body: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """A deep copy of ``body`` with the value at ``path`` replaced (``...``: deleted)."""
    out = copy.deepcopy(body)
    node = out
    for key in path[:-1]:
        node = node[key]
    if value is ...:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


CHOICE = ("generate_response", "choices", 0)
TWO = [gen_choice([HELLO], index=0), gen_choice([WORLD], index=1)]
CHUNK_CHOICE = ("generate_chunk", "choices", 0)
RAW_BAD = [
    b"",
    b"{",
    b"not json",
    b"\xff\xfe{}",
    b"[]",
    b"null",
    b"42",
    b'"text"',
    b'{"generate_response": }',
    b'{"model": "\xff"}',
    b'{"stream": true} trailing',
    b"\x00",
    b"[" * 100_000,
    b'{"a":' * 50_000,
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("raw", RAW_BAD, ids=lambda raw: repr(raw[:24]))
def test_malformed_json_is_400(path: str, raw: bytes) -> None:
    status, answer = post(load_derenderer(QWEN), path, raw)
    assert_error(status, answer, 400)


BAD: list[tuple[str, str, Callable[[], dict[str, Any]]]] = [
    # types and required fields
    ("empty object", CHAT, lambda: {}),
    ("response not an object", CHAT, lambda: {"generate_response": "x"}),
    ("choices an object", CHAT, lambda: at(chat_whole(), CHOICE[:2], {})),
    ("choice a number", CHAT, lambda: at(chat_whole(), CHOICE, 5)),
    ("no index", CHAT, lambda: at(chat_whole(), (*CHOICE, "index"), ...)),
    ("index a word", CHAT, lambda: at(chat_whole(), (*CHOICE, "index"), "zero")),
    ("token_ids a string", CHAT, lambda: at(chat_whole(), (*CHOICE, "token_ids"), "abc")),
    ("fractional id", CHAT, lambda: at(chat_whole(), (*CHOICE, "token_ids"), [1.5])),
    ("nested ids", CHAT, lambda: at(chat_whole(), (*CHOICE, "token_ids"), [[1]])),
    ("finish_reason a number", CHAT, lambda: at(chat_whole(), (*CHOICE, "finish_reason"), 5)),
    ("stream a word", CHAT, lambda: chat_whole() | {"stream": "yes"}),
    ("model a number", CHAT, lambda: chat_whole() | {"model": 5}),
    ("prompt_tokens a word", CHAT, lambda: chat_whole() | {"prompt_tokens": "many"}),
    ("prompt ids a string", CHAT, lambda: chat_whole() | {"prompt_token_ids": "x"}),
    ("chat_request a string", CHAT, lambda: chat_whole() | {"chat_request": "x"}),
    ("stop a number", CHAT, lambda: chat_whole() | {"chat_request": {"stop": 5}}),
    ("skip a word", CHAT, lambda: chat_whole() | {"chat_request": {"skip_special_tokens": "x"}}),
    ("logprobs a string", CHAT, lambda: chat_whole(logprobs="x")),
    ("logprob entry no id", CHAT, lambda: chat_whole(logprobs={"content": [{"logprob": -1.0}]})),
    (
        "completion_request a list",
        COMPLETION,
        lambda: completion_whole() | {"completion_request": []},
    ),
    # ids
    ("negative id", CHAT, lambda: chat_whole([HELLO, -1])),
    ("id 2**32", CHAT, lambda: chat_whole([2**32])),
    ("id 2**64", COMPLETION, lambda: completion_whole([2**64])),
    ("id 10**30", CHAT, lambda: chat_whole([10**30])),
    ("negative prompt id", CHAT, lambda: chat_whole() | {"prompt_token_ids": [5, -1]}),
    ("negative stream id", CHAT, lambda: at(stream(), (*CHUNK_CHOICE, "token_ids"), [-3])),
    ("negative id in logprobs", CHAT, lambda: chat_whole(logprobs=by_id([HELLO, -2]))),
    # whole responses need ids
    ("empty token_ids", CHAT, lambda: chat_whole([])),
    ("null token_ids choice", CHAT, lambda: at(chat_whole(), (*CHOICE, "token_ids"), None)),
    ("empty completion ids", COMPLETION, lambda: completion_whole([])),
    ("no generate_responses", COMPLETION, lambda: completion_whole() | {"generate_responses": []}),
    ("prompt_tokens length", COMPLETION, lambda: completion_whole() | {"prompt_tokens": [1, 2]}),
    ("prompt ids length", COMPLETION, lambda: completion_whole() | {"prompt_token_ids": [[], []]}),
    # streams
    ("two choices in a chunk", CHAT, lambda: at(stream(), ("generate_chunk", "choices"), TWO)),
    ("no generate_chunk", CHAT, lambda: at(stream(), ("generate_chunk",), ...)),
    ("chunk without choices", COMPLETION, lambda: at(stream(), ("generate_chunk", "choices"), ...)),
    ("state a string", CHAT, lambda: stream("x")),
    ("state a list", COMPLETION, lambda: stream([])),
    # objects sent as arrays of their field values (vLLM's pydantic models refuse them)
    ("state as an array", CHAT, lambda: stream([["Hello"], 0, 1])),
    ("chunk as an array", CHAT, lambda: {"stream": True, "generate_chunk": [None, []]}),
    ("choice as an array", CHAT, lambda: at(stream(), ("generate_chunk", "choices"), [[0]])),
    ("chat_request a list", CHAT, lambda: chat_whole() | {"chat_request": []}),
    # hostile states
    ("prefix after read", CHAT, lambda: stream(window(prev_tokens=["Hi", "!"], prefix_offset=2))),
    ("read past the window", CHAT, lambda: stream(window(read_offset=2))),
    ("negative prefix", CHAT, lambda: stream(window(prefix_offset=-1))),
    ("negative read", COMPLETION, lambda: stream(window(read_offset=-1))),
    ("1025 tokens", CHAT, lambda: stream(window(prev_tokens=["Hello"] * 1025, read_offset=1025))),
    ("unknown token", CHAT, lambda: stream(window(prev_tokens=["no-such-token-\u2206\u2206"]))),
    ("token a number", COMPLETION, lambda: stream(window(prev_tokens=[9707]))),
    ("context of 5", CHAT, lambda: stream(window(logprob_context_token_ids=[1, 2, 3, 4, 5]))),
    ("negative context id", CHAT, lambda: stream(window(logprob_context_token_ids=[-1]))),
    ("negative text offset", COMPLETION, lambda: stream(window(logprob_text_offset=-1))),
    ("chunk len 0", CHAT, lambda: stream(window(output_chunk_lens=[0]))),
    ("chunk len -1", CHAT, lambda: stream(window(output_token_ids=[1], output_chunk_lens=[-1, 2]))),
    (
        "lens sum short",
        CHAT,
        lambda: stream(window(output_token_ids=[1, 2], output_chunk_lens=[1])),
    ),
    ("lens without ids", CHAT, lambda: stream(window(output_chunk_lens=[2]))),
    ("held text, no stops", CHAT, lambda: stream(window(held_text="a"))),
    (
        "held text too long",
        CHAT,
        lambda: stream(window(held_text="abc"), chat_request={"stop": ["abc", "x"]}),
    ),
    (
        "held text too long (completion)",
        COMPLETION,
        lambda: stream(window(held_text="中文字"), completion_request={"stop": "中文字"}),
    ),
    # limits that need no max_model_len
    ("21 top logprobs", CHAT, lambda: chat_whole(logprobs=by_id([HELLO, WORLD], 21))),
    ("257 choices", CHAT, lambda: chat_whole() | {"generate_response": many_choices(257)}),
    ("257 responses", COMPLETION, lambda: many_responses(257)),
]

GOOD: list[tuple[str, str, Callable[[], dict[str, Any]]]] = [
    ("unknown fields are ignored", CHAT, lambda: at(chat_whole(), (*CHOICE, "future"), {"x": 1})),
    ("unknown top-level field", COMPLETION, lambda: completion_whole() | {"tokstream_x": [1]}),
    ("largest id", CHAT, lambda: chat_whole([HELLO, 2**32 - 1])),
    ("empty stream chunk", CHAT, lambda: at(stream(), (*CHUNK_CHOICE, "token_ids"), [])),
    ("1024 tokens", CHAT, lambda: stream(window(prev_tokens=["Hello"] * 1024, read_offset=1024))),
    ("context of 4", CHAT, lambda: stream(window(logprob_context_token_ids=[1, 2, 3, 4]))),
    (
        "lens that add up",
        CHAT,
        lambda: stream(window(output_token_ids=[1, 2], output_chunk_lens=[1, 1])),
    ),
    ("empty token string", CHAT, lambda: stream(window(prev_tokens=["Hello", ""], read_offset=2))),
    (
        "held text shorter than the stop",
        CHAT,
        lambda: stream(window(held_text="ab"), chat_request={"stop": ["x", "abc"]}),
    ),
    ("20 top logprobs", CHAT, lambda: chat_whole(logprobs=by_id([HELLO, WORLD], 20))),
    ("256 choices", CHAT, lambda: chat_whole() | {"generate_response": many_choices(256)}),
    ("256 responses", COMPLETION, lambda: many_responses(256)),
    ("a vLLM state, no tokstream fields", COMPLETION, lambda: stream(window(role_sent=True))),
]


def many_choices(n: int) -> dict[str, Any]:
    return gen_response([gen_choice([HELLO], index=i, finish_reason="length") for i in range(n)])


def many_responses(n: int) -> dict[str, Any]:
    responses = [gen_response([gen_choice([HELLO], finish_reason="length")]) for _ in range(n)]
    return {"generate_responses": responses}


@pytest.mark.parametrize(("case", "path", "body"), BAD, ids=[c[0] for c in BAD])
def test_bad_requests_are_400(case: str, path: str, body: Callable[[], dict[str, Any]]) -> None:
    status, answer = post(load_derenderer(QWEN), path, body())
    assert_error(status, answer, 400)


def test_a_choice_without_ids_names_where_it_is() -> None:
    chat = chat_whole()
    chat["generate_response"]["choices"].append(dict(chat["generate_response"]["choices"][0]))
    chat["generate_response"]["choices"][1]["token_ids"] = []
    chat["generate_response"]["choices"][1]["index"] = 1
    completion = completion_whole()
    completion["generate_responses"][0]["choices"][0]["token_ids"] = None
    for path, body, param in (
        (CHAT, chat, "generate_response.choices[1].token_ids"),
        (COMPLETION, completion, "generate_responses[0].choices[0].token_ids"),
    ):
        status, answer = post(load_derenderer(QWEN), path, body)
        assert_error(status, answer, 400)
        assert answer["error"]["param"] == param, answer
        assert "has empty or null token_ids" in answer["error"]["message"], answer


#: Words of the Rust JSON reader that a client should not have to read.
RUST_WORDS = ("u32", "u64", "usize", "i64", "f64", "sequence", " map", "struct ", "at line ")


@pytest.mark.parametrize(
    ("ids", "says"),
    [
        (5, "expected a list"),
        (["a"], "expected an integer from 0 to 4294967295"),
        ([1.5], "invalid type: number `1.5`"),
        ([-1], "expected an integer from 0 to 4294967295"),
        ({}, "invalid type: object, expected a list"),
    ],
)
def test_wrong_types_are_named_as_json_types(ids: Any, says: str) -> None:
    body = chat_whole()
    body["generate_response"]["choices"][0]["token_ids"] = ids
    status, answer = post(load_derenderer(QWEN), CHAT, body)
    assert_error(status, answer, 400)
    message = answer["error"]["message"]
    assert says in message and "(line 1, column " in message, message
    assert not any(word in message for word in RUST_WORDS), message
    assert answer["error"]["param"] == "generate_response.choices[0].token_ids" + (
        "[0]" if isinstance(ids, list) else ""
    )


@pytest.mark.parametrize(("case", "path", "body"), GOOD, ids=[c[0] for c in GOOD])
def test_neighbours_of_the_limits_are_200(
    case: str, path: str, body: Callable[[], dict[str, Any]]
) -> None:
    ok(load_derenderer(QWEN), path, body())


def limited(ids: int, logprobs: int | None = None, prompt_logprobs: int | None = None) -> Any:
    choice = gen_choice([HELLO] * ids, finish_reason="length")
    if logprobs is not None:
        choice["logprobs"] = by_id([HELLO] * logprobs)
    response = gen_response([choice])
    if prompt_logprobs is not None:
        response["prompt_logprobs"] = [None] * prompt_logprobs
    return response


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    ("ids", "logprobs", "prompt_logprobs", "status"),
    [
        (LIMIT, LIMIT, LIMIT, 200),
        (LIMIT + 1, None, None, 400),
        (LIMIT, LIMIT + 1, None, 400),
        (LIMIT, None, LIMIT + 1, 400),
    ],
)
def test_max_model_len(
    path: str, ids: int, logprobs: int | None, prompt_logprobs: int | None, status: int
) -> None:
    r = load_derenderer(QWEN, max_model_len=LIMIT)
    got, answer = post(r, path, whole_body(path, limited(ids, logprobs, prompt_logprobs)))
    if status == 400:
        assert_error(got, answer, 400)
    else:
        assert got == 200, answer
    chunk = {"stream": True, "generate_chunk": gen_chunk([gen_choice([HELLO] * ids)])}
    got, answer = post(r, path, chunk)
    if ids > LIMIT:
        assert_error(got, answer, 400)
    else:
        assert got == 200, answer


def with_kv(depth: int) -> bytes:
    """A whole chat body whose ``kv_transfer_params`` is ``depth`` levels deep (lists in an
    object), written as text: Python's own encoder stops near 1,000 levels."""
    body = chat_whole()
    body["generate_response"]["kv_transfer_params"] = "@KV@"
    deep = '{"k":' + "[" * (depth - 1) + '"x"' + "]" * (depth - 1) + "}"
    return json.dumps(body).replace('"@KV@"', deep).encode()


def with_usage(**usage: Any) -> dict[str, Any]:
    body = chat_whole()
    body["generate_response"]["usage"] = {"prompt_tokens": 3, "completion_tokens": 2} | usage
    return body


MAX_COUNT = 2**53 - 1

#: Counts that wrapped or passed unchecked, each beside an accepted neighbour: (label, path,
#: the refused body, the accepted one).
COUNT_CASES: list[tuple[str, str, Callable[[], Any], Callable[[], Any]]] = [
    (
        "negative prompt_tokens",
        CHAT,
        lambda: chat_whole() | {"prompt_tokens": -5},
        lambda: chat_whole() | {"prompt_tokens": 0},
    ),
    (
        "prompt_tokens past 2**53",
        CHAT,
        lambda: chat_whole() | {"prompt_tokens": MAX_COUNT + 1},
        lambda: chat_whole() | {"prompt_tokens": MAX_COUNT},
    ),
    (
        "completion prompt_tokens that would wrap when added",
        COMPLETION,
        lambda: completion_whole() | {"prompt_tokens": [2**63 - 1]},
        lambda: completion_whole() | {"prompt_tokens": [MAX_COUNT]},
    ),
    (
        "stream prompt_tokens",
        CHAT,
        lambda: stream(prompt_tokens=-1),
        lambda: stream(prompt_tokens=7),
    ),
    (
        "generated_tokens that would wrap",
        CHAT,
        lambda: stream(window(generated_tokens=2**64 - 1)),
        lambda: stream(window(generated_tokens=MAX_COUNT)),
    ),
    (
        "logprob_text_offset that would wrap",
        COMPLETION,
        lambda: stream(window(logprob_text_offset=2**64 - 1)),
        lambda: stream(window(logprob_text_offset=MAX_COUNT)),
    ),
    (
        "negative usage from the generate side",
        CHAT,
        lambda: with_usage(completion_tokens=-2),
        lambda: with_usage(completion_tokens=2),
    ),
    (
        "kv_transfer_params nested 100,000 deep",
        CHAT,
        lambda: with_kv(100_000),
        lambda: with_kv(128),
    ),
    (
        "chat top_logprobs below -1 (-1 asks for every alternative, as in vLLM)",
        CHAT,
        lambda: chat_whole() | {"chat_request": {"messages": [], "top_logprobs": -2}},
        lambda: chat_whole() | {"chat_request": {"messages": [], "top_logprobs": -1}},
    ),
    (
        "completion logprobs below -1",
        COMPLETION,
        lambda: completion_whole() | {"completion_request": {"prompt": "", "logprobs": -5}},
        lambda: completion_whole() | {"completion_request": {"prompt": "", "logprobs": -1}},
    ),
]


@pytest.mark.parametrize(("label", "path", "refused", "accepted"), COUNT_CASES)
def test_counts_and_passthroughs_are_range_checked(
    label: str, path: str, refused: Callable[[], Any], accepted: Callable[[], Any]
) -> None:
    """Values derender adds to or echoes are bounded (400), so no answer wraps or is unreadable.

    Counts and offsets are 0 to 2**53 - 1; a passed-through value nests at most 128 levels, as
    deep as the typed parts of a body may. What is accepted comes back as JSON that reads back.
    """
    r = load_derenderer(QWEN)

    def raw(body: Any) -> bytes:
        return body if isinstance(body, bytes) else json.dumps(body).encode()

    status, answer = post(r, path, raw(refused()))
    message = assert_error(status, answer, 400)
    words = (str(MAX_COUNT), "128", "-1 (every alternative)")
    assert any(word in message for word in words), (
        label,
        message,
    )
    answer = ok(r, path, raw(accepted()))
    if "usage" in answer:
        assert 0 <= answer["usage"]["prompt_tokens"] <= MAX_COUNT * 2, label


@pytest.mark.parametrize("path", PATHS)
def test_a_server_without_parsers_carries_no_parser_fields(path: str) -> None:
    """A forged parser state, tool-call ids and 200,000 replay ids are not echoed back.

    Without a parser those fields mean nothing, so the answer's state has them empty and stays
    a few hundred bytes however large the carried one was.
    """
    r = load_derenderer(QWEN)
    forged = window(
        output_token_ids=[HELLO] * 200_000,
        output_chunk_lens=[100_000, 100_000],
        last_tool_call_ids=["chatcmpl-tool-forged"] * 1000,
        tools_streamed=True,
        parser={"phase": "reasoning", "held": "x" * 1000},
    )
    body = json.dumps(stream(forged)).encode()
    assert len(body) > 1_000_000
    state = ok(r, path, body)["stream_state"]
    assert state["output_token_ids"] == [] and state["output_chunk_lens"] == []
    assert state["last_tool_call_ids"] == [] and state["tools_streamed"] is False
    assert state.get("parser") is None
    assert len(json.dumps(state)) < 1024, state
