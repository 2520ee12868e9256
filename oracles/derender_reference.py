"""A plain-Python derender, the way vLLM's derender server does it: a benchmark peer and an oracle.

Written from REFERENCE.md sections 2, 4 and 5 and the derender contract (not copied from vLLM):
the body is parsed with ``json.loads`` and validated with ``tokstream.protocol``'s request unions
through a pydantic ``TypeAdapter``, as FastAPI would; text comes from ``VllmReference`` (vLLM's
windowed algorithm over ``tokenizers``, stepped id by id); logprob strings are ``tokenizers``
decodes; the answer is built from the protocol's response models and ``model_dump_json()``.
Nothing is cached or fast. It differs from ``tokstream.Derenderer`` where vLLM does:

- a streaming request with non-empty stop strings is answered 400 (sent text cannot be cut);
- stream states carry tokstream's extension fields (``held_text``, ``generated_tokens``,
  ``stopped``) only as passed through or defaulted; ``generated_tokens`` is counted;
- U+FFFD is held back as vLLM holds it, and ids outside the vocabulary are windowed as ``""``
  (vLLM's rule); the final chunk flushes what the window holds.

>>> ref = ReferenceDerenderer(tok, "qwen3")  # doctest: +SKIP
>>> status, body = ref.handle_json("/v1/chat/completions/derender", b'{...}')  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError
from tokenizers import Tokenizer
from tokstream import _core
from tokstream.protocol import (
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
    DeltaMessage,
    DerenderChatRequest,
    DerenderChatRequestUnion,
    DerenderChatStreamResponse,
    DerenderCompletionRequest,
    DerenderCompletionRequestUnion,
    DerenderCompletionStreamResponse,
    DerenderStreamState,
    ErrorInfo,
    ErrorResponse,
    GenerateLogProbs,
    UsageInfo,
)

from .vllm_reference import REPLACEMENT, State, VllmReference

CHAT_PATH = _core.CHAT_PATH
COMPLETION_PATH = _core.COMPLETION_PATH
ADAPTERS: dict[str, TypeAdapter[Any]] = {
    CHAT_PATH: TypeAdapter(DerenderChatRequestUnion),
    COMPLETION_PATH: TypeAdapter(DerenderCompletionRequestUnion),
}
MAX_ID = 2**32 - 1
MAX_CHOICES = _core.MAX_CHOICES
MAX_TOP_LOGPROBS = _core.MAX_TOP_LOGPROBS
LOGPROB_CONTEXT = _core.LOGPROB_CONTEXT
PLACEHOLDER = "token_id:"
SPACE_MARK = "\u2581"


class HttpError(Exception):
    """An error answer: status, OpenAI error type, message, param."""

    def __init__(self, status: int, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.param = status, message, param
        self.error_type = "NotFoundError" if status == 404 else "BadRequestError"


def bad(condition: bool, message: str, param: str | None = None) -> None:
    """Raises a 400 when ``condition`` holds."""
    if condition:
        raise HttpError(400, message, param)


@dataclass
class Params:
    """What derender reads from ``chat_request`` / ``completion_request`` (defaults without)."""

    skip: bool = True
    stops: list[str] = field(default_factory=list)
    include_stop: bool = False
    min_tokens: int = 0
    stop_token_ids: list[int] = field(default_factory=list)
    ignore_eos: bool = False
    return_token_ids: bool = False
    top: int | None = None  # top_logprobs cut; None: no cut

    @classmethod
    def of(cls, req: Any, top: int | None) -> Params:
        if req is None:
            return cls()
        stops = [req.stop] if isinstance(req.stop, str) else list(req.stop or [])
        return cls(
            skip=req.skip_special_tokens is not False,
            stops=[s for s in stops if s],
            include_stop=req.include_stop_str_in_output,
            min_tokens=req.min_tokens,
            stop_token_ids=list(req.stop_token_ids or []),
            ignore_eos=req.ignore_eos,
            return_token_ids=bool(req.return_token_ids),
            top=top if top is not None and top >= 0 else None,
        )


class ReferenceDerenderer:
    """vLLM-style derender over a ``tokenizers.Tokenizer``; see the module docstring.

    Args:
        tokenizer: The oracle tokenizer.
        served_model_name: The ``model`` answered, and the only one accepted in requests.
        eos_token_ids: Ids dropped as stop tokens at a ``"stop"`` finish (unless ``ignore_eos``),
            the primary one first (the others are reported as ``stop_reason``).
        max_model_len: Longest ``token_ids`` / logprob list accepted, or None for no limit.
    """

    def __init__(
        self,
        tokenizer: Tokenizer,
        served_model_name: str,
        eos_token_ids: Sequence[int] = (),
        max_model_len: int | None = None,
    ) -> None:
        # One windowed detokenizer per flag, built once, as a server holds its tokenizer.
        self._references = {
            skip: VllmReference(tokenizer, skip_special_tokens=skip) for skip in (False, True)
        }
        self.tok = tokenizer
        self.served_model_name = served_model_name
        self.eos_token_ids = tuple(eos_token_ids)
        self.max_model_len = max_model_len
        decoder = json.dumps(json.loads(tokenizer.decoder.__getstate__()), ensure_ascii=False)
        # Metaspace and SentencePiece's Replace(▁ -> " ") strip a first token's leading spaces.
        self.restores_spaces = SPACE_MARK in decoder

    # --- the HTTP face ------------------------------------------------------------------------

    def _reference(self, skip: bool) -> VllmReference:
        return self._references[skip]

    def handle_json(self, path: str, body: bytes) -> tuple[int, bytes]:
        """Answers one POST: ``(status, JSON body)``; bad input is an error answer, never raised."""
        try:
            answer = self._answer(path, body)
            try:
                return 200, answer.model_dump_json().encode()
            except PydanticSerializationError:  # a lone surrogate (\ud800) echoed from the body
                raise HttpError(400, "the body holds a string that is not valid Unicode") from None
        except HttpError as err:
            info = ErrorInfo(
                message=err.message, type=err.error_type, param=err.param, code=err.status
            )
            return err.status, ErrorResponse(error=info).model_dump_json().encode()

    def _answer(self, path: str, body: bytes) -> BaseModel:
        if path not in ADAPTERS:
            raise HttpError(404, f"Not Found: {path}")
        try:
            raw = json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise HttpError(400, f"body is not JSON: {exc}") from None
        bad(not isinstance(raw, dict), "body must be a JSON object")
        try:
            req = ADAPTERS[path].validate_python(raw)
        except ValidationError as exc:
            where = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise HttpError(400, f"invalid request: {where}") from None
        if req.model is not None and req.model != self.served_model_name:
            raise HttpError(404, f"The model `{req.model}` does not exist.")
        if isinstance(req, DerenderChatRequest):
            return self._whole_chat(req)
        if isinstance(req, DerenderCompletionRequest):
            return self._whole_completion(req)
        return self._stream(req, chat=path == CHAT_PATH)

    # --- text -------------------------------------------------------------------------------

    def _check_ids(self, ids: Sequence[int] | None, param: str) -> None:
        bad(any(not 0 <= i <= MAX_ID for i in ids or ()), f"{param}: ids must be in [0, 2**32)")

    def _check_prompt_length(self, ids: Sequence[int] | None) -> None:
        limit = self.max_model_len
        bad(
            limit is not None and len(ids or ()) > limit,
            "prompt_token_ids exceeds max_model_len",
            "prompt_token_ids",
        )

    def _check_length(self, items: Sequence[Any] | None, param: str) -> None:
        limit = self.max_model_len
        bad(limit is not None and len(items or ()) > limit, f"{param} exceeds max_model_len")

    def _stop_token(self, ids: list[int], finish: str | None, reason: Any, p: Params) -> Any:
        """The ids to detokenize and the stop reason, for a stop token ending the choice.

        REFERENCE section 5 and vLLM 0.33.0's ``_drop_stop_token``: the stop token is not
        detokenized (never dropped with ``include_stop_str_in_output``); found without a
        reported reason, it fills ``stop_reason``, unless it is the primary EOS (the first of
        ``eos_token_ids``).
        """
        if finish != "stop" or not ids or isinstance(reason, str):
            return ids, reason
        last, keep = ids[-1], ids if p.include_stop else ids[:-1]
        if isinstance(reason, int) and not isinstance(reason, bool):
            return (keep if reason == last else ids), reason
        honor_eos = not p.ignore_eos
        if honor_eos and self.eos_token_ids[:1] == (last,):
            return keep, None
        if last in p.stop_token_ids or (honor_eos and last in self.eos_token_ids):
            return keep, last
        return ids, reason

    def _whole_text(
        self, prompt: list[int] | None, ids: list[int], finish: str | None, reason: Any, p: Params
    ) -> tuple[str, str | None, Any]:
        """Detokenizes one whole choice with vLLM's per-token stop-string check: the request's
        stop strings when the engine finished with "stop" and reported nothing, the string it
        reported when it reported one, none otherwise."""
        ref = self._reference(p.skip)
        state = ref.seed(prompt)
        stops = p.stops
        if finish != "stop" or (isinstance(reason, int) and not isinstance(reason, bool)):
            stops = []
        elif isinstance(reason, str):
            stops = [reason]
        ids, reason = self._stop_token(ids, finish, reason, p)
        text = ""
        for count, token_id in enumerate(ids, 1):
            delta, state = ref.step(state, token_id)
            before, text = len(text), text + delta
            if not delta or count <= p.min_tokens:
                continue
            for stop in stops:  # list order breaks ties between matches this token completes
                at = text.find(stop, max(0, before - len(stop) + 1))
                if at >= 0:
                    return text[: at + len(stop) if p.include_stop else at], "stop", stop
        return text + ref.flush(state), finish, reason

    # --- logprobs -----------------------------------------------------------------------------

    def decode_alone(self, ids: Sequence[int]) -> str:
        """``tokenizers`` decode without skipping, as logprob strings are decoded."""
        return self.tok.decode(list(ids), skip_special_tokens=False)

    def logprob_token(self, token_id: int, context: Sequence[int] = ()) -> str:
        """REFERENCE section 4: decoded alone, spaces put back, U+FFFD corrected from context."""
        alone = self.decode_alone([token_id])
        if not alone.endswith(REPLACEMENT):
            if not self.restores_spaces:
                return alone
            piece = self.tok.id_to_token(token_id) or ""
            marks = len(piece) - len(piece.lstrip(SPACE_MARK))
            spaces = len(alone) - len(alone.lstrip(" "))
            return " " * max(0, marks - spaces) + alone
        ctx = list(context)[-LOGPROB_CONTEXT:]
        for n in range(1, len(ctx) + 1):
            part = ctx[-n:]
            full = self.decode_alone([*part, token_id])
            if full.endswith(REPLACEMENT):
                continue
            # Trailing context tokens that are partial themselves belong to this character.
            partial = 0
            while partial < n and self.decode_alone([part[-1 - partial]]).endswith(REPLACEMENT):
                partial += 1
            return full[len(self.decode_alone(part[: n - partial])) :]
        return ""

    def _entries(self, logprobs: Any, ids: list[int], carried: list[int]) -> list[Any]:
        """Per position: the sampled ``(token, bytes, logprob)`` and the alternatives' triples."""
        content = logprobs.content or []
        self._check_length(content, "logprobs.content")
        sampled = [*carried, *ids]
        out = []
        for pos, entry in enumerate(content):
            context = sampled[: len(carried) + pos][-LOGPROB_CONTEXT:]
            bad(
                len(entry.top_logprobs) > MAX_TOP_LOGPROBS,
                f"top_logprobs longer than {MAX_TOP_LOGPROBS}",
            )
            by_id = isinstance(logprobs, GenerateLogProbs)
            resolved = [
                (
                    *(self._by_id(e.token_id, context) if by_id else self._by_text(e, context)),
                    e.logprob,
                )
                for e in [entry, *entry.top_logprobs]
            ]
            out.append((resolved[0], resolved[1:]))
        return out

    def _by_id(self, token_id: int, context: list[int]) -> tuple[str, list[int]]:
        self._check_ids([token_id], "logprobs")
        token = self.logprob_token(token_id, context)
        return token, list(token.encode())

    def _by_text(self, entry: ChatCompletionLogProb, context: list[int]) -> tuple[str, list[int]]:
        digits = entry.token[len(PLACEHOLDER) :]
        if entry.token.startswith(PLACEHOLDER) and digits.isascii() and digits.isdigit():
            return self._by_id(int(digits), context)
        # A real token string: kept as sent, its bytes computed only when they are missing.
        raw = entry.bytes if entry.bytes is not None else list(entry.token.encode())
        return entry.token, raw

    def _chat_logprobs(self, logprobs: Any, ids: list[int], carried: list[int], p: Params) -> Any:
        if logprobs is None:
            return None
        if logprobs.content is None:
            return ChatCompletionLogProbs(content=None)
        content = []
        for (token, raw, lp), tops in self._entries(logprobs, ids, carried):
            alternatives = [
                ChatCompletionLogProb(token=t, logprob=v, bytes=b) for t, b, v in tops[: p.top]
            ]
            content.append(
                ChatCompletionLogProbsContent(
                    token=token, logprob=lp, bytes=raw, top_logprobs=alternatives
                )
            )
        return ChatCompletionLogProbs(content=content)

    def _completion_logprobs(
        self, logprobs: Any, ids: list[int], carried: list[int], offset: int, p: Params
    ) -> Any:
        if logprobs is None:
            return None
        out = CompletionLogProbs()
        for (token, _, lp), tops in self._entries(logprobs, ids, carried):
            out.text_offset.append(offset)
            out.token_logprobs.append(lp)
            out.tokens.append(token)
            out.top_logprobs.append({t: v for t, _, v in tops[: p.top]} if tops else None)
            offset += len(token)
        return out

    def _prompt_logprobs(self, prompt_logprobs: Any) -> Any:
        """Passed through, each ``decoded_token`` filled in (decoded alone, no context)."""
        if prompt_logprobs is None:
            return None
        self._check_length(prompt_logprobs, "prompt_logprobs")
        out = []
        for position in prompt_logprobs:
            if position is not None:
                self._check_ids(list(position), "prompt_logprobs")
                position = {
                    i: lp
                    if lp.decoded_token is not None
                    else lp.model_copy(update={"decoded_token": self.logprob_token(i)})
                    for i, lp in position.items()
                }
            out.append(position)
        return out

    # --- whole responses ----------------------------------------------------------------------

    def _check_choices(self, choices: list[Any]) -> None:
        bad(len(choices) > MAX_CHOICES, f"more than {MAX_CHOICES} choices")
        for choice in choices:
            bad(not choice.token_ids, "a choice has null or empty token_ids", "token_ids")
            self._check_ids(choice.token_ids, "token_ids")
            self._check_length(choice.token_ids, "token_ids")

    def _whole_chat(self, req: DerenderChatRequest) -> ChatCompletionResponse:
        resp, creq = req.generate_response, req.chat_request
        # vLLM's chat cut: top_logprobs when logprobs are asked for, else every candidate.
        asked = creq is not None and bool(creq.logprobs)
        p = Params.of(creq, (creq.top_logprobs or 0) if asked and creq is not None else None)
        self._check_choices(resp.choices)
        prompt = req.prompt_token_ids if req.prompt_token_ids is not None else resp.prompt_token_ids
        self._check_ids(prompt, "prompt_token_ids")
        self._check_prompt_length(req.prompt_token_ids)
        choices = []
        for c in resp.choices:
            text, finish, reason = self._whole_text(
                prompt, c.token_ids or [], c.finish_reason, c.stop_reason, p
            )
            choices.append(
                ChatCompletionResponseChoice(
                    index=c.index,
                    message=ChatMessage(role="assistant", content=text),
                    logprobs=self._chat_logprobs(c.logprobs, c.token_ids or [], [], p),
                    finish_reason=finish,
                    stop_reason=reason,
                    token_ids=c.token_ids if p.return_token_ids else None,
                )
            )
        completion = sum(len(c.token_ids or ()) for c in resp.choices)
        prompt_tokens = req.prompt_tokens or 0
        return ChatCompletionResponse(
            id=resp.request_id,
            model=req.model or self.served_model_name,
            choices=choices,
            usage=UsageInfo(
                prompt_tokens=prompt_tokens,
                completion_tokens=completion,
                total_tokens=prompt_tokens + completion,
            ),
            prompt_logprobs=self._prompt_logprobs(resp.prompt_logprobs),
            prompt_token_ids=resp.prompt_token_ids if p.return_token_ids else None,
            kv_transfer_params=resp.kv_transfer_params,
            metrics=resp.metrics,
        )

    def _whole_completion(self, req: DerenderCompletionRequest) -> CompletionResponse:
        creq = req.completion_request
        # vLLM's completions cut: logprobs + 1 (the sampled token, then the top k).
        top = creq.logprobs if creq is not None else None
        p = Params.of(creq, None if top is None or top < 0 else top + 1)
        responses = req.generate_responses
        bad(not responses, "generate_responses is empty", "generate_responses")
        bad(len(responses) > MAX_CHOICES, f"more than {MAX_CHOICES} generate_responses")
        choices: list[CompletionResponseChoice] = []
        for k, resp in enumerate(responses):
            self._check_choices(resp.choices)
            given = req.prompt_token_ids[k] if req.prompt_token_ids is not None else None
            prompt = given if given is not None else resp.prompt_token_ids
            self._check_ids(prompt, "prompt_token_ids")
            self._check_prompt_length(given)
            prompt_logprobs = self._prompt_logprobs(resp.prompt_logprobs)
            for c in resp.choices:
                ids = c.token_ids or []
                text, finish, reason = self._whole_text(
                    prompt, ids, c.finish_reason, c.stop_reason, p
                )
                choices.append(
                    CompletionResponseChoice(
                        index=len(choices),
                        text=text,
                        logprobs=self._completion_logprobs(c.logprobs, ids, [], 0, p),
                        finish_reason=finish,
                        stop_reason=reason,
                        token_ids=c.token_ids if p.return_token_ids else None,
                        prompt_logprobs=prompt_logprobs,
                        prompt_token_ids=resp.prompt_token_ids if p.return_token_ids else None,
                    )
                )
        completion = sum(len(c.token_ids or ()) for r in responses for c in r.choices)
        prompt_tokens = sum(req.prompt_tokens or ())
        kv = responses[0].kv_transfer_params
        if any(r.kv_transfer_params != kv for r in responses[1:]):
            kv = None
        return CompletionResponse(
            id=responses[0].request_id,
            model=req.model or self.served_model_name,
            choices=choices,
            usage=UsageInfo(
                prompt_tokens=prompt_tokens,
                completion_tokens=completion,
                total_tokens=prompt_tokens + completion,
            ),
            kv_transfer_params=kv,
            metrics=responses[0].metrics if len(responses) == 1 else None,
        )

    # --- streams ------------------------------------------------------------------------------

    def _stream(self, req: Any, chat: bool) -> BaseModel:
        creq = req.chat_request if chat else req.completion_request
        if chat:
            asked = creq is not None and bool(creq.logprobs)
            top = (creq.top_logprobs or 0) if asked and creq is not None else None
        else:
            top = None if creq is None or creq.logprobs is None else creq.logprobs + 1
        p = Params.of(creq, top)
        gen = req.generate_chunk
        bad(len(gen.choices) > 1, "a stream chunk may carry at most one choice", "generate_chunk")
        bad(bool(p.stops), "stop strings are not supported when streaming", "stop")
        old = req.stream_state or DerenderStreamState()
        bad(old.held_text != "", "held_text without stop strings", "stream_state")
        if chat:
            prior = len(old.output_token_ids)
            delta = sum(len(c.token_ids or ()) for c in gen.choices)
            prompt_len = len(req.prompt_token_ids or ())
            bad(
                self.max_model_len is not None and prompt_len + prior + delta > self.max_model_len,
                "prompt plus output exceeds max_model_len",
                "prompt_token_ids",
            )
        else:
            self._check_prompt_length(req.prompt_token_ids)
        bad(any(t and self.tok.token_to_id(t) is None for t in old.prev_tokens), "bad prev_tokens")
        self._check_ids(old.logprob_context_token_ids, "stream_state")
        if req.stream_state is None:
            prompt = req.prompt_token_ids
            prompt = prompt if prompt is not None else gen.prompt_token_ids
            self._check_ids(prompt, "prompt_token_ids")
            window = self._reference(p.skip).seed(prompt)
        else:
            window = State.from_window((old.prev_tokens, old.prefix_offset, old.read_offset))
        usage = None
        if gen.usage is not None:
            prompt_tokens = (
                req.prompt_tokens if req.prompt_tokens is not None else gen.usage.prompt_tokens
            )
            usage = UsageInfo(
                prompt_tokens=prompt_tokens,
                completion_tokens=gen.usage.completion_tokens,
                total_tokens=prompt_tokens + (gen.usage.completion_tokens or 0),
            )
        answer = ChatCompletionStreamResponse if chat else CompletionStreamResponse
        model = req.model or self.served_model_name
        if not gen.choices:  # usage only: the state goes back unchanged
            chunk = answer(
                id=gen.request_id, model=model, choices=[], usage=usage, metrics=gen.metrics
            )
            if chat and p.return_token_ids:
                chunk = chunk.model_copy(update={"prompt_token_ids": gen.prompt_token_ids})
            return self._wrap(chat, chunk, old)

        c = gen.choices[0]
        ids = c.token_ids or []
        self._check_ids(ids, "token_ids")
        self._check_length(ids, "token_ids")
        detok, reason = self._stop_token(ids, c.finish_reason, c.stop_reason, p)
        ref = self._reference(p.skip)
        text = ""
        for token_id in detok:
            delta, window = ref.step(window, token_id)
            text += delta
        if c.finish_reason is not None:  # the final chunk flushes what the window holds
            tail = ref.flush(window)
            if tail:
                text += tail
                window = State(window.tokens, window.read_offset, len(window.tokens))
        carried = list(old.logprob_context_token_ids)
        token_ids = c.token_ids if p.return_token_ids else None
        if chat:
            role = None if old.role_sent else "assistant"
            choice: Any = ChatCompletionResponseStreamChoice(
                index=c.index,
                delta=DeltaMessage(role=role, content=text or None),
                logprobs=self._chat_logprobs(c.logprobs, ids, carried, p),
                finish_reason=c.finish_reason,
                stop_reason=reason,
                token_ids=token_ids,
            )
        else:
            offset = old.logprob_text_offset
            choice = CompletionResponseStreamChoice(
                index=c.index,
                text=text,
                logprobs=self._completion_logprobs(c.logprobs, ids, carried, offset, p),
                finish_reason=c.finish_reason,
                stop_reason=reason,
                prompt_token_ids=gen.prompt_token_ids if p.return_token_ids else None,
                token_ids=token_ids,
            )
        chunk = answer(
            id=gen.request_id, model=model, choices=[choice], usage=usage, metrics=gen.metrics
        )
        if chat and p.return_token_ids:
            chunk = chunk.model_copy(update={"prompt_token_ids": gen.prompt_token_ids})
        # vLLM's text_offset: past the reported token strings, else past the text.
        lps: list[str] | None = None
        if choice.logprobs is not None and chat:
            lps = [e.token for e in choice.logprobs.content or ()]
        elif choice.logprobs is not None:
            lps = choice.logprobs.tokens
        next_offset = old.logprob_text_offset + (sum(len(t) for t in lps) if lps else len(text))
        state = DerenderStreamState(
            **{
                **old.model_dump(),
                "prev_tokens": list(window.tokens[window.prefix_offset :]),
                "prefix_offset": 0,
                "read_offset": window.read_offset - window.prefix_offset,
                "role_sent": old.role_sent or chat,
                "logprob_context_token_ids": [*carried, *ids][-LOGPROB_CONTEXT:],
                "logprob_text_offset": next_offset,
                "held_text": old.held_text,
                "generated_tokens": old.generated_tokens + len(ids),
                "stopped": old.stopped,
            }
        )
        return self._wrap(chat, chunk, state)

    @staticmethod
    def _wrap(chat: bool, chunk: Any, state: DerenderStreamState) -> BaseModel:
        if chat:
            return DerenderChatStreamResponse(chunk=chunk, stream_state=state)
        return DerenderCompletionStreamResponse(chunk=chunk, stream_state=state)
