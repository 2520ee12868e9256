"""Protocol models, derender side: the four requests, their unions, the stream state (every rule,
valid and invalid, and hypothesis round trips), and the ``{chunk, stream_state}`` responses."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError
from tokstream import _core
from tokstream import protocol as P

# A client's second call of a chat stream, as vLLM's own client code would send it.
CHAT_STREAM_REQUEST = """{"stream": true, "model": "qwen3",
 "generate_chunk": {"request_id": "gen-7f3a", "choices": [{"index": 0, "logprobs": null,
   "finish_reason": null, "token_ids": [1879, 0], "routed_experts": null,
   "sampling_mask": null}], "usage": null, "prompt_token_ids": null, "mm_placeholders": null,
   "metrics": null},
 "stream_state": {"prev_tokens": ["Hello"], "prefix_offset": 0, "read_offset": 1,
   "role_sent": true, "logprob_context_token_ids": [9707], "logprob_text_offset": 5,
   "output_token_ids": [], "output_chunk_lens": [], "tools_streamed": false,
   "last_tool_call_ids": []},
 "prompt_tokens": 9, "prompt_token_ids": [151644, 872, 198],
 "chat_request": {"model": "qwen3", "messages": [{"role": "user", "content": "Hi"}],
   "stream": true, "stream_options": {"include_usage": true}, "seed": 7}}"""

CHAT_STREAM_RESPONSE = """{"chunk": {"id": "gen-7f3a", "object": "chat.completion.chunk",
   "created": 1767225600, "model": "qwen3", "choices": [{"index": 0,
     "delta": {"role": null, "content": " world!", "reasoning": null}, "logprobs": null,
     "finish_reason": null, "stop_reason": null, "token_ids": null, "weight_versions": null}],
   "usage": null, "system_fingerprint": null, "prompt_token_ids": null, "prompt_text": null,
   "metrics": null, "kv_transfer_params": null},
 "stream_state": {"prev_tokens": ["Ġworld", "!"], "prefix_offset": 0, "read_offset": 2,
   "role_sent": true, "logprob_context_token_ids": [9707, 1879, 0], "logprob_text_offset": 12,
   "output_token_ids": [], "output_chunk_lens": [], "tools_streamed": false,
   "last_tool_call_ids": [], "held_text": "", "generated_tokens": 3, "stopped": false}}"""


def _dumped(model: Any) -> Any:
    return json.loads(model.model_dump_json())


# --- the stream state -------------------------------------------------------------------------


def test_stream_state_fields_are_the_cores_state_keys() -> None:
    """The model declares the keys the wire writes, in its order (vLLM's first)."""
    fields = tuple(P.DerenderStreamState.model_fields)
    assert fields == _core.STATE_KEYS
    assert fields[: len(_core.VLLM_STATE_KEYS)] == _core.VLLM_STATE_KEYS


def test_stream_state_defaults() -> None:
    state = P.DerenderStreamState()
    assert (state.prev_tokens, state.prefix_offset, state.read_offset) == ([], 0, 0)
    assert not state.role_sent and not state.tools_streamed
    assert state.output_chunk_lens == state.output_token_ids == state.last_tool_call_ids == []


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"prefix_offset": -1}, "greater than or equal"),
        ({"read_offset": -1}, "greater than or equal"),
        ({"prev_tokens": ["a", "b"], "prefix_offset": 2, "read_offset": 1}, "must not exceed"),
        ({"prev_tokens": ["a"], "read_offset": 2}, r"len\(prev_tokens\)"),
        ({"read_offset": 1}, r"len\(prev_tokens\)"),
        ({"prev_tokens": ["x"] * 1025}, "at most 1024"),
        ({"logprob_context_token_ids": [1, 2, 3, 4, 5]}, "at most 4"),
        ({"logprob_text_offset": -1}, "greater than or equal"),
        ({"output_token_ids": [1, 2], "output_chunk_lens": [1, 0, 1]}, "greater than 0"),
        ({"output_token_ids": [1, 2], "output_chunk_lens": [1]}, "must sum to"),
        ({"output_token_ids": [], "output_chunk_lens": [2]}, "must sum to"),
        ({"prev_tokens": [3]}, "valid string"),
    ],
)
def test_stream_state_rejects(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        P.DerenderStreamState.model_validate(fields)


def test_stream_state_limits_are_inclusive_and_unknown_fields_ignored() -> None:
    state = P.DerenderStreamState.model_validate(
        {
            "prev_tokens": ["x"] * 1024,
            "prefix_offset": 1024,
            "read_offset": 1024,
            "logprob_context_token_ids": [1, 2, 3, 4],
            "output_token_ids": [5, 6, 7],
            "output_chunk_lens": [2, 1],
            "tokstream_future_field": {"held": "ab"},
        }
    )
    assert state.read_offset == 1024 and "tokstream_future_field" not in _dumped(state)


@st.composite
def stream_states(draw: st.DrawFn) -> dict[str, Any]:
    """Any state the rules allow, as the JSON-ready dict a client would carry."""
    prev_tokens = draw(st.lists(st.text(max_size=6), max_size=12))
    read_offset = draw(st.integers(0, len(prev_tokens)))
    chunk_lens = draw(st.lists(st.integers(1, 4), max_size=5))
    ids = st.integers(0, 2**31)
    return {
        "prev_tokens": prev_tokens,
        "prefix_offset": draw(st.integers(0, read_offset)),
        "read_offset": read_offset,
        "role_sent": draw(st.booleans()),
        "logprob_context_token_ids": draw(st.lists(ids, max_size=4)),
        "logprob_text_offset": draw(st.integers(0, 2**40)),
        "output_token_ids": draw(st.lists(ids, min_size=sum(chunk_lens), max_size=sum(chunk_lens))),
        "output_chunk_lens": chunk_lens,
        "tools_streamed": draw(st.booleans()),
        "last_tool_call_ids": draw(st.lists(st.text(max_size=12), max_size=3)),
        "held_text": draw(st.text(max_size=8)),
        "generated_tokens": draw(st.integers(0, 2**40)),
        "stopped": draw(st.booleans()),
    } | draw(st.just({}) | st.just({"parser": {"r": True, "t": {"n": 0}}}))


@given(stream_states())
def test_stream_state_round_trips(fields: dict[str, Any]) -> None:
    state = P.DerenderStreamState.model_validate(fields)
    assert state.model_dump() == fields
    assert P.DerenderStreamState.model_validate_json(state.model_dump_json()) == state
    assert json.loads(state.model_dump_json()) == fields


@given(stream_states(), st.integers(1, 3))
def test_stream_state_rejects_offsets_out_of_order(fields: dict[str, Any], over: int) -> None:
    too_far = fields | {"read_offset": len(fields["prev_tokens"]) + over}
    crossed = fields | {"prefix_offset": fields["read_offset"] + over}
    for bad in (too_far, crossed):
        with pytest.raises(ValidationError):
            P.DerenderStreamState.model_validate(bad)


# --- requests and unions ----------------------------------------------------------------------


def _generate_response(index: int = 0) -> dict[str, Any]:
    return {"request_id": f"gen-{index}", "choices": [{"index": 0, "token_ids": [1, 2]}]}


def test_chat_stream_request_fixture() -> None:
    request = P.DerenderChatStreamRequest.model_validate_json(CHAT_STREAM_REQUEST)
    assert request.stream_state.prev_tokens == ["Hello"] and request.stream_state.role_sent
    assert request.generate_chunk.choices[0].token_ids == [1879, 0]
    assert request.chat_request.stream_options.include_usage
    assert request.chat_request.model_extra == {"seed": 7}
    again = P.DerenderChatStreamRequest.model_validate_json(request.model_dump_json())
    assert again == request


def test_whole_requests_defaults() -> None:
    chat = P.DerenderChatRequest.model_validate({"generate_response": _generate_response()})
    assert chat.stream is False and chat.model is None and chat.chat_request is None
    assert chat.prompt_tokens is None and chat.prompt_token_ids is None
    completion = P.DerenderCompletionRequest.model_validate(
        {"generate_responses": [_generate_response()], "prompt_tokens": [3]}
    )
    assert completion.stream is False and completion.completion_request is None
    for bad in ({"stream": True, "generate_response": _generate_response()}, {}):
        with pytest.raises(ValidationError):
            P.DerenderChatRequest.model_validate(bad)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"prompt_tokens": [1]}, "prompt_tokens length"),
        ({"prompt_token_ids": [[1], [2], [3]]}, "prompt_token_ids length"),
        ({"prompt_token_ids": [[1], [-2]]}, "greater than or equal"),
    ],
)
def test_completion_request_parallel_lists(fields: dict[str, Any], message: str) -> None:
    body = {"generate_responses": [_generate_response(0), _generate_response(1)]}
    with pytest.raises(ValidationError, match=message):
        P.DerenderCompletionRequest.model_validate(body | fields)
    ok = body | {"prompt_tokens": [4, 5], "prompt_token_ids": [[1, 2], None]}
    assert P.DerenderCompletionRequest.model_validate(ok).prompt_token_ids == [[1, 2], None]


