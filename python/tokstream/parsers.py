"""Reasoning and tool-call parsers for chat derender.

Built in, in the native core, with state that a stream carries from chunk to chunk: the
``"deepseek_r1"`` and ``"qwen3"`` reasoning parsers and the ``"hermes"`` tool parser
(``Derenderer(..., reasoning_parser="qwen3", tool_parser="hermes")``).

Users plug in their own through the :class:`Parser` protocol (vLLM's streaming parser shape). Its
state cannot travel with the stream, so a stream replays its history through a fresh parser on
every chunk, vLLM's way: pass a factory, ``Derenderer(..., parser=MyParser)``, or register it
by name and pass ``parser=tokstream.parsers.get("mine")``.

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

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from .protocol import ChatCompletionRequest, DeltaMessage, FunctionCall

__all__ = ["BUILT_IN", "Parser", "ParserFactory", "get", "names", "register"]

BUILT_IN = {"reasoning": ("deepseek_r1", "qwen3"), "tool": ("hermes",)}
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
