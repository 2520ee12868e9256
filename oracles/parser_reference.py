"""Plain-Python reasoning and tool-call parsers, and a replaying chat derender: a benchmark peer.

Written from REFERENCE.md section 6 and the parsers contract, in the shape of vLLM's parsers (not
copied from them): a parser object holds what it has sent, every streaming call gets the
accumulated text before and after the delta (``previous_text``, ``current_text``), the delta and
its ids, and re-scans the accumulated text or ids. Such state is not serializable, so
``ReplayChatDerenderer`` does what vLLM's streaming derender does: it validates the body with the
pydantic models, builds a fresh parser for every chunk and replays the whole history from
``stream_state.output_token_ids`` split by ``output_chunk_lens`` (re-detokenizing each past chunk
with ``VllmReference`` seeded from the full prompt), discarding what the replay emits, then parses
the current chunk. Nothing is cached or fast: per chunk it is O(n) detokenization plus O(n)
parser calls that each re-scan O(n) text, so a generation costs O(n^2) to O(n^3).

Markers: ``<think>`` and ``</think>`` (and, for qwen3, whose reasoning a ``<tool_call>`` ends,
that tag too) must be single tokens and are found by id, their text then cut from the delta
(vLLM's way); hermes tags are found in the text, as vLLM's hermes parser finds
them, holding back a suffix that could begin a tag only when the tag is not a single token. (So a
tag spelled out by several tokens counts here, where the contract counts single-token tags by id
only; the benchmark generations never spell one out.) Tool-call ids: vLLM pins them per index in
``last_tool_call_ids``; a new one is a hash of (request id, choice index, tool index), not the
contract's derivation. Whole chat responses run the same parser over the whole text in one delta.

>>> ref = ReplayChatDerenderer(tok, "m", "qwen3", "hermes")  # doctest: +SKIP
>>> status, body = ref.handle_json("/v1/chat/completions/derender", b'{...}')  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from tokenizers import Tokenizer
from tokstream.protocol import (
    ChatCompletionResponse,
    ChatCompletionResponseStreamChoice,
    ChatCompletionStreamResponse,
    ChatMessage,
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
    DerenderChatRequest,
    DerenderChatStreamResponse,
    DerenderStreamState,
    FunctionCall,
    ToolCall,
    UsageInfo,
)

from .derender_reference import (
    LOGPROB_CONTEXT,
    Params,
    ReferenceDerenderer,
    bad,
)
from .vllm_reference import State, VllmReference

THINK_START, THINK_END = "<think>", "</think>"
TOOL_START, TOOL_END = "<tool_call>", "</tool_call>"
TURNS = ("<|im_start|>", "<|im_end|>")
REASONING_PARSERS = ("deepseek_r1", "qwen3")
TOOL_PARSERS = ("hermes",)
#: JSON as tokens: a string (group 1 set when it is closed), punctuation, whitespace, the end tag,
#: a lone ``<``, or a scalar run. Strings are one token, so tags and braces inside them are text.
JSON_TOKEN = re.compile(
    r'"(?:[^"\\]|\\[\s\S])*(?:(")|\\?\Z)|[{}\[\]:,]|\s+|'
    + re.escape(TOOL_END)
    + r'|<|[^\s{}\[\]:,"<]+'
)

ToolDelta = tuple[int, str | None, str]  # (tool index, name on the call's first delta, arguments)


def last_index(ids: list[int], value: int) -> int:
    """Where ``value`` last occurs in ``ids``, or -1 (one C-level scan, as vLLM's ``in`` is)."""
    try:
        return len(ids) - 1 - ids[::-1].index(value)
    except ValueError:
        return -1


class ThinkReasoningParser:
    """``<think>`` reasoning, ``deepseek_r1`` or ``qwen3`` variant; markers found by token id.

    Reasoning runs until ``</think>`` (qwen3: or ``<tool_call>``, which stays in the content) and
    ends once: a ``<think>`` inside it is dropped, think markers after it are content. Where it
    starts: deepseek_r1 from the prompt's last think marker (neither: in reasoning); qwen3 in
    content when ``thinking`` is off, else in reasoning unless the prompt's last ``</think>``,
    ``<tool_call>``, ``<think>`` or ChatML turn marker is one of the first two.
    """

    def __init__(
        self, tok: Tokenizer, variant: str, prompt_token_ids: list[int], thinking: bool = True
    ) -> None:
        start, end = tok.token_to_id(THINK_START), tok.token_to_id(THINK_END)
        if start is None or end is None:
            raise ValueError("the reference needs <think> and </think> as single tokens")
        self.start_id, self.end_id = start, end
        self.call_id: int | None = None
        if variant == "qwen3":
            self.call_id = tok.token_to_id(TOOL_START)
            if self.call_id is None:
                raise ValueError("the reference needs <tool_call> as a single token for qwen3")
        if variant == "deepseek_r1":
            opened, closed = last_index(prompt_token_ids, start), last_index(prompt_token_ids, end)
            self.starts_in_reasoning = opened >= closed
        elif not thinking:
            self.starts_in_reasoning = False
        else:
            turns = [tok.token_to_id(t) for t in TURNS]
            stops = [last_index(prompt_token_ids, i) for i in (start, *turns) if i is not None]
            ends = [last_index(prompt_token_ids, i) for i in (end, self.call_id) if i is not None]
            self.starts_in_reasoning = max(ends) < max(stops, default=-1) or max(ends) < 0
        self.ends = tuple(i for i in (end, self.call_id) if i is not None)

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: list[int],
        current_token_ids: list[int],
        delta_token_ids: Sequence[int],
    ) -> tuple[str, str]:
        """Returns the delta's ``(reasoning, content)``, the mode from a re-scan of the ids."""
        in_reasoning = self.starts_in_reasoning and not any(
            i in previous_token_ids for i in self.ends
        )
        if not in_reasoning:
            return "", delta_text
        reasoning: list[str] = []
        rest = delta_text
        for token_id in delta_token_ids:
            if token_id not in (self.start_id, *self.ends):
                continue
            marker = {self.start_id: THINK_START, self.end_id: THINK_END}.get(token_id, TOOL_START)
            at = rest.find(marker)
            if at < 0:
                continue
            reasoning.append(rest[:at])
            if token_id == self.start_id:
                rest = rest[at + len(marker) :]
                continue
            # </think> is dropped; <tool_call> begins the content.
            after = at + len(marker) if token_id == self.end_id else at
            return "".join(reasoning), rest[after:]
        reasoning.append(rest)
        return "".join(reasoning), ""


