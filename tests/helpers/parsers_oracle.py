"""Real generations for the parser tests, and the parser contract's oracle.

Generations look like real Qwen3 and DeepSeek-R1 output: reasoning in ``<think>...</think>``,
content, then hermes tool calls
(``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``).
Text is encoded with ``tokenizers`` (``add_special_tokens=False``) and a marker that is one token
of the vocabulary becomes that real id; a marker that is not (the hermes tags on DeepSeek-R1) is
encoded with the text around it, so the ids hold tokens such as ``}</`` or `` <`` that straddle a
tag, as a model's would. Prompts follow the two models' chat templates: open ``<think>``, closed
(thinking disabled), or neither.

``oracle`` is the parser contract (issue 4, REFERENCE.md section 6) written in plain Python over
``tokenizers``' decode; it never looks at tokstream's answers.
"""

# ruff: noqa: RUF001
# (Full-width bars are the real spelling of DeepSeek's special tokens.)
from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tokenizers import Tokenizer

from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import c1_target

QWEN, DEEPSEEK = "qwen3", "deepseek-r1"
NAMES = (QWEN, DEEPSEEK)
#: The reasoning parser each model ships with.
VARIANT = {QWEN: "qwen3", DEEPSEEK: "deepseek_r1"}
VARIANTS = tuple(VARIANT.values())
SERVED = "m"
THINK, END_THINK, TOOL, END_TOOL = "<think>", "</think>", "<tool_call>", "</tool_call>"
MARKERS = (THINK, END_THINK, TOOL, END_TOOL)
EOS = {QWEN: "<|im_end|>", DEEPSEEK: "<｜end▁of▁sentence｜>"}
#: A piece list entry that ends the text run being encoded (the ids split exactly there).
BREAK = None

# --- requests and prompts ---------------------------------------------------------------------


