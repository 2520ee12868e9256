"""Pydantic models of the render -> generate -> derender wire protocol, written for tokstream.

Wire-compatible with vLLM's models of the same names (field names, defaults, validation rules and
JSON shapes), without importing vLLM. Import everything from ``tokstream.protocol``; the
submodules are an implementation detail. This package imports nothing else from tokstream, so it
also loads on its own.

>>> from tokstream.protocol import DerenderStreamState
>>> DerenderStreamState.model_validate_json('{"prev_tokens": ["Hi"], "read_offset": 1}').read_offset
1

Design decisions:

- **Serialize with plain ``model_dump()`` / ``model_dump_json()``.** Null fields are part of the
  JSON shapes (REFERENCE section 5), so never pass ``exclude_none``. The one field left out is
  vLLM's own omission: a ``DeltaMessage`` without tool calls has no ``tool_calls`` key.
- **Logprob sentinel.** ``-9999.0`` (``LOGPROB_FLOOR``) stands for ``-inf`` and NaN, since JSON
  has neither. Every logprob field is a ``LogprobValue``: it accepts any number, including JSON's
  ``-Infinity``/``NaN`` tokens and raw engine floats from Python, and stores ``-inf``, NaN and
  anything below the floor as ``-9999.0``; ``+inf`` is rejected. A validated model therefore
  always serializes to strict JSON. (``model_construct`` skips validation and this guarantee.)
- **Extra fields.** OpenAI-shaped models (requests, responses, usage, errors) and
  ``SamplingParams`` keep unknown fields and serialize them back, as vLLM's OpenAI models do: the
  OpenAI API allows extra fields, and a forwarded request must lose nothing. vLLM's internal
  messages (generate requests and responses, derender requests, the stream state) ignore unknown
  fields, as vLLM's own do, so a newer vLLM's additions are accepted. Per-token logprob entries
  ignore them too, so thousands of entries carry no extra-field dict.
- **Frozen.** All models are immutable (STYLE G4); derive a changed copy with
  ``model_copy(update=...)``.
- **Lenient where derender does not look.** ``chat_request.messages`` and
  ``completion_request.prompt`` are optional (vLLM requires them); ``skip_special_tokens`` accepts
  null (meaning true); generate choices accept a ``stop_reason`` and an object-valued
  ``routed_experts``. No valid vLLM message is rejected.
- **Left out.** vLLM-internal methods that need a ``ModelConfig`` or a tokenizer
  (``build_tok_params``, ``build_chat_params``, ``to_sampling_params``, ...): derender does not
  need them, and tokstream has no model config.
- **pydantic 2.12 or newer**, for ``Field(exclude_if=...)`` (the two fields left out of the JSON
  while empty); vLLM requires 2.12 as well. Everything else works from 2.10.
- **Not per token.** The derender hot path (``handle_json``) does not build these models per
  chunk; they are the library face and the schema of record.
"""

from .common import (
    LOGPROB_FLOOR,
    CompletionTokenUsageInfo,
    ErrorInfo,
    ErrorResponse,
    Logprob,
    LogprobValue,
    PerRequestMetrics,
    PromptTokenUsageInfo,
    StreamOptions,
    UsageInfo,
    clamp_logprob,
    validate_cache_salt,
)
from .derender import (
    MAX_LOGPROB_CONTEXT,
    MAX_PREV_TOKENS,
    DerenderChatRequest,
    DerenderChatRequestUnion,
    DerenderChatStreamRequest,
    DerenderChatStreamResponse,
    DerenderCompletionRequest,
    DerenderCompletionRequestUnion,
    DerenderCompletionStreamRequest,
    DerenderCompletionStreamResponse,
    DerenderStreamState,
)
from .generate import (
    GenerateChoiceLogProbs,
    GenerateLogProb,
    GenerateLogProbs,
    GenerateLogProbsContent,
    GenerateRequest,
    GenerateResponse,
    GenerateResponseChoice,
    GenerateResponseStreamChoice,
    GenerateStreamResponse,
    MultiModalFeatures,
    PlaceholderRangeInfo,
)
from .openai_requests import (
    ChatCompletionNamedFunction,
    ChatCompletionNamedToolChoiceParam,
    ChatCompletionRequest,
    ChatCompletionToolsParam,
    CompletionRequest,
    FunctionDefinition,
)
from .openai_responses import (
    ChatCompletionLogProb,
    ChatCompletionLogProbs,
    ChatCompletionLogProbsContent,
    ChatCompletionResponse,
    ChatCompletionResponseChoice,
    ChatCompletionResponseStreamChoice,
    ChatCompletionStreamResponse,
    ChatMessage,
    CompletionLogProbs,
    CompletionResponse,
    CompletionResponseChoice,
    CompletionResponseStreamChoice,
    CompletionStreamResponse,
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
    FunctionCall,
    ToolCall,
)
from .sampling import SamplingParams

__all__ = [
    "LOGPROB_FLOOR",
    "MAX_LOGPROB_CONTEXT",
    "MAX_PREV_TOKENS",
    "ChatCompletionLogProb",
    "ChatCompletionLogProbs",
    "ChatCompletionLogProbsContent",
    "ChatCompletionNamedFunction",
    "ChatCompletionNamedToolChoiceParam",
    "ChatCompletionRequest",
    "ChatCompletionResponse",
    "ChatCompletionResponseChoice",
    "ChatCompletionResponseStreamChoice",
    "ChatCompletionStreamResponse",
    "ChatCompletionToolsParam",
    "ChatMessage",
    "CompletionLogProbs",
    "CompletionRequest",
    "CompletionResponse",
    "CompletionResponseChoice",
    "CompletionResponseStreamChoice",
    "CompletionStreamResponse",
    "CompletionTokenUsageInfo",
    "DeltaFunctionCall",
    "DeltaMessage",
    "DeltaToolCall",
    "DerenderChatRequest",
    "DerenderChatRequestUnion",
    "DerenderChatStreamRequest",
    "DerenderChatStreamResponse",
    "DerenderCompletionRequest",
    "DerenderCompletionRequestUnion",
    "DerenderCompletionStreamRequest",
    "DerenderCompletionStreamResponse",
    "DerenderStreamState",
    "ErrorInfo",
    "ErrorResponse",
    "FunctionCall",
    "FunctionDefinition",
    "GenerateChoiceLogProbs",
    "GenerateLogProb",
    "GenerateLogProbs",
    "GenerateLogProbsContent",
    "GenerateRequest",
    "GenerateResponse",
    "GenerateResponseChoice",
    "GenerateResponseStreamChoice",
    "GenerateStreamResponse",
    "Logprob",
    "LogprobValue",
    "MultiModalFeatures",
    "PerRequestMetrics",
    "PlaceholderRangeInfo",
    "PromptTokenUsageInfo",
    "SamplingParams",
    "StreamOptions",
    "ToolCall",
    "UsageInfo",
    "clamp_logprob",
    "validate_cache_salt",
]
