"""Reasoning and tool-call parsers for chat derender.

Built in, in the native core, with state that a stream carries from chunk to chunk: the
``"deepseek_r1"`` and ``"qwen3"`` reasoning parsers and the ``"hermes"`` tool parser
(``Derenderer(..., reasoning_parser="qwen3", tool_parser="hermes")``).

Users plug in their own through the :class:`Parser` protocol (vLLM's streaming parser shape). Its
state cannot travel with the stream, so a stream replays its history through a fresh parser on
every chunk, vLLM's way: pass a factory, ``Derenderer(..., parser=MyParser)``, or register it
by name and pass ``parser=tokstream.parsers.get("mine")``. The native core drives a user
parser exactly as it drives the built-in ones (through :class:`UserParser`, which it calls under
the interpreter lock), so tool-call ids, the ``finish_reason`` rewrite, statuses and errors are
the same whichever parser runs.

>>> class Shout:
...     def parse_delta(self, delta_text, delta_token_ids, request, prompt_token_ids, finished):
...         return DeltaMessage(content=delta_text.upper())
...     def parse(self, text, request, token_ids):
...         return None, text.upper(), []
>>> register("shout", Shout)
>>> get("shout") is Shout
True
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from pydantic import ValidationError

from . import _core
from .protocol import ChatCompletionRequest, DeltaMessage, FunctionCall

__all__ = ["BUILT_IN", "Parser", "ParserFactory", "UserParser", "get", "names", "register"]

BUILT_IN = {"reasoning": _core.REASONING_PARSERS, "tool": _core.TOOL_PARSERS}
"""The native parsers, by kind: pass these names as ``reasoning_parser`` / ``tool_parser``."""


@runtime_checkable
class Parser(Protocol):
    """A user parser: one instance parses one choice's output, from its beginning.

    ``parse_delta`` gets each chunk's new text and ids in order (``finished`` on the last, which
    may carry no ids) and returns what the chunk adds, or ``None``. ``parse`` gets a whole
    output and returns ``(reasoning, content, tool_calls)``.
    """

    def parse_delta(
        self,
        delta_text: str,
        delta_token_ids: Sequence[int],
        request: ChatCompletionRequest,
        prompt_token_ids: Sequence[int],
        finished: bool,
    ) -> DeltaMessage | None: ...

    def parse(
        self, text: str, request: ChatCompletionRequest, token_ids: Sequence[int]
    ) -> tuple[str | None, str | None, list[FunctionCall]]: ...


ParserFactory = Callable[[], Parser]
"""Makes a fresh :class:`Parser` (a class with no required arguments will do)."""

_REGISTRY: dict[str, ParserFactory] = {}


def register(name: str, factory: ParserFactory) -> None:
    """Registers a user parser factory under ``name`` (replacing one of the same name).

    Raises:
        ValueError: ``name`` is a built-in parser's name.
    """
    if any(name in built for built in BUILT_IN.values()):
        raise ValueError(f"{name!r} is a built-in parser; pick another name")
    _REGISTRY[name] = factory


def get(name: str) -> ParserFactory:
    """The user parser factory registered under ``name``.

    Raises:
        KeyError: nothing is registered under ``name``.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"no parser registered as {name!r}; registered: {names()}") from None


def names() -> list[str]:
    """The names of the registered user parsers."""
    return sorted(_REGISTRY)


_Calls = list[tuple[int, str | None, str]]


class UserParser:
    """A user parser factory as the native core drives it (not called by users).

    ``start`` makes one fresh parser for one choice's output; the session it returns gets each
    chunk's text and ids (the whole output at once for a whole response) and answers with plain
    values, so the core turns them into the response as it does the built-in parsers' output.
    """

    __slots__ = ("_factory",)

    def __init__(self, factory: ParserFactory) -> None:
        self._factory = factory

    def start(self, request_json: str, prompt_ids: list[int], whole: bool) -> _Session | str:
        """A session for the chat request the core has read and checked.

        The core checks the fields derender reads and skips the rest, for built-in and user
        parsers alike; so a field it skips (an unknown one, a number too long for Python's
        ``int``) must not refuse the request here either. The parser gets the validated model,
        or, where a skipped field does not validate, the request as it came.
        """
        data = json.loads(request_json, parse_int=_lenient_int)
        try:
            request = ChatCompletionRequest.model_validate(data)
        except ValidationError:
            request = ChatCompletionRequest.model_construct(**data)
        return _Session(self._factory(), request, prompt_ids, whole)


def _lenient_int(digits: str) -> int | float:
    """An int, or a float (perhaps ``inf``) past the digits Python converts (4,300 by default)."""
    try:
        return int(digits)
    except ValueError:
        return float(digits)


class _Session:
    __slots__ = ("_parser", "_prompt", "_request", "_whole")

    def __init__(
        self, parser: Parser, request: ChatCompletionRequest, prompt: list[int], whole: bool
    ) -> None:
        self._parser = parser
        self._request = request
        self._prompt = prompt
        self._whole = whole

    def chunk(self, text: str, ids: list[int], last: bool) -> tuple[str | None, str | None, _Calls]:
        """``(content, reasoning, [(index, name, arguments)])`` of one chunk (or whole output)."""
        if self._whole:
            reasoning, content, calls = self._parser.parse(text, self._request, ids)
            return content, reasoning, [(k, c.name, c.arguments) for k, c in enumerate(calls)]
        delta = self._parser.parse_delta(text, ids, self._request, self._prompt, last)
        if delta is None:
            return None, None, []
        deltas: _Calls = []
        for call in delta.tool_calls:
            f = call.function
            deltas.append((call.index, None if f is None else f.name, (f and f.arguments) or ""))
        return delta.content, delta.reasoning, deltas
