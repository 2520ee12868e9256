"""Protocol models, generate side: generate responses and stream chunks in the exact JSON vLLM's
generate server emits, and the logprob sentinel (the request side is ``test_protocol_request.py``).

The fixtures are hand-written in vLLM's shapes: whole responses with logprobs by id (current
servers) and in the chat shape with ``"token_id:N"`` placeholders (older servers), a usage-only
final chunk with ``choices: []`` (vLLM writes it with ``exclude_none``), and a finish-only chunk.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from pydantic import ValidationError
from tokstream import protocol as P

BY_ID_RESPONSE = """{"request_id": "gen-7f3a", "model": "qwen3", "created": 1767225600,
 "choices": [{"index": 0,
   "logprobs": {"content": [
     {"token_id": 9707, "logprob": -0.0123, "rank": 1, "top_logprobs": [
       {"token_id": 9707, "logprob": -0.0123, "rank": 1},
       {"token_id": 13048, "logprob": -4.61, "rank": 2}]},
     {"token_id": 151645, "logprob": -9999.0, "rank": null, "top_logprobs": []}]},
   "finish_reason": "stop", "token_ids": [9707, 151645],
   "routed_experts": null, "sampling_mask": null}],
 "usage": {"prompt_tokens": 5, "total_tokens": 7, "completion_tokens": 2,
           "prompt_tokens_details": null, "completion_tokens_details": null},
 "prompt_logprobs": null, "prompt_token_id_logprobs": null, "prompt_token_ids": [151644, 872],
 "mm_placeholders": null, "metrics": null, "kv_transfer_params": null,
 "ec_transfer_params": null}"""

CHAT_SHAPE_RESPONSE = """{"request_id": "gen-old", "model": null, "created": null,
 "choices": [{"index": 0,
   "logprobs": {"content": [
     {"token": "token_id:104307", "logprob": -0.25, "bytes": null, "top_logprobs": [
       {"token": "token_id:104307", "logprob": -0.25, "bytes": null}]},
     {"token": "token_id:3837", "logprob": -9999.0, "bytes": null, "top_logprobs": []}]},
   "finish_reason": "length", "token_ids": [104307, 3837],
   "routed_experts": null, "sampling_mask": null}],
 "usage": null, "prompt_logprobs": [null, {"872": {"logprob": -9999.0, "rank": 3,
   "decoded_token": null}}], "prompt_token_id_logprobs": null, "prompt_token_ids": null,
 "mm_placeholders": null, "metrics": null, "kv_transfer_params": null,
 "ec_transfer_params": null}"""

USAGE_ONLY_CHUNK = """{"request_id": "gen-7f3a", "choices": [],
 "usage": {"prompt_tokens": 5, "total_tokens": 12, "completion_tokens": 7}}"""

FINISH_ONLY_CHUNK = """{"request_id": "gen-7f3a", "choices": [{"index": 0, "logprobs": null,
 "finish_reason": "length", "token_ids": [], "routed_experts": null, "sampling_mask": null}],
 "usage": null, "prompt_token_ids": null, "mm_placeholders": null, "metrics": null}"""


def _dumped(model: Any, **kwargs: Any) -> Any:
    return json.loads(model.model_dump_json(**kwargs))


def test_generate_response_logprobs_by_id_round_trip() -> None:
    response = P.GenerateResponse.model_validate_json(BY_ID_RESPONSE)
    logprobs = response.choices[0].logprobs
    assert isinstance(logprobs, P.GenerateLogProbs)
    first = logprobs.content[0]
    assert (first.token_id, first.rank, first.top_logprobs[1].token_id) == (9707, 1, 13048)
    assert _dumped(response) == json.loads(BY_ID_RESPONSE)
    assert P.GenerateResponse.model_validate(response.model_dump()) == response


def test_generate_response_chat_shape_round_trip() -> None:
    response = P.GenerateResponse.model_validate_json(CHAT_SHAPE_RESPONSE)
    logprobs = response.choices[0].logprobs
    assert isinstance(logprobs, P.ChatCompletionLogProbs)
    assert [e.token for e in logprobs.content] == ["token_id:104307", "token_id:3837"]
    assert response.prompt_logprobs[1][872].rank == 3  # JSON's string key read as an id
    assert _dumped(response) == json.loads(CHAT_SHAPE_RESPONSE)


def test_generate_logprobs_shapes_do_not_mix_and_empty_content_is_accepted() -> None:
    mixed = {"content": [{"token_id": 1, "logprob": -1.0}, {"token": "token_id:2"}]}
    with pytest.raises(ValidationError):
        P.GenerateResponseChoice.model_validate({"index": 0, "logprobs": mixed})
    contents: list[list[Any] | None] = [[], None]
    for content in contents:
        body = {"index": 0, "logprobs": {"content": content}}
        assert P.GenerateResponseChoice.model_validate(body).logprobs.content == content


def test_newer_vllm_fields_are_ignored_and_stop_reason_is_passed_when_sent() -> None:
    body = json.loads(BY_ID_RESPONSE) | {"output_mode": "tokens"}
    body["choices"][0] |= {"weight_versions": None, "stop_reason": 151645}
    response = P.GenerateResponse.model_validate(body)
    assert "output_mode" not in _dumped(response)
    assert response.choices[0].stop_reason == 151645
    assert _dumped(response)["choices"][0]["stop_reason"] == 151645
    plain = P.GenerateResponse.model_validate_json(BY_ID_RESPONSE)
    assert "stop_reason" not in _dumped(plain)["choices"][0]  # vLLM's shape when absent


def test_usage_only_stream_chunk() -> None:
    chunk = P.GenerateStreamResponse.model_validate_json(USAGE_ONLY_CHUNK)
    assert chunk.choices == [] and chunk.usage.completion_tokens == 7
    assert _dumped(chunk, exclude_none=True) == json.loads(USAGE_ONLY_CHUNK)
    full = _dumped(chunk)  # our convention: nulls present
    assert full["prompt_token_ids"] is None and full["usage"]["prompt_tokens_details"] is None


def test_finish_only_stream_chunk() -> None:
    chunk = P.GenerateStreamResponse.model_validate_json(FINISH_ONLY_CHUNK)
    choice = chunk.choices[0]
    assert (choice.finish_reason, choice.token_ids) == ("length", [])
    assert _dumped(chunk) == json.loads(FINISH_ONLY_CHUNK)
    assert P.GenerateResponseStreamChoice(index=0).finish_reason is None
    assert P.GenerateResponseChoice(index=0).finish_reason == "stop"


@pytest.mark.parametrize("model", ["GenerateResponseChoice", "GenerateResponseStreamChoice"])
def test_choice_token_ids_must_not_be_negative(model: str) -> None:
    cls = getattr(P, model)
    assert cls(index=0, token_ids=[0, 5]).token_ids == [0, 5]
    with pytest.raises(ValidationError, match="negative"):
        cls(index=0, token_ids=[3, -1])


def test_prompt_token_ids_must_not_be_negative() -> None:
    with pytest.raises(ValidationError):
        P.GenerateStreamResponse(choices=[], prompt_token_ids=[-1])


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        (-0.5, -0.5),
        (0.0, 0.0),
        (-9999.0, -9999.0),
        (-12345.0, -9999.0),
        (float("-inf"), -9999.0),
        (float("nan"), -9999.0),
    ],
)
def test_logprob_sentinel_clamps(raw: float, stored: float) -> None:
    assert P.clamp_logprob(raw) == stored
    entry = P.GenerateLogProbsContent(token_id=1, logprob=raw)
    assert entry.logprob == stored
    assert math.isfinite(json.loads(entry.model_dump_json())["logprob"])


def test_logprob_sentinel_from_json_tokens_and_plus_inf_rejected() -> None:
    body = (
        '{"token_id": 1, "logprob": -Infinity, "top_logprobs": [{"token_id": 2, "logprob": NaN}]}'
    )
    entry = P.GenerateLogProbsContent.model_validate_json(body)
    assert (entry.logprob, entry.top_logprobs[0].logprob) == (-9999.0, -9999.0)
    with pytest.raises(ValidationError, match=r"\+inf"):
        P.Logprob(logprob=float("inf"))
    completion = P.CompletionLogProbs(
        token_logprobs=[None, float("-inf")], top_logprobs=[None, {"a": float("nan")}]
    )
    assert completion.token_logprobs == [None, -9999.0]
    assert completion.top_logprobs == [None, {"a": -9999.0}]
    assert P.ChatCompletionLogProb(token="x").logprob == -9999.0  # vLLM's default
