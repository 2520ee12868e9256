"""The tokens-in, tokens-out generate protocol: its request, responses, and stream chunks.

Generate logprobs arrive in one of two shapes, told apart by the first entry of ``content``:

- by id (current vLLM): ``{"token_id": 9707, "logprob": -0.1, "rank": 1, "top_logprobs": [...]}``;
- the chat shape (older servers): ``{"token": "token_id:9707", "logprob": -0.1, "bytes": null,
  "top_logprobs": [...]}``, the token text left as a ``"token_id:N"`` placeholder.

An empty or null ``content`` reads as the by-id shape; both serialize back as they came.
"""

from __future__ import annotations

import itertools
from typing import Annotated, Any, Literal

from pydantic import (
    Discriminator,
    Field,
    ModelWrapValidatorHandler,
    NonNegativeInt,
    PrivateAttr,
    Tag,
    field_validator,
    model_validator,
)
from typing_extensions import Self

from .common import (
    Logprob,
    LogprobValue,
    PerRequestMetrics,
    StreamOptions,
    UsageInfo,
    WireModel,
    random_uuid,
    validate_cache_salt,
)
from .openai_responses import ChatCompletionLogProbs
from .sampling import SamplingParams

__all__ = [
    "GenerateChoiceLogProbs",
    "GenerateLogProb",
    "GenerateLogProbs",
    "GenerateLogProbsContent",
    "GenerateRequest",
    "GenerateResponse",
    "GenerateResponseChoice",
    "GenerateResponseStreamChoice",
    "GenerateStreamResponse",
    "MultiModalFeatures",
    "PlaceholderRangeInfo",
]

_INT64 = 2**63


def _check_token_ids(ids: list[int] | None) -> list[int] | None:
    if ids and min(ids) < 0:  # min() runs in C, unlike a per-id generator
        raise ValueError("token_ids must not contain negative values")
    return ids


class PlaceholderRangeInfo(WireModel):
    """Where one multimodal item's placeholder tokens sit in the prompt."""

    offset: int = Field(ge=0)
    length: int = Field(gt=0)


class MultiModalFeatures(WireModel):
    """Multimodal metadata from the render step: item hashes and placeholder positions.

    Every per-modality mapping has the same modalities as ``mm_hashes`` and, per modality, one
    entry per hash (``kwargs_data`` and ``mm_metadata`` hold base64 payloads or null per item).
    Placeholder ranges of all modalities together must not overlap.
    """

    mm_hashes: dict[str, list[str]]
    mm_placeholders: dict[str, list[PlaceholderRangeInfo]]
    kwargs_data: dict[str, list[str | None]] | None = None
    mm_metadata: dict[str, list[str | None]] | None = None

    @model_validator(mode="after")
    def _validate_parallel_fields(self) -> Self:
        modalities = set(self.mm_hashes)
        if set(self.mm_placeholders) != modalities:
            raise ValueError("mm_hashes and mm_placeholders must use the same modalities")
        optional = (("kwargs_data", self.kwargs_data), ("mm_metadata", self.mm_metadata))
        for name, mapping in optional:
            if mapping is not None and set(mapping) != modalities:
                raise ValueError(f"{name} must use the same modalities as mm_hashes")
        spans: list[tuple[int, int]] = []
        for modality in sorted(modalities):
            count = len(self.mm_hashes[modality])
            if len(self.mm_placeholders[modality]) != count:
                raise ValueError(
                    f"{modality} mm_hashes and mm_placeholders must have the same length"
                )
            for name, mapping in optional:
                if mapping is not None and len(mapping[modality]) != count:
                    raise ValueError(f"{modality} {name} and mm_hashes must have the same length")
            spans.extend((p.offset, p.offset + p.length) for p in self.mm_placeholders[modality])
        spans.sort()
        if any(nxt[0] < cur[1] for cur, nxt in itertools.pairwise(spans)):
            raise ValueError("mm_placeholders must be globally non-overlapping and sorted")
        return self


