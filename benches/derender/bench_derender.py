"""Derender per chunk: ``Derenderer.handle_json`` vs the plain-Python reference (qwen3).

The reference (``oracles/derender_reference.py``) is derender the way vLLM's server does it:
pydantic validation of the body, vLLM's windowed algorithm in Python, ``tokenizers`` decodes for
logprob strings, pydantic serialization. Both answer the same bytes a client sends: the
generation of ``generation.py`` plus ``<|im_end|>``, cut into chunks as vLLM's generate server
emits them (``GenerateStreamResponse`` JSON, the last chunk finishing with ``"stop"``, then a
usage-only chunk), with the ``stream_state`` of the previous answer, the render step's
``chat_request`` (two messages) or ``completion_request``, ``prompt_tokens``, and
``prompt_token_ids`` on the first chunk.

A round answers one steady-state chunk: the chunk that starts at id 600 of the generation
(English prose), with the state each implementation returned for the chunk before it, so every
round does the same work; its text must be the same from both. Before timing, both stream the
whole generation: each one's text must add up to ``decode``, and the logprobs of every chunk must
be equal between them. Groups are ``derender-<scenario> qwen3``; ``tokens`` are ids per call.

``derender-stream-2000`` streams 2,000 one-id chat chunks (with logprobs) and records the size
of the carried state (compact JSON bytes) after every chunk, printed at the end of the session and
kept in ``extra_info``; tokstream's must stay under 1,024 bytes. Its round replays all 2,001
bodies (per call: a chunk averaged over a whole generation). ``derender-whole-chat-2000``
answers one whole chat response of 2,000 ids.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from support import generation_ids, load_tokenizer, tokenizer_path
from tokstream import _core
from tokstream.protocol import GenerateResponse, GenerateStreamResponse

from oracles.derender_reference import ReferenceDerenderer

NAME = "qwen3"
MODEL = "Qwen/Qwen3-8B"
CHAT = _core.CHAT_PATH
COMPLETION = _core.COMPLETION_PATH
IMPLS = ("tokstream", "reference")
REQUEST_ID = "gen-0c5f6a0d6f1e4b49a5f4"
EOS = "<|im_end|>"
TOP_LOGPROBS = 5
#: The measured chunk starts at this id of the generation (English prose).
STEADY = 600
LONG = 2_000
STATE_LIMIT = 1024
SYSTEM = "You are a helpful assistant. Answer in Markdown."
QUESTION = (
    "Explain incremental detokenization for LLM serving, with a Python example, a note on "
    "Unicode, and short summaries in Chinese, Japanese and Korean."
)
#: name -> (path, ids per chunk, logprobs)
SCENARIOS: dict[str, tuple[str, int, bool]] = {
    "chat-1": (CHAT, 1, False),
    "chat-1-logprobs": (CHAT, 1, True),
    "chat-4": (CHAT, 4, False),
    "chat-4-logprobs": (CHAT, 4, True),
    "completion-1": (COMPLETION, 1, False),
}

Handle = Callable[[str, bytes], tuple[int, bytes]]


@functools.cache
def handlers() -> dict[str, Handle]:
    """Both implementations' ``handle_json`` over qwen3, with ``<|im_end|>`` as EOS."""
    tok = load_tokenizer(NAME)
    eos = (tok.token_to_id(EOS),)
    from tokstream import Derenderer, Detokenizer

    detok = Detokenizer.from_file(str(tokenizer_path(NAME)))
    return {
        "tokstream": Derenderer(detok, served_model_name=MODEL, eos_token_ids=eos).handle_json,
        "reference": ReferenceDerenderer(tok, MODEL, eos_token_ids=eos).handle_json,
    }


