"""What the ``Derenderer`` tests share: loading one, posting JSON, generate shapes, oracles.

Bodies are built in the exact JSON vLLM's generate server emits (every field of
``GenerateResponse`` / ``GenerateStreamResponse``, nulls included) and posted as bytes through
``Derenderer.handle_json``, the face a server uses. The oracles here are written from REFERENCE.md
section 5 and the derender contract; they use ``tokenizers`` and ``vllm_reference``, never
tokstream's own output.
"""

# ruff: noqa: RUF001
# (The full-width comma and full stop are CJK punctuation.)
from __future__ import annotations

import functools
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tokenizers import Tokenizer
from tokstream import _core

from helpers.stream_util import chunked, import_tokstream, load_detokenizer
from oracles.corpus import ADDED, END, START, build, samples

CHAT = _core.CHAT_PATH
COMPLETION = _core.COMPLETION_PATH
PATHS = (CHAT, COMPLETION)
SERVED = "tokstream-test"
#: The carried stream state must stay this small (compact JSON, UTF-8).
STATE_LIMIT = 1024
#: What an error message must never show: tracebacks, panics, parser or binding internals.
INTERNALS = (
    "Traceback",
    "panicked",
    "unwrap",
    "pyo3",
    "PyErr",
    "serde",
    "pydantic",
    "ValidationError",
    ".rs:",
    'File "',
    "Exception",
)
#: The state vLLM's derender writes, and every key tokstream's may carry (the core's lists).
VLLM_STATE_KEYS = frozenset(_core.VLLM_STATE_KEYS)
STATE_KEYS = frozenset(_core.STATE_KEYS)
#: A plain stream's state: every key but the built-in parsers' ``parser``.
PLAIN_STATE_KEYS = STATE_KEYS - {"parser"}
_UNSET: Any = object()

MULTILINGUAL = (
    START,
    "Hello 中文测试，日本語のテキスト。",
    ADDED,
    " 삥뽕빵 👨‍👩‍👧‍👦 🇯🇵 नमस्ते",
    END,
    " done 🤖!",
)


def generations(tok: Tokenizer) -> list[tuple[str, list[int]]]:
    """The multilingual line, then the corpus samples richest in split characters and markers."""
    picked = [(n, ids) for n, ids in samples(tok) if n in ("cjk", "emoji", "korean", "mixed")]
    return [("multilingual", build(tok, MULTILINGUAL)), *picked]


@functools.cache
def load_derenderer(
    name: str,
    eos_token_ids: tuple[int, ...] | None = None,
    max_model_len: int | None = None,
    served: str = SERVED,
) -> Any:
    """A ``Derenderer`` over a real tokenizer, built once per argument set."""
    cls = import_tokstream().Derenderer
    eos = None if eos_token_ids is None else list(eos_token_ids)
    return cls(
        load_detokenizer(name),
        served_model_name=served,
        eos_token_ids=eos,
        max_model_len=max_model_len,
    )


def post(r: Any, path: str, body: dict[str, Any] | bytes) -> tuple[int, Any]:
    """Posts ``body`` (a dict is serialized) and returns the status and the parsed JSON answer."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    status, answer = r.handle_json(path, raw)
    assert isinstance(status, int) and isinstance(answer, bytes), (status, answer)
    return status, json.loads(answer)


def ok(r: Any, path: str, body: dict[str, Any] | bytes) -> Any:
    """Posts ``body`` and returns the answer, which must have status 200."""
    status, answer = post(r, path, body)
    assert status == 200, f"status {status}: {answer} for {path} {body!r:.3000}"
    return answer


def error_message(body: Any, code: int, kind: str) -> str:
    """Checks that ``body`` is the error object of ``code`` and ``kind`` (the OpenAI shape, every
    field present) and that its message hides internals; returns the message."""
    assert isinstance(body, dict) and list(body) == ["error"], body
    error = body["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert (error["type"], error["code"]) == (kind, code), error
    assert isinstance(error["message"], str) and error["message"], error
    assert error["param"] is None or isinstance(error["param"], str), error
    leaked = [word for word in INTERNALS if word in error["message"]]
    assert not leaked, f"the message shows internals {leaked}: {error['message']!r}"
    return str(error["message"])


def assert_error(status: int, answer: Any, code: int) -> str:
    """Checks the error contract's shape for ``code`` (400 or 404); returns the message."""
    kind = {400: "BadRequestError", 404: "NotFoundError"}[code]
    assert status == code, f"expected {code}, got {status}: {answer}"
    return error_message(answer, code, kind)


