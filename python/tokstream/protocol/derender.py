"""The derender protocol: generate output in, OpenAI responses out, for chat and completions.

Whole responses: ``POST /v1/chat/completions/derender`` with a ``DerenderChatRequest`` answers a
``ChatCompletionResponse``; ``/v1/completions/derender`` likewise for completions. Streaming is
stateless on the server: the client posts one generate SSE chunk at a time with the
``stream_state`` the previous call returned, and gets back ``{chunk, stream_state}`` as plain
JSON. The body's ``stream`` value picks the shape, which the request unions encode.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, NonNegativeInt, PositiveInt, Tag, model_validator
from typing_extensions import Self

from .. import _core
from .common import WireModel
from .generate import GenerateResponse, GenerateStreamResponse
from .openai_requests import ChatCompletionRequest, CompletionRequest
from .openai_responses import ChatCompletionStreamResponse, CompletionStreamResponse

__all__ = [
    "MAX_LOGPROB_CONTEXT",
    "MAX_PREV_TOKENS",
    "DerenderChatRequest",
    "DerenderChatRequestUnion",
    "DerenderChatStreamRequest",
    "DerenderChatStreamResponse",
    "DerenderCompletionRequest",
    "DerenderCompletionRequestUnion",
    "DerenderCompletionStreamRequest",
    "DerenderCompletionStreamResponse",
    "DerenderStreamState",
]

MAX_PREV_TOKENS: int = _core.MAX_WINDOW
"""Most entries a carried ``prev_tokens`` window may have. A real window holds a handful (the
decode offset is 5); the bound only rejects oversized or hostile states."""

MAX_LOGPROB_CONTEXT: int = _core.LOGPROB_CONTEXT
"""Sampled ids carried for U+FFFD correction of logprob strings (REFERENCE section 4)."""


class DerenderChatRequest(WireModel):
    """A whole chat response to derender: the generate response plus what the render step knew.

    ``model`` defaults to the server's served name. ``prompt_tokens`` (default 0) is the usage
    count. ``prompt_token_ids`` seeds detokenization so the first output token keeps its leading
    space; only its last few ids are read, and it falls back to the generate response's own
    ``prompt_token_ids``. ``chat_request`` is the original request from the render step; its
    decode, stop, logprob, tool and reasoning fields steer derender.
    """

    stream: Literal[False] = False
    model: str | None = None
    generate_response: GenerateResponse
    prompt_tokens: int | None = None
    prompt_token_ids: list[NonNegativeInt] | None = None
    chat_request: ChatCompletionRequest | None = None


class DerenderCompletionRequest(WireModel):
    """A whole completion response to derender: one generate response per prompt.

    ``prompt_tokens`` and ``prompt_token_ids`` are parallel to ``generate_responses`` when
    given; a null ``prompt_token_ids`` entry falls back to that response's own prompt ids.
    """

    stream: Literal[False] = False
    model: str | None = None
    generate_responses: list[GenerateResponse]
    prompt_tokens: list[int] | None = None
    prompt_token_ids: list[list[NonNegativeInt] | None] | None = None
    completion_request: CompletionRequest | None = None

    @model_validator(mode="after")
    def _check_parallel_lists(self) -> Self:
        count = len(self.generate_responses)
        for name, values in (
            ("prompt_tokens", self.prompt_tokens),
            ("prompt_token_ids", self.prompt_token_ids),
        ):
            if values is not None and len(values) != count:
                raise ValueError(
                    f"{name} length ({len(values)}) must equal generate_responses length ({count})"
                )
        return self


def _is_none(value: object) -> bool:
    return value is None


class DerenderStreamState(WireModel):
    """What a streaming client carries from one derender call to the next, per choice.

    All plain JSON, wire-compatible with vLLM's state in both directions (a vLLM server ignores
    fields it does not know, and so does this model).

    Plain streaming (no parser, and every completion stream) uses the bounded decode window:
    ``prev_tokens`` are token strings as ``convert_ids_to_tokens`` gives them, from the prefix
    offset on, with ``prefix_offset <= read_offset <= len(prev_tokens)``; the window is trimmed
    and rebased after every token, so it stays a few entries long and the state stays small.

    Chat streaming with a tool or reasoning parser replays the parser over the whole output on
    every chunk, because parser state is not serializable: ``output_token_ids`` holds every
    output id so far and ``output_chunk_lens`` the engine's chunking of them (positive, summing
    to ``len(output_token_ids)``), with ``tools_streamed`` and ``last_tool_call_ids`` pinning what
    was already sent. That part grows with the output; the server bounds it by ``max_model_len``.

    Beyond vLLM, streams honour stop strings: ``held_text``, ``generated_tokens`` and
    ``stopped`` carry that progress (defaults mean none), and the built-in parsers keep their
    small state in ``parser`` instead of the replay buffer; vLLM ignores all four.

    >>> DerenderStreamState(prev_tokens=["Hello", "Ġworld"], read_offset=2).prefix_offset
    0
    """

    prev_tokens: list[str] = Field(default_factory=list, max_length=MAX_PREV_TOKENS)
    prefix_offset: NonNegativeInt = 0
    read_offset: NonNegativeInt = 0
    # Whether the first chunk's ``role: "assistant"`` was sent (chat only).
    role_sent: bool = False
    # The last sampled ids, context for correcting U+FFFD in logprob strings across chunks.
    logprob_context_token_ids: list[int] = Field(
        default_factory=list, max_length=MAX_LOGPROB_CONTEXT
    )
    # Where the next completion ``text_offset`` starts: past the token strings reported so far
    # (past the text when a chunk reports none), as vLLM counts it.
    logprob_text_offset: NonNegativeInt = 0
    output_token_ids: list[int] = Field(default_factory=list)
    output_chunk_lens: list[PositiveInt] = Field(default_factory=list)
    tools_streamed: bool = False
    last_tool_call_ids: list[str] = Field(default_factory=list)
    # tokstream's extensions (a vLLM server ignores them). Stop strings in streams: the text
    # held back because it could still begin a stop string (fewer chars than the longest one),
    # the number of output ids seen so far (for ``min_tokens``), and whether one matched.
    held_text: str = ""
    generated_tokens: NonNegativeInt = 0
    stopped: bool = False
    # The built-in reasoning and tool parsers' state, carried whole from one chunk to the next
    # (resumable parsing; opaque to clients). Absent when no parser runs or in replay mode.
    parser: dict[str, Any] | None = Field(default=None, exclude_if=_is_none)

    @model_validator(mode="after")
    def _check_window_and_replay(self) -> Self:
        window = len(self.prev_tokens)
        if self.prefix_offset > self.read_offset:
            raise ValueError(
                f"prefix_offset ({self.prefix_offset}) must not exceed "
                f"read_offset ({self.read_offset})"
            )
        if self.read_offset > window:
            raise ValueError(
                f"read_offset ({self.read_offset}) must not exceed len(prev_tokens) ({window})"
            )
        total = sum(self.output_chunk_lens)
        if total != len(self.output_token_ids):
            raise ValueError(
                f"output_chunk_lens must sum to len(output_token_ids) "
                f"(got sum={total}, len(output_token_ids)={len(self.output_token_ids)})"
            )
        return self


class _StreamChunkRequest(WireModel):
    """What both stream chunk requests carry, before their original request."""

    stream: Literal[True]
    model: str | None = None
    generate_chunk: GenerateStreamResponse
    stream_state: DerenderStreamState | None = None
    prompt_tokens: int | None = None
    prompt_token_ids: list[NonNegativeInt] | None = None


class DerenderChatStreamRequest(_StreamChunkRequest):
    """One chat stream chunk to derender, with the state the previous call returned.

    ``stream_state`` is null on the first call. ``generate_chunk`` has at most one choice per
    call (the server answers 400 otherwise); with ``n > 1`` the client keeps one state per
    choice index. ``prompt_token_ids`` seeds the first chunk (falling back to the chunk's own);
    with a parser configured the full prompt is needed, since it decides whether the output
    starts inside reasoning.
    """

    chat_request: ChatCompletionRequest | None = None


class DerenderCompletionStreamRequest(_StreamChunkRequest):
    """One completion stream chunk to derender; see ``DerenderChatStreamRequest``."""

    completion_request: CompletionRequest | None = None


class DerenderChatStreamResponse(WireModel):
    """The answer to one chat stream chunk: the OpenAI chunk and the state for the next call."""

    chunk: ChatCompletionStreamResponse
    stream_state: DerenderStreamState


class DerenderCompletionStreamResponse(WireModel):
    """The answer to one completion stream chunk: the OpenAI chunk and the next state."""

    chunk: CompletionStreamResponse
    stream_state: DerenderStreamState


def _stream_or_whole(value: Any) -> str:
    # Only ``"stream": true`` selects the streaming shape; an absent ``stream`` means whole, as
    # the whole requests default it to false. Anything else fails in the whole shape.
    stream = value.get("stream") if isinstance(value, dict) else getattr(value, "stream", None)
    return "stream" if stream is True else "whole"


DerenderChatRequestUnion = Annotated[
    Annotated[DerenderChatRequest, Tag("whole")]
    | Annotated[DerenderChatStreamRequest, Tag("stream")],
    Discriminator(_stream_or_whole),
]
"""A chat derender body of either shape, chosen by its ``stream`` value (one error, not two)."""

DerenderCompletionRequestUnion = Annotated[
    Annotated[DerenderCompletionRequest, Tag("whole")]
    | Annotated[DerenderCompletionStreamRequest, Tag("stream")],
    Discriminator(_stream_or_whole),
]
"""A completion derender body of either shape, chosen by its ``stream`` value."""
