"""A user parser registered by name and replayed (``tokstream.parsers``, issue 4, item 1).

``tokstream.parsers.register`` and ``Derenderer(parser=factory)``: a whole response's message is
what ``parse`` decides; a stream runs on the replay path, a fresh parser per call fed every
earlier chunk's text with the original boundaries before the current one, and only the current
chunk's delta is sent.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import pytest
from helpers.derender_util import CHAT, gen_choice, gen_chunk, ok
from helpers.parsers_oracle import QWEN, SERVED, cases, chat_request
from helpers.parsers_util import Streamed, derenderer_class, message_result, whole_body
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import c1_target, load_detokenizer


class Upper:
    """A user parser: content upper-cased, ">>" before the first delta it returns; whole
    responses report the id count as reasoning. It records every call, to check the replay."""

    def __init__(self, log: list[Upper]) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.requests: list[str] = []
        log.append(self)

    def parse_delta(
        self,
        delta_text: str,
        delta_token_ids: Sequence[int],
        request: Any,
        prompt_token_ids: Sequence[int],
        finished: bool,
    ) -> Any:
        from tokstream.protocol import DeltaMessage

        self.requests.append(type(request).__name__)
        self.calls.append((delta_text, list(delta_token_ids), finished, list(prompt_token_ids)))
        text = (">>" if len(self.calls) == 1 else "") + delta_text.upper()
        return DeltaMessage(content=text) if text else None

    def parse(self, text: str, request: Any, token_ids: Sequence[int]) -> Any:
        self.requests.append(type(request).__name__)
        self.calls.append(("parse", text, list(token_ids)))
        return f"{len(token_ids)} ids", text.upper(), []


@pytest.mark.parametrize("parser_state", [None, "replay"])
def test_a_user_parser_is_registered_and_replayed(parser_state: str | None) -> None:
    """Part of the contract (issue 4, item 1): ``tokstream.parsers.register`` and
    ``Derenderer(parser=factory)``. Whole: ``parse`` decides the message. Streamed: one fresh
    parser per call, fed every earlier chunk's text and ids (the original boundaries, not
    finished) before the current chunk; only the current chunk's delta is sent."""
    derenderer_class()
    parsers = importlib.import_module("tokstream.parsers")
    log: list[Upper] = []

    def factory() -> Upper:
        return Upper(log)

    registered = f"upper-test-{parser_state}"
    parsers.register(registered, factory)
    assert parsers.get(registered) is factory
    assert registered in parsers.names()
    extra = {} if parser_state is None else {"parser_state": parser_state}
    r = derenderer_class()(
        load_detokenizer(QWEN), served_model_name=SERVED, parser=factory, **extra
    )
    assert r.parser_state == "replay"  # a user parser's state cannot travel, whatever was asked
    tok = load_tokenizer(QWEN)
    case = cases(QWEN)[1]
    text = c1_target(tok, case.prompt, case.gen, False)
    assert "<think>" in text and "<tool_call>" in text  # decoded without skipping
    got = message_result(
        ok(r, CHAT, whole_body(case.prompt, case.gen, chat_request(), "length"))["choices"][0]
    )
    assert (got.message.content, got.message.reasoning) == (text.upper(), f"{len(case.gen)} ids")
    assert got.message.calls == () and got.finish_reason == "length"
    assert log[-1].calls == [("parse", text, case.gen)]
    assert log[-1].requests == ["ChatCompletionRequest"]
    chunks = [*[case.gen[i : i + 2] for i in range(0, len(case.gen), 2)], []]
    log.clear()
    run = Streamed()
    state = None
    live: list[tuple[Any, ...]] = []
    for n, ids in enumerate(chunks):
        last = n == len(chunks) - 1
        body = {
            "stream": True,
            "generate_chunk": gen_chunk(
                [gen_choice(ids, finish_reason="length" if last else None)]
            ),
            "stream_state": state,
            "chat_request": chat_request(),
            "prompt_token_ids": case.prompt,
        }
        answer = ok(r, CHAT, body)
        state = answer["stream_state"]
        assert state["output_token_ids"] == case.gen[: sum(len(c) for c in chunks[: n + 1])]
        assert len(log) == n + 1, f"chunk {n}: {len(log)} parsers for {n + 1} calls"
        calls = log[-1].calls
        assert calls[:-1] == live, f"chunk {n}: the replayed history differs from what was live"
        assert calls[-1][1:] == (list(ids), last, case.prompt), calls[-1]
        live.append((calls[-1][0], list(ids), False, case.prompt))
        assert set(log[-1].requests) == {"ChatCompletionRequest"}, log[-1].requests
        run.deltas.append(answer["chunk"]["choices"][0]["delta"])
        run.finishes.append(answer["chunk"]["choices"][0]["finish_reason"])
    assert "".join(c[0] for c in live) == text
    assert run.result().message.content == ">>" + text.upper()
    assert run.finishes[-1] == "length"
