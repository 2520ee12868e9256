"""The Derenderer: generate output in, OpenAI chat and completion responses out.

``handle_json`` is the whole HTTP contract of the two derender endpoints, implemented in the
native core: a server hands it the path and the raw body and sends back the status and the JSON
it returns, so the per-chunk path builds no Python objects beyond the answer's bytes. The typed
methods are the same contract for library users: pydantic models in, pydantic models out, errors
raised as :class:`~tokstream.errors.DerenderError`.

>>> from tokstream import Derenderer, Detokenizer
>>> r = Derenderer(Detokenizer.from_file("tokenizer.json"), served_model_name="m")  # doctest: +SKIP
>>> r.handle_json("/v1/completions/derender", body)  # doctest: +SKIP
(200, b'{"id":"...","object":"text_completion",...}')
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from . import _core
from .config import ModelConfig
from .errors import BadRequestError, DerenderError, NotFoundError, ParserError
from .parsers import ParserFactory, UserParser
from .protocol import (
    ChatCompletionResponse,
    CompletionResponse,
    DerenderChatRequest,
    DerenderChatStreamRequest,
    DerenderChatStreamResponse,
    DerenderCompletionRequest,
    DerenderCompletionStreamRequest,
    DerenderCompletionStreamResponse,
)

__all__ = ["CHAT_PATH", "COMPLETION_PATH", "Derenderer", "default_eos_token_ids"]

CHAT_PATH: str = _core.CHAT_PATH
"""The chat derender endpoint."""

COMPLETION_PATH: str = _core.COMPLETION_PATH
"""The completions derender endpoint."""

DEFAULT_PARSER_STATE: str = _core.PARSER_STATES[0]
"""How streams carry the built-in parsers' state unless told: their small state."""

AUTO = "auto"
"""The parser name that parses with a response template (the one given, or the checkpoint's)."""

_M = TypeVar("_M", bound=BaseModel)


def default_eos_token_ids(detokenizer: _core.Detokenizer) -> tuple[int, ...]:
    """The end-of-sequence ids a model's configs name, as vLLM finds them.

    The primary one first: the id of ``tokenizer_config.json``'s ``eos_token`` (vLLM's
    tokenizer EOS), then ``generation_config.json``'s ``eos_token_id`` (one id or a list)
    beside the tokenizer; empty when neither names one
    (:meth:`tokstream.config.ModelConfig.eos_token_ids`).
    A choice the primary id ends reports no ``stop_reason``; one the others end reports the id.
    """
    primary = ModelConfig.from_texts(detokenizer.tokenizer_config, None).eos_token_ids(
        detokenizer.token_to_id
    )
    others = ModelConfig.from_texts(None, detokenizer.generation_config).eos_token_ids(
        detokenizer.token_to_id
    )
    return tuple(dict.fromkeys((*primary, *others)))


def _template(
    detokenizer: _core.Detokenizer,
    given: str | Mapping[str, Any] | None,
    reasoning_parser: str | None,
    tool_parser: str | None,
) -> str | None:
    """The response template's JSON text: the one given, else the checkpoint's for ``auto``."""
    if isinstance(given, Mapping):
        return json.dumps(dict(given))
    if given is not None or not {reasoning_parser, tool_parser} & set(_core.AUTO_NAMES):
        return given
    found = ModelConfig.from_texts(detokenizer.tokenizer_config, None).response_template
    if found is None:
        name = next(n for n in (reasoning_parser, tool_parser) if n in _core.AUTO_NAMES)
        raise ValueError(
            f"parser {name!r}: the tokenizer_config.json beside the tokenizer has no "
            "response_template; name a parser or give a response template"
        )
    return found


