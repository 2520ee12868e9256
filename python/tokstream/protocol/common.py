"""Base classes, the logprob sentinel, and the small shapes every other protocol module shares.

Two base classes carry the whole extra-field policy (see the package docstring for the reasons):
``WireModel`` ignores fields it does not know, ``OpenAIModel`` keeps them. Both are frozen.
"""

from __future__ import annotations

import math
import time
import uuid
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict

from .. import _core

__all__ = [
    "LOGPROB_FLOOR",
    "CompletionTokenUsageInfo",
    "ErrorInfo",
    "ErrorResponse",
    "Logprob",
    "LogprobValue",
    "OpenAIModel",
    "PerRequestMetrics",
    "PromptTokenUsageInfo",
    "StreamOptions",
    "UsageInfo",
    "WireModel",
    "clamp_logprob",
    "random_uuid",
    "unix_time",
    "validate_cache_salt",
]


class WireModel(BaseModel):
    """Base of vLLM's own messages (generate, derender, stream state) and of per-token shapes.

    Unknown fields are ignored, as vLLM's plain ``BaseModel`` messages do: a newer vLLM may add
    fields that derender does not read, and they must not turn into a 400. Per-token shapes
    (logprob entries) use it too, so that thousands of them carry no extra-field dict each.
    """

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)


class OpenAIModel(BaseModel):
    """Base of the OpenAI-shaped requests and responses.

    Unknown fields are kept (``model_extra``) and serialized back, because the OpenAI API allows
    extra fields and vLLM adds many; a caller can round-trip a request it did not fully describe.
    """

    model_config = ConfigDict(frozen=True, extra="allow", defer_build=True)


def random_uuid() -> str:
    """A fresh random id in vLLM's format: 32 lowercase hex digits."""
    return uuid.uuid4().hex


def unix_time() -> int:
    """The current Unix time in whole seconds (the ``created`` field of OpenAI responses)."""
    return int(time.time())


LOGPROB_FLOOR: float = _core.LOGPROB_FLOOR
"""The value that stands for ``-inf`` (and NaN) on the wire. JSON has no infinities, so vLLM
clamps every logprob to at least this value before sending it."""


def clamp_logprob(value: float) -> float:
    """Maps ``-inf``, NaN and anything below ``LOGPROB_FLOOR`` to ``LOGPROB_FLOOR``.

    Every logprob field of these models passes through this function, so a validated model holds
    only finite logprobs and its JSON is always strict (no ``-Infinity`` or ``NaN`` tokens), even
    when a caller built it from raw engine floats.

    Raises:
        ValueError: for ``+inf``, which no log-probability can be.

    >>> clamp_logprob(float("-inf")), clamp_logprob(float("nan")), clamp_logprob(-0.5)
    (-9999.0, -9999.0, -0.5)
    """
    if value >= LOGPROB_FLOOR:  # False for NaN, so NaN falls through to the floor
        if value == math.inf:
            raise ValueError("a logprob cannot be +inf")
        return value
    return LOGPROB_FLOOR


LogprobValue = Annotated[float, AfterValidator(clamp_logprob)]
"""A logprob float: accepts any number (``-Infinity``/``NaN`` in JSON too), stores it clamped."""


_CACHE_SALT_MAX_CHARS = 128
_CACHE_SALT_FORBIDDEN = frozenset("@/\\\x00")


def validate_cache_salt(cache_salt: object) -> None:
    """Checks a ``cache_salt`` as vLLM does before it reaches a cache backend.

    ``None`` is fine; otherwise it must be a non-empty string of at most 128 characters without
    ``@``, ``/``, a backslash, or NUL.

    Raises:
        ValueError: naming the rule the salt breaks.

    >>> validate_cache_salt("c2FsdA")  # returns None: the salt is fine
    """
    if cache_salt is None:
        return
    if not isinstance(cache_salt, str) or not cache_salt:
        raise ValueError("Parameter 'cache_salt' must be a non-empty string if provided.")
    if len(cache_salt) > _CACHE_SALT_MAX_CHARS or not _CACHE_SALT_FORBIDDEN.isdisjoint(cache_salt):
        raise ValueError(
            "Parameter 'cache_salt' must be at most 128 characters and must not contain "
            "'@', '/', '\\', or NUL."
        )


class StreamOptions(OpenAIModel):
    """The ``stream_options`` object of a streaming request."""

    include_usage: bool | None = False
    continuous_usage_stats: bool | None = False


class PromptTokenUsageInfo(OpenAIModel):
    """Breakdown of ``prompt_tokens`` (prefix-cache hits)."""

    cached_tokens: int | None = None


class CompletionTokenUsageInfo(OpenAIModel):
    """Breakdown of ``completion_tokens``."""

    reasoning_tokens: int = 0


class UsageInfo(OpenAIModel):
    """Token counts of a request, in the OpenAI ``usage`` shape."""

    prompt_tokens: int = 0
    total_tokens: int = 0
    completion_tokens: int | None = 0
    prompt_tokens_details: PromptTokenUsageInfo | None = None
    completion_tokens_details: CompletionTokenUsageInfo | None = None


class PerRequestMetrics(OpenAIModel):
    """Timings the generate server may attach to a response; derender passes them by."""

    time_to_first_token_ms: float | None = None
    generation_time_ms: float | None = None
    queue_time_ms: float | None = None
    mean_itl_ms: float | None = None
    tokens_per_second: float | None = None
    # Experimental in vLLM and still changing shape, so kept as plain JSON.
    speculative_decoding: dict[str, Any] | None = None


class Logprob(WireModel):
    """One entry of a ``prompt_logprobs`` position: ``{token_id: Logprob}`` on the wire."""

    logprob: LogprobValue
    rank: int | None = None
    decoded_token: str | None = None


class ErrorInfo(OpenAIModel):
    """The ``error`` object of an error body."""

    message: str
    type: str
    param: str | None = None
    code: int


class ErrorResponse(OpenAIModel):
    """An error body: ``{"error": {"message", "type", "param", "code"}}``.

    >>> ErrorResponse(error=ErrorInfo(message="bad", type="BadRequestError", code=400)).model_dump()
    {'error': {'message': 'bad', 'type': 'BadRequestError', 'param': None, 'code': 400}}
    """

    error: ErrorInfo