def state_size(state: dict[str, Any]) -> int:
    """Bytes of the state as compact UTF-8 JSON."""
    return len(json.dumps(state, ensure_ascii=False, separators=(",", ":")).encode())


# --- generate shapes, as vLLM's generate server writes them -----------------------------------


def gen_choice(
    token_ids: Sequence[int] | None,
    *,
    index: int = 0,
    finish_reason: str | None = None,
    logprobs: dict[str, Any] | None = None,
    stop_reason: Any = _UNSET,
) -> dict[str, Any]:
    """A ``GenerateResponseChoice`` / stream choice; ``stop_reason`` only when given."""
    choice: dict[str, Any] = {
        "index": index,
        "logprobs": logprobs,
        "finish_reason": finish_reason,
        "token_ids": None if token_ids is None else list(token_ids),
        "routed_experts": None,
        "sampling_mask": None,
    }
    if stop_reason is not _UNSET:
        choice["stop_reason"] = stop_reason
    return choice


def gen_chunk(
    choices: list[dict[str, Any]],
    *,
    request_id: str = "gen-1",
    usage: dict[str, Any] | None = None,
    prompt_token_ids: Sequence[int] | None = None,
) -> dict[str, Any]:
    """A ``GenerateStreamResponse`` (one SSE chunk of a streaming generate response)."""
    return {
        "request_id": request_id,
        "choices": choices,
        "usage": usage,
        "prompt_token_ids": None if prompt_token_ids is None else list(prompt_token_ids),
        "mm_placeholders": None,
        "metrics": None,
    }


def usage_only_chunk(request_id: str, prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    """The final usage-only chunk, which vLLM writes with ``exclude_none``."""
    return {
        "request_id": request_id,
        "choices": [],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "completion_tokens": completion_tokens,
        },
    }