@pytest.mark.parametrize("model", ["DerenderChatStreamRequest", "DerenderCompletionStreamRequest"])
def test_stream_requests_need_stream_true(model: str) -> None:
    cls = getattr(P, model)
    chunk: dict[str, Any] = {"choices": []}
    assert cls.model_validate({"stream": True, "generate_chunk": chunk}).stream_state is None
    for stream in ({}, {"stream": False}, {"stream": None}):
        with pytest.raises(ValidationError):
            cls.model_validate(stream | {"generate_chunk": chunk})


@pytest.mark.parametrize(
    ("union", "key"),
    [
        ("DerenderChatRequestUnion", "generate_response"),
        ("DerenderCompletionRequestUnion", "generate_responses"),
    ],
)
def test_request_unions_dispatch_on_stream(union: str, key: str) -> None:
    whole = union.removesuffix("Union")
    streamed = whole.replace("Request", "StreamRequest")
    adapter: TypeAdapter[Any] = TypeAdapter(getattr(P, union))
    body = _generate_response() if key == "generate_response" else [_generate_response()]
    assert type(adapter.validate_python({key: body})).__name__ == whole
    assert type(adapter.validate_python({"stream": False, key: body})).__name__ == whole
    chunk = {"stream": True, "generate_chunk": {"choices": []}}
    assert type(adapter.validate_json(json.dumps(chunk))).__name__ == streamed
    with pytest.raises(ValidationError) as info:
        adapter.validate_python({"stream": False, "generate_chunk": {"choices": []}})
    assert info.value.error_count() == 1 and key in str(info.value)  # one shape's error only