class Derenderer:
    """Derenders generate output into OpenAI responses for one served model.

    Args:
        detokenizer: The model's tokenizer.
        served_model_name: The ``model`` of responses whose request names none; a request
            naming another model is answered 404.
        eos_token_ids: Ids whose ending of a choice (``finish_reason == "stop"``) is not
            detokenized, the primary one (the tokenizer's) first: the others are reported as
            the choice's ``stop_reason``, as vLLM reports them. ``None`` reads them from the
            configs beside the tokenizer (:func:`default_eos_token_ids`).
        max_model_len: The most token ids (and logprob positions) a choice may carry; ``None``
            sets no bound beyond the body size a server accepts.
        reasoning_parser: A built-in reasoning parser for chat: ``"deepseek_r1"`` or ``"qwen3"``,
            a built-in response template (``TEMPLATES``), or ``"auto"`` for the response
            template given or, without one, the checkpoint's (``tokenizer_config.json``).
            Under vLLM's names a template's reasoning starts as vLLM's parser of the name starts
            it: ``"qwen3"`` (also beside ``"qwen3_coder"``), ``"glm45"``, ``"kimi_k2"``,
            ``"ling3"``, ``"deepseek_r1"``, ``"ernie45"`` and ``"step3"`` start the output in
            reasoning where thinking is on (a prompt that closed ``<think>`` starts it in
            content); ``"granite"`` and ``"hunyuan_a13b"`` start it in content, reasoning where
            the output opens it; ``"deepseek_v3"`` parses reasoning only where the request
            switches thinking on (``chat_template_kwargs.thinking`` or ``enable_thinking``).
        tool_parser: A built-in tool-call parser for chat: ``"hermes"``, a built-in response
            template, or ``"auto"`` as for ``reasoning_parser``. Two built-in templates of one
            chat format (``"deepseek_v3"`` and ``"deepseek_v31"``) parse together: reasoning as
            the one named for reasoning says, tool calls as this one says. Tag-form arguments
            (``"qwen3_coder"``, ``"glm45"``) are typed by the request's tool schema as vLLM
            types them; a template given as JSON types them as ``parse_response(tools=...)``.
        parser: A user parser factory (see :mod:`tokstream.parsers`), instead of built-in ones;
            the core runs it where it runs the built-in ones, and its streams replay.
        parser_state: How streams carry the built-in parsers' state: ``"resumable"`` (their
            small state, in ``stream_state["parser"]``) or ``"replay"`` (vLLM's replay buffer
            of every output id, replayed on each chunk).
        response_template: A Hugging Face response template (a dict or its JSON text) that
            parses both reasoning and tool calls; the parser names are then ``"auto"`` or
            absent (a named part is on; both when neither is named).

    Raises:
        ValueError: A parser name that is not one of its kind (the message lists those there
            are), names that do not go together, or a response template that does not compile.

    Shared by threads: it holds no per-request state (streams carry theirs in
    ``stream_state``).
    """

    __slots__ = ("_core", "_detokenizer", "handle_json", "handle_json_stats")

    def __init__(
        self,
        detokenizer: _core.Detokenizer,
        served_model_name: str = "default",
        eos_token_ids: Iterable[int] | None = None,
        max_model_len: int | None = None,
        *,
        reasoning_parser: str | None = None,
        tool_parser: str | None = None,
        parser: ParserFactory | None = None,
        parser_state: str = DEFAULT_PARSER_STATE,
        response_template: str | Mapping[str, Any] | None = None,
    ) -> None:
        eos = default_eos_token_ids(detokenizer) if eos_token_ids is None else eos_token_ids
        if max_model_len is not None and max_model_len < 1:
            raise ValueError(f"max_model_len must be positive, got {max_model_len}")
        if parser is not None and (reasoning_parser or tool_parser):
            raise ValueError("pass either a user parser or built-in parser names, not both")
        template = _template(detokenizer, response_template, reasoning_parser, tool_parser)
        self._detokenizer = detokenizer
        self._core = _core.Derenderer(
            detokenizer,
            served_model_name,
            list(eos),
            max_model_len,
            reasoning_parser,
            tool_parser,
            parser_state,
            None if parser is None else UserParser(parser),
            template,
        )
        self.handle_json = self._core.handle_json
        """``handle_json(path, body) -> (status, body)``: one POST to a derender endpoint.

        ``body`` is the raw JSON bytes. The answer is 200 with the response, 400 with an
        OpenAI-style error object (``{"error": {"message", "type", "param", "code"}}``) for any
        malformed body, hostile state or payload over the limits, 404 for an unknown path or
        model, or 500 when a user parser raises. It never raises for bad input, and bodies of
        16 KiB or more are processed without the interpreter lock (a user parser takes it back
        for its calls)."""
        self.handle_json_stats = self._core.handle_json_stats
        """``handle_json_stats(path, body) -> (status, body, tokens, state_bytes)``: the same
        answer with the output ids it derendered and the size of the returned stream state."""

    @property
    def reasoning_parser(self) -> str | None:
        """The built-in reasoning parser, if one is on."""
        return self._core.reasoning_parser

    @property
    def tool_parser(self) -> str | None:
        """The built-in tool parser, if one is on."""
        return self._core.tool_parser

    @property
    def parser_state(self) -> str:
        """How streams carry parser state: ``"resumable"`` or ``"replay"`` (always with a user
        parser, whose state cannot travel)."""
        return self._core.parser_state

    @property
    def detokenizer(self) -> _core.Detokenizer:
        """The tokenizer's detokenizer."""
        return self._detokenizer

    @property
    def served_model_name(self) -> str:
        """The model name responses carry when a request names none."""
        return self._core.served_model_name

    @property
    def eos_token_ids(self) -> tuple[int, ...]:
        """The end-of-sequence ids."""
        return self._core.eos_token_ids

    @property
    def max_model_len(self) -> int | None:
        """The bound on token lists in a body, if any."""
        return self._core.max_model_len

    def __repr__(self) -> str:
        return repr(self._core)

    def derender_chat(self, request: DerenderChatRequest) -> ChatCompletionResponse:
        """A whole chat response."""
        return self._call(CHAT_PATH, request, ChatCompletionResponse)

    def derender_completion(self, request: DerenderCompletionRequest) -> CompletionResponse:
        """A whole completion response (one choice per generate choice, across prompts)."""
        return self._call(COMPLETION_PATH, request, CompletionResponse)

    def derender_chat_stream(
        self, request: DerenderChatStreamRequest
    ) -> DerenderChatStreamResponse:
        """One chat stream chunk and the state to send with the next."""
        return self._call(CHAT_PATH, request, DerenderChatStreamResponse)

    def derender_completion_stream(
        self, request: DerenderCompletionStreamRequest
    ) -> DerenderCompletionStreamResponse:
        """One completion stream chunk and the state to send with the next."""
        return self._call(COMPLETION_PATH, request, DerenderCompletionStreamResponse)

    def _call(self, path: str, request: BaseModel, answer: type[_M]) -> _M:
        status, body = self._core.handle_json(path, request.model_dump_json().encode())
        if status == 200:
            return answer.model_validate_json(body)
        raise _error(status, body)


def _error(status: int, body: bytes) -> DerenderError:
    error = json.loads(body)["error"]
    if status == 404:
        return NotFoundError(error["message"], error.get("param"))
    if status == 400:
        return BadRequestError(error["message"], error.get("param"))
    return ParserError(error["message"], error.get("param"))