@functools.cache
def prompt_ids() -> tuple[int, ...]:
    """The chat-templated prompt of the two messages, as the render step tokenized it."""
    text = (
        f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\n{QUESTION}<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    return tuple(load_tokenizer(NAME).encode(text, add_special_tokens=False).ids)


def output_ids(length: int | None = None) -> list[int]:
    """The generation's ids (repeated to ``length - 1`` when given), then ``<|im_end|>``."""
    ids = generation_ids(NAME)
    body = list(ids) if length is None else [ids[i % len(ids)] for i in range(length - 1)]
    return [*body, load_tokenizer(NAME).token_to_id(EOS)]


def original_request(path: str, stream: bool, logprobs: bool) -> dict[str, Any]:
    """The client's request as the render step saw it (derender reads a few of its fields)."""
    common: dict[str, Any] = {"model": MODEL, "max_tokens": 4096, "temperature": 0.7}
    if stream:
        common |= {"stream": True, "stream_options": {"include_usage": True}}
    if path == COMPLETION:
        return {"prompt": QUESTION, **common, **({"logprobs": TOP_LOGPROBS} if logprobs else {})}
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    extra = {"logprobs": True, "top_logprobs": TOP_LOGPROBS} if logprobs else {}
    return {"messages": messages, **common, "top_p": 0.8, **extra}


def by_id_logprobs(ids: list[int], start: int) -> dict[str, Any]:
    """Generate-side logprobs by id: the sampled id at rank 1, then 4 alternatives."""
    gen = generation_ids(NAME)
    content = []
    for k, token_id in enumerate(ids):
        rng = random.Random(start + k)
        sampled = lp = -rng.expovariate(6.0)
        tops = [{"token_id": token_id, "logprob": sampled, "rank": 1}]
        for rank in range(2, TOP_LOGPROBS + 1):
            other = gen[((start + k) * 7 + rank * 131) % len(gen)]
            lp -= rng.uniform(0.3, 2.5)  # alternatives by falling logprob, as ranks are
            tops.append({"token_id": other, "logprob": lp, "rank": rank})
        content.append({"token_id": token_id, "logprob": sampled, "rank": 1, "top_logprobs": tops})
    return {"content": content}


def generate_chunk(ids: list[int], start: int, logprobs: bool, last: bool) -> dict[str, Any]:
    """One SSE chunk of vLLM's generate server: every field, as the protocol model dumps it."""
    choice = {
        "index": 0,
        "logprobs": by_id_logprobs(ids, start) if logprobs else None,
        "finish_reason": "stop" if last else None,
        "token_ids": ids,
    }
    chunk = GenerateStreamResponse.model_validate({"request_id": REQUEST_ID, "choices": [choice]})
    return chunk.model_dump(mode="json")


def usage(completion_tokens: int) -> dict[str, Any]:
    """The generate server's usage for ``completion_tokens`` after the prompt."""
    prompt = len(prompt_ids())
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
    }


def usage_chunk(completion_tokens: int) -> dict[str, Any]:
    """The usage-only chunk that ends a stream with ``include_usage``."""
    raw = {"request_id": REQUEST_ID, "choices": [], "usage": usage(completion_tokens)}
    return GenerateStreamResponse.model_validate(raw).model_dump(mode="json")


def dumps(value: Any) -> bytes:
    """Compact JSON, as a client's HTTP library sends it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def stream_body(path: str, chunk: dict[str, Any], state: Any, logprobs: bool) -> bytes:
    """A derender stream request: the generate chunk with the state of the previous answer."""
    key = "chat_request" if path == CHAT else "completion_request"
    body: dict[str, Any] = {"stream": True, "model": MODEL, "generate_chunk": chunk}
    body |= {"stream_state": state, "prompt_tokens": len(prompt_ids())}
    if state is None:
        body["prompt_token_ids"] = list(prompt_ids())
    return dumps({**body, key: original_request(path, True, logprobs)})


def chunks_of(ids: list[int], size: int, logprobs: bool) -> list[dict[str, Any]]:
    """The generate chunks of a stream, ending with the usage-only chunk."""
    starts = range(0, len(ids), size)
    out = [generate_chunk(ids[i : i + size], i, logprobs, i + size >= len(ids)) for i in starts]
    return [*out, usage_chunk(len(ids))]


def stream_all(
    handle: Handle, path: str, chunks: list[dict[str, Any]], logprobs: bool
) -> tuple[list[dict[str, Any]], list[bytes]]:
    """Streams every chunk, carrying the state; returns the answers and the bodies sent."""
    answers: list[dict[str, Any]] = []
    bodies: list[bytes] = []
    state = None
    for chunk in chunks:
        bodies.append(stream_body(path, chunk, state, logprobs))
        status, answer = handle(path, bodies[-1])
        assert status == 200, answer[:500]
        answers.append(json.loads(answer))
        state = answers[-1]["stream_state"]
    return answers, bodies


def text_of(answer: dict[str, Any]) -> str:
    """The text a stream answer adds (chat ``delta.content`` or completion ``text``)."""
    choices = answer["chunk"]["choices"]
    if not choices:
        return ""
    if "delta" in choices[0]:
        return choices[0]["delta"]["content"] or ""  # an empty delta's content is null
    return choices[0]["text"]


def logprobs_of(answer: dict[str, Any]) -> Any:
    """The logprobs a stream answer carries, or None."""
    choices = answer["chunk"]["choices"]
    return choices[0]["logprobs"] if choices else None


def target(ids: list[int]) -> str:
    """C1 with ``skip_special_tokens`` true: the prompt's text cut from the full decode."""
    tok, prompt = load_tokenizer(NAME), list(prompt_ids())
    return tok.decode([*prompt, *ids])[len(tok.decode(prompt)) :]


def same(a: Any, b: Any) -> bool:
    """Equal JSON values: same keys in the same order, floats read back bit for bit."""
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b) and type(a) is type(b)


