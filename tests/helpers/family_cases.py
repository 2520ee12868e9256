"""One parser family's cases, checked the one way every family test checks them.

A case is a generation written as text, the parser names and tokenizer fixture it is parsed
with, and the message expected of it (vLLM 0.33.0's answer, as the family's test says). The
check runs it whole, then streamed at 1, 3 and random ids a chunk, in the given
``parser_state`` mode: the whole answer must be the expected message and every stream must
equal the whole answer.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from typing import Any

from helpers.parsers_oracle import SERVED, Message, chat_request
from helpers.parsers_util import derenderer_class, expected_finish, stream, whole
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import load_detokenizer


@dataclass(frozen=True)
class Case:
    label: str
    fixture: str
    reasoning: str | None
    tool: str | None
    prompt: str
    text: str
    expected: Message
    finish: str = "stop"
    #: ``chat_template_kwargs`` of the request.
    kwargs: dict[str, Any] | None = None
    #: The request's tools, in place of the four of ``helpers.parsers_oracle``.
    tools: list[dict[str, Any]] | None = None
    #: Other fields of the request, such as ``tool_choice``.
    request: dict[str, Any] | None = None


@functools.cache
def _derenderer(fixture: str, reasoning: str | None, tool: str | None, mode: str) -> Any:
    return derenderer_class()(
        load_detokenizer(fixture),
        served_model_name=SERVED,
        reasoning_parser=reasoning,
        tool_parser=tool,
        parser_state=mode,
    )


def tools_of(
    name: str, properties: dict[str, Any], required: list[str] | None = None
) -> list[dict[str, Any]]:
    """A request's tools: the one function ``name``, of these properties (and these required)."""
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required is not None:
        parameters["required"] = required
    return [{"type": "function", "function": {"name": name, "parameters": parameters}}]


#: A tool of one parameter of each type, none required.
CALC = tools_of(
    "calc",
    {
        "i": {"type": "integer"},
        "n": {"type": "number"},
        "b": {"type": "boolean"},
        "l": {"type": "array"},
        "o": {"type": "object"},
        "u": {"type": ["string", "null"]},
        "s": {"type": "string"},
        "e": {"enum": [1, 2, 3]},
    },
    required=[],
)


def case_named(cases: list[Case], label: str) -> Case:
    """The case of ``cases`` with this label."""
    (case,) = (c for c in cases if c.label == label)
    return case


def chunks(ids: list[int], shape: str) -> list[list[int]]:
    """``ids`` cut ``shape`` at a time, or at random widths of 1 to 7 (``"random"``)."""
    if shape == "random":
        rng, out, i = random.Random(len(ids)), [], 0
        while i < len(ids):
            width = rng.randint(1, 7)
            out.append(ids[i : i + width])
            i += width
        return out
    size = int(shape)
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def encode(fixture: str, text: str) -> list[int]:
    return list(load_tokenizer(fixture).encode(text, add_special_tokens=False).ids)


def check(case: Case, mode: str, **request_fields: Any) -> None:
    """The case's whole answer is its expected message, and each stream equals it
    (``request_fields``: fields set in the chat request, such as ``tool_choice``)."""
    check_on(
        _derenderer(case.fixture, case.reasoning, case.tool, mode), case, mode, **request_fields
    )


def check_on(r: Any, case: Case, mode: str, **request_fields: Any) -> None:
    """``check`` on the derenderer ``r`` (built for the case's parsers, in ``mode``)."""
    extra = {} if case.kwargs is None else {"chat_template_kwargs": case.kwargs}
    request = chat_request(**extra, **(case.request or {}), **request_fields)
    if case.tools is not None:
        request["tools"] = case.tools
    prompt, gen = encode(case.fixture, case.prompt), encode(case.fixture, case.text)
    got = whole(r, prompt, gen, request, case.finish)
    assert got.message == case.expected
    choice = {**(case.request or {}), **request_fields}.get("tool_choice", "auto")
    assert got.finish_reason == expected_finish(case.expected, case.finish, choice)
    for shape in ("1", "3", "random"):
        streamed = stream(r, prompt, chunks(gen, shape), request, case.finish, mode=mode)
        assert streamed.result() == got, shape