def _tool(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": list(properties)[:1]}
    function = {"name": name, "description": description, "parameters": schema}
    return {"type": "function", "function": function}


TOOLS = [
    _tool(
        "get_weather", "Current weather", {"city": {"type": "string"}, "unit": {"type": "string"}}
    ),
    _tool("search", "Web search", {"query": {"type": "string"}, "filters": {"type": "object"}}),
    _tool("get_time", "The time now", {}),
    _tool(
        "write_file", "Write a file", {"path": {"type": "string"}, "content": {"type": "string"}}
    ),
]
QUESTION = "What's the weather in Paris and 東京? 🌦️"


def chat_request(*, tools: bool = True, **extra: Any) -> dict[str, Any]:
    """The original chat request; with ``tools``, the four tools and ``tool_choice: "auto"``."""
    request: dict[str, Any] = {"model": SERVED, "messages": [{"role": "user", "content": QUESTION}]}
    if tools:
        request |= {"tools": TOOLS, "tool_choice": "auto"}
    return request | extra


_HERMES_SYSTEM = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
    + "".join("\n" + json.dumps(t) for t in TOOLS)
    + "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)
_QWEN_HEAD = (
    f"<|im_start|>system\n{_HERMES_SYSTEM}<|im_end|>\n<|im_start|>user\n{QUESTION}<|im_end|>\n"
)
_QWEN_HISTORY = (
    f"<|im_start|>system\n{_HERMES_SYSTEM}<|im_end|>\n<|im_start|>user\n{QUESTION}<|im_end|>\n"
    "<|im_start|>assistant\n<think>\nI need the weather tool first.\n</think>\n\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>\n'
    '<|im_start|>user\n<tool_response>\n{"temp": 23, "sky": "clear"}\n</tool_response><|im_end|>\n'
    "<|im_start|>assistant\n"
)
_DEEPSEEK_HEAD = f"<｜begin▁of▁sentence｜>{_HERMES_SYSTEM}<｜User｜>{QUESTION}<｜Assistant｜>"
#: Prompt texts by tokenizer and kind: "none" (no marker), "open" (the template opens <think>),
#: "closed" (thinking disabled: <think>\n\n</think>\n\n), "history" (an earlier turn's
#: </think> is the prompt's last marker).
PROMPTS = {
    QWEN: {
        "none": _QWEN_HEAD + "<|im_start|>assistant\n",
        "open": _QWEN_HEAD + "<|im_start|>assistant\n<think>\n",
        "closed": _QWEN_HEAD + "<|im_start|>assistant\n<think>\n\n</think>\n\n",
        "history": _QWEN_HISTORY,
    },
    DEEPSEEK: {
        "none": _DEEPSEEK_HEAD,
        "open": _DEEPSEEK_HEAD + "<think>\n",
        "closed": _DEEPSEEK_HEAD + "<think>\n\n</think>\n\n",
        "history": _DEEPSEEK_HEAD.replace(
            "<｜Assistant｜>",
            "<｜Assistant｜><think>\nEarlier.\n</think>\n\nIt is sunny.<｜end▁of▁sentence｜>"
            "<｜User｜>And tomorrow?<｜Assistant｜>",
            1,
        ),
    },
}
#: Where each prompt kind starts the output, by reasoning parser, with thinking on (vLLM's
#: rules): deepseek_r1 from the prompt's last think marker; qwen3 in reasoning unless the prompt
#: closed it after its last turn marker (an earlier turn's ``</think>`` does not count).
STARTS_IN_REASONING = {
    ("none", "deepseek_r1"): True,
    ("none", "qwen3"): True,
    ("open", "deepseek_r1"): True,
    ("open", "qwen3"): True,
    ("closed", "deepseek_r1"): False,
    ("closed", "qwen3"): False,
    ("history", "deepseek_r1"): False,
    ("history", "qwen3"): True,
}
#: ChatML's turn markers: a qwen3 prompt's think markers count only after the last of them.
TURNS = ("<|im_start|>", "<|im_end|>")


def thinking_of(request: dict[str, Any] | None) -> bool:
    """Whether a chat request leaves thinking on, as vLLM's qwen3 parser reads it:
    ``chat_template_kwargs["enable_thinking"]`` by Python truth when the key is there, else
    ``reasoning_effort`` not ``"none"``; on by default."""
    request = request or {}
    kwargs = request.get("chat_template_kwargs") or {}
    if "enable_thinking" in kwargs:
        return bool(kwargs["enable_thinking"])
    return request.get("reasoning_effort") != "none"


def encode(tok: Tokenizer, text: str) -> list[int]:
    """``tokenizers``' ids for ``text``, without special tokens added (added tokens are matched)."""
    return list(tok.encode(text, add_special_tokens=False).ids)


def prompt_ids(name: str, kind: str) -> list[int]:
    """The prompt ids of a template-like prompt; checks its marker tokens are the real ids."""
    tok = load_tokenizer(name)
    ids = encode(tok, PROMPTS[name][kind])
    think, end = tok.token_to_id(THINK), tok.token_to_id(END_THINK)
    last = next((i for i in reversed(ids) if i in (think, end)), None)
    expected = {"none": None, "open": think, "closed": end, "history": end}[kind]
    assert last == expected, (name, kind, last)
    return ids


# --- generations ------------------------------------------------------------------------------


def single_id(tok: Tokenizer, marker: str) -> int | None:
    """The marker's id when it is one token of the vocabulary."""
    return tok.token_to_id(marker)


def build(tok: Tokenizer, pieces: Sequence[str | None]) -> tuple[list[int], list[int]]:
    """Ids for ``pieces``, and the id offset of every ``BREAK``.

    A marker that is one token becomes its id; other text (a marker that is not one token
    included) is merged with its neighbours and encoded as one run, up to a ``BREAK``.
    """
    ids: list[int] = []
    breaks: list[int] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            ids.extend(encode(tok, "".join(run)))
            run.clear()

    for piece in pieces:
        if piece is BREAK:
            flush()
            breaks.append(len(ids))
            continue
        marker = single_id(tok, piece) if piece in MARKERS else None
        if marker is None:
            run.append(piece)
        else:
            flush()
            ids.append(marker)
    flush()
    text = "".join(p for p in pieces if p is not BREAK)
    assert tok.decode(ids, skip_special_tokens=False) == text, "the pieces do not round-trip"
    return ids, breaks


def ids_of(name: str, pieces: Sequence[str | None]) -> list[int]:
    """``build``'s ids alone."""
    return build(load_tokenizer(name), pieces)[0]


def call(obj: str) -> list[str | None]:
    """A hermes tool call around the JSON object text ``obj`` (checked to be valid JSON)."""
    json.loads(obj)
    return [TOOL, "\n" + obj + "\n", END_TOOL]


REASONING = (
    "\nThe user asks about Paris and 東京 (Tokyo). 🤔 I should call get_weather once per city; "
    "compare a < b and b > c, keep 삥뽕빵 and 👨‍👩‍👧‍👦 intact.\n"
)
CONTENT = (
    "The weather in Paris is ☀️ 23 °C; 東京は雨です ☔. 삥뽕빵 👨‍👩‍👧‍👦 🇯🇵! "
    "Note: a < b, <b>bold</b> and a <tool> tag are plain text.\n"
)
#: Content that ends on what could begin a tag: held back while streaming, flushed at the end.
CONTENT_PARTIAL_TAG = "Use a <tool> element or <tool_call-like> markup; the tag starts <tool_ca"
W_PARIS = '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}'
W_TOKYO = (
    '{"name": "get_weather", "arguments": {"city": "東京 🗼", "unit": "c", '
    '"note": "☔️ 雨 👨‍👩‍👧‍👦 🇯🇵 caf\\u00e9\\n\\t\\"q\\""}}'
)
SEARCH_NESTED = (
    '{"name": "search", "arguments": {"query": "emoji 🤖 \\"quoted\\" back\\\\slash", '
    '"filters": {"lang": ["ja", "en"], "range": {"from": 1, "to": [2.5, null, true, false]}, '
    '"deep": {"a": {"b": {"c": [{}, [], {"d": "}{"}]}}}}}}'
)
EMPTY_ARGS = '{"name": "get_time", "arguments": {}}'
LITERAL = (
    '{"name": "write_file", "arguments": {"path": "notes.xml", '
    '"content": "<tool_call>{\\"name\\": \\"x\\"}</tool_call> and } { braces ] [ \\\\"}}'
)
ARGS_FIRST = '{"arguments": {"city": "Paris", "unit": "c"}, "name": "get_weather"}'
PARAMETERS = '{"name": "get_weather", "parameters": {"city": "Lyon", "unit": "f"}}'
SPACED = '{"name": "get_weather", "arguments": { "city" : "Nice" ,\n  "unit":"c" } }'


def think_pieces(kind: str, variant: str, *, emit_open: bool = True) -> list[str | None]:
    """The reasoning part of an output after a ``kind`` prompt (nothing after a closed one)."""
    if kind == "closed":
        return []
    opens = kind != "open" and emit_open
    return [*([THINK] if opens else []), REASONING, END_THINK, "\n\n"]


@dataclass(frozen=True)
class Case:
    """One generation: a label, the prompt kind and ids, the output ids, the finish reason."""

    label: str
    kind: str
    prompt: list[int]
    gen: list[int]
    finish: str


def cut_after(tok: Tokenizer, ids: Sequence[int], needle: str) -> list[int]:
    """The shortest prefix of ``ids`` whose text holds ``needle``, not ending in whitespace."""
    for k in range(1, len(ids) + 1):
        text = tok.decode(list(ids[:k]), skip_special_tokens=False)
        if needle in text:
            assert not text[-1].isspace(), f"cut after {needle!r} ends in whitespace: {text!r}"
            return list(ids[:k])
    raise AssertionError(f"{needle!r} is not in the generation")


@functools.cache
def cases(name: str) -> tuple[Case, ...]:
    """The generations every parser configuration is checked on, for one tokenizer."""
    tok = load_tokenizer(name)
    variant = VARIANT[name]

    def case(label: str, kind: str, rest: list[str | None], **kw: Any) -> Case:
        pieces = think_pieces(kind, variant, emit_open=kw.pop("emit_open", True)) + rest
        return Case(label, kind, prompt_ids(name, kind), ids_of(name, pieces), "stop")

    three = case(
        "open/three-calls",
        "open",
        [
            "Checking three things 🌤️:\n",
            *call(W_TOKYO),
            "\n",
            *call(SEARCH_NESTED),
            "\n",
            *call(EMPTY_ARGS),
        ],
    )
    content = case("open/content", "open", [CONTENT])
    one = case("none/one-call", "none", ["Let me check the weather for you.\n\n", *call(W_PARIS)])
    # Qwen3 after a conversation whose last marker is an earlier turn's </think> (it opens
    # <think> itself); DeepSeek-R1 with no marker and no <think> in the output (reasoning anyway).
    literal_kind, opens = ("history", True) if name == QWEN else ("none", False)
    return (
        content,
        one,
        case("closed/two-calls", "closed", [*call(W_PARIS), "\n", *call(W_TOKYO)]),
        three,
        case("literal", literal_kind, ["I'll write it.\n\n", *call(LITERAL)], emit_open=opens),
        case("open/args-first", "open", [*call(ARGS_FIRST), "\n", *call(PARAMETERS)]),
        case("closed/spaced-args", "closed", [*call(SPACED), "\n"]),
        case("none/partial-tag", "none", [CONTENT_PARTIAL_TAG]),
        Case(
            "cut/mid-arguments",
            "open",
            three.prompt,
            cut_after(tok, three.gen, '"to": [2.5'),
            "length",
        ),
        Case(
            "cut/mid-reasoning",
            "open",
            content.prompt,
            cut_after(tok, content.gen, "(Tokyo)"),
            "length",
        ),
        Case("cut/before-name", "none", one.prompt, cut_after(tok, one.gen, '{"na'), "length"),
    )


# --- the oracle -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Message:
    """A parsed response: content and reasoning ("" for none), calls as (name, arguments)."""

    content: str
    reasoning: str
    calls: tuple[tuple[str, str], ...]


class Tag(str):
    """A marker that arrived as its single token id (a plain ``str`` item is one character)."""

    __slots__ = ()


def starts_in_reasoning(
    tok: Tokenizer, variant: str | None, prompt: Sequence[int], thinking: bool = True
) -> bool:
    """Where the output starts. deepseek_r1: the prompt's last ``<think>``/``</think>`` id
    decides, with neither in reasoning. qwen3: in content when thinking is off; else the
    prompt's last ``</think>``, ``<tool_call>``, ``<think>`` or turn marker id decides (the first
    two close reasoning), with none in reasoning."""
    if variant is None:
        return False
    think, end = tok.token_to_id(THINK), tok.token_to_id(END_THINK)
    if variant == "deepseek_r1":
        for i in reversed(prompt):
            if i in (think, end):
                return i == think
        return True
    if not thinking:
        return False
    closers = {tok.token_to_id(m) for m in (END_THINK, TOOL)} - {None}
    stops = {tok.token_to_id(m) for m in (THINK, *TURNS)} - {None}
    for i in reversed(prompt):
        if i in closers:
            return False
        if i in stops:
            return True
    return True


def _skip_ws(s: str, i: int) -> int:
    while i < len(s) and s[i] in " \t\r\n":
        i += 1
    return i


def scan_call(body: str) -> tuple[str | None, str]:
    """The name (None until its string is complete) and the raw text of the arguments value.

    Reads the object's members in order with ``json``'s ``raw_decode``; an unfinished member ends
    the scan, and an unfinished arguments value is its text so far ("parameters" counts too).
    """
    decoder = json.JSONDecoder()
    i = _skip_ws(body, 0)
    if not body.startswith("{", i):
        return None, ""
    name: str | None = None
    arguments = ""
    i += 1
    while True:
        i = _skip_ws(body, i)
        if i >= len(body) or body[i] == "}":
            break
        try:
            key, i = decoder.raw_decode(body, i)
        except ValueError:
            break
        i = _skip_ws(body, i)
        if not body.startswith(":", i):
            break
        i = _skip_ws(body, i + 1)
        try:
            value, end = decoder.raw_decode(body, i)
        except ValueError:
            if key in ("arguments", "parameters"):
                arguments = body[i:]
            break
        if key == "name" and isinstance(value, str):
            name = value
        elif key in ("arguments", "parameters"):
            arguments = body[i:end]
        i = _skip_ws(body, end)
        if body.startswith(",", i):
            i += 1
    return name, arguments


def oracle(
    name: str,
    prompt: Sequence[int],
    gen: Sequence[int],
    *,
    reasoning: str | None,
    tools: bool,
    parallel: bool = True,
    thinking: bool = True,
) -> Message:
    """What the contract makes of a whole output, from ``tokenizers``' decode alone.

    The output's text (``decode`` with ``skip_special_tokens=False``) is split per the contract:
    markers that are one token count only as that id, others as text. Reasoning (initial state
    from the prompt and ``thinking``) runs until ``</think>`` (or, qwen3, a ``<tool_call>``,
    which then starts the content); a ``<think>`` in it is dropped, and after it think markers
    are content text. In content, the text before the first ``<tool_call>`` is content, each
    call's body runs to a ``</tool_call>`` outside a JSON string, and text after the first call
    starts and outside calls is dropped. A call cut off by the end of the output is kept when its
    name is complete; a call with no arguments value has ``{}``.
    """
    tok = load_tokenizer(name)
    # qwen3's reasoning ends at a <tool_call> even when tools are off.
    call_ends = reasoning == "qwen3"
    active = [
        *((THINK, END_THINK) if reasoning else ()),
        *((TOOL,) if tools or call_ends else ()),
        *((END_TOOL,) if tools else ()),
    ]
    by_id = {single_id(tok, m): m for m in active if single_id(tok, m) is not None}
    seq: list[str] = []
    run: list[int] = []
    for i in [*gen, None]:
        if i is None or i in by_id:
            seq.extend(tok.decode(run, skip_special_tokens=False))
            run = []
            if i is not None:
                seq.append(Tag(by_id[i]))
        else:
            run.append(i)
    assert "".join(seq) == c1_target(tok, prompt, gen, False), "prompt and output do not split"

    def at(k: int, marker: str) -> int:
        """Items the marker takes at ``k``: 1 (its id), its length (its text), or 0."""
        if marker not in active:
            return 0
        if marker in by_id.values():
            return 1 if isinstance(seq[k], Tag) and seq[k] == marker else 0
        items = seq[k : k + len(marker)]
        plain = all(not isinstance(u, Tag) for u in items)
        return len(marker) if plain and "".join(items) == marker else 0

    in_reasoning = starts_in_reasoning(tok, reasoning, prompt, thinking)
    content: list[str] = []
    thought: list[str] = []
    calls: list[tuple[str | None, str]] = []
    body: list[str] | None = None
    in_string = escaped = seen_call = False
    k = 0
    while k < len(seq):
        if body is not None:
            n = 0 if in_string else at(k, END_TOOL)
            if n:
                calls.append(scan_call("".join(body)))
                body, k = None, k + n
                continue
            for ch in seq[k]:  # a tag inside a JSON string is text
                if escaped:
                    escaped = False
                elif ch == "\\" and in_string:
                    escaped = True
                elif ch == '"':
                    in_string = not in_string
            body.append(seq[k])
        elif in_reasoning:
            if n := at(k, THINK):
                k += n
                continue
            if n := at(k, END_THINK):
                in_reasoning, k = False, k + n
                continue
            if call_ends and at(k, TOOL):
                in_reasoning = False  # the tag is read again, as content
                continue
            thought.append(seq[k])
        elif tools and (n := at(k, TOOL)):
            body, in_string, escaped, seen_call = [], False, False, True
            k += n
            continue
        elif not seen_call:
            content.append(seq[k])
        k += 1
    if body is not None:
        calls.append(scan_call("".join(body)))
    kept = tuple((n, a or "{}") for n, a in calls if n is not None)
    return Message("".join(content), "".join(thought), kept[:1] if not parallel else kept)
