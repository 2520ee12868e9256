"""Protocol models, request side: SamplingParams, multimodal features, GenerateRequest (every
validator, valid and invalid), ``is_sampling_param_provided`` and ``validate_cache_salt``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError
from tokstream import protocol as P


def _dumped(model: Any) -> Any:
    return json.loads(model.model_dump_json())


def test_sampling_params_defaults_and_extra_fields() -> None:
    params = P.SamplingParams.model_validate({"output_kind": 1, "repetition_detection": None})
    assert (params.n, params.temperature, params.top_p, params.top_k) == (1, 1.0, 1.0, 0)
    assert (params.max_tokens, params.min_tokens, params.logprobs) == (16, 0, None)
    assert params.stop is None and params.stop_token_ids is None
    assert params.skip_special_tokens and params.spaces_between_special_tokens
    assert not params.include_stop_str_in_output and not params.ignore_eos
    assert params.model_extra == {"output_kind": 1, "repetition_detection": None}
    assert _dumped(params)["output_kind"] == 1


@pytest.mark.parametrize(
    "fields",
    [
        {"n": 0},
        {"presence_penalty": 2.5},
        {"frequency_penalty": -3},
        {"repetition_penalty": 0},
        {"temperature": -0.1},
        {"temperature": 2.1},
        {"top_p": 0},
        {"top_p": 1.5},
        {"top_k": -2},
        {"min_p": 1.5},
        {"max_tokens": 0},
        {"min_tokens": -1},
        {"min_tokens": 20, "max_tokens": 10},
        {"logprobs": -2},
        {"prompt_logprobs": -5},
        {"stop": ["ok", ""]},
        {"stop": ""},
        {"stop": "x", "detokenize": False},
        {"bad_words": [""]},
        {"temperature": 0, "n": 2},
    ],
)
def test_sampling_params_rejects(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        P.SamplingParams.model_validate(fields)


@pytest.mark.parametrize(
    "fields",
    [
        {"top_k": -1, "logprobs": -1, "prompt_logprobs": 0},
        {"max_tokens": None, "min_tokens": 100},
        {"temperature": 0, "n": 1, "stop": "\n", "seed": -1},
        {"stop": ["</s>", "\n\n"], "stop_token_ids": [2], "logit_bias": {"50256": -100}},
    ],
)
def test_sampling_params_accepts(fields: dict[str, Any]) -> None:
    params = P.SamplingParams.model_validate(fields)
    assert P.SamplingParams.model_validate_json(params.model_dump_json()) == params


# --- multimodal features and GenerateRequest --------------------------------------------------


def _features(**overrides: Any) -> dict[str, Any]:
    return {
        "mm_hashes": {"image": ["h1", "h2"], "audio": ["a1"]},
        "mm_placeholders": {
            "image": [{"offset": 1, "length": 3}, {"offset": 10, "length": 2}],
            "audio": [{"offset": 5, "length": 4}],
        },
    } | overrides


def test_placeholder_range_info() -> None:
    assert P.PlaceholderRangeInfo(offset=0, length=1).length == 1
    for bad in ({"offset": -1, "length": 1}, {"offset": 0, "length": 0}):
        with pytest.raises(ValidationError):
            P.PlaceholderRangeInfo.model_validate(bad)


def test_multimodal_features_valid() -> None:
    features = P.MultiModalFeatures.model_validate(
        _features(kwargs_data={"image": ["b64", None], "audio": [None]}, mm_metadata=None)
    )
    assert P.MultiModalFeatures.model_validate_json(features.model_dump_json()) == features


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"mm_placeholders": {"image": []}}, "same modalities"),
        ({"kwargs_data": {"image": [None, None]}}, "kwargs_data must use the same modalities"),
        ({"mm_metadata": {"image": [None], "audio": [None]}}, "mm_metadata and mm_hashes"),
        ({"kwargs_data": {"image": [None], "audio": [None]}}, "kwargs_data and mm_hashes"),
        ({"mm_hashes": {"image": ["h1"], "audio": ["a1"]}}, "mm_placeholders must have"),
        (
            {
                "mm_placeholders": {
                    "image": [{"offset": 1, "length": 3}, {"offset": 10, "length": 2}],
                    "audio": [{"offset": 3, "length": 4}],
                }
            },
            "non-overlapping",
        ),
    ],
)
def test_multimodal_features_rejects(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        P.MultiModalFeatures.model_validate(_features(**overrides))


def _request(**overrides: Any) -> dict[str, Any]:
    return {"token_ids": list(range(16)), "sampling_params": {"max_tokens": 8}} | overrides


def test_generate_request_defaults_and_round_trip() -> None:
    request = P.GenerateRequest.model_validate(_request(features=_features()))
    assert len(request.request_id) == 32 and request.priority == 0 and request.stream is False
    again = P.GenerateRequest.model_validate_json(request.model_dump_json())
    assert again.model_dump() == request.model_dump()
    # A dump writes every sampling parameter, so after a round trip all of them count as sent.
    assert again.is_sampling_param_provided("temperature")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"token_ids": []}, "at least 1"),
        ({"token_ids": [1, -2]}, "negative"),
        ({"cache_salt": ""}, "non-empty"),
        ({"cache_salt": "a@b"}, "must not contain"),
        ({"cache_salt": "x" * 129}, "at most 128"),
        ({"priority": 2**63}, "less than or equal"),
        ({"features": _features(), "content_parts": [{"type": "text"}]}, "mutually exclusive"),
        ({"features": _features(mm_metadata={"image": ["m", None], "audio": [None]})}, "ec_"),
        ({"token_ids": [0] * 8, "features": _features()}, "within the token_ids"),
    ],
)
def test_generate_request_rejects(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        P.GenerateRequest.model_validate(_request(**overrides))


def test_generate_request_metadata_only_items_with_ec_or_tensor_data() -> None:
    metadata = {"image": ["m", None], "audio": [None]}
    with_ec = _request(features=_features(mm_metadata=metadata), ec_transfer_params={"k": 1})
    assert P.GenerateRequest.model_validate(with_ec).ec_transfer_params == {"k": 1}
    tensors = {"image": ["t", None], "audio": [None]}
    with_data = _request(features=_features(mm_metadata=metadata, kwargs_data=tensors))
    assert P.GenerateRequest.model_validate(with_data).features.kwargs_data == tensors


def test_is_sampling_param_provided() -> None:
    from_json = P.GenerateRequest.model_validate_json(json.dumps(_request()))
    assert from_json.is_sampling_param_provided("max_tokens")
    assert not from_json.is_sampling_param_provided("temperature")
    built = P.GenerateRequest(token_ids=[1], sampling_params=P.SamplingParams(max_tokens=8))
    assert built.is_sampling_param_provided("temperature")  # a built object counts as resolved
    assert P.GenerateRequest.model_validate(from_json) is from_json  # re-validation keeps keys
    copied = from_json.model_copy(update={"priority": 1})
    assert not copied.is_sampling_param_provided("temperature")


def test_validate_cache_salt() -> None:
    for ok in (None, "s", "x" * 128, "base64+salt="):
        P.validate_cache_salt(ok)
    for bad in ("", 5, "x" * 129, "a/b", "a\\b", "a\x00b", "@"):
        with pytest.raises(ValueError):
            P.validate_cache_salt(bad)
