"""Type stub of the native module ``tokstream._core`` (hand-written)."""

from collections.abc import Callable, Iterable, Sequence
from os import PathLike
from typing import Any, final

from typing_extensions import Buffer

__all__ = [
    "AUTO_NAMES",
    "CHAT_PATH",
    "COMPLETION_PATH",
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_HEADER_TIMEOUT",
    "DEFAULT_KEEP_ALIVE_TIMEOUT",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_HEADER_BYTES",
    "DEFAULT_OFFLOAD_BYTES",
    "DEFAULT_SEND_TIMEOUT",
    "LINGER",
    "LINGER_BYTES",
    "LOGPROB_CONTEXT",
    "LOGPROB_FLOOR",
    "MAX_CHOICES",
    "MAX_TOP_LOGPROBS",
    "MAX_WINDOW",
    "PARSER_STATES",
    "REASONING_NAMES",
    "REASONING_PARSERS",
    "STATE_KEYS",
    "TEMPLATES",
    "TOOL_NAMES",
    "TOOL_PARSERS",
    "VLLM_STATE_KEYS",
    "Derenderer",
    "DetokStream",
    "Detokenizer",
    "Front",
    "StreamSet",
    "__version__",
    "builtin_template",
    "error_body",
    "error_type",
    "parser_refusal",
]

__version__: str
CHAT_PATH: str
COMPLETION_PATH: str
MAX_WINDOW: int
LOGPROB_CONTEXT: int
LOGPROB_FLOOR: float
MAX_CHOICES: int
MAX_TOP_LOGPROBS: int
DEFAULT_HEADER_TIMEOUT: float
DEFAULT_BODY_TIMEOUT: float
DEFAULT_KEEP_ALIVE_TIMEOUT: float
DEFAULT_SEND_TIMEOUT: float
DEFAULT_MAX_HEADER_BYTES: int
DEFAULT_MAX_BODY_BYTES: int
DEFAULT_MAX_CONNECTIONS: int
DEFAULT_OFFLOAD_BYTES: int
LINGER: float
LINGER_BYTES: int
REASONING_PARSERS: tuple[str, ...]
TOOL_PARSERS: tuple[str, ...]
TEMPLATES: tuple[str, ...]
REASONING_NAMES: tuple[str, ...]
"""Every name ``reasoning_parser`` accepts: vLLM's names, the built-in templates', ``"auto"``."""
TOOL_NAMES: tuple[str, ...]
"""Every name ``tool_parser`` accepts: vLLM's names, the built-in templates', ``"auto"``."""
AUTO_NAMES: tuple[str, ...]
"""The parser names that stand for the checkpoint's response template: ``"auto"``, ``"hf"``,
``"beam"``."""
PARSER_STATES: tuple[str, ...]
STATE_KEYS: tuple[str, ...]
VLLM_STATE_KEYS: tuple[str, ...]

def parser_refusal(kind: str, name: str) -> str | None:
    """Why vLLM's parser name ``name`` of ``kind`` (``"tool"`` or ``"reasoning"``) is not
    served here, or ``None`` for a name that is not refused."""

def builtin_template(name: str) -> str | None:
    """A built-in response template's JSON text, or ``None`` for a name that is not one."""

def error_body(status: int, message: str, param: str | None = None) -> bytes:
    """The OpenAI error object of a status, as the derender endpoints answer it."""

def error_type(status: int) -> str:
    """The OpenAI error type name of an HTTP status (``"BadRequestError"`` for 400)."""

#: One id, a sequence of ids, or a one-dimensional buffer read by its item type (bytes as
#: native-endian uint32), as `StreamSet` reads one.
_Ids = int | Sequence[int] | Buffer

