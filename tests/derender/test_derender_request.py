"""What a derender request decides besides the text's shape, for both paths.

The prompt that seeds the text (the request's ``prompt_token_ids``, else the generate
response's), ``skip_special_tokens`` (true unless false), the answer's ``id`` and ``model`` (404
for another model, and for any other path), ``return_token_ids`` and the engine's finish and stop
reasons passed through, and ``usage`` counting every generated id. Texts come from
``tokenizers``' decode.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.derender_util import (
    CHAT,
    PATHS,
    SERVED,
    answer_usage,
    assert_error,
    gen_choice,
    gen_chunk,
    gen_response,
    load_derenderer,
    ok,
    options_field,
    post,
    whole_body,
    whole_text,
)
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import c1_target

QWEN = "qwen3"
# qwen3 ids: "<|im_start|>user\n", then "Hello world!." and <|im_end|>.
IM_START, USER, NL, IM_END = 151644, 872, 198, 151645
HELLO, WORLD, BANG, DOT = 9707, 1879, 0, 13
PROMPT = [IM_START, USER, NL]


@pytest.mark.parametrize("path", PATHS)
def test_seeding_prefers_the_request_then_the_generate_response(path: str) -> None:
    """Top-level ``prompt_token_ids``, else the generate response's, else none (REFERENCE 5)."""
    r = load_derenderer("mistral-7b-v0.1")
    tok = load_tokenizer("mistral-7b-v0.1")
    there, hello, b4, b8, bd = 736, 22557, 231, 187, 176

    def text(gen: list[int], top: list[int] | None, own: list[int] | None) -> str:
        response = gen_response([gen_choice(gen, finish_reason="length")], prompt_token_ids=own)
        (choice,) = ok(r, path, whole_body(path, response, prompt_token_ids=top))["choices"]
        return whole_text(path, choice)

    assert text([there], None, None) == c1_target(tok, None, [there], True) == "there"
    assert text([there], [hello], None) == c1_target(tok, [hello], [there], True) == " there"
    assert text([there], None, [hello]) == " there"
    gen = [bd, there]
    assert text(gen, None, [b4, b8]) == c1_target(tok, [b4, b8], gen, True) == "中 there"
    assert text(gen, [hello], [b4, b8]) == c1_target(tok, [hello], gen, True) == "\ufffd there"


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("skip", [None, True, False, "absent"])
def test_skip_special_tokens_defaults_to_true(path: str, skip: Any) -> None:
    tok = load_tokenizer(QWEN)
    think, unthink = 151667, 151668
    gen = [IM_START, HELLO, think, WORLD, unthink, BANG, IM_END]
    options = None if skip == "absent" else {"skip_special_tokens": skip}
    response = gen_response([gen_choice(gen, finish_reason="length")])
    body = whole_body(path, response) | ({} if options is None else options_field(path, options))
    (choice,) = ok(load_derenderer(QWEN), path, body)["choices"]
    want = tok.decode(gen, skip_special_tokens=skip is not False)
    assert whole_text(path, choice) == want
    assert ("<think>" in want) and (("<|im_start|>" in want) == (skip is False))


@pytest.mark.parametrize("path", PATHS)
def test_id_model_and_unknown_model(path: str) -> None:
    """``model``: the request's (if it is the served one) or the served name; else 404."""
    r = load_derenderer(QWEN)
    response = gen_response([gen_choice([HELLO])], request_id="req-42")
    stream = {"stream": True, "generate_chunk": gen_chunk([gen_choice([HELLO])], request_id="s-9")}
    for body, want_id in ((whole_body(path, response), "req-42"), (stream, "s-9")):
        for model in (None, SERVED):
            answer = ok(r, path, body | {"model": model})
            answer = answer.get("chunk", answer)
            assert (answer["id"], answer["model"]) == (want_id, SERVED)
        status, answer = post(r, path, body | {"model": "other-model"})
        message = assert_error(status, answer, 404)
        assert message == "The model `other-model` does not exist."
        assert answer["error"]["param"] is None


@pytest.mark.parametrize(
    "path",
    [
        "/v1/chat/completions",
        "/v1/completions",
        "/v1/chat/completions/derender/",
        "/v1/derender",
        "",
        "/",
        "/V1/COMPLETIONS/DERENDER",
    ],
)
def test_unknown_path_is_404(path: str) -> None:
    body = json.dumps({"generate_response": gen_response([gen_choice([HELLO])])}).encode()
    status, answer = post(load_derenderer(QWEN), path, body)
    assert_error(status, answer, 404)
    assert answer["error"]["param"] is None


@pytest.mark.parametrize("path", PATHS)
def test_return_token_ids_and_reasons_pass_through(path: str) -> None:
    """``token_ids`` only when asked; ``finish_reason``/``stop_reason`` as the engine sent them."""
    r = load_derenderer(QWEN)
    cases = [("length", None), ("abort", None), ("stop", "\n\n"), ("stop", 42), (None, None)]
    for finish, stop in cases:
        choice = gen_choice([HELLO, WORLD], finish_reason=finish, stop_reason=stop)
        for flag in (None, False, True):
            options = {} if flag is None else {"return_token_ids": flag}
            body = whole_body(
                path, gen_response([choice], prompt_token_ids=PROMPT), options=options
            )
            answer = ok(r, path, body)
            (got,) = answer["choices"]
            assert (got["finish_reason"], got["stop_reason"]) == (finish, stop)
            assert got["token_ids"] == ([HELLO, WORLD] if flag else None)
            if path == CHAT:
                assert answer["prompt_token_ids"] == (PROMPT if flag else None)
            stream = {"stream": True, "generate_chunk": gen_chunk([choice])}
            stream |= options_field(path, options)
            (got,) = ok(r, path, stream)["chunk"]["choices"]
            assert (got["finish_reason"], got["stop_reason"]) == (finish, stop)
            assert got["token_ids"] == ([HELLO, WORLD] if flag else None)


@pytest.mark.parametrize("path", PATHS)
def test_whole_usage_counts_every_generated_id(path: str) -> None:
    """``prompt_tokens`` from the request or 0; completion tokens before stop-token removal."""
    r = load_derenderer(QWEN)
    response = gen_response(
        [
            gen_choice([HELLO, IM_END], index=0, finish_reason="stop"),
            gen_choice([WORLD, BANG, DOT], index=1, finish_reason="length"),
        ],
        usage={"prompt_tokens": 99, "total_tokens": 104, "completion_tokens": 5},
    )
    for prompt_tokens, want in ((None, 0), (12, 12)):
        answer = ok(r, path, whole_body(path, response, prompt_tokens=prompt_tokens))
        assert answer["usage"] == answer_usage(want, 5)
        assert [whole_text(path, c) for c in answer["choices"]] == ["Hello", " world!."]