def scan_call(text: str, pos: int, end: int) -> tuple[dict[str, tuple[int, int, bool]], int | None]:
    """Reads one call's JSON object in ``text[pos:end]``.

    Returns:
        The object's top-level fields, ``key -> (start, stop, complete)`` spans of their raw value
        text (the first of a repeated key), and the offset just after the call's end tag (None
        while the call is open). An end tag outside strings ends the call at any depth.
    """
    fields: dict[str, tuple[int, int, bool]] = {}
    depth, phase, key, start = 0, "key", "", 0
    for m in JSON_TOKEN.finditer(text, pos, end):
        tok = m.group()
        if tok == TOOL_END:
            if phase == "in_value":
                fields.setdefault(key, (start, m.start(), False))
            return fields, m.end()
        c = tok[0]
        if c.isspace() or c == "<":
            continue
        if depth == 0:
            depth, phase = (1, "key") if c == "{" else (0, phase)
        elif depth == 1:
            if phase == "key" and c == '"':
                key, phase = (json.loads(tok) if m.group(1) else ""), "colon"
            elif phase == "colon" and c == ":":
                phase = "value"
            elif phase == "value" and c not in "}],:":
                start = m.start()
                if c in "{[":
                    depth, phase = 2, "in_value"
                else:
                    done = m.group(1) is not None if c == '"' else m.end() < end
                    fields.setdefault(key, (start, m.end(), done))
                    phase = "after"
            elif c == ",":
                phase = "key"
            elif c == "}":
                depth, phase = 0, "done"
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 1:
                fields.setdefault(key, (start, m.end(), True))
                phase = "after"
    if phase == "in_value":
        fields.setdefault(key, (start, end, False))
    return fields, None