@final
class Detokenizer:
    """A tokenizer's detokenization tables and engine. Immutable; share one across threads."""

    @staticmethod
    def from_file(path: str | PathLike[str]) -> Detokenizer:
        """Loads a ``tokenizer.json``, or a directory holding one."""
    @staticmethod
    def from_pretrained(name: str | PathLike[str], revision: str | None = None) -> Detokenizer:
        """Loads a ``tokenizer.json``, a model directory or a Hugging Face model id."""
    @staticmethod
    def from_str(json: str) -> Detokenizer:
        """Loads ``tokenizer.json`` text."""
    @staticmethod
    def from_tokenizer(tokenizer: Any) -> Detokenizer:
        """Loads the tables of a ``tokenizers.Tokenizer``."""
    @property
    def vocab_size(self) -> int:
        """Number of id slots (largest id + 1); larger ids contribute nothing."""
    @property
    def engine(self) -> str:
        """The engine chosen at load: ``"bytelevel"``, ``"sentencepiece"`` or ``"windowed"``."""
    @property
    def tokenizer_config(self) -> str | None:
        """The text of ``tokenizer_config.json`` beside the loaded file, if there was one."""
    @property
    def generation_config(self) -> str | None:
        """The text of ``generation_config.json`` beside the loaded file, if there was one."""
    def replay_texts(
        self,
        prompt_ids: _Ids,
        output_ids: _Ids,
        chunk_lens: Sequence[int],
        skip_special_tokens: bool = False,
    ) -> list[str]:
        """The text of each historical chunk of an output (a replay buffer), in one call."""
    def token_to_id(self, token: str) -> int | None:
        """The id of a token string, if it is in the vocabulary."""
    def decode(self, ids: _Ids, skip_special_tokens: bool = False) -> str:
        """The whole text of ``ids``, as ``tokenizers``' ``decode`` gives it."""
    def convert_ids_to_tokens(self, ids: _Ids, skip_special_tokens: bool = False) -> list[str]:
        """Token strings as vLLM carries them; unknown ids give ``""``."""
    def logprob_token(self, token_id: int, context: Sequence[int] | None = None) -> str:
        """The logprob string of ``token_id``, corrected with the sampled ids before it."""
    def stream(
        self, prompt_ids: _Ids | None = None, skip_special_tokens: bool = False
    ) -> DetokStream:
        """A new stream, seeded from the last few ``prompt_ids``."""
    def resume(
        self,
        prev_tokens: Sequence[str],
        prefix_offset: int,
        read_offset: int,
        skip_special_tokens: bool = False,
    ) -> DetokStream:
        """Continues a stream from vLLM's ``(prev_tokens, prefix_offset, read_offset)``."""
    def step_batch(self, streams: Iterable[DetokStream], chunks: Iterable[_Ids]) -> list[str]:
        """Steps many streams, one chunk each, without holding the interpreter lock."""

@final
class DetokStream:
    """The incremental detokenizer of one sequence. Owned by one thread at a time."""

    def step(self, ids: _Ids) -> str:
        """Feeds one id or a sequence of ids; returns the text they complete (``""`` if none)."""
    def finish(self) -> str:
        """Flushes what is held back and ends the stream."""
    @property
    def window(self) -> tuple[list[str], int, int]:
        """vLLM's ``(prev_tokens, prefix_offset, read_offset)``, rebased."""
    @property
    def finished(self) -> bool:
        """Whether ``finish()`` was called."""

_Flat = Buffer | Iterable[int]

