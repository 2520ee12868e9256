"""The OpenAI chat and completion requests, as far as derender reads them.

A derender request may carry the original request from the render step (``chat_request`` /
``completion_request``). Derender reads only its decoding, stop, logprob, tool and streaming
fields, so only those are declared; everything else a client sends is kept as an extra field.
vLLM's cross-field rules on the declared fields apply. Two fields vLLM requires are optional
here: ``messages`` and ``prompt``. Derender never reads them, and a streaming client resends the
request with every chunk, where a long conversation would dominate the bytes on the wire.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from .common import OpenAIModel, StreamOptions, validate_cache_salt

__all__ = [
    "ChatCompletionNamedFunction",
    "ChatCompletionNamedToolChoiceParam",
    "ChatCompletionRequest",
    "ChatCompletionToolsParam",
    "CompletionRequest",
    "FunctionDefinition",
]


class FunctionDefinition(OpenAIModel):
    """A function a tool offers: its name, description and JSON-schema parameters."""

    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None


class ChatCompletionToolsParam(OpenAIModel):
    """One entry of a request's ``tools``."""

    type: Literal["function"] = "function"
    function: FunctionDefinition


class ChatCompletionNamedFunction(OpenAIModel):
    """The function a named ``tool_choice`` forces."""

    name: str


class ChatCompletionNamedToolChoiceParam(OpenAIModel):
    """A ``tool_choice`` that forces one named function."""

    function: ChatCompletionNamedFunction
    type: Literal["function"] = "function"


ToolChoice = Literal["none", "auto", "required"] | ChatCompletionNamedToolChoiceParam | None


def _check_stream_options(data: dict[str, Any]) -> None:
    if data.get("stream_options") and not data.get("stream"):
        raise ValueError("Stream options can only be defined when `stream=True`.")


def _check_prompt_logprobs(data: dict[str, Any]) -> None:
    prompt_logprobs = data.get("prompt_logprobs")
    if not isinstance(prompt_logprobs, int):
        return  # absent, or the wrong type, which field validation reports
    if data.get("stream") and (prompt_logprobs > 0 or prompt_logprobs == -1):
        raise ValueError("`prompt_logprobs` are not available when `stream=True`.")
    if prompt_logprobs < -1:
        raise ValueError("`prompt_logprobs` must be a positive value or -1.")


def _check_cache_salt(data: dict[str, Any]) -> None:
    validate_cache_salt(data.get("cache_salt"))


def _function_name(item: Any) -> Any:
    """The ``function.name`` of a tool or named tool choice, given as a dict or a model."""
    function = item.get("function") if isinstance(item, dict) else getattr(item, "function", None)
    return function.get("name") if isinstance(function, dict) else getattr(function, "name", None)


def _apply_tool_choice_rules(data: dict[str, Any]) -> dict[str, Any]:
    """vLLM's ``tool_choice`` rules: the default, the required tools, a named tool's existence."""
    tools = data.get("tools")
    if "tool_choice" not in data and tools:
        data = {**data, "tool_choice": "auto"}
    choice = data.get("tool_choice")
    if choice is None or choice == "none":
        return data
    if tools is None:
        raise ValueError("When using `tool_choice`, `tools` must be set.")
    if choice == "required" and isinstance(tools, list) and not tools:
        # OpenAI treats "required" with no tools as "none".
        return {k: v for k, v in data.items() if k != "tools"} | {"tool_choice": "none"}
    if isinstance(choice, (dict, ChatCompletionNamedToolChoiceParam)):
        name = _function_name(choice)
        if not isinstance(name, str) or not name:
            raise ValueError(
                "A named `tool_choice` needs a function name: "
                '`{"type": "function", "function": {"name": "my_function"}}`.'
            )
        if isinstance(tools, list) and name not in {_function_name(t) for t in tools}:
            raise ValueError("The tool specified in `tool_choice` does not match any of `tools`.")
    elif choice not in ("auto", "required"):
        raise ValueError('`tool_choice` must be "none", "auto", "required" or a named function.')
    return data


class ChatCompletionRequest(OpenAIModel):
    """A ``/v1/chat/completions`` request: the fields derender reads, and any others kept.

    >>> ChatCompletionRequest.model_validate({"tools": [{"function": {"name": "f"}}]}).tool_choice
    'auto'
    """

    messages: list[dict[str, Any]] = Field(default_factory=list)
    model: str | None = None
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    n: int | None = 1
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    logprobs: bool | None = False
    top_logprobs: int | None = 0
    # Ids whose logprobs are asked for: derender then keeps every candidate, as vLLM does.
    logprob_token_ids: list[int] | None = None
    prompt_logprobs: int | None = None
    echo: bool = False
    stop: str | list[str] | None = Field(default_factory=list)
    stop_token_ids: list[int] | None = Field(default_factory=list)
    ignore_eos: bool = False
    min_tokens: int = 0
    include_stop_str_in_output: bool = False
    # None means True, the default; with a tool or reasoning parser derender decodes with false.
    skip_special_tokens: bool | None = True
    spaces_between_special_tokens: bool = True
    tools: list[ChatCompletionToolsParam] | None = None
    tool_choice: ToolChoice = "none"
    parallel_tool_calls: bool | None = True
    include_reasoning: bool = True
    reasoning_effort: str | None = None
    chat_template_kwargs: dict[str, Any] | None = None
    return_token_ids: bool | None = None
    return_tokens_as_token_ids: bool | None = None
    cache_salt: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _check_request(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        _check_stream_options(data)
        _check_prompt_logprobs(data)
        top_logprobs = data.get("top_logprobs")
        if isinstance(top_logprobs, int):
            if top_logprobs < -1:
                raise ValueError("`top_logprobs` must be a positive value or -1.")
            if top_logprobs != 0 and not data.get("logprobs"):
                raise ValueError("when using `top_logprobs`, `logprobs` must be set to true.")
        _check_cache_salt(data)
        return _apply_tool_choice_rules(data)


class CompletionRequest(OpenAIModel):
    """A ``/v1/completions`` request: the fields derender reads, and any others kept."""

    prompt: list[int] | list[list[int]] | str | list[str] | None = None
    model: str | None = None
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    n: int = 1
    max_tokens: int | None = 16
    logprobs: int | None = None
    # Ids whose logprobs are asked for: derender then keeps every candidate, as vLLM does.
    logprob_token_ids: list[int] | None = None
    prompt_logprobs: int | None = None
    echo: bool | None = False
    stop: str | list[str] | None = Field(default_factory=list)
    stop_token_ids: list[int] | None = Field(default_factory=list)
    ignore_eos: bool = False
    min_tokens: int = 0
    include_stop_str_in_output: bool = False
    skip_special_tokens: bool | None = True
    spaces_between_special_tokens: bool = True
    return_token_ids: bool | None = None
    return_tokens_as_token_ids: bool | None = None
    cache_salt: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _check_request(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        _check_stream_options(data)
        _check_prompt_logprobs(data)
        logprobs = data.get("logprobs")
        if isinstance(logprobs, int) and logprobs < 0:
            raise ValueError("`logprobs` must be a positive value.")
        _check_cache_salt(data)
        return data
