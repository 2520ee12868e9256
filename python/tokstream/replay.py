"""Chat derender through a user :class:`~tokstream.parsers.Parser`, vLLM's replay way.

The native core does everything but the parsing: it validates the body, detokenizes with special
tokens kept, applies the stop-token rules, resolves logprobs and carries the window. This module
then parses the text with a fresh parser: a whole output with ``parse``; a stream chunk by
replaying every earlier chunk's text (re-derived by one native call from the replay buffer in
``stream_state``) through ``parse_delta`` with the original boundaries, then the new chunk.
Tool-call ids are pinned by index in ``last_tool_call_ids``, so a replay that mints new ids
still sends the first ones.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from . import _core
from .parsers import Parser, ParserFactory
from .protocol import ChatCompletionRequest, DeltaMessage

__all__ = ["UserParserChat"]

_JSON = tuple[int, bytes]


def _bad(message: str, param: str | None = None) -> _JSON:
    error = {"message": message, "type": "BadRequestError", "param": param, "code": 400}
    return 400, json.dumps({"error": error}).encode()


def _named(request: ChatCompletionRequest) -> bool:
    return not isinstance(request.tool_choice, str) and request.tool_choice is not None


class UserParserChat:
    """Answers chat derender bodies with a user parser (see the module docstring)."""

    def __init__(
        self, core: _core.Derenderer, detokenizer: _core.Detokenizer, factory: ParserFactory
    ):
        self._core = core
        self._detokenizer = detokenizer
        self._factory = factory

    def _parser(self) -> Parser:
        return self._factory()

    def handle(self, path: str, body: bytes) -> _JSON:
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return self._core.handle_json(path, body)  # the core words the 400
        if not isinstance(data, dict):
            return self._core.handle_json(path, body)
        raw_request = data.get("chat_request")
        if not isinstance(raw_request, dict):
            return _bad(
                "chat_request is required when a reasoning or tool parser is configured",
                "chat_request",
            )
        try:
            request = ChatCompletionRequest.model_validate(raw_request)
        except ValidationError as e:
            return _bad(
                f"invalid chat_request: {e.errors()[0].get('msg', 'invalid')}", "chat_request"
            )
        stream = data.get("stream") is True
        generate = data.get("generate_chunk" if stream else "generate_response")
        prompt = data.get("prompt_token_ids")
        if prompt is None and isinstance(generate, dict):
            prompt = generate.get("prompt_token_ids")
        if not isinstance(prompt, list):
            return _bad(
                "prompt_token_ids (the whole prompt) is required when a parser is configured",
                "prompt_token_ids",
            )
        plain = {**data, "chat_request": {**raw_request, "skip_special_tokens": False}}
        status, out = self._core.handle_json(path, json.dumps(plain).encode())
        if status != 200:
            return status, out
        answer = json.loads(out)
        if stream:
            self._chunk(answer, data, request, prompt)
        else:
            self._whole(answer, data["generate_response"], request)
        return 200, json.dumps(answer, ensure_ascii=False).encode()

    def _whole(
        self, answer: dict[str, Any], generate: dict[str, Any], request: ChatCompletionRequest
    ) -> None:
        by_index = {c.get("index"): c for c in generate.get("choices", [])}
        for choice in answer["choices"]:
            ids = by_index.get(choice["index"], {}).get("token_ids") or []
            message = choice["message"]
            reasoning, content, calls = self._parser().parse(message["content"], request, ids)
            message["content"] = content
            message["reasoning"] = reasoning if request.include_reasoning else None
            message["tool_calls"] = [
                {
                    "id": f"chatcmpl-tool-{answer['id']}-{choice['index']}-{k}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for k, call in enumerate(calls)
            ]
            if calls and choice["finish_reason"] == "stop" and not _named(request):
                choice["finish_reason"] = "tool_calls"

    def _chunk(
        self,
        answer: dict[str, Any],
        data: dict[str, Any],
        request: ChatCompletionRequest,
        prompt: list[int],
    ) -> None:
        state = answer["stream_state"]
        before = data.get("stream_state") or {}
        history = list(before.get("output_token_ids") or [])
        lens = list(before.get("output_chunk_lens") or [])
        choices = answer["chunk"]["choices"]
        if not choices:
            return
        choice = choices[0]
        ids = data["generate_chunk"]["choices"][0].get("token_ids") or []
        parser = self._parser()
        texts = self._detokenizer.replay_texts(prompt, history, lens, False)
        at = 0
        for text, n in zip(texts, lens, strict=True):
            parser.parse_delta(text, history[at : at + n], request, prompt, False)
            at += n
        finished = choice["finish_reason"] is not None
        delta = (
            parser.parse_delta(choice["delta"]["content"] or "", ids, request, prompt, finished)
            or DeltaMessage()
        )
        pinned = list(state.get("last_tool_call_ids") or [])
        calls = []
        for call in delta.tool_calls:
            item = call.model_dump()
            if call.id is not None:
                if call.index < len(pinned):
                    item["id"] = pinned[call.index]
                elif call.index == len(pinned):
                    pinned.append(call.id)
            calls.append(item)
        role = choice["delta"]["role"]
        choice["delta"] = {
            "role": role,
            "content": delta.content,
            "reasoning": delta.reasoning if request.include_reasoning else None,
        }
        if calls:
            choice["delta"]["tool_calls"] = calls
        state["tools_streamed"] = bool(state.get("tools_streamed")) or bool(calls)
        state["last_tool_call_ids"] = pinned
        state["output_token_ids"] = history + list(ids)
        state["output_chunk_lens"] = [*lens, len(ids)] if ids else lens
        if state["tools_streamed"] and choice["finish_reason"] == "stop" and not _named(request):
            choice["finish_reason"] = "tool_calls"
