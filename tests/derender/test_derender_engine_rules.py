"""The engine's finish decides how a choice is cut (vLLM 0.33.0's ``_decode_output``), whole and
streamed alike, with and without a parser.

- ``finish_reason`` other than ``"stop"``, or a reported stop token: the request's stop strings
  are not applied (the engine found none); a stream releases what it held back for them.
- A reported string ``stop_reason``: the text is cut at that string (kept with
  ``include_stop_str_in_output``), whatever the request's ``stop``.
- With a reasoning parser and ``include_reasoning: false``, logprobs and token ids are left out
  (they would show the reasoning), whole and streamed.
- With a parser, a whole response takes stop strings (the text is cut before it is parsed) and
  needs no ``prompt_token_ids`` (the parser starts where it starts on an empty prompt).
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.derender_util import (
    CHAT,
    PATHS,
    gen_choice,
    gen_chunk,
    gen_response,
    load_derenderer,
    ok,
    options_field,
    post,
    run_stream_calls,
    whole_body,
    whole_text,
)
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import load_detokenizer
from tokstream import Derenderer

QWEN = "qwen3"
HELLO, WORLD, BANG, ONE, TWO, THREE = 9707, 1879, 0, 825, 1378, 2326
IDS = [HELLO, WORLD, BANG, ONE, TWO, THREE]  # "Hello world! one two three"
TEXT = "Hello world! one two three"
THINK, END_THINK = 151667, 151668
REASONING = [11613, 5519, 2326, 13]  # "Two plus three."
FIVE_DONE = [37020, 13, 27357, 13]  # "Five. Done."


def _whole_and_streams(
    path: str, ids: list[int], last: dict[str, Any], options: dict[str, Any]
) -> list[tuple[str, Any, Any]]:
    """(text, finish_reason, stop_reason) of the whole response and of every split stream."""
    r = load_derenderer(QWEN)
    response = gen_response([gen_choice(ids, **last)], usage=None)
    (choice,) = ok(r, path, whole_body(path, response, options=options))["choices"]
    got = [(whole_text(path, choice), choice["finish_reason"], choice["stop_reason"])]
    for at in range(1, len(ids)):
        chunks = [
            gen_chunk([gen_choice(ids[:at])]),
            gen_chunk([gen_choice(ids[at:], **last)]),
        ]
        run = run_stream_calls(r, path, chunks, **options_field(path, options))
        # After a stop string matched, later chunks answer no choice.
        (final,) = [a for a in run.answers if a["chunk"]["choices"]][-1]["chunk"]["choices"]
        got.append((run.text, final["finish_reason"], final["stop_reason"]))
    return got


@pytest.mark.parametrize("path", PATHS)
def test_length_leaves_the_request_stop_strings_alone(path: str) -> None:
    # " two thr" could begin the stop string while the stream runs: it is held, then released.
    options = {"stop": [" two three!", "world! one two three"]}
    got = _whole_and_streams(path, IDS, {"finish_reason": "length"}, options)
    assert set(got) == {(TEXT, "length", None)}


@pytest.mark.parametrize("path", PATHS)
def test_a_reported_stop_token_leaves_the_request_stop_strings_alone(path: str) -> None:
    # " three" could begin the stop string while the stream runs: it is held, then released.
    options = {"stop": [" three!"], "stop_token_ids": [BANG]}
    ids = [*IDS, BANG]
    got = _whole_and_streams(path, ids, {"finish_reason": "stop", "stop_reason": BANG}, options)
    assert set(got) == {(TEXT, "stop", BANG)}


@pytest.mark.parametrize("include", [False, True])
@pytest.mark.parametrize("path", PATHS)
def test_a_reported_stop_string_cuts_the_text(path: str, include: bool) -> None:
    options = {"stop": ["never"], "include_stop_str_in_output": include}
    last = {"finish_reason": "stop", "stop_reason": "three"}
    got = _whole_and_streams(path, IDS, last, options)
    cut = "Hello world! one two " + ("three" if include else "")
    # The whole response and a stream whose last chunk holds the string cut it; a stream cannot
    # take back what it sent before the last chunk, so it cuts only the last chunk's text.
    assert got[0] == (cut, "stop", "three")
    assert got[-1] == (cut, "stop", "three")
    for text, finish, reason in got:
        assert (finish, reason) == ("stop", "three")
        assert text.startswith("Hello world! one two ") and TEXT.startswith(text)


@pytest.mark.parametrize("path", PATHS)
def test_no_reported_reason_applies_the_request_stop_strings(path: str) -> None:
    got = _whole_and_streams(path, IDS, {"finish_reason": "stop"}, {"stop": ["two"]})
    assert set(got) == {("Hello world! one ", "stop", "two")}


# --- with a parser ------------------------------------------------------------------------------


def _parsing() -> Derenderer:
    return Derenderer(
        load_detokenizer(QWEN),
        served_model_name="m",
        reasoning_parser="qwen3",
        tool_parser="hermes",
    )


def _thought() -> tuple[list[int], list[dict[str, Any]]]:
    ids = [THINK, *REASONING, END_THINK, *FIVE_DONE]
    entries = [{"token_id": i, "logprob": -0.5, "top_logprobs": []} for i in ids]
    return ids, entries


def test_a_whole_parsed_response_needs_no_prompt_ids() -> None:
    ids, _ = _thought()
    body = {
        "generate_response": gen_response([gen_choice(ids, finish_reason="stop")]),
        "chat_request": {"messages": []},
    }
    status, answer = post(_parsing(), CHAT, body)
    assert status == 200, answer
    message = answer["choices"][0]["message"]
    assert (message["reasoning"], message["content"]) == ("Two plus three.", "Five. Done.")


@pytest.mark.parametrize(
    ("stop", "include", "content", "reasoning"),
    [
        (["Done"], False, "Five. ", "Two plus three."),
        (["Done"], True, "Five. Done", "Two plus three."),
        (["plus"], False, None, "Two "),
    ],
)
def test_a_whole_parsed_response_is_cut_at_a_stop_string(
    stop: list[str], include: bool, content: str | None, reasoning: str
) -> None:
    ids, _ = _thought()
    body = {
        "generate_response": gen_response([gen_choice(ids, finish_reason="stop")]),
        "prompt_token_ids": [HELLO],
        "chat_request": {"messages": [], "stop": stop, "include_stop_str_in_output": include},
    }
    (choice,) = ok(_parsing(), CHAT, body)["choices"]
    assert (choice["message"]["content"], choice["message"]["reasoning"]) == (content, reasoning)
    assert (choice["finish_reason"], choice["stop_reason"]) == ("stop", stop[0])


@pytest.mark.parametrize("include_reasoning", [True, False])
def test_hidden_reasoning_drops_logprobs_and_token_ids(include_reasoning: bool) -> None:
    ids, entries = _thought()
    request = {"messages": [], "include_reasoning": include_reasoning, "return_token_ids": True}
    choice = gen_choice(ids, finish_reason="stop", logprobs={"content": entries})
    body = {"generate_response": gen_response([choice]), "chat_request": request}
    (got,) = ok(_parsing(), CHAT, body)["choices"]
    shown = include_reasoning
    assert got["message"]["reasoning"] == ("Two plus three." if shown else None)
    assert (got["logprobs"] is not None, got["token_ids"] is not None) == (shown, shown)
    if shown:
        assert len(got["logprobs"]["content"]) == len(ids)
    chunks = [
        gen_chunk(
            [gen_choice(part, logprobs={"content": entries[at : at + len(part)]})],
            prompt_token_ids=[HELLO] if at == 0 else None,
        )
        for at, part in ((0, ids[:3]), (3, ids[3:]))
    ]
    r, state, content = _parsing(), None, ""
    for n, chunk in enumerate(chunks):
        if n == len(chunks) - 1:
            chunk["choices"][0]["finish_reason"] = "stop"
        body = {"stream": True, "generate_chunk": chunk, "stream_state": state}
        answer = ok(r, CHAT, body | {"chat_request": request})
        state = answer["stream_state"]
        (c,) = answer["chunk"]["choices"]
        assert (c["logprobs"] is not None, c["token_ids"] is not None) == (shown, shown)
        content += c["delta"]["content"] or ""
    assert content == "Five. Done."


def test_a_plain_text_matches_the_tokenizer() -> None:
    assert load_tokenizer(QWEN).decode(IDS) == TEXT