class HermesToolParser:
    """Hermes ``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` calls, found in text.

    Content is the text before the first start tag; inside a call the name is sent once it is a
    complete JSON string, then the arguments value's raw text as it grows (``parameters`` is read
    when ``arguments`` is absent; neither: ``{}`` when the call ends). A call with no name never
    counts (nor takes an index).
    """

    def __init__(self, tok: Tokenizer) -> None:
        single = all(tok.token_to_id(tag) is not None for tag in (TOOL_START, TOOL_END))
        self.hold = not single
        self.content_sent = 0
        self.args_sent: list[int] = []

    def held(self, text: str) -> int:
        """Length of the longest suffix of ``text`` that could begin a tag (0 for token tags)."""
        if not self.hold:
            return 0
        tags = (TOOL_START, TOOL_END)
        return max(
            (k for tag in tags for k in range(1, len(tag)) if text.endswith(tag[:k])), default=0
        )

    def scan(self, text: str, final: bool) -> tuple[str, list[tuple[str | None, str]]]:
        """Re-scans all of ``text``: the content and each call's ``(name, arguments so far)``."""
        end = len(text) if final else len(text) - self.held(text)
        first = text.find(TOOL_START, 0, end)
        if first < 0:
            return text[:end], []
        calls: list[tuple[str | None, str]] = []
        pos = first + len(TOOL_START)
        while True:
            fields, stop = scan_call(text, pos, end)
            calls.append(self.call_of(text, fields, stop is not None or final))
            following = -1 if stop is None else text.find(TOOL_START, stop, end)
            if following < 0:
                return text[:first], calls
            pos = following + len(TOOL_START)

    @staticmethod
    def call_of(
        text: str, fields: dict[str, tuple[int, int, bool]], closed: bool
    ) -> tuple[str | None, str]:
        """A call's name (None until complete) and arguments: ``{}`` once a call that has no
        arguments value has ended."""
        name = None
        if "name" in fields and fields["name"][2] and text[fields["name"][0]] == '"':
            start, stop, _ = fields["name"]
            name = json.loads(text[start:stop])
        spans = [fields[k] for k in ("arguments", "parameters") if k in fields]
        args = text[spans[0][0] : spans[0][1]] if spans else ("{}" if closed else "")
        return name, args

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        delta_token_ids: Sequence[int],
        finished: bool,
    ) -> tuple[str, list[ToolDelta]]:
        """Returns the content this delta adds and its tool-call deltas, from a full re-scan."""
        content, calls = self.scan(current_text, finished)
        added = content[self.content_sent :]
        self.content_sent = len(content)
        deltas: list[ToolDelta] = []
        for index, (name, args) in enumerate(c for c in calls if c[0] is not None):
            first = index == len(self.args_sent)
            if first:
                self.args_sent.append(0)
            piece = args[self.args_sent[index] :]
            self.args_sent[index] = len(args)
            if first or piece:
                deltas.append((index, name if first else None, piece))
        return added, deltas


class ChatStreamParser:
    """The reasoning parser, then the tool parser over the content, as vLLM's chat stream runs them.

    ``parse_delta`` keeps the accumulated text and ids and hands both parsers the before/after
    views of them, as vLLM's serving loop does.
    """

    def __init__(
        self,
        tok: Tokenizer,
        reasoning_parser: str | None,
        tools: bool,
        prompt_token_ids: list[int],
        thinking: bool = True,
    ) -> None:
        self.reasoning = (
            None
            if reasoning_parser is None
            else ThinkReasoningParser(tok, reasoning_parser, prompt_token_ids, thinking)
        )
        self.tools = HermesToolParser(tok) if tools else None
        self.previous_text, self.content_text = "", ""
        self.previous_ids: list[int] = []

    def parse_delta(
        self, delta_text: str, delta_ids: Sequence[int], finished: bool
    ) -> tuple[str, str, list[ToolDelta]]:
        """Returns the delta's ``(reasoning, content, tool deltas)``."""
        current_text = self.previous_text + delta_text
        current_ids = self.previous_ids + list(delta_ids)
        reasoning, content = "", delta_text
        if self.reasoning is not None:
            reasoning, content = self.reasoning.extract_reasoning_streaming(
                self.previous_text, current_text, delta_text, self.previous_ids, current_ids,
                delta_ids,
            )  # fmt: skip
        tool_deltas: list[ToolDelta] = []
        if self.tools is not None:
            previous_content, self.content_text = self.content_text, self.content_text + content
            content, tool_deltas = self.tools.extract_tool_calls_streaming(
                previous_content, self.content_text, content, delta_ids, finished
            )
        self.previous_text, self.previous_ids = current_text, current_ids
        return reasoning, content, tool_deltas


def tool_call_id(request_id: str, choice: int, tool: int) -> str:
    """A stable tool-call id (not the contract's derivation, which the reference need not match)."""
    digest = hashlib.sha256(f"{request_id}\0{choice}\0{tool}".encode()).hexdigest()
    return f"chatcmpl-tool-{digest[:32]}"