def _is_none(value: object) -> bool:
    return value is None


def _has_serialized_items(payload: dict[str, list[str | None]] | None) -> bool:
    if not payload:
        return False
    return any(item is not None for items in payload.values() for item in items)


class GenerateRequest(WireModel):
    """A request to a tokens-in, tokens-out generate server.

    vLLM's internal helpers that need a ``ModelConfig`` (``build_tok_params``) are left out:
    tokstream has no model config, and derender never builds a generate request.

    >>> r = GenerateRequest.model_validate({"token_ids": [1], "sampling_params": {"n": 1}})
    >>> r.is_sampling_param_provided("n"), r.is_sampling_param_provided("max_tokens")
    (True, False)
    """

    request_id: str = Field(default_factory=random_uuid)
    token_ids: list[int] = Field(min_length=1)
    token_offsets: list[tuple[int, int]] | None = None
    features: MultiModalFeatures | None = None
    content_parts: list[dict[str, Any]] | None = None
    sampling_params: SamplingParams
    model: str | None = None
    return_token_ids: bool | None = None
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    cache_salt: str | None = Field(default=None, min_length=1, max_length=1024)
    priority: int = Field(default=0, ge=-_INT64, le=_INT64 - 1)
    kv_transfer_params: dict[str, Any] | None = None
    ec_transfer_params: dict[str, Any] | None = None

    # The keys of ``sampling_params`` as the caller sent them, or None when the caller passed a
    # SamplingParams object (then every field counts as provided: its values are resolved).
    _sampling_params_keys: frozenset[str] | None = PrivateAttr(default=None)

    @field_validator("token_ids")
    @classmethod
    def _non_negative_ids(cls, ids: list[int]) -> list[int]:
        _check_token_ids(ids)
        return ids

    @model_validator(mode="wrap")
    @classmethod
    def _capture_sampling_params_keys(
        cls, data: Any, handler: ModelWrapValidatorHandler[Self]
    ) -> Self:
        instance = handler(data)
        if isinstance(data, dict):  # not on re-validation of an instance, which keeps its keys
            sampling_params = data.get("sampling_params")
            if isinstance(sampling_params, dict):
                instance._sampling_params_keys = frozenset(sampling_params)
        return instance

    @model_validator(mode="before")
    @classmethod
    def _validate_cache_salt(cls, data: Any) -> Any:
        if isinstance(data, dict):
            validate_cache_salt(data.get("cache_salt"))
        return data

    @model_validator(mode="after")
    def _validate_multimodal(self) -> Self:
        features = self.features
        if features is None:
            return self
        if self.content_parts:
            raise ValueError("content_parts and features are mutually exclusive")
        if _has_serialized_items(features.mm_metadata) and not self.ec_transfer_params:
            # Metadata without tensor data only works when embeddings come over the EC connector.
            kwargs_data = features.kwargs_data or {}
            for modality, metadata in (features.mm_metadata or {}).items():
                tensors = kwargs_data.get(modality, [None] * len(metadata))
                pairs = zip(metadata, tensors, strict=True)
                if any(m is not None and t is None for m, t in pairs):
                    raise ValueError("metadata-only multimodal items require ec_transfer_params")
        prompt_len = len(self.token_ids)
        for ranges in features.mm_placeholders.values():
            if any(p.offset + p.length > prompt_len for p in ranges):
                raise ValueError("mm_placeholders must remain within the token_ids sequence")
        return self

    def is_sampling_param_provided(self, name: str) -> bool:
        """Whether the caller set ``sampling_params.<name>`` itself.

        True for every name when the request was built around a ``SamplingParams`` object, so a
        server does not overwrite values that were resolved before it; otherwise, whether the
        key was present in the ``sampling_params`` mapping that was validated.
        """
        keys = self._sampling_params_keys
        return keys is None or name in keys


class GenerateLogProb(WireModel):
    """A candidate token by id, as a generate server without a tokenizer reports it."""

    token_id: int
    logprob: LogprobValue
    rank: int | None = None


