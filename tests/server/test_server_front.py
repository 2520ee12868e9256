"""The Rust front in this process (``tokstream.launch.front_for``): a user parser on its path.

``tokstream serve`` cannot name a Python parser, but an embedding program can hand the front a
``Derenderer(parser=...)``: the loop thread calls it under the interpreter lock on the core's
path, so over HTTP it answers exactly what ``handle_json`` answers (a parser that raises is the
same 500), while the main thread only waits. Requests go over loopback with ``http.client``.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
import tokstream
from helpers.real_tokenizers import load_tokenizer, tokenizer_path
from helpers.server_util import CHAT, HOST, assert_error, request, stream_body, whole_body
from tokstream.launch import bind, front_for
from tokstream.server import App, ServerConfig


class Shout:
    """A user parser: the content upper-cased."""

    def parse_delta(
        self,
        delta_text: str,
        delta_token_ids: Sequence[int],
        request: Any,
        prompt_token_ids: Sequence[int],
        finished: bool,
    ) -> Any:
        return tokstream.protocol.DeltaMessage(content=delta_text.upper() or None)

    def parse(self, text: str, request: Any, token_ids: Sequence[int]) -> Any:
        return None, text.upper(), []


class Broken(Shout):
    def parse(self, text: str, request: Any, token_ids: Sequence[int]) -> Any:
        raise ValueError("this parser is broken")


def serve(parser: Any) -> Iterator[tuple[tokstream.Derenderer, int]]:
    path = str(tokenizer_path("qwen3"))
    detokenizer = tokstream.Detokenizer.from_file(path)
    derenderer = tokstream.Derenderer(detokenizer, served_model_name="qwen3", parser=parser)
    sock: socket.socket = bind(HOST, 0)
    port = int(sock.getsockname()[1])
    front = front_for(
        App(derenderer), ServerConfig(tokenizer=path, served_model_name="qwen3"), sock
    )
    sock.close()
    try:
        yield derenderer, port
    finally:
        front.drain(0.5)
        assert front.wait(10)


@pytest.fixture(scope="module")
def shout() -> Iterator[tuple[tokstream.Derenderer, int]]:
    yield from serve(Shout)


def without_created(raw: bytes) -> Any:
    answer = json.loads(raw)
    for part in (answer, answer.get("chunk") or {}):
        part.pop("created", None)
    return answer


def test_a_user_parser_answers_over_the_front_as_handle_json_does(
    shout: tuple[tokstream.Derenderer, int],
) -> None:
    derenderer, port = shout
    ids = load_tokenizer("qwen3").encode("Hello, 世界 👋", add_special_tokens=False).ids
    chat = {"messages": [{"role": "user", "content": "hi"}]}
    prompt = {"chat_request": chat, "prompt_token_ids": [9707]}
    bodies = [
        {**whole_body(CHAT, ids), **prompt},
        {**stream_body(ids[:3], None), **prompt},
        {**whole_body(CHAT, ids), **prompt, "model": "other"},
        {**whole_body(CHAT, ids), "chat_request": chat},  # no prompt: parsed from the start
        {**whole_body(CHAT, ids), **prompt, "prompt_token_ids": [-1]},  # 400: a negative id
    ]
    for body in bodies:
        raw = json.dumps(body).encode()
        status, expected = derenderer.handle_json(CHAT, raw)
        answer = request(port, "POST", CHAT, raw)
        assert answer.status == status, answer
        assert without_created(answer.body) == without_created(expected)
    statuses = [request(port, "POST", CHAT, json.dumps(b).encode()).status for b in bodies]
    assert statuses == [200, 200, 404, 200, 400]
    whole = request(port, "POST", CHAT, json.dumps(bodies[0]).encode()).json()
    assert whole["choices"][0]["message"]["content"] == "HELLO, 世界 👋"


def test_a_raising_user_parser_is_a_500_and_the_front_goes_on() -> None:
    for _, port in serve(Broken):
        body = {**whole_body(CHAT, [9707]), "chat_request": {"messages": []}}
        body["prompt_token_ids"] = [9707]
        answer = request(port, "POST", CHAT, json.dumps(body).encode())
        assert_error(answer, 500, "InternalServerError")
        assert "broken" in answer.json()["error"]["message"]
        assert request(port, "GET", "/health").status == 200
