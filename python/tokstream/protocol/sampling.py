"""``SamplingParams``: the ``sampling_params`` object of a generate request, without vLLM."""

from __future__ import annotations

import math
from typing import Any

from pydantic import model_validator
from typing_extensions import Self

from .common import OpenAIModel

__all__ = ["SamplingParams"]

_GREEDY_BELOW = 1e-5  # vLLM treats a temperature under this as greedy sampling


class SamplingParams(OpenAIModel):
    """vLLM's sampling parameters, with vLLM's field names, defaults and range checks.

    Only the fields derender reads and the common ones are declared; every other key vLLM knows
    (``output_kind``, ``structured_outputs`` options, ``repetition_detection``, ...) is kept as an
    extra field and serialized back unchanged, so a request forwarded to a generate server loses
    nothing. Values are stored as sent: vLLM's normalizations (``stop`` as a list, ``seed=-1`` as
    ``None``, tiny temperatures raised to 0.01) belong to the engine, not to the wire.

    >>> SamplingParams.model_validate({"max_tokens": 8, "stop": "\\n"}).stop
    '\\n'
    """

    n: int = 1
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    repetition_penalty: float = 1.0
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    seed: int | None = None
    stop: str | list[str] | None = None
    stop_token_ids: list[int] | None = None
    bad_words: list[str] | None = None
    ignore_eos: bool = False
    max_tokens: int | None = 16
    min_tokens: int = 0
    logprobs: int | None = None
    prompt_logprobs: int | None = None
    detokenize: bool = True
    skip_special_tokens: bool = True
    spaces_between_special_tokens: bool = True
    include_stop_str_in_output: bool = False
    logit_bias: dict[int, float] | None = None
    allowed_token_ids: list[int] | None = None
    extra_args: dict[str, Any] | None = None
    structured_outputs: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _check_ranges(self) -> Self:
        # The same rules, in the same order, as vLLM's SamplingParams._verify_args.
        problem = _first_problem(self)
        if problem is not None:
            raise ValueError(problem)
        return self


def _first_problem(p: SamplingParams) -> str | None:
    """The first range rule ``p`` breaks, as a sentence, or None."""
    if p.n < 1:
        return f"n must be at least 1, got {p.n}."
    if not -2.0 <= p.presence_penalty <= 2.0:
        return f"presence_penalty must be in [-2, 2], got {p.presence_penalty}."
    if not -2.0 <= p.frequency_penalty <= 2.0:
        return f"frequency_penalty must be in [-2, 2], got {p.frequency_penalty}."
    if not math.isfinite(p.repetition_penalty) or p.repetition_penalty <= 0.0:
        return f"repetition_penalty must be a finite number above 0, got {p.repetition_penalty}."
    if not (math.isfinite(p.temperature) and 0.0 <= p.temperature <= 2.0):
        return f"temperature must be in [0, 2], got {p.temperature}."
    if not 0.0 < p.top_p <= 1.0:
        return f"top_p must be in (0, 1], got {p.top_p}."
    if p.top_k < -1:
        return f"top_k must be 0 (disable), or at least 1, got {p.top_k}."
    if not 0.0 <= p.min_p <= 1.0:
        return f"min_p must be in [0, 1], got {p.min_p}."
    if p.max_tokens is not None and p.max_tokens < 1:
        return f"max_tokens must be at least 1, got {p.max_tokens}."
    if p.min_tokens < 0:
        return f"min_tokens must be greater than or equal to 0, got {p.min_tokens}."
    if p.max_tokens is not None and p.min_tokens > p.max_tokens:
        return (
            f"min_tokens must be less than or equal to max_tokens={p.max_tokens}, "
            f"got {p.min_tokens}."
        )
    for name, value in (("logprobs", p.logprobs), ("prompt_logprobs", p.prompt_logprobs)):
        if value is not None and value < -1:
            return f"{name} must be non-negative or -1, got {value}."
    stops = [p.stop] if isinstance(p.stop, str) else p.stop or []
    if any(not s for s in stops):
        return "stop cannot contain an empty string."
    if stops and not p.detokenize:
        return "stop strings are only supported when detokenize is True."
    if any(not w for w in p.bad_words or []):
        return "bad_words cannot contain an empty string."
    if p.temperature < _GREEDY_BELOW and p.n > 1:
        return f"n must be 1 when using greedy sampling, got {p.n}."
    return None