class GenerateLogProbsContent(GenerateLogProb):
    """The sampled token at one position; ``top_logprobs`` starts with it, then by rank."""

    top_logprobs: list[GenerateLogProb] = Field(default_factory=list)


class GenerateLogProbs(WireModel):
    """By-id logprobs of one generate choice: one entry per output token."""

    content: list[GenerateLogProbsContent] | None = None


def _logprobs_shape(value: Any) -> str:
    if isinstance(value, dict):
        content = value.get("content")
        first = content[0] if isinstance(content, list) and content else None
        if isinstance(first, dict) and "token_id" not in first and "token" in first:
            return "chat"
        return "ids"
    return "chat" if isinstance(value, ChatCompletionLogProbs) else "ids"


GenerateChoiceLogProbs = Annotated[
    Annotated[GenerateLogProbs, Tag("ids")] | Annotated[ChatCompletionLogProbs, Tag("chat")],
    Discriminator(_logprobs_shape),
]
"""The ``logprobs`` of a generate choice in either shape; see the module docstring."""


class GenerateResponseChoice(WireModel):
    """One output sequence of a whole generate response.

    ``stop_reason`` is not part of vLLM's generate shape: it is accepted so that a server which
    sends it gets it passed through to the OpenAI response, and left out of the JSON while null,
    so the serialized shape stays vLLM's. ``routed_experts`` is opaque to derender: upstream
    sends base64 ``.npy`` text, some deployments an object.
    """

    index: int
    logprobs: GenerateChoiceLogProbs | None = None
    finish_reason: str | None = "stop"
    stop_reason: int | str | None = Field(default=None, exclude_if=_is_none)
    token_ids: list[int] | None = None
    routed_experts: str | dict[str, Any] | None = None
    sampling_mask: list[list[int]] | None = None

    @field_validator("token_ids")
    @classmethod
    def _non_negative_ids(cls, ids: list[int] | None) -> list[int] | None:
        return _check_token_ids(ids)


class GenerateResponseStreamChoice(GenerateResponseChoice):
    """One choice of a generate stream chunk: the ids generated since the previous chunk.

    The fields of ``GenerateResponseChoice``, but ``finish_reason`` is null until the last chunk.
    """

    finish_reason: str | None = None


class GenerateStreamResponse(WireModel):
    """One SSE chunk of a streaming generate response.

    A chunk may have no choices (a usage-only chunk at the end) or a choice without ids (one
    that carries only the ``finish_reason``).
    """

    request_id: str = Field(default_factory=random_uuid)
    # Only token output can be derendered (other modes are detokenized already); left out of
    # the JSON, where absent means "tokens".
    output_mode: Literal["tokens"] = Field(default="tokens", exclude=True)
    choices: list[GenerateResponseStreamChoice]
    usage: UsageInfo | None = None
    prompt_token_ids: list[NonNegativeInt] | None = None
    mm_placeholders: dict[str, list[PlaceholderRangeInfo]] | None = None
    metrics: PerRequestMetrics | None = None


class GenerateResponse(WireModel):
    """A whole generate response: every output sequence's ids, with usage and prompt data."""

    request_id: str = Field(default_factory=random_uuid)
    # Only token output can be derendered (other modes are detokenized already); left out of
    # the JSON, where absent means "tokens".
    output_mode: Literal["tokens"] = Field(default="tokens", exclude=True)
    model: str | None = None
    created: int | None = None
    choices: list[GenerateResponseChoice]
    usage: UsageInfo | None = None
    prompt_logprobs: list[dict[int, Logprob] | None] | None = None
    prompt_token_id_logprobs: str | None = None
    prompt_token_ids: list[NonNegativeInt] | None = None
    mm_placeholders: dict[str, list[PlaceholderRangeInfo]] | None = None
    metrics: PerRequestMetrics | None = None
    kv_transfer_params: dict[str, Any] | None = None
    ec_transfer_params: dict[str, Any] | None = None
