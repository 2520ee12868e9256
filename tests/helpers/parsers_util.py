"""The parser tests' client: derenderers with parsers, whole and streamed calls, their checks.

``stream`` posts one ``handle_json`` call per chunk and carries the state as a client does,
checking every answer's shape and the state's rules (resumable: small, no history; replay: the
history); ``Streamed.result`` and ``message_result`` read a stream and a whole response the same
way, so they compare; ``check_everywhere`` checks one generation whole and streamed, in both
modes, against the oracle of ``parsers_oracle``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from helpers.derender_util import (
    CHAT,
    PLAIN_STATE_KEYS,
    STATE_KEYS,
    gen_choice,
    gen_chunk,
    gen_response,
    ok,
    state_size,
)
from helpers.parsers_oracle import SERVED, Message, chat_request, oracle, thinking_of
from helpers.stream_util import import_tokstream, load_detokenizer

MODES = import_tokstream()._core.PARSER_STATES
#: The resumable stream state must stay under this many bytes (compact JSON), at any length,
#: beside the open call's text that a tag-form call carries until it closes (``["x"]["b"]``).
STATE_LIMIT = 2048
TOOL_ID = re.compile(r"chatcmpl-tool-[0-9a-f]{32}")
MESSAGE_KEYS = frozenset(
    {"role", "content", "refusal", "annotations", "audio", "function_call", "tool_calls"}
    | {"reasoning"}
)

# --- derenderers and calls --------------------------------------------------------------------


def derenderer_class() -> Any:
    """``tokstream.Derenderer``, which takes the reasoning and tool-call parsers."""
    return import_tokstream().Derenderer


@functools.cache
def derenderer(
    name: str, reasoning: str | None = None, tool: str | None = None, mode: str = "resumable"
) -> Any:
    """A ``Derenderer`` with built-in parsers, built once per argument set."""
    return derenderer_class()(
        load_detokenizer(name),
        served_model_name=SERVED,
        reasoning_parser=reasoning,
        tool_parser=tool,
        parser_state=mode,
    )


@dataclass
class Result:
    """A response as a client sees it: the message, tool-call ids, finish reason, null flags."""

    message: Message
    ids: tuple[str, ...]
    finish_reason: str | None
    content_null: bool
    reasoning_null: bool


def whole_body(
    prompt: Sequence[int] | None,
    gen: Sequence[int],
    request: dict[str, Any] | None,
    finish: str,
    *,
    request_id: str = "gen-1",
    own_prompt: Sequence[int] | None = None,
) -> dict[str, Any]:
    """A whole chat derender request (``own_prompt``: the generate response's prompt ids)."""
    choice = gen_choice(gen, finish_reason=finish)
    response = gen_response([choice], request_id=request_id, prompt_token_ids=own_prompt)
    body: dict[str, Any] = {
        "generate_response": response,
        "prompt_tokens": None if prompt is None else len(prompt),
        "prompt_token_ids": None if prompt is None else list(prompt),
    }
    return body if request is None else body | {"chat_request": request}


def message_result(choice: dict[str, Any]) -> Result:
    """A whole response's choice as a ``Result``, checking the message's shape."""
    message = choice["message"]
    # vLLM's ChatMessage leaves tool_calls out when there are none.
    assert set(message) | {"tool_calls"} == MESSAGE_KEYS, sorted(message)
    assert message.get("tool_calls", [None]) != [], message
    assert message["role"] == "assistant" and message["function_call"] is None, message
    assert message["content"] != "" and message["reasoning"] != "", message
    names, ids = [], []
    for tool_call in message.get("tool_calls", []):
        assert set(tool_call) == {"id", "type", "function"}, tool_call
        assert tool_call["type"] == "function" and TOOL_ID.fullmatch(tool_call["id"]), tool_call
        assert set(tool_call["function"]) == {"name", "arguments"}, tool_call
        names.append((tool_call["function"]["name"], tool_call["function"]["arguments"]))
        ids.append(tool_call["id"])
    content, reasoning = message["content"], message["reasoning"]
    parsed = Message(content or "", reasoning or "", tuple(names))
    return Result(parsed, tuple(ids), choice["finish_reason"], content is None, reasoning is None)


def whole(
    r: Any, prompt: Sequence[int] | None, gen: Sequence[int], request: Any, finish: str, **kw: Any
) -> Result:
    """Posts a whole chat response and reads its one choice."""
    answer = ok(r, CHAT, whole_body(prompt, gen, request, finish, **kw))
    (choice,) = answer["choices"]
    return message_result(choice)


@dataclass
class Streamed:
    """A stream as a client saw it: each chunk's delta, finish reason and state, and the result."""

    deltas: list[dict[str, Any]] = field(default_factory=list)
    finishes: list[str | None] = field(default_factory=list)
    states: list[dict[str, Any]] = field(default_factory=list)

    def result(self) -> Result:
        """The aggregate: concatenated content, reasoning and arguments per index, ids, names."""
        content = reasoning = ""
        sent_content = sent_reasoning = False
        calls: dict[int, list[str]] = {}
        ids: list[str] = []
        for delta in self.deltas:
            sent_content |= delta["content"] is not None
            sent_reasoning |= delta["reasoning"] is not None
            content += delta["content"] or ""
            reasoning += delta["reasoning"] or ""
            for tool_call in delta.get("tool_calls", []):
                index = tool_call["index"]
                function = tool_call["function"]
                if index not in calls:
                    assert index == len(calls), f"tool index {index} after {len(calls)} calls"
                    assert TOOL_ID.fullmatch(tool_call["id"] or ""), tool_call
                    assert tool_call["type"] == "function", tool_call
                    assert isinstance(function["name"], str) and function["name"], tool_call
                    calls[index] = [function["name"], function["arguments"]]
                    ids.append(tool_call["id"])
                else:
                    assert tool_call["id"] is None and tool_call["type"] is None, tool_call
                    assert function["name"] is None, tool_call
                    calls[index][1] += function["arguments"]
        named = tuple((n, a) for n, a in calls.values())
        parsed = Message(content, reasoning, named)
        return Result(parsed, tuple(ids), self.finishes[-1], not sent_content, not sent_reasoning)


def _check_delta(delta: dict[str, Any]) -> None:
    keys = set(delta)
    assert keys in (
        {"role", "content", "reasoning"},
        {"role", "content", "reasoning", "tool_calls"},
    )
    for key in ("content", "reasoning"):
        assert delta[key] is None or (isinstance(delta[key], str) and delta[key]), delta
    assert delta.get("tool_calls", [None]), f"tool_calls present but empty: {delta}"
    for tool_call in delta.get("tool_calls", []):
        assert set(tool_call) == {"id", "type", "index", "function"}, tool_call
        assert set(tool_call["function"]) == {"name", "arguments"}, tool_call
        assert isinstance(tool_call["function"]["arguments"], str), tool_call


def stream(
    r: Any,
    prompt: Sequence[int] | None,
    chunks: Sequence[Sequence[int]],
    request: Any,
    finish: str,
    *,
    mode: str = "resumable",
    request_id: str = "gen-1",
    state: dict[str, Any] | None = None,
    prompt_every_chunk: bool | None = None,
) -> Streamed:
    """Posts one stream call per chunk, carrying the state like a client.

    The prompt ids go with the first call, and with every call in replay mode (the contract's
    rule; ``prompt_every_chunk`` overrides). The last chunk carries ``finish``. Checks every
    answer's shape, and the state: resumable mode under ``STATE_LIMIT`` bytes with no
    ``output_token_ids``; replay mode holding every id sent and the chunk lengths.
    """
    every = mode == "replay" if prompt_every_chunk is None else prompt_every_chunk
    out = Streamed()
    sent: list[int] = []
    lens: list[int] = []
    first = state is None
    for n, ids in enumerate(chunks):
        last = n == len(chunks) - 1
        choice = gen_choice(ids, finish_reason=finish if last else None)
        body: dict[str, Any] = {
            "stream": True,
            "generate_chunk": gen_chunk([choice], request_id=request_id),
            "stream_state": state,
        }
        if request is not None:
            body["chat_request"] = request
        if prompt is not None and (every or (first and n == 0)):
            body["prompt_token_ids"] = list(prompt)
        answer = ok(r, CHAT, body)
        assert set(answer) == {"chunk", "stream_state"}, answer
        (chosen,) = answer["chunk"]["choices"]
        _check_delta(chosen["delta"])
        role = "assistant" if first and n == 0 else None
        assert chosen["delta"]["role"] == role, (n, chosen["delta"])
        assert last or chosen["finish_reason"] is None, (n, chosen)
        state = answer["stream_state"]
        assert PLAIN_STATE_KEYS <= set(state) <= STATE_KEYS, sorted(state)
        sent += ids
        lens += [len(ids)] if ids else []
        if mode == "resumable":
            call_text = ((state.get("parser") or {}).get("x") or {}).get("b", "")
            size = state_size(state) - len(json.dumps(call_text, ensure_ascii=False).encode())
            assert size < STATE_LIMIT, (n, size, state)
            assert state["output_token_ids"] == [], state
        elif first:
            # A stop token ending the output may be left out of the replay history.
            held = [sent, sent[:-1]] if last and finish == "stop" else [sent]
            assert state["output_token_ids"] in held, (n, state["output_token_ids"], sent)
            assert sum(state["output_chunk_lens"]) == len(state["output_token_ids"]), state
            if state["output_token_ids"] == sent:
                assert state["output_chunk_lens"] == lens, (n, state["output_chunk_lens"], lens)
        out.deltas.append(chosen["delta"])
        out.finishes.append(chosen["finish_reason"])
        out.states.append(state)
    return out


def expected_finish(message: Message, finish: str, tool_choice: Any = "auto") -> str:
    """The contract's rewrite: "tool_calls" for calls, an engine "stop" and no named choice."""
    named = isinstance(tool_choice, dict)
    return "tool_calls" if message.calls and finish == "stop" and not named else finish


def singles(ids: Sequence[int]) -> list[list[int]]:
    """One id per chunk."""
    return [[i] for i in ids]


def tools_active(request: dict[str, Any] | None) -> bool:
    """The contract: tools parsed only for a non-empty ``tools`` and ``tool_choice`` not "none"."""
    return bool(request and request.get("tools")) and request.get("tool_choice", "auto") != "none"


def expect(
    name: str,
    reasoning: str | None,
    tool: str | None,
    prompt: Sequence[int],
    gen: Sequence[int],
    request: dict[str, Any],
) -> Message:
    """The oracle's message under ``request`` (tools, ``parallel_tool_calls``,
    ``include_reasoning``, thinking)."""
    tools = tool is not None and tools_active(request)
    parallel = request.get("parallel_tool_calls") is not False
    thinking = thinking_of(request)
    want = oracle(
        name, prompt, gen, reasoning=reasoning, tools=tools, parallel=parallel, thinking=thinking
    )
    if request.get("include_reasoning") is False:
        want = Message(want.content, "", want.calls)
    return want


def check_everywhere(
    name: str,
    reasoning: str | None,
    tool: str | None,
    prompt: Sequence[int],
    gen: Sequence[int],
    *,
    finish: str = "stop",
    request: dict[str, Any] | None = None,
    chunkings: dict[str, list[list[int]]] | None = None,
    where: str = "",
) -> tuple[Result, dict[tuple[str, str], Streamed]]:
    """Checks a whole response and streams (both modes; 1 id, 3 ids, one chunk, a finish-only
    tail, or ``chunkings``) against the oracle and each other; returns them for more checks."""
    request = chat_request() if request is None else request
    want = expect(name, reasoning, tool, prompt, gen, request)
    shapes = chunkings or {
        "size1": singles(gen),
        "size3": [list(gen[i : i + 3]) for i in range(0, len(gen), 3)],
        "one": [list(gen)],
        "finish_only_tail": [list(gen), []],
    }
    first = whole(derenderer(name, reasoning, tool), prompt, gen, request, finish)
    label = f"{name} {reasoning} {tool} {where}"
    assert first.message == want, f"whole != oracle: {label}"
    assert first.content_null == (want.content == ""), label
    assert first.reasoning_null == (want.reasoning == ""), label
    streams = {}
    for mode in MODES:
        r = derenderer(name, reasoning, tool, mode)
        assert whole(r, prompt, gen, request, finish) == first, f"whole in {mode}: {label}"
        for shape, chunks in shapes.items():
            run = stream(r, prompt, chunks, request, finish, mode=mode)
            got = run.result()
            at = f"{mode} {shape}: {label}"
            assert got.message == want, f"stream != oracle: {at}"
            assert got.ids == first.ids and got.finish_reason == first.finish_reason, at
            assert (got.content_null, got.reasoning_null) == (
                first.content_null,
                first.reasoning_null,
            ), at
            streams[mode, shape] = run
    return first, streams