def test_completion_stream_request_carries_completion_request() -> None:
    request = P.DerenderCompletionStreamRequest.model_validate(
        {
            "stream": True,
            "generate_chunk": {"choices": [{"index": 0, "token_ids": [5]}]},
            "stream_state": {"logprob_text_offset": 40},
            "completion_request": {"prompt": "Say", "stream": True, "logprobs": 2, "echo": False},
        }
    )
    assert request.stream_state.logprob_text_offset == 40
    assert request.completion_request.logprobs == 2


# --- the stream responses ---------------------------------------------------------------------


def test_chat_stream_response_exact_json() -> None:
    response = P.DerenderChatStreamResponse.model_validate_json(CHAT_STREAM_RESPONSE)
    assert response.chunk.choices[0].delta.content == " world!"
    assert _dumped(response) == json.loads(CHAT_STREAM_RESPONSE)


def test_completion_stream_response_exact_json() -> None:
    body = {
        "chunk": {
            "id": "gen-1",
            "object": "text_completion",
            "created": 1767225600,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "text": "中",
                    "logprobs": {
                        "text_offset": [12, 12, 12],
                        "token_logprobs": [-0.5, -0.25, -9999.0],
                        "tokens": ["", "", "中"],
                        "top_logprobs": [None, None, {"中": -9999.0}],
                    },
                    "finish_reason": "stop",
                    "stop_reason": 151645,
                    "prompt_token_ids": None,
                    "token_ids": [5, 6, 7],
                    "weight_versions": None,
                }
            ],
            "usage": None,
            "system_fingerprint": None,
            "metrics": None,
            "kv_transfer_params": None,
        },
        "stream_state": P.DerenderStreamState().model_dump(),
    }
    response = P.DerenderCompletionStreamResponse.model_validate(body)
    assert _dumped(response) == body