@functools.cache
def passes(scenario: str) -> dict[str, tuple[list[dict[str, Any]], list[bytes]]]:
    """Both implementations over the whole stream, checked against decode and each other.

    Texts are compared in total: chunk by chunk they may differ where vLLM's algorithm holds a
    decided U+FFFD (the generation has two) that tokstream emits at once (C4's exception).
    """
    path, size, logprobs = SCENARIOS[scenario]
    ids = output_ids()
    chunks = chunks_of(ids, size, logprobs)
    runs = {impl: stream_all(h, path, chunks, logprobs) for impl, h in handlers().items()}
    for impl, (answers, _) in runs.items():
        assert "".join(text_of(a) for a in answers) == target(ids), impl
    for k, (mine, ref) in enumerate(zip(*(runs[i][0] for i in IMPLS), strict=True)):
        assert same(logprobs_of(mine), logprobs_of(ref)), f"logprobs of chunk {k}"
    return runs


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_stream_chunk(benchmark: Any, scenario: str, impl: str) -> None:
    """One steady-state stream chunk (state carried from the chunk before it)."""
    path, size, _ = SCENARIOS[scenario]
    handle = handlers()[impl]
    answers, bodies = passes(scenario)[impl]
    k = STEADY // size
    status, answer = handle(path, bodies[k])
    assert status == 200
    assert text_of(json.loads(answer)) == text_of(passes(scenario)["reference"][0][k])
    benchmark.group = f"derender-{scenario} {NAME}"
    benchmark.extra_info.update(
        impl=impl,
        tokenizer=NAME,
        tokens=size,
        calls=1,
        body_bytes=len(bodies[k]),
        answer_bytes=len(answer),
        state_bytes=len(dumps(answers[k]["stream_state"])),
    )
    benchmark(handle, path, bodies[k])


@pytest.mark.parametrize("impl", IMPLS)
def test_whole_chat(benchmark: Any, impl: str) -> None:
    """One whole chat response of 2,000 ids (the last one ``<|im_end|>``, dropped as EOS)."""
    handle = handlers()[impl]
    ids = output_ids(LONG)
    choice = {"index": 0, "finish_reason": "stop", "token_ids": ids}
    raw = {"request_id": REQUEST_ID, "choices": [choice], "usage": usage(LONG)}
    response = GenerateResponse.model_validate(raw).model_dump(mode="json")
    body = dumps(
        {
            "model": MODEL,
            "generate_response": response,
            "prompt_tokens": len(prompt_ids()),
            "prompt_token_ids": list(prompt_ids()),
            "chat_request": original_request(CHAT, False, False),
        }
    )
    status, answer = handle(CHAT, body)
    assert status == 200, answer[:500]
    parsed = json.loads(answer)
    assert parsed["choices"][0]["message"]["content"] == target(ids[:-1])
    assert parsed["usage"]["completion_tokens"] == LONG
    benchmark.group = f"derender-whole-chat-{LONG} {NAME}"
    benchmark.extra_info.update(
        impl=impl, tokenizer=NAME, tokens=LONG, calls=1, body_bytes=len(body)
    )
    benchmark(handle, CHAT, body)


@pytest.mark.parametrize("impl", IMPLS)
def test_stream_state_size(benchmark: Any, request: pytest.FixtureRequest, impl: str) -> None:
    """2,000 one-id chat chunks with logprobs: the carried state's size, and a whole pass.

    The pass is streamed once with the client's JSON work, recording every body sent; a timed
    round replays those bodies (each with the state the previous answer carried), so it measures
    ``handle_json`` alone, averaged over a whole generation.
    """
    handle = handlers()[impl]
    ids = output_ids(LONG)
    answers, bodies = stream_all(handle, CHAT, chunks_of(ids, 1, True), True)
    assert "".join(text_of(a) for a in answers) == target(ids)
    sizes = [len(dumps(a["stream_state"])) for a in answers]
    row = {"max": max(sizes), "mean": sum(sizes) / len(sizes), "chunks": len(sizes)}
    StateSizes.add(request.config, impl, row)
    if impl == "tokstream":
        assert row["max"] < STATE_LIMIT, f"stream state reached {row['max']} bytes"

    def replay() -> list[tuple[int, bytes]]:
        return [handle(CHAT, body) for body in bodies]

    benchmark.group = f"derender-stream-{LONG} {NAME}"
    benchmark.extra_info.update(
        impl=impl,
        tokenizer=NAME,
        tokens=LONG,
        calls=len(bodies),
        state_bytes_max=row["max"],
        state_bytes_mean=row["mean"],
    )
    out = benchmark.pedantic(replay, rounds=5, iterations=1, warmup_rounds=1)
    assert all(status == 200 for status, _ in out)


class StateSizes:
    """A plugin, registered once, that prints the state sizes in the terminal summary."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}

    @classmethod
    def add(cls, config: pytest.Config, impl: str, row: dict[str, Any]) -> None:
        plugin = config.pluginmanager.get_plugin("derender-state-sizes")
        if plugin is None:
            plugin = cls()
            config.pluginmanager.register(plugin, "derender-state-sizes")
        plugin.rows[impl] = row

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Prints one line per implementation."""
        terminalreporter.write_sep("-", f"derender stream state ({NAME}, compact JSON)")
        for impl, row in self.rows.items():
            terminalreporter.write_line(
                f"{impl:<10} max {row['max']} B, mean {row['mean']:.0f} B over {row['chunks']} "
                f"chunks of one id (logprobs on)"
            )
