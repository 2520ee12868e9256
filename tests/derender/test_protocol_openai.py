"""Protocol models, OpenAI side: the chat and completion requests (every validator, valid and
invalid), the responses and stream chunks in their JSON shapes, logprob shapes, errors, and the
extra-field and immutability policies."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError
from tokstream import protocol as P

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]


def _dumped(model: Any) -> Any:
    return json.loads(model.model_dump_json())


# --- requests ---------------------------------------------------------------------------------


def test_chat_request_defaults_and_extra_fields() -> None:
    request = P.ChatCompletionRequest.model_validate({"model": "m", "temperature": 0.2})
    assert request.messages == [] and request.stop == [] and request.stop_token_ids == []
    assert (request.n, request.logprobs, request.top_logprobs, request.echo) == (1, False, 0, False)
    assert request.tool_choice == "none" and request.tools is None
    assert request.include_reasoning and request.parallel_tool_calls
    assert request.skip_special_tokens is True and request.spaces_between_special_tokens
    assert (request.min_tokens, request.include_stop_str_in_output) == (0, False)
    assert request.return_token_ids is None and request.stream is False
    assert request.model_extra == {"temperature": 0.2}
    assert P.ChatCompletionRequest.model_validate_json(request.model_dump_json()) == request
    assert P.ChatCompletionRequest(skip_special_tokens=None).skip_special_tokens is None


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"stream_options": {"include_usage": True}}, "stream=True"),
        ({"top_logprobs": -2, "logprobs": True}, "positive value or -1"),
        ({"top_logprobs": 5}, "`logprobs` must be set"),
        ({"top_logprobs": -1}, "`logprobs` must be set"),
        ({"prompt_logprobs": 1, "stream": True}, "not available when `stream=True`"),
        ({"prompt_logprobs": -2}, "positive value or -1"),
        ({"tool_choice": "auto"}, "`tools` must be set"),
        ({"tool_choice": "sometimes", "tools": TOOLS}, "must be"),
        ({"tool_choice": {"type": "function", "function": {}}, "tools": TOOLS}, "function name"),
        (
            {"tool_choice": {"type": "function", "function": {"name": "other"}}, "tools": TOOLS},
            "does not match",
        ),
        ({"cache_salt": ""}, "non-empty"),
        ({"stop": [1]}, "valid string"),
    ],
)
def test_chat_request_rejects(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        P.ChatCompletionRequest.model_validate(fields)


def test_chat_request_tool_choice_rules() -> None:
    body = {"messages": [{"role": "user", "content": "weather?"}], "tools": TOOLS}
    assert P.ChatCompletionRequest.model_validate(body).tool_choice == "auto"
    assert "tool_choice" not in body  # the caller's dict is not modified
    named = {"type": "function", "function": {"name": "get_weather"}}
    request = P.ChatCompletionRequest.model_validate(body | {"tool_choice": named})
    assert isinstance(request.tool_choice, P.ChatCompletionNamedToolChoiceParam)
    assert request.tool_choice.function.name == "get_weather"
    emptied = P.ChatCompletionRequest.model_validate({"tools": [], "tool_choice": "required"})
    assert (emptied.tool_choice, emptied.tools) == ("none", None)
    explicit_none = P.ChatCompletionRequest.model_validate(body | {"tool_choice": None})
    assert explicit_none.tool_choice is None
    built = P.ChatCompletionRequest(
        tools=[P.ChatCompletionToolsParam(function=P.FunctionDefinition(name="f"))],
        tool_choice=P.ChatCompletionNamedToolChoiceParam(
            function=P.ChatCompletionNamedFunction(name="f")
        ),
    )
    assert built.tool_choice.function.name == "f"


@pytest.mark.parametrize(
    "fields",
    [
        {"logprobs": True, "top_logprobs": 20, "stream": True, "stream_options": {}},
        {"logprobs": True, "top_logprobs": -1, "prompt_logprobs": 0, "stream": True},
        {"prompt_logprobs": -1, "stop": "\n", "min_tokens": 3, "include_stop_str_in_output": True},
        {"reasoning_effort": "minimal", "chat_template_kwargs": {"enable_thinking": False}},
    ],
)
def test_chat_request_accepts(fields: dict[str, Any]) -> None:
    request = P.ChatCompletionRequest.model_validate(fields)
    assert P.ChatCompletionRequest.model_validate(request.model_dump()) == request


def test_completion_request_defaults() -> None:
    request = P.CompletionRequest.model_validate({"prompt": [1, 2, 3], "best_of": 1})
    assert (request.max_tokens, request.n, request.logprobs, request.echo) == (16, 1, None, False)
    assert request.stop == [] and request.skip_special_tokens is True
    assert request.model_extra == {"best_of": 1}
    assert P.CompletionRequest().prompt is None  # optional here, unlike vLLM (never read)
    again = P.CompletionRequest.model_validate_json(request.model_dump_json())
    assert again == request


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"logprobs": -1}, "positive value"),
        ({"stream_options": {"include_usage": True}, "stream": False}, "stream=True"),
        ({"prompt_logprobs": 2, "stream": True}, "not available"),
        ({"prompt_logprobs": -3}, "positive value or -1"),
        ({"cache_salt": 1}, "non-empty string"),
        ({"prompt": [[1], "a"]}, "validation error"),
    ],
)
def test_completion_request_rejects(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        P.CompletionRequest.model_validate(fields)


# --- responses --------------------------------------------------------------------------------


def test_chat_response_json_has_null_fields_and_reasoning() -> None:
    response = P.ChatCompletionResponse(
        model="m",
        choices=[
            P.ChatCompletionResponseChoice(
                index=0,
                message=P.ChatMessage(role="assistant", content="4", reasoning="2+2"),
                stop_reason=151645,
                token_ids=[19, 151645],
            )
        ],
        usage=P.UsageInfo(prompt_tokens=3, completion_tokens=2, total_tokens=5),
    )
    body = _dumped(response)
    assert body["id"].startswith("chatcmpl-") and isinstance(body["created"], int)
    assert body["object"] == "chat.completion" and body["system_fingerprint"] is None
    assert body["prompt_logprobs"] is None and body["kv_transfer_params"] is None
    choice = body["choices"][0]
    assert choice["logprobs"] is None and choice["finish_reason"] == "stop"
    assert choice["message"] == {
        "role": "assistant",
        "content": "4",
        "refusal": None,
        "annotations": None,
        "audio": None,
        "function_call": None,
        "reasoning": "2+2",  # no tool_calls: left out when empty, as vLLM's
    }
    assert P.ChatCompletionResponse.model_validate(body) == response


def test_chat_stream_chunk_delta_shapes() -> None:
    plain = P.ChatCompletionResponseStreamChoice(index=0, delta=P.DeltaMessage(content="Hi"))
    assert _dumped(plain)["delta"] == {"role": None, "content": "Hi", "reasoning": None}
    call = P.DeltaToolCall(
        index=0,
        id="chatcmpl-tool-1",
        type="function",
        function=P.DeltaFunctionCall(name="get_weather"),
    )
    chunk = P.ChatCompletionStreamResponse(
        id="gen-1",
        created=1,
        model="m",
        choices=[
            P.ChatCompletionResponseStreamChoice(index=0, delta=P.DeltaMessage(tool_calls=[call]))
        ],
    )
    body = _dumped(chunk)
    assert body["object"] == "chat.completion.chunk" and body["usage"] is None
    assert body["choices"][0]["delta"]["tool_calls"] == [
        {
            "id": "chatcmpl-tool-1",
            "type": "function",
            "index": 0,
            "function": {"name": "get_weather", "arguments": None},
        }
    ]
    assert P.ChatCompletionStreamResponse.model_validate(body) == chunk
    assert P.ToolCall(function=P.FunctionCall(name="f", arguments="{}")).id.startswith(
        "chatcmpl-tool-"
    )


def test_chat_logprob_shapes() -> None:
    body = {
        "content": [
            {
                "token": "中",
                "logprob": -0.5,
                "bytes": [228, 184, 173],
                "top_logprobs": [{"token": "中", "logprob": -0.5, "bytes": [228, 184, 173]}],
            },
            {"token": "", "logprob": -9999.0, "bytes": [], "top_logprobs": []},
        ]
    }
    logprobs = P.ChatCompletionLogProbs.model_validate(body)
    assert _dumped(logprobs) == body
    assert _dumped(P.ChatCompletionLogProbs()) == {"content": None}


def test_completion_response_json() -> None:
    response = P.CompletionResponse(
        id="gen-1",
        created=1,
        model="m",
        choices=[P.CompletionResponseChoice(index=0, text=" world", finish_reason="length")],
        usage=P.UsageInfo(prompt_tokens=1, completion_tokens=1, total_tokens=2),
    )
    assert _dumped(response) == {
        "id": "gen-1",
        "object": "text_completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "text": " world",
                "logprobs": None,
                "finish_reason": "length",
                "stop_reason": None,
                "token_ids": None,
                "prompt_logprobs": None,
                "prompt_token_ids": None,
                "routed_experts": None,
                "weight_versions": None,
            }
        ],
        "service_tier": None,
        "system_fingerprint": None,
        "usage": {
            "prompt_tokens": 1,
            "total_tokens": 2,
            "completion_tokens": 1,
            "prompt_tokens_details": None,
            "completion_tokens_details": None,
        },
        "kv_transfer_params": None,
        "ec_transfer_params": None,
        "metrics": None,
    }
    stream_chunk = P.CompletionStreamResponse(model="m", choices=[])
    assert stream_chunk.id.startswith("cmpl-") and stream_chunk.object == "text_completion"


def test_error_response_shape() -> None:
    error = P.ErrorResponse(
        error=P.ErrorInfo(message="token_ids must not be empty", type="BadRequestError", code=400)
    )
    assert _dumped(error) == {
        "error": {
            "message": "token_ids must not be empty",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
    }
    with pytest.raises(ValidationError):
        P.ErrorResponse.model_validate({"error": {"message": "x", "type": "E"}})


def test_small_shapes_defaults_and_immutability() -> None:
    assert _dumped(P.StreamOptions()) == {"include_usage": False, "continuous_usage_stats": False}
    usage = P.UsageInfo()
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (0, 0, 0)
    metrics = P.PerRequestMetrics.model_validate({"queue_time_ms": 1.5, "new_metric": 2})
    assert metrics.model_extra == {"new_metric": 2}
    with pytest.raises(ValidationError, match="frozen"):
        usage.prompt_tokens = 3
    assert usage.model_copy(update={"prompt_tokens": 3}).prompt_tokens == 3
