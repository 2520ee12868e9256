"""Python call lists under vLLM's ``pythonic``, ``llama4_pythonic``, ``olmo3`` and ``lfm2``
parser names, and ``step5``'s calls.

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
- ``olmo3``: calls one a line (or comma-separated), unbracketed, between ``<function_calls>`` and
  ``</function_calls>``; with the ``olmo3`` reasoning parser the output starts in reasoning
  and ``<function_calls>`` ends it; text around the calls is kept.
- ``lfm2``: the list between ``<|tool_call_start|>`` and ``<|tool_call_end|>``; the text before
  and after the calls stripped and joined by a newline.
- ``step5``: Qwen3-Coder's ``<tool_call><function=...>`` calls (as ``qwen3_coder``), content
  as written.

Each case's expected message is vLLM 0.33.0's whole answer for the same text, names, prompt and
tokenizer fixture (``vllm/tool_parsers/pythonic_tool_parser.py``,
``vllm/tool_parsers/llama4_pythonic_tool_parser.py``, ``vllm/tool_parsers/olmo3_tool_parser.py``,
``vllm/tool_parsers/lfm2_tool_parser.py``, ``vllm/tool_parsers/step5_tool_parser.py``,
``vllm/tool_parsers/utils.py``, run on
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
from dataclasses import dataclass

import pytest
from helpers.family_cases import Case as Named
from helpers.family_cases import check
from helpers.family_cases import chunks as _chunks
from helpers.family_cases import encode as _encode
from helpers.parsers_oracle import SERVED, Message, chat_request
from helpers.parsers_util import derenderer_class, expected_finish, stream, whole
from helpers.stream_util import load_detokenizer

STEP5_CALL = (
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n"
    "</tool_call>"
)
HEAD = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"

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


NAMED = [
    Named(
        "olmo3-both-think",
        "llama-3.2-instruct",
        "olmo3",
        "olmo3",
        HEAD,
        "<think>I should check.</think>It is sunny.",
        Message("It is sunny.", "I should check.", ()),
    ),
    Named(
        "olmo3-both-no-open",
        "llama-3.2-instruct",
        "olmo3",
        "olmo3",
        HEAD,
        "I should check.</think>It is sunny.",
        Message("It is sunny.", "I should check.", ()),
    ),
    # vLLM's whole answer is the text as content (no `</think>`); its stream gives reasoning,
    # as here: the output starts in reasoning.
    Named(
        "olmo3-both-no-close",
        "llama-3.2-instruct",
        "olmo3",
        "olmo3",
        HEAD,
        "<think>I should check.",
        Message("", "I should check.", ()),
    ),
    # vLLM's whole answer is content (no `</think>`); its stream gives reasoning, as here.
    Named(
        "olmo3-both-plain",
        "llama-3.2-instruct",
        "olmo3",
        "olmo3",
        HEAD,
        "It is sunny.",
        Message("", "It is sunny.", ()),
    ),
    Named(
        "olmo3-both-ws",
        "llama-3.2-instruct",
        "olmo3",
        "olmo3",
        HEAD,
        "<think>\nI should check.\n</think>\n\nIt is sunny.",
        Message("\n\nIt is sunny.", "\nI should check.\n", ()),
    ),
    Named(
        "olmo3-both-second-think",
        "llama-3.2-instruct",
        "olmo3",
        "olmo3",
        HEAD,
        "<think>a</think>b<think>c</think>d",
        Message("b<think>c</think>d", "a", ()),
    ),
    Named(
        "olmo3-both-calls",
        "llama-3.2-instruct",
        "olmo3",
        "olmo3",
        HEAD,
        "<think>Check.</think><function_calls>\nget_weather(city=\"Paris\")\nsearch(query='x')\n</function_calls>",
        Message("", "Check.", (("get_weather", '{"city": "Paris"}'), ("search", '{"query": "x"}'))),
    ),
    Named(
        "olmo3-both-calls-one",
        "llama-3.2-instruct",
        "olmo3",
        "olmo3",
        HEAD,
        '<function_calls>get_weather(city="Paris")</function_calls>',
        Message("", "", (("get_weather", '{"city": "Paris"}'),)),
    ),
    # vLLM's whole answer drops the text before the calls; here it is kept (reasoning, which
    # the calls end).
    Named(
        "olmo3-both-calls-text-before",
        "llama-3.2-instruct",
        "olmo3",
        "olmo3",
        HEAD,
        'Sure.\n<function_calls>\nget_weather(city="Paris")\n</function_calls>',
        Message("", "Sure.\n", (("get_weather", '{"city": "Paris"}'),)),
    ),
    # vLLM's whole answer drops the text after the calls; here it is content.
    Named(
        "olmo3-both-calls-text-after",
        "llama-3.2-instruct",
        "olmo3",
        "olmo3",
        HEAD,
        '<function_calls>\nget_weather(city="Paris")\n</function_calls>\nDone.',
        Message("Done.", "", (("get_weather", '{"city": "Paris"}'),)),
    ),
    Named(
        "olmo3-both-calls-json-lit",
        "llama-3.2-instruct",
        "olmo3",
        "olmo3",
        HEAD,
        '<function_calls>\nsearch(query="x", filters={"a": true, "b": null})\n</function_calls>',
        Message("", "", (("search", '{"query": "x", "filters": {"a": true, "b": null}}'),)),
    ),
    # vLLM's whole answer reads calls without `<function_calls>`; its stream gives them as
    # text, as here.
    Named(
        "olmo3-both-bare-calls",
        "llama-3.2-instruct",
        "olmo3",
        "olmo3",
        HEAD,
        'get_weather(city="Paris")',
        Message("", 'get_weather(city="Paris")', ()),
    ),
    Named(
        "olmo3-both-calls-comma",
        "llama-3.2-instruct",
        "olmo3",
        "olmo3",
        HEAD,
        '<function_calls>get_weather(city="Paris"), get_time()</function_calls>',
        Message("", "", (("get_weather", '{"city": "Paris"}'), ("get_time", "{}"))),
    ),
    # Cut: vLLM's whole answer is the text as content; here the call is sent as far as it
    # came, as written.
    Named(
        "olmo3-both-calls-cut",
        "llama-3.2-instruct",
        "olmo3",
        "olmo3",
        HEAD,
        '<function_calls>\nget_weather(city="Pa',
        Message("", "", (("get_weather", 'city="Pa'),)),
    ),
    # vLLM's answer is the text as content; here it is reasoning (the output starts in it, and
    # `[` is no call).
    Named(
        "olmo3-both-calls-bracket",
        "llama-3.2-instruct",
        "olmo3",
        "olmo3",
        HEAD,
        '<function_calls>[get_weather(city="Paris")]</function_calls>',
        Message("", '<function_calls>[get_weather(city="Paris")]</function_calls>', ()),
    ),
    # vLLM's whole answer drops the text before the calls; here it is content.
    Named(
        "olmo3-t-calls",
        "llama-3.2-instruct",
        None,
        "olmo3",
        HEAD,
        "<think>Check.</think><function_calls>\nget_weather(city=\"Paris\")\nsearch(query='x')\n</function_calls>",
        Message(
            "<think>Check.</think>",
            "",
            (("get_weather", '{"city": "Paris"}'), ("search", '{"query": "x"}')),
        ),
    ),
    Named(
        "olmo3-t-calls-one",
        "llama-3.2-instruct",
        None,
        "olmo3",
        HEAD,
        '<function_calls>get_weather(city="Paris")</function_calls>',
        Message("", "", (("get_weather", '{"city": "Paris"}'),)),
    ),
    # vLLM's whole answer drops the text before the calls; here it is content.
    Named(
        "olmo3-t-calls-text-before",
        "llama-3.2-instruct",
        None,
        "olmo3",
        HEAD,
        'Sure.\n<function_calls>\nget_weather(city="Paris")\n</function_calls>',
        Message("Sure.\n", "", (("get_weather", '{"city": "Paris"}'),)),
    ),
    Named(
        "olmo3-t-plain",
        "llama-3.2-instruct",
        None,
        "olmo3",
        HEAD,
        "It is sunny.",
        Message("It is sunny.", "", ()),
    ),
    Named(
        "lfm2-one",
        "lfm2-derived",
        None,
        "lfm2",
        HEAD,
        '<|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>',
        Message("", "", (("get_weather", '{"city": "Paris"}'),)),
    ),
    Named(
        "lfm2-around",
        "lfm2-derived",
        None,
        "lfm2",
        HEAD,
        'Let me check.\n<|tool_call_start|>[get_weather(city="Paris"), get_time()]<|tool_call_end|>\nThe weather in Paris is sunny.',  # noqa: E501
        Message(
            "Let me check.\nThe weather in Paris is sunny.",
            "",
            (("get_weather", '{"city": "Paris"}'), ("get_time", "{}")),
        ),
    ),
    Named(
        "lfm2-text",
        "lfm2-derived",
        None,
        "lfm2",
        HEAD,
        "It is sunny.",
        Message("It is sunny.", "", ()),
    ),
    Named(
        "lfm2-no-end",
        "lfm2-derived",
        None,
        "lfm2",
        HEAD,
        '<|tool_call_start|>[get_weather(city="Paris")]',
        Message("", "", (("get_weather", '{"city": "Paris"}'),)),
    ),
    Named(
        "lfm2-spaces",
        "lfm2-derived",
        None,
        "lfm2",
        HEAD,
        '<|tool_call_start|> [get_weather(city="Paris")] <|tool_call_end|>',
        Message("", "", (("get_weather", '{"city": "Paris"}'),)),
    ),
    Named(
        "lfm2-zeros",
        "lfm2-derived",
        None,
        "lfm2",
        HEAD,
        '<|tool_call_start|>[search(query="x", filters={"n": 007})]<|tool_call_end|>',
        Message("", "", (("search", '{"query": "x", "filters": {"n": 7}}'),)),
    ),
    Named(
        "lfm2-reserved",
        "lfm2-derived",
        None,
        "lfm2",
        HEAD,
        '<|tool_call_start|>[search(query="x", from=1)]<|tool_call_end|>',
        Message("", "", (("search", '{"query": "x", "from": 1}'),)),
    ),
    Named(
        "lfm2-newline",
        "lfm2-derived",
        None,
        "lfm2",
        HEAD,
        '<|tool_call_start|>[search(query="a\nb")]<|tool_call_end|>',
        Message("", "", (("search", '{"query": "a\\nb"}'),)),
    ),
    # vLLM's whole answer drops an echoed call before a second `<|tool_call_end|>`; here it is
    # content.
    Named(
        "lfm2-echo",
        "lfm2-derived",
        None,
        "lfm2",
        HEAD,
        "<|tool_call_start|>[get_time()]<|tool_call_end|>[get_time()]<|tool_call_end|>Done.",
        Message("[get_time()]<|tool_call_end|>Done.", "", (("get_time", "{}"),)),
    ),
    Named(
        "lfm2-not-list",
        "lfm2-derived",
        None,
        "lfm2",
        HEAD,
        "<|tool_call_start|>get_time()<|tool_call_end|>",
        Message("<|tool_call_start|>get_time()<|tool_call_end|>", "", ()),
    ),
    # vLLM's whole answer reads only the first block and drops the rest; here both blocks are
    # calls and the text between them content.
    Named(
        "lfm2-two-blocks",
        "lfm2-derived",
        None,
        "lfm2",
        HEAD,
        '<|tool_call_start|>[get_time()]<|tool_call_end|>x<|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>',
        Message("x", "", (("get_time", "{}"), ("get_weather", '{"city": "Paris"}'))),
    ),
    Named(
        "step5-call",
        "qwen3",
        None,
        "step5",
        HEAD,
        STEP5_CALL,
        Message("", "", (("get_weather", '{"city": "Paris"}'),)),
    ),
    Named(
        "step5-ws-before",
        "qwen3",
        None,
        "step5",
        HEAD,
        "\n\n" + STEP5_CALL,
        Message("", "", (("get_weather", '{"city": "Paris"}'),)),
    ),
    # vLLM's whole answer drops the text after the call; its stream keeps it, as here (the
    # whitespace after `</tool_call>` dropped).
    Named(
        "step5-text-before",
        "qwen3",
        None,
        "step5",
        HEAD,
        "  Sure.  \n" + STEP5_CALL + "\n after ",
        Message("  Sure.  \nafter ", "", (("get_weather", '{"city": "Paris"}'),)),
    ),
    Named(
        "step5-text",
        "qwen3",
        None,
        "step5",
        HEAD,
        "  It is sunny.  ",
        Message("  It is sunny.  ", "", ()),
    ),
    Named(
        "step5-think",
        "qwen3",
        None,
        "step5",
        HEAD,
        "<think>r</think>\n" + STEP5_CALL,
        Message("<think>r</think>\n", "", (("get_weather", '{"city": "Paris"}'),)),
    ),
]


@pytest.mark.parametrize("case", NAMED, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_named_whole_and_streamed(case: Named, mode: str) -> None:
    check(case, mode)