def gen_response(
    choices: list[dict[str, Any]],
    *,
    request_id: str = "gen-1",
    prompt_token_ids: Sequence[int] | None = None,
    usage: dict[str, Any] | None = None,
    prompt_logprobs: list[Any] | None = None,
    kv_transfer_params: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A whole ``GenerateResponse``."""
    return {
        "request_id": request_id,
        "model": None,
        "created": None,
        "choices": choices,
        "usage": usage,
        "prompt_logprobs": prompt_logprobs,
        "prompt_token_id_logprobs": None,
        "prompt_token_ids": None if prompt_token_ids is None else list(prompt_token_ids),
        "mm_placeholders": None,
        "metrics": None,
        "kv_transfer_params": kv_transfer_params,
        "ec_transfer_params": None,
    }


def answer_usage(prompt: int, completion: int) -> dict[str, Any]:
    """An answer's ``usage``, as vLLM writes it (details null)."""
    return {
        "prompt_tokens": prompt,
        "total_tokens": prompt + completion,
        "completion_tokens": completion,
        "prompt_tokens_details": None,
        "completion_tokens_details": None,
    }


def options_field(path: str, options: dict[str, Any] | None) -> dict[str, Any]:
    """The original request under its field name for ``path``."""
    if options is None:
        return {}
    return {"chat_request" if path == CHAT else "completion_request": options}


def whole_body(
    path: str,
    response: dict[str, Any],
    *,
    prompt_tokens: int | None = None,
    prompt_token_ids: Sequence[int] | None = None,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A whole derender request around one generate response, for either path."""
    ids = None if prompt_token_ids is None else list(prompt_token_ids)
    if path == CHAT:
        body = {"generate_response": response, "prompt_tokens": prompt_tokens}
        body["prompt_token_ids"] = ids
    else:
        body = {
            "generate_responses": [response],
            "prompt_tokens": None if prompt_tokens is None else [prompt_tokens],
            "prompt_token_ids": None if ids is None else [ids],
        }
    return body | options_field(path, options)


def whole_text(path: str, choice: dict[str, Any]) -> str:
    """The text of a whole response's choice."""
    return str(choice["message"]["content"] if path == CHAT else choice["text"])


def chunk_text(path: str, choice: dict[str, Any]) -> str:
    """The text of a stream chunk's choice (an empty delta's content is null, as vLLM's)."""
    return str((choice["delta"]["content"] or "") if path == CHAT else choice["text"])


# --- streams ----------------------------------------------------------------------------------


@dataclass
class StreamRun:
    """What a client saw over a stream: every answer, each chunk's text, the last state."""

    answers: list[Any]
    texts: list[str]
    state: dict[str, Any] | None

    @property
    def text(self) -> str:
        return "".join(self.texts)


def run_stream_calls(
    r: Any,
    path: str,
    chunks: Sequence[dict[str, Any]],
    *,
    state: dict[str, Any] | None = None,
    **fields: Any,
) -> StreamRun:
    """Posts one stream request per generate chunk, carrying the state like a client.

    Checks on every answer: status 200, the state's declared keys, ``prefix_offset == 0``, and
    the state's size below ``STATE_LIMIT``.
    """
    answers, texts = [], []
    for chunk in chunks:
        body = {"stream": True, "generate_chunk": chunk, "stream_state": state, **fields}
        answer = ok(r, path, body)
        assert set(answer) == {"chunk", "stream_state"}, answer
        state = answer["stream_state"]
        assert set(state) == PLAIN_STATE_KEYS, sorted(state)
        assert state["prefix_offset"] == 0, state
        assert state_size(state) < STATE_LIMIT, state
        answers.append(answer)
        texts.append("".join(chunk_text(path, c) for c in answer["chunk"]["choices"]))
    return StreamRun(answers, texts, state)


def chunkings(ids: Sequence[int], seed: object) -> dict[str, list[list[int]]]:
    """Chunk shapes: 1, 2 and 3 ids, random 1-5 ids, and random with an empty (finish-only) tail."""
    rng = random.Random(str(seed))
    found = {f"size{size}": chunked(ids, size) for size in (1, 2, 3)}
    for shape in ("random", "finish_only_tail"):
        chunks, i = [], 0
        while i < len(ids):
            width = rng.randint(1, 5)
            chunks.append(list(ids[i : i + width]))
            i += width
        found[shape] = [*chunks, []] if shape == "finish_only_tail" else chunks
    return found


def generate_chunks(
    chunks: Sequence[Sequence[int]],
    *,
    finish_reason: str = "length",
    request_id: str = "gen-1",
    prompt_token_ids: Sequence[int] | None = None,
    index: int = 0,
) -> list[dict[str, Any]]:
    """Generate chunks for ``chunks``; the last carries ``finish_reason``, the first the prompt."""
    out = []
    for n, ids in enumerate(chunks):
        last = n == len(chunks) - 1
        choice = gen_choice(ids, index=index, finish_reason=finish_reason if last else None)
        prompt = prompt_token_ids if n == 0 else None
        out.append(gen_chunk([choice], request_id=request_id, prompt_token_ids=prompt))
    return out


# --- the stop-string oracle -------------------------------------------------------------------


def stop_oracle(
    deltas: Sequence[str], stops: Sequence[str], include: bool, min_tokens: int
) -> tuple[str, str | None]:
    """vLLM's per-token stop-string check, over the text each token added.

    After token ``k`` (1-based, checked only when ``k > min_tokens``), each stop string in list
    order is searched from ``len(text before k) - len(stop) + 1``, so only a match that token
    ``k`` completes counts; the first token with a match wins, then list order. The text is cut
    before the match, or after it when ``include``.

    Returns:
        The text, and the stop string that matched (None: no match, the whole text).
    """
    live = [s for s in stops if s]
    text = ""
    for k, new in enumerate(deltas, start=1):
        before = len(text)
        text += new
        if k <= min_tokens:
            continue
        for stop in live:
            at = text.find(stop, max(0, before - len(stop) + 1))
            if at >= 0:
                return text[: at + len(stop) if include else at], stop
    return text, None