@final
class StreamSet:
    """Streams of one detokenizer addressed by slot, stepped together. One owner at a time."""

    def __new__(cls, detokenizer: Detokenizer) -> StreamSet: ...
    def add(
        self,
        prompt_ids: _Ids | None = None,
        skip_special_tokens: bool = False,
        *,
        window: tuple[Sequence[str], int, int] | None = None,
    ) -> int:
        """Adds a stream seeded from ``prompt_ids`` or continuing ``window``; returns its slot."""
    def reset(
        self,
        slot: int,
        prompt_ids: _Ids | None = None,
        skip_special_tokens: bool = False,
        *,
        window: tuple[Sequence[str], int, int] | None = None,
    ) -> None:
        """Replaces the stream in ``slot`` with a new one, as ``add`` makes it."""
    def remove(self, slot: int) -> None:
        """Removes the stream in ``slot``; a later ``add`` reuses the number."""
    def step(
        self, ids: _Flat, counts: _Flat | None = None, slots: _Flat | None = None
    ) -> list[str]:
        """Steps slots ``0..n`` (or ``slots``), one id each (or ``counts``); one delta each."""
    def finish(self, slot: int) -> str:
        """Flushes what ``slot`` holds back and ends its stream."""
    def window(self, slot: int) -> tuple[list[str], int, int]:
        """vLLM's ``(prev_tokens, prefix_offset, read_offset)`` of ``slot``, rebased."""
    def finished(self, slot: int) -> bool:
        """Whether ``slot``'s stream was finished."""
    @property
    def slots(self) -> list[int]:
        """The slots that hold a stream, in order."""
    def __len__(self) -> int: ...
    def __contains__(self, key: object, /) -> bool: ...

@final
class Derenderer:
    """The derender HTTP contract over JSON bodies (see ``tokstream.Derenderer``)."""

    def __new__(
        cls,
        detokenizer: Detokenizer,
        served_model_name: str,
        eos_token_ids: Sequence[int] = ...,
        max_model_len: int | None = None,
        reasoning_parser: str | None = None,
        tool_parser: str | None = None,
        parser_state: str = "resumable",
        user_parser: Any | None = None,
        response_template: str | None = None,
    ) -> Derenderer: ...
    @property
    def reasoning_parser(self) -> str | None:
        """The built-in reasoning parser's name, if one is on."""
    @property
    def tool_parser(self) -> str | None:
        """The built-in tool parser's name, if one is on."""
    @property
    def parser_state(self) -> str:
        """``"replay"`` or ``"resumable"``."""
    @property
    def served_model_name(self) -> str:
        """The model name responses carry when a request names none."""
    @property
    def eos_token_ids(self) -> tuple[int, ...]:
        """The ids whose ending of a choice is not detokenized."""
    @property
    def max_model_len(self) -> int | None:
        """The bound on token lists in a body, if any."""
    def handle_json(self, path: str, body: bytes) -> tuple[int, bytes]:
        """Answers one ``POST`` body to ``path``: ``(status, JSON body)``."""
    def handle_json_stats(self, path: str, body: bytes) -> tuple[int, bytes, int, int]:
        """``handle_json`` with ``(status, body, tokens derendered, stream_state bytes)``."""

@final
class Front:
    """The HTTP front serving a ``Derenderer`` on a listening socket (``tokstream.launch``)."""

    def __new__(
        cls,
        derenderer: Derenderer,
        fd: int,
        models: bytes,
        render: Callable[[str], bytes],
        *,
        unix: bool = False,
        threads: int = 1,
        header_timeout: float = ...,
        body_timeout: float = ...,
        keep_alive_timeout: float = ...,
        send_timeout: float = ...,
        max_header_bytes: int = ...,
        max_body_bytes: int = ...,
        max_connections: int = ...,
        offload_bytes: int = ...,
        latency_bounds: Sequence[float] = ...,
        bytes_bounds: Sequence[float] = ...,
        log_level: str = "info",
        log_format: str = "text",
        access_log: bool = False,
    ) -> Front: ...
    def drain(self, grace: float) -> None:
        """Stops accepting, closes idle connections and gives requests in flight ``grace`` s."""
    def wait(self, timeout: float) -> bool:
        """Waits up to ``timeout`` seconds for the worker threads to end; true once they have."""
    @property
    def busy(self) -> bool:
        """Whether a large derender is still running on the pool."""
    def snapshot(self) -> str:
        """Every worker thread's counters, a JSON array of ``Metrics`` snapshots."""
