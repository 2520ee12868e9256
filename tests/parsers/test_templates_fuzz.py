"""Response templates on generated messages: random content, reasoning and calls with random
JSON arguments, written in a family's format and tokenized with a real tokenizer; the whole
derender must equal transformers' ``parse_response``, and a stream at random chunk sizes the
whole response."""

from __future__ import annotations

import json
from typing import Any

from helpers.parsers_util import stream, whole
from helpers.real_tokenizers import load_tokenizer
from helpers.templates_util import REQUEST, derenderer, encode, oracle, parsed, template_json
from hypothesis import given
from hypothesis import strategies as st

# No character that begins a marker of these families, so text never opens a region by chance.
TEXT = st.text(
    st.characters(blacklist_characters="<[|\x00", blacklist_categories=("Cs",)), max_size=24
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
CALL = st.tuples(
    st.from_regex(r"[a-z_]{1,12}", fullmatch=True), st.dictionaries(TEXT, JSON_VALUES, max_size=3)
)
# The content is never empty, so the output has ids.
CONTENT = TEXT.map(lambda t: t + ".")
MESSAGE = st.tuples(st.none() | TEXT, CONTENT, st.lists(CALL, max_size=3))

#: Family: (tokenizer, prompt, reasoning markers, call writer, before the calls, after them).
FORMATS: dict[str, tuple[str, str, tuple[str, str], Any, str, str]] = {
    "qwen3_template": (
        "qwen3",
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
        ("<think>\n", "\n</think>\n\n"),
        lambda n, a: f'\n<tool_call>\n{{"name": "{n}", "arguments": {a}}}\n</tool_call>',
        "",
        "",
    ),
    "mistral_v11": (
        "mistral-nemo-tekken",
        "[INST]hi[/INST]",
        ("[THINK]", "[/THINK]"),
        lambda n, a: f"[TOOL_CALLS]{n}[ARGS]{a}",
        "",
        "",
    ),
    "kimi_k2": (
        "qwen3",
        "<|im_assistant|>assistant<|im_middle|>",
        ("<think>", "</think>"),
        lambda n, a: (
            f"<|tool_call_begin|>functions.{n}:0<|tool_call_argument_begin|>{a}<|tool_call_end|>"
        ),
        "<|tool_calls_section_begin|>",
        "<|tool_calls_section_end|>",
    ),
}


def _check(family: str, message: tuple[Any, str, list[Any]], sizes: list[int]) -> None:
    tokenizer, prompt_text, think, write, before, after = FORMATS[family]
    reasoning, content, calls = message
    text = "" if reasoning is None else f"{think[0]}{reasoning}{think[1]}"
    text += content
    if calls:
        text += before + "".join(write(n, json.dumps(a, ensure_ascii=False)) for n, a in calls)
        text += after
    tok = load_tokenizer(tokenizer)
    prompt, gen = encode(tok, prompt_text), encode(tok, text)
    head = tok.decode(prompt, skip_special_tokens=False)
    seen = tok.decode(prompt + gen, skip_special_tokens=False)[len(head) :]
    r = derenderer(family)
    got = whole(r, prompt, gen, REQUEST, "stop")
    assert parsed(got) == oracle(template_json(family), seen, prompt_text), seen
    chunks, i = [], 0
    for size in sizes:
        if i >= len(gen):
            break
        chunks.append(gen[i : i + size])
        i += size
    chunks.append(gen[i:])
    assert stream(r, prompt, chunks, REQUEST, "stop").result() == got


SIZES = st.lists(st.integers(1, 9), min_size=1, max_size=40)


@given(MESSAGE, SIZES)
def test_qwen3_template(message: tuple[Any, str, list[Any]], sizes: list[int]) -> None:
    _check("qwen3_template", message, sizes)


@given(MESSAGE, SIZES)
def test_mistral_v11(message: tuple[Any, str, list[Any]], sizes: list[int]) -> None:
    _check("mistral_v11", message, sizes)


@given(MESSAGE, SIZES)
def test_kimi_k2(message: tuple[Any, str, list[Any]], sizes: list[int]) -> None:
    _check("kimi_k2", message, sizes)
