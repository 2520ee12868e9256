"""Response-template semantics on small templates of our own, each against ``parse_response``:
literal lists whose literals extend one another, a field without a close, no implicit field,
a pattern anchored at the output's start, repeated fields joined and unstripped, dotted and
per-item transforms, lookahead closes (a lookahead alone, or ending a pattern) and empty
matches. Text goes through the qwen3 tokenizer
(so delimiters split across tokens), whole, then one id a chunk."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from helpers.parsers_oracle import SERVED, chat_request
from helpers.parsers_util import derenderer_class, stream, whole
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import load_detokenizer
from helpers.templates_util import encode, oracle, parsed

A = "<|im_start|>assistant\n"
CALL = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
CASES: dict[str, tuple[dict[str, Any], str]] = {
    "extending literals": (
        {"reasoning": {"open": "<x>", "close": ["END", "ENDX"]}, "content": {}},
        "<x>hi ENDX more",
    ),
    "the shorter literal once the longer cannot be": (
        {"reasoning": {"open": "<x>", "close": ["END", "ENDX"]}, "content": {}},
        "<x>again END tail",
    ),
    "no close runs to the end": (
        {"content": {"open": "<resp>"}},
        "skipped <resp> hello world ",
    ),
    "no implicit field drops the rest": (
        {
            "content": {"open": "<r>", "close": "</r>"},
            "reasoning": {"open": "<t>", "close": "</t>"},
        },
        "junk <t>why</t> more junk <r> answer </r> trailing",
    ),
    "a pattern anchored at the start": (
        {
            "reasoning": {"open_pattern": r"(?:^|<think>\s*)", "close": "</think>"},
            "content": {"open": "<response>\n", "close_pattern": r"\n?</response>"},
        },
        "deliberation at length, then more\n</think>\n\n<response>\nHi there\n</response>",
    ),
    "repeats joined unstripped": (
        {
            "reasoning": {
                "open": "<t>",
                "close": "</t>",
                "repeats": True,
                "join": "\n",
                "content_args": {"strip": False},
            },
            "content": {},
        },
        "<t> first </t>middle<t>second </t>",
    ),
    "dotted transform paths": (
        {
            "tool_calls": {
                "open_pattern": r"<m>[^<]*<j>",
                "close": "</j>",
                "repeats": True,
                "content": "json",
                "transform": {
                    "type": "function",
                    "function": {"name": "{content.name}", "arguments": "{content.args}"},
                },
            },
            "content": {},
        },
        'Checking. <m>get<j>{"name": "get", "args": {"city": "東京"}}</j>',
    ),
    "a list of calls, transform per item": (
        {
            "tool_calls": {
                "open": "<A>",
                "close": "</A>",
                "content": "json",
                "transform_each": True,
                "transform": {
                    "type": "function",
                    "function": {"name": "{tool_name}", "arguments": "{parameters}"},
                },
            },
            "content": {"close_pattern": r"<END>\s*"},
        },
        'Sure.<A>[{"id": "0", "tool_name": "a", "parameters": {"x": [1, 2]}}, '
        '{"tool_name": "b", "parameters": {}}]</A>',
    ),
    "lookahead close between calls": (
        {
            "tool_calls": {
                "open_pattern": r"@(?P<name>\w+)",
                "close_pattern": r"(?=@)",
                "repeats": True,
                "content": "json",
                "transform": CALL,
            },
            "content": {},
        },
        'go @f{"a": "(x)"}@g{}',
    ),
    "a JSON dialect converted when the call closes": (
        {
            "tool_calls": {
                "open_pattern": r"<\|tool_call>call:(?P<name>\w+)",
                "close_pattern": r"<tool_call\|>\s*",
                "repeats": True,
                "content": "json",
                "content_args": {"string_delims": [["<|q|>", "<|q|>"]], "unquoted_keys": True},
                "transform": CALL,
            },
            "content": {},
        },
        'On it.<|tool_call>call:get{city:<|q|>東京, "JP"<|q|>,days:3,opts:{a:[true]}}'
        "<tool_call|><|tool_call>call:ping{}<tool_call|>",
    ),
    "a lookahead that ends a pattern": (
        {
            "reasoning": {"open": "<t>", "close_pattern": r"\s*--(?=\s*<r>)"},
            "content": {"open_pattern": r"\s*<r>", "close_pattern": r"\s*(?=</r>)"},
        },
        "<t>a -- b --  <r> answer </r>",
    ),
    "empty matches end": (
        {"reasoning": {"open_pattern": "(?=x)", "close_pattern": "(?=y)"}, "content": {}},
        "xbyc",
    ),
}


@functools.cache
def derenderer(name: str) -> Any:
    template = {"start_anchor": A, "fields": CASES[name][0]}
    return derenderer_class()(
        load_detokenizer("qwen3"), served_model_name=SERVED, response_template=template
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_parse_response(name: str) -> None:
    fields, text = CASES[name]
    tok = load_tokenizer("qwen3")
    prompt, gen = encode(tok, "<|im_start|>user\nhi<|im_end|>\n" + A), encode(tok, text)
    request = chat_request()
    got = whole(derenderer(name), prompt, gen, request, "stop")
    template = json.dumps({"start_anchor": A, "fields": fields})
    assert parsed(got) == oracle(template, tok.decode(gen), A), text
    streamed = stream(derenderer(name), prompt, [[i] for i in gen], request, "stop")
    assert streamed.result() == got