class ReplayChatDerenderer(ReferenceDerenderer):
    """``ReferenceDerenderer`` with reasoning and tool parsers on chat, replayed as vLLM does.

    Args:
        tokenizer, served_model_name, eos_token_ids, max_model_len: As ``ReferenceDerenderer``.
        reasoning_parser: None, ``"deepseek_r1"`` or ``"qwen3"``.
        tool_parser: None or ``"hermes"``.
    """

    def __init__(
        self,
        tokenizer: Tokenizer,
        served_model_name: str,
        eos_token_ids: Sequence[int] = (),
        max_model_len: int | None = None,
        reasoning_parser: str | None = None,
        tool_parser: str | None = None,
    ) -> None:
        super().__init__(tokenizer, served_model_name, eos_token_ids, max_model_len)
        if reasoning_parser not in (None, *REASONING_PARSERS):
            raise ValueError(f"unknown reasoning parser {reasoning_parser!r}")
        if tool_parser not in (None, *TOOL_PARSERS):
            raise ValueError(f"unknown tool parser {tool_parser!r}")
        self.reasoning_parser, self.tool_parser = reasoning_parser, tool_parser

    @property
    def parsing(self) -> bool:
        return self.reasoning_parser is not None or self.tool_parser is not None

    def _parser(self, creq: Any, prompt: list[int]) -> ChatStreamParser:
        tools = self.tool_parser is not None and bool(creq.tools) and creq.tool_choice != "none"
        kwargs = creq.chat_template_kwargs or {}
        if "enable_thinking" in kwargs:
            thinking = bool(kwargs["enable_thinking"])
        else:
            thinking = creq.reasoning_effort != "none"
        return ChatStreamParser(self.tok, self.reasoning_parser, tools, prompt, thinking)

    def _params(self, req: Any) -> Params:
        creq = req.chat_request
        bad(creq is None, "chat_request is required with a parser", "chat_request")
        p = Params.of(creq, creq.top_logprobs)
        p.skip = False  # markers must be visible to the parsers
        return p

    def _detokenize(
        self, ref: VllmReference, window: State, ids: Sequence[int]
    ) -> tuple[str, State]:
        text = ""
        for token_id in ids:
            delta, window = ref.step(window, token_id)
            text += delta
        return text, window

    @staticmethod
    def _finish(finish: str | None, tools_sent: bool, creq: Any) -> str | None:
        named = not isinstance(creq.tool_choice, str)
        return "tool_calls" if finish == "stop" and tools_sent and not named else finish

    def _whole_chat(self, req: DerenderChatRequest) -> ChatCompletionResponse:
        """The plain answer decoded without skipping, each message then parsed in one delta."""
        if not self.parsing:
            return super()._whole_chat(req)
        creq, resp = req.chat_request, req.generate_response
        bad(creq is None, "chat_request is required with a parser", "chat_request")
        prompt = req.prompt_token_ids if req.prompt_token_ids is not None else resp.prompt_token_ids
        bad(prompt is None, "prompt_token_ids is required with a parser", "prompt_token_ids")
        visible = creq.model_copy(update={"skip_special_tokens": False})
        answer = super()._whole_chat(req.model_copy(update={"chat_request": visible}))
        choices = []
        for choice, c in zip(answer.choices, resp.choices, strict=True):
            parser = self._parser(creq, prompt)
            parsed = parser.parse_delta(choice.message.content or "", c.token_ids or [], True)
            reasoning, content, deltas = parsed
            calls = [
                ToolCall(
                    id=tool_call_id(resp.request_id, c.index, i),
                    function=FunctionCall(name=name or "", arguments=args),
                )
                for i, name, args in deltas
                if creq.parallel_tool_calls is not False or i == 0
            ]
            message = ChatMessage(
                role="assistant",
                content=content or None,
                tool_calls=calls,
                reasoning=(reasoning or None) if creq.include_reasoning else None,
            )
            finish = self._finish(choice.finish_reason, bool(calls), creq)
            choices.append(choice.model_copy(update={"message": message, "finish_reason": finish}))
        return answer.model_copy(update={"choices": choices})

    def _stream(self, req: Any, chat: bool) -> BaseModel:
        if not chat or not self.parsing:
            return super()._stream(req, chat)
        p, creq, gen = self._params(req), req.chat_request, req.generate_chunk
        bad(len(gen.choices) > 1, "a stream chunk may carry at most one choice", "generate_chunk")
        bad(bool(p.stops), "stop strings are not supported when streaming", "stop")
        prompt = req.prompt_token_ids if req.prompt_token_ids is not None else gen.prompt_token_ids
        bad(prompt is None, "replay needs the full prompt_token_ids on every chunk")
        self._check_ids(prompt, "prompt_token_ids")
        old = req.stream_state or DerenderStreamState()
        self._check_ids(old.output_token_ids, "stream_state")
        usage = None
        if gen.usage is not None:
            given = req.prompt_tokens
            prompt_tokens = given if given is not None else gen.usage.prompt_tokens
            completion = gen.usage.completion_tokens
            usage = UsageInfo(
                prompt_tokens=prompt_tokens,
                completion_tokens=completion,
                total_tokens=prompt_tokens + (completion or 0),
            )
        model = req.model or self.served_model_name
        if not gen.choices:  # usage only: the state goes back unchanged
            chunk = ChatCompletionStreamResponse(
                id=gen.request_id, model=model, choices=[], usage=usage
            )
            return DerenderChatStreamResponse(chunk=chunk, stream_state=old)

        c = gen.choices[0]
        ids = c.token_ids or []
        self._check_ids(ids, "token_ids")
        self._check_length(ids, "token_ids")
        detok, reason = self._stop_token(ids, c.finish_reason, c.stop_reason, p)
        # The replay: a fresh parser and window, every past chunk at its original boundaries.
        ref, parser = self._reference(False), self._parser(creq, prompt)
        window, pos = ref.seed(prompt), 0
        for n in old.output_chunk_lens:
            past = old.output_token_ids[pos : pos + n]
            text, window = self._detokenize(ref, window, past)
            parser.parse_delta(text, past, False)
            pos += n
        text, window = self._detokenize(ref, window, detok)
        if c.finish_reason is not None:  # the final chunk flushes what the window holds
            tail = ref.flush(window)
            if tail:
                text += tail
                window = State(window.tokens, window.read_offset, len(window.tokens))
        finished = c.finish_reason is not None
        reasoning, content, deltas = parser.parse_delta(text, ids, finished)

        call_ids = list(old.last_tool_call_ids)
        tool_calls = []
        for index, name, args in deltas:
            if creq.parallel_tool_calls is False and index > 0:
                continue
            if name is None:
                function = DeltaFunctionCall(arguments=args)
                tool_calls.append(DeltaToolCall(index=index, function=function))
                continue
            if index >= len(call_ids):
                call_ids.append(tool_call_id(gen.request_id, c.index, index))
            function = DeltaFunctionCall(name=name, arguments=args)
            tool_calls.append(
                DeltaToolCall(id=call_ids[index], type="function", index=index, function=function)
            )
        tools_streamed = old.tools_streamed or bool(tool_calls)
        delta = DeltaMessage(
            role=None if old.role_sent else "assistant",
            content=content or None,
            reasoning=(reasoning or None) if creq.include_reasoning else None,
            tool_calls=tool_calls,
        )
        carried = list(old.logprob_context_token_ids)
        choice = ChatCompletionResponseStreamChoice(
            index=c.index,
            delta=delta,
            logprobs=self._chat_logprobs(c.logprobs, ids, carried, p),
            finish_reason=self._finish(c.finish_reason, tools_streamed, creq),
            stop_reason=reason,
            token_ids=c.token_ids if p.return_token_ids else None,
        )
        chunk = ChatCompletionStreamResponse(
            id=gen.request_id, model=model, choices=[choice], usage=usage
        )
        state = DerenderStreamState(
            **{
                **old.model_dump(),
                "prev_tokens": list(window.tokens[window.prefix_offset :]),
                "prefix_offset": 0,
                "read_offset": window.read_offset - window.prefix_offset,
                "role_sent": True,
                "logprob_context_token_ids": [*carried, *ids][-LOGPROB_CONTEXT:],
                "logprob_text_offset": old.logprob_text_offset + len(text),
                "output_token_ids": [*old.output_token_ids, *ids],
                "output_chunk_lens": [*old.output_chunk_lens, *([len(ids)] if ids else [])],
                "tools_streamed": tools_streamed,
                "last_tool_call_ids": call_ids,
                "held_text": old.held_text,
                "generated_tokens": old.generated_tokens + len(ids),
                "stopped": old.stopped,
            }
        )
        return DerenderChatStreamResponse(chunk=chunk, stream_state=state)
