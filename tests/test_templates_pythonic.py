"""Python call lists under vLLM's ``pythonic`` and ``llama4_pythonic`` parser names.

- the output is a Python list of calls from its first char,
  ``[get_weather(city="Paris"), search(query='x')]`` (whitespace inside the list as Python
  allows it); ``llama4_pythonic`` also takes it between ``<|python_start|>`` and
  ``<|python_end|>``. Anything else (a leading space, ``[1, 2]``, ``[]``) is content as written.
- each call's name is sent when its ``(`` comes, its arguments when its ``)`` does: the keyword
  arguments' values read as Python literals (strings with prefixes, escapes, triple quotes and
  implicit concatenation; ints of any size, hex, underscores; floats written as ``repr``;
  ``True``/``None`` and JSON's ``true``/``null``; tuples and sets as lists; dicts with constant
  keys) and written as ``json.dumps(..., ensure_ascii=False)`` writes them; positional
  arguments are skipped; a repeated keyword keeps its place and takes the last value.
- argument text that is not such keywords (``str(1)``, ``b'x'``, ``f'{x}'``) and a call cut
  by the end of the output are sent as written.
- text after the list's ``]`` (and ``<|python_end|>``) is content.

Each case's expected message is vLLM 0.33.0's whole answer for the same text, names, prompt and
tokenizer fixture (``vllm/tool_parsers/pythonic_tool_parser.py``,
``vllm/tool_parsers/llama4_pythonic_tool_parser.py``, ``vllm/tool_parsers/utils.py``, run on
CPU from the 0.33.0 wheel), except where a comment says how vLLM's differs and why the answer
here is kept. vLLM's whole answer first matches a regular expression that wants the list's
first name right after ``[``, no whitespace around a call, and only keyword arguments, then
needs the whole output to parse as Python: its stream reads the list without either check, so
where the two disagree the list is read as its stream reads it. Every case runs whole and
streamed at 1, 3 and random ids a chunk, in both ``parser_state`` modes, against the whole
answer.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass

import pytest
from helpers.parsers_oracle import SERVED, Message, chat_request
from helpers.parsers_util import derenderer_class, expected_finish, stream, whole
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import load_detokenizer

LLAMA_HEAD = (
    "<|start_header_id|>user<|end_header_id|>\n\nWeather?<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\n\n"
)
LLAMA4_HEAD = (
    "<|header_start|>user<|header_end|>\n\nWeather?<|eot|>"
    "<|header_start|>assistant<|header_end|>\n\n"
)
PARIS = ("get_weather", '{"city": "Paris"}')
PARIS_C = ("get_weather", '{"city": "Paris", "unit": "c"}')
CAFE = ("search", '{"query": "café \\"x\\" ü"}')


@dataclass(frozen=True)
class Case:
    label: str
    fixture: str
    tool: str
    prompt: str
    text: str
    expected: Message
    finish: str = "stop"


def _calls(*calls: tuple[str, str]) -> Message:
    return Message("", "", calls)


def _text(text: str) -> Message:
    return Message(text, "", ())


#: (label, text, expected) for both names.
SHARED: list[tuple[str, str, Message]] = [
    ("one", '[get_weather(city="Paris")]', _calls(PARIS)),
    (
        "two",
        "[get_weather(city='Paris', unit=\"c\"), search(query='café \"x\" ü')]",
        _calls(PARIS_C, CAFE),
    ),
    (
        "literals",
        "[search(query='x', filters={'a': [1, 2.5, -3], 'b': True, 'c': None, 'd': (1, 2), "
        "'e': {'s'}, 1: 'k'})]",
        _calls(
            (
                "search",
                '{"query": "x", "filters": {"a": [1, 2.5, -3], "b": true, "c": null, '
                '"d": [1, 2], "e": ["s"], "1": "k"}}',
            )
        ),
    ),
    (
        "json-literals",
        '[search(query="x", filters={"a": true, "b": null, "c": false})]',
        _calls(("search", '{"query": "x", "filters": {"a": true, "b": null, "c": false}}')),
    ),
    ("no-arguments", "[get_time()]", _calls(("get_time", "{}"))),
    ("text", "The weather is sunny.", _text("The weather is sunny.")),
    ("text-in-brackets", "[see below] the weather", _text("[see below] the weather")),
    ("not-calls", "[1, 2, 3]", _text("[1, 2, 3]")),
    ("empty-list", "[]", _text("[]")),
    (
        "leading-space",
        ' [get_weather(city="Paris")]',
        _text(' [get_weather(city="Paris")]'),
    ),
    (
        "string-escapes",
        "[write_file(path='a\\\\b.txt', content='line1\\nline2\\t\\u00e9\\x41 \"q\" )]')]",
        _calls(
            ("write_file", '{"path": "a\\\\b.txt", "content": "line1\\nline2\\téA \\"q\\" )]"}')
        ),
    ),
    (
        "triple-quoted",
        "[write_file(path=\"p\", content='''it's\nmulti''')]",
        _calls(("write_file", '{"path": "p", "content": "it\'s\\nmulti"}')),
    ),
    (
        "concatenated",
        "[search(query='a' 'b' f'c{{d}}')]",
        _calls(("search", '{"query": "abc{d}"}')),
    ),
    (
        "numbers",
        "[search(query=\"n\", filters={'h': 0x1F, 'f': 1e16, 'g': 1_000, 'z': -0.0, 'e': .5})]",
        _calls(
            (
                "search",
                '{"query": "n", "filters": {"h": 31, "f": 1e+16, "g": 1000, "z": -0.0, "e": 0.5}}',
            )
        ),
    ),
    (
        "big-int",
        "[search(query='x', filters={'n': 123456789012345678901234567890})]",
        _calls(("search", '{"query": "x", "filters": {"n": 123456789012345678901234567890}}')),
    ),
    (
        "dotted-name",
        '[get_weather(city="Paris"), tools.search(query="x")]',
        _calls(PARIS, ("tools.search", '{"query": "x"}')),
    ),
    (
        "repeated-keyword",
        '[get_weather(city="Paris", city="Rome")]',
        _calls(("get_weather", '{"city": "Rome"}')),
    ),
    ("unicode", '[get_weather(city="東京")]', _calls(("get_weather", '{"city": "東京"}'))),
    # vLLM's whole answer is the text as content (its regular expression wants keyword
    # arguments only); its stream gives the call with the keywords, as here.
    ("positional", '[get_weather("Paris", unit="c")]', _calls(("get_weather", '{"unit": "c"}'))),
    # vLLM's whole answer is the text as content (its regular expression wants no whitespace
    # around a call, nor a trailing comma); its stream gives the calls, as here.
    ("trailing-comma", '[get_weather(city="Paris"),]', _calls(PARIS)),
    ("spaces", '[ get_weather(city="Paris") ]', _calls(PARIS)),
    ("space-before-paren", '[get_weather (city="Paris")]', _calls(PARIS)),
    (
        "multiline",
        '[\n  get_weather(\n    city="Paris",  # the city\n    unit="c",\n  ),\n  get_time(),\n]',
        _calls(PARIS_C, ("get_time", "{}")),
    ),
    # vLLM's whole answer is the text as content (the text after the list is not Python); its
    # stream gives the call and drops the text. Here both are kept.
    ("text-after", '[get_weather(city="Paris")]\nDone.', Message("\nDone.", "", (PARIS,))),
    ("text-after-space", '[get_weather(city="Paris")] Done.', Message(" Done.", "", (PARIS,))),
    # vLLM's whole answer is the text as content (a raw newline ends a Python string); its
    # stream cuts the arguments at the newline. Here the newline is the string's.
    ("newline-in-string", "[search(query='a\nb')]", _calls(("search", '{"query": "a\\nb"}'))),
    # vLLM's whole answer is the text as content (`from` is a Python keyword); its stream cuts
    # the arguments. Here the keyword is read.
    (
        "reserved-keyword",
        "[search(query='x', from=1)]",
        _calls(("search", '{"query": "x", "from": 1}')),
    ),
    # vLLM's whole answer is the text as content (the values are not literals), its stream
    # gives nothing; here the call is sent with its argument text as written (the name has
    # gone out when its `(` came).
    ("call-value", "[search(query=str(1))]", _calls(("search", "query=str(1)"))),
    ("bytes-value", "[search(query=b'x')]", _calls(("search", "query=b'x'"))),
    ("f-string-placeholder", "[search(query=f'{x}')]", _calls(("search", "query=f'{x}'"))),
    # Cut by the end of the output: vLLM's whole answer is the text as content, its stream
    # gives `{"city": "Pa`; here the call is sent as far as it came, as written.
    ("cut", '[get_weather(city="Pa', _calls(("get_weather", 'city="Pa'))),
    (
        "cut-second",
        '[get_weather(city="Paris"), search(qu',
        _calls(PARIS, ("search", "qu")),
    ),
]

LLAMA4_ONLY: list[tuple[str, str, Message]] = [
    ("tags", '<|python_start|>[get_weather(city="Paris")]<|python_end|>', _calls(PARIS)),
    (
        "tags-two",
        '<|python_start|>[get_weather(city="Paris"), get_time()]<|python_end|>',
        _calls(PARIS, ("get_time", "{}")),
    ),
    ("tags-no-end", '<|python_start|>[get_weather(city="Paris")]', _calls(PARIS)),
    # vLLM's whole answer is the text as content, markers and all (the text after the list is
    # not Python); its stream gives the call and drops the text. Here both are kept.
    (
        "tags-text-after",
        '<|python_start|>[get_weather(city="Paris")]<|python_end|>Done.',
        Message("Done.", "", (PARIS,)),
    ),
    (
        "tags-not-a-list",
        "<|python_start|>print(1)<|python_end|>",
        _text("<|python_start|>print(1)<|python_end|>"),
    ),
    ("end-marker-in-text", "Hello<|python_end|> world", _text("Hello<|python_end|> world")),
]

CASES = [
    *(
        Case(f"pythonic-{label}", "llama-3.2-instruct", "pythonic", LLAMA_HEAD, text, expected)
        for label, text, expected in SHARED
    ),
    *(
        Case(f"llama4_pythonic-{label}", "llama4-derived", "llama4_pythonic", LLAMA4_HEAD, t, e)
        for label, t, e in [*SHARED, *LLAMA4_ONLY]
    ),
    Case(
        "pythonic-cut-by-length",
        "llama-3.2-instruct",
        "pythonic",
        LLAMA_HEAD,
        '[get_weather(city="Paris"), search(query="ca',
        _calls(PARIS, ("search", 'query="ca')),
        finish="length",
    ),
]


@functools.cache
def _derenderer(fixture: str, tool: str, mode: str) -> object:
    return derenderer_class()(
        load_detokenizer(fixture), served_model_name=SERVED, tool_parser=tool, parser_state=mode
    )


def _chunks(ids: list[int], shape: str) -> list[list[int]]:
    if shape == "random":
        rng, out, i = random.Random(len(ids)), [], 0
        while i < len(ids):
            width = rng.randint(1, 7)
            out.append(ids[i : i + width])
            i += width
        return out
    size = int(shape)
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def _encode(fixture: str, text: str) -> list[int]:
    return list(load_tokenizer(fixture).encode(text, add_special_tokens=False).ids)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    r = _derenderer(case.fixture, case.tool, mode)
    request = chat_request()
    prompt, gen = _encode(case.fixture, case.prompt), _encode(case.fixture, case.text)
    got = whole(r, prompt, gen, request, case.finish)
    assert got.message == case.expected
    assert got.finish_reason == expected_finish(case.expected, case.finish)
    for shape in ("1", "3", "random"):
        streamed = stream(r, prompt, _chunks(gen, shape), request, case.finish, mode=mode)
        assert streamed.result() == got, shape


def test_the_names_are_served() -> None:
    for fixture, tool in (
        ("llama-3.2-instruct", "pythonic"),
        ("llama4-derived", "llama4_pythonic"),
    ):
        assert _derenderer(fixture, tool, "resumable").tool_parser == tool
