"""OpenAI-shaped responses: chat and completion, whole and streamed, and their logprob shapes.

Conventions (REFERENCE section 5): every declared field is present in the JSON, null or not, so
serialize with plain ``model_dump()`` / ``model_dump_json()`` (never ``exclude_none``); reasoning
text travels in ``reasoning``, not the older ``reasoning_content``. The fields and their order are
vLLM 0.33.0's models', so a client comparing answers sees no difference. The one omission is
vLLM's own: a ``ChatMessage`` or ``DeltaMessage`` leaves ``tool_calls`` out when it has none.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .common import (
    Logprob,
    LogprobValue,
    OpenAIModel,
    PerRequestMetrics,
    UsageInfo,
    WireModel,
    random_uuid,
    unix_time,
)

__all__ = [
    "ChatCompletionLogProb",
    "ChatCompletionLogProbs",
    "ChatCompletionLogProbsContent",
    "ChatCompletionResponse",
    "ChatCompletionResponseChoice",
    "ChatCompletionResponseStreamChoice",
    "ChatCompletionStreamResponse",
    "ChatMessage",
    "CompletionLogProbs",
    "CompletionResponse",
    "CompletionResponseChoice",
    "CompletionResponseStreamChoice",
    "CompletionStreamResponse",
    "DeltaFunctionCall",
    "DeltaMessage",
    "DeltaToolCall",
    "FunctionCall",
    "ToolCall",
]

ServiceTier = Literal["auto", "default", "flex", "scale", "priority"]


def _chat_id() -> str:
    return f"chatcmpl-{random_uuid()}"


def _completion_id() -> str:
    return f"cmpl-{random_uuid()}"


def _tool_call_id() -> str:
    return f"chatcmpl-tool-{random_uuid()}"


def _is_empty(value: list[Any]) -> bool:
    return not value


# --- logprobs --------------------------------------------------------------------------------


class ChatCompletionLogProb(WireModel):
    """One candidate token: its text, logprob and the UTF-8 bytes of the text.

    From a generate server that has no tokenizer, ``token`` is a ``"token_id:N"`` placeholder
    and ``bytes`` is null; derender replaces both with the decoded text and its bytes.
    """

    token: str
    logprob: LogprobValue = -9999.0
    bytes: list[int] | None = None


class ChatCompletionLogProbsContent(ChatCompletionLogProb):
    """The sampled token at one position and the most likely alternatives there."""

    top_logprobs: list[ChatCompletionLogProb] = Field(default_factory=list)


class ChatCompletionLogProbs(WireModel):
    """The ``logprobs`` of a chat choice: one entry per output token."""

    content: list[ChatCompletionLogProbsContent] | None = None


class CompletionLogProbs(WireModel):
    """The ``logprobs`` of a completion choice: parallel lists, one item per output token.

    ``text_offset[i]`` is where token ``i``'s text starts in the choice's text (in characters,
    absolute across streaming chunks); ``top_logprobs[i]`` maps candidate texts to logprobs.
    """

    text_offset: list[int] = Field(default_factory=list)
    token_logprobs: list[LogprobValue | None] = Field(default_factory=list)
    tokens: list[str] = Field(default_factory=list)
    top_logprobs: list[dict[str, LogprobValue] | None] = Field(default_factory=list)


# --- chat, whole -----------------------------------------------------------------------------


class FunctionCall(OpenAIModel):
    """A complete function call: the name and the JSON text of its arguments."""

    name: str
    arguments: str


class ToolCall(OpenAIModel):
    """A complete tool call of an assistant message."""

    id: str = Field(default_factory=_tool_call_id)
    type: Literal["function"] = "function"
    function: FunctionCall


class ChatMessage(OpenAIModel):
    """The assistant message of a whole chat response."""

    role: str
    content: str | None = None
    refusal: str | None = None
    annotations: Any | None = None
    audio: Any | None = None
    function_call: FunctionCall | None = None
    # Left out of the JSON when empty, as vLLM does.
    tool_calls: list[ToolCall] = Field(default_factory=list, exclude_if=_is_empty)
    reasoning: str | None = None


class ChatCompletionResponseChoice(OpenAIModel):
    """One choice of a whole chat response."""

    index: int
    message: ChatMessage
    logprobs: ChatCompletionLogProbs | None = None
    finish_reason: str | None = "stop"
    stop_reason: int | str | None = None
    token_ids: list[int] | None = None
    # vLLM's expert routing and weight versions; derender never has them.
    routed_experts: str | None = None
    weight_versions: list[Any] | None = None


class ChatCompletionResponse(OpenAIModel):
    """A whole ``/v1/chat/completions`` response."""

    id: str = Field(default_factory=_chat_id)
    object: Literal["chat.completion"] = "chat.completion"
    created: int = Field(default_factory=unix_time)
    model: str
    choices: list[ChatCompletionResponseChoice]
    service_tier: ServiceTier | None = None
    system_fingerprint: str | None = None
    usage: UsageInfo
    prompt_logprobs: list[dict[int, Logprob] | None] | None = None
    prompt_token_ids: list[int] | None = None
    prompt_text: str | None = None
    kv_transfer_params: dict[str, Any] | None = None
    ec_transfer_params: dict[str, Any] | None = None
    metrics: PerRequestMetrics | None = None


# --- chat, streamed --------------------------------------------------------------------------


class DeltaFunctionCall(OpenAIModel):
    """The part of a function call a stream chunk adds: the name once, then argument text."""

    name: str | None = None
    arguments: str | None = None


class DeltaToolCall(OpenAIModel):
    """The part of tool call ``index`` a stream chunk adds."""

    id: str | None = None
    type: Literal["function"] | None = None
    index: int
    function: DeltaFunctionCall | None = None


class DeltaMessage(OpenAIModel):
    """The message delta of a chat stream chunk.

    >>> DeltaMessage(role="assistant", content="Hi").model_dump()
    {'role': 'assistant', 'content': 'Hi', 'reasoning': None}
    """

    role: str | None = None
    content: str | None = None
    reasoning: str | None = None
    # Left out of the JSON when empty, as vLLM and OpenAI do for deltas without tool calls.
    tool_calls: list[DeltaToolCall] = Field(default_factory=list, exclude_if=_is_empty)


class ChatCompletionResponseStreamChoice(OpenAIModel):
    """One choice of a chat stream chunk."""

    index: int
    delta: DeltaMessage
    logprobs: ChatCompletionLogProbs | None = None
    finish_reason: str | None = None
    stop_reason: int | str | None = None
    token_ids: list[int] | None = None
    weight_versions: list[Any] | None = None


class ChatCompletionStreamResponse(OpenAIModel):
    """One chunk of a ``/v1/chat/completions`` stream."""

    id: str = Field(default_factory=_chat_id)
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int = Field(default_factory=unix_time)
    model: str
    choices: list[ChatCompletionResponseStreamChoice]
    usage: UsageInfo | None = None
    system_fingerprint: str | None = None
    prompt_token_ids: list[int] | None = None
    prompt_text: str | None = None
    metrics: PerRequestMetrics | None = None
    kv_transfer_params: dict[str, Any] | None = None


# --- completions -----------------------------------------------------------------------------


class CompletionResponseChoice(OpenAIModel):
    """One choice of a whole completion response."""

    index: int
    text: str
    logprobs: CompletionLogProbs | None = None
    finish_reason: str | None = None
    # The stop string or stop token id that ended the choice; null for EOS and other reasons.
    stop_reason: int | str | None = None
    token_ids: list[int] | None = None
    prompt_logprobs: list[dict[int, Logprob] | None] | None = None
    prompt_token_ids: list[int] | None = None
    routed_experts: str | None = None
    weight_versions: list[Any] | None = None


class CompletionResponse(OpenAIModel):
    """A whole ``/v1/completions`` response."""

    id: str = Field(default_factory=_completion_id)
    object: Literal["text_completion"] = "text_completion"
    created: int = Field(default_factory=unix_time)
    model: str
    choices: list[CompletionResponseChoice]
    service_tier: ServiceTier | None = None
    system_fingerprint: str | None = None
    usage: UsageInfo
    kv_transfer_params: dict[str, Any] | None = None
    ec_transfer_params: dict[str, Any] | None = None
    metrics: PerRequestMetrics | None = None


class CompletionResponseStreamChoice(OpenAIModel):
    """One choice of a completion stream chunk."""

    index: int
    text: str
    logprobs: CompletionLogProbs | None = None
    finish_reason: str | None = None
    stop_reason: int | str | None = None
    prompt_token_ids: list[int] | None = None
    token_ids: list[int] | None = None
    weight_versions: list[Any] | None = None


class CompletionStreamResponse(OpenAIModel):
    """One chunk of a ``/v1/completions`` stream."""

    id: str = Field(default_factory=_completion_id)
    object: str = "text_completion"
    created: int = Field(default_factory=unix_time)
    model: str
    choices: list[CompletionResponseStreamChoice]
    usage: UsageInfo | None = None
    system_fingerprint: str | None = None
    metrics: PerRequestMetrics | None = None
    kv_transfer_params: dict[str, Any] | None = None
