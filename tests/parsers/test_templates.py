"""Response templates against transformers' ``parse_response``, whole and streamed.

For every built-in template and every assistant message its family can express, the generation
(rendered through the family's chat template where a fixture has one, else hand-built, and
tokenized with a real tokenizer) is derendered whole, which must equal ``parse_response`` on the
same text, template and prompt; then streamed at 1, 3 and 16 ids a chunk and at random sizes,
the state carried between calls, which must equal the whole response.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from helpers.parsers_oracle import SERVED, chat_request
from helpers.parsers_util import derenderer_class, expected_finish, stream, whole
from helpers.stream_util import load_detokenizer
from helpers.templates_util import (
    FAMILIES,
    MESSAGES,
    REQUEST,
    Case,
    case,
    derenderer,
    oracle,
    parsed,
    template_json,
)

CASES = [
    (family, message)
    for family in FAMILIES
    for message in MESSAGES
    if case(family, message) is not None
]


def chunks(ids: list[int], shape: str) -> list[list[int]]:
    if shape == "random":
        rng, out, i = random.Random(len(ids)), [], 0
        while i < len(ids):
            width = rng.randint(1, 7)
            out.append(ids[i : i + width])
            i += width
        return out
    size = int(shape)
    return [ids[i : i + size] for i in range(0, len(ids), size)] or [[]]


def test_every_family_has_its_cases() -> None:
    found = {family for family, _ in CASES}
    assert found == set(FAMILIES)
    assert len(CASES) >= 50


@pytest.mark.parametrize(("family", "message"), CASES)
def test_whole_equals_parse_response(family: str, message: str) -> None:
    c = case(family, message)
    assert c is not None
    got = whole(derenderer(family), c.prompt, c.gen, REQUEST, "stop")
    template = template_json(FAMILIES[family].template)
    assert parsed(got) == oracle(template, c.text, c.prompt_text), c.text
    assert got.finish_reason == expected_finish(got.message, "stop")


@pytest.mark.parametrize(("family", "message"), CASES)
@pytest.mark.parametrize("shape", ["1", "3", "16", "random"])
def test_streamed_equals_whole(family: str, message: str, shape: str) -> None:
    c = case(family, message)
    assert c is not None
    r = derenderer(family)
    expected = whole(r, c.prompt, c.gen, REQUEST, "stop")
    got = stream(r, c.prompt, chunks(c.gen, shape), REQUEST, "stop")
    assert got.result() == expected


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_replay_equals_resumable(family: str) -> None:
    message = "parallel" if case(family, "parallel") else "plain"
    c: Case | None = case(family, message)
    assert c is not None
    expected = whole(derenderer(family), c.prompt, c.gen, REQUEST, "stop")
    got = stream(
        derenderer(family, "replay"), c.prompt, chunks(c.gen, "3"), REQUEST, "stop", mode="replay"
    )
    assert got.result() == expected


def _cut(c: Case, needle: str) -> list[int]:
    """The output ids up to the first token whose text completes ``needle``."""
    from helpers.real_tokenizers import load_tokenizer

    tok = load_tokenizer(FAMILIES[c.family].tokenizer)
    for n in range(1, len(c.gen) + 1):
        if needle in tok.decode(c.gen[:n], skip_special_tokens=False):
            return c.gen[:n]
    raise AssertionError(f"{needle!r} not in the output")


@pytest.mark.parametrize("family", sorted(f for f in FAMILIES if case(f, "nested")))
def test_a_call_cut_by_length_streams_as_far_as_it_came(family: str) -> None:
    c = case(family, "nested")
    assert c is not None
    cut = _cut(c, "東京")
    r = derenderer(family)
    got = whole(r, c.prompt, cut, REQUEST, "length")
    ((name, arguments),) = got.message.calls
    assert name == "search" and got.finish_reason == "length"
    if family not in ("qwen3_coder", "glm45"):
        # JSON arguments arrive as written; tag-form ones only when the call closes.
        assert arguments.startswith('{"query": "say \\"hi\\" } ] 東'), arguments
    for shape in ("1", "3"):
        assert stream(r, c.prompt, chunks(cut, shape), REQUEST, "length").result() == got


def test_text_after_the_calls_follows_the_content() -> None:
    # parse_response keeps a field's last region; the stream sends every region, in order.
    c = case("qwen3_template", "content_call")
    assert c is not None
    from helpers.real_tokenizers import load_tokenizer

    tok = load_tokenizer("qwen3")
    gen = c.gen + tok.encode("\nDone 👍", add_special_tokens=False).ids
    got = whole(derenderer("qwen3_template"), c.prompt, gen, REQUEST, "stop")
    text = tok.decode(c.prompt + gen, skip_special_tokens=False)
    text = text[len(tok.decode(c.prompt, skip_special_tokens=False)) :]
    content, _, calls = oracle(template_json("qwen3_template"), text, c.prompt_text)
    assert content == "Done 👍" and parsed(got)[2] == calls
    assert got.message.content == "Let me check.Done 👍"
    streamed = stream(derenderer("qwen3_template"), c.prompt, chunks(gen, "1"), REQUEST, "stop")
    assert streamed.result() == got


def test_tool_choice_none_leaves_calls_as_content() -> None:
    c = case("qwen3_template", "reasoning_call")
    assert c is not None
    request = chat_request(tool_choice="none")
    got = whole(derenderer("qwen3_template"), c.prompt, c.gen, request, "stop")
    assert got.message.reasoning == "Need the tool." and not got.message.calls
    assert got.message.content.startswith("<tool_call>") and got.finish_reason == "stop"


def test_only_the_named_part_is_parsed() -> None:
    c = case("qwen3_template", "reasoning_call")
    assert c is not None
    fam = FAMILIES["qwen3_template"]
    r = derenderer_class()(
        load_detokenizer(fam.tokenizer), served_model_name=SERVED, tool_parser="qwen3_template"
    )
    got = whole(r, c.prompt, c.gen, REQUEST, "stop")
    assert got.message.reasoning == "" and got.message.content.startswith("<think>")
    assert [n for n, _ in got.message.calls] == ["get_weather"]
    assert (r.reasoning_parser, r.tool_parser) == (None, "qwen3_template")


def test_a_hostile_carried_state_is_refused_or_started_over() -> None:
    from helpers.derender_util import CHAT, assert_error, post

    c = case("qwen3_template", "content_call")
    assert c is not None
    r = derenderer("qwen3_template")
    first = stream(r, c.prompt, [c.gen[:3]], REQUEST, "length").states[-1]
    assert "x" in first["parser"]

    def body(state: dict[str, Any]) -> dict[str, Any]:
        choice = {"index": 0, "token_ids": c.gen[3:5], "finish_reason": None}
        chunk = {"request_id": "gen-1", "choices": [choice]}
        return {"stream": True, "generate_chunk": chunk, "stream_state": state,
                "chat_request": REQUEST}  # fmt: skip

    held = json.loads(json.dumps(first))
    held["parser"]["x"]["h"] = "<" * 5000
    assert "held text" in assert_error(*post(r, CHAT, body(held)), 400)
    # A field index the template does not have starts over in the implicit field.
    other = json.loads(json.dumps(first))
    other["parser"]["x"]["c"] = 200
    status, _ = post(r, CHAT, body(other))
    assert status == 200


def test_a_close_inside_a_json_string_is_text_of_the_call() -> None:
    from helpers.real_tokenizers import load_tokenizer

    tok = load_tokenizer("qwen3")
    args = {"content": "<tool_call>x</tool_call> } ]"}
    text = f'<tool_call>\n{{"name": "write_file", "arguments": {json.dumps(args)}}}\n</tool_call>'
    prompt = tok.encode("<|im_start|>assistant\n", add_special_tokens=False).ids
    gen = tok.encode(text, add_special_tokens=False).ids
    r = derenderer("qwen3_template")
    got = whole(r, prompt, gen, REQUEST, "stop")
    assert parsed(got) == ("", "", [("write_file", args)])
    assert stream(r, prompt, chunks(gen, "1"), REQUEST, "stop").result() == got
