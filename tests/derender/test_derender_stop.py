"""Derender stop tokens and stop strings (REFERENCE section 5, the derender contract).

Stop tokens: with ``finish_reason == "stop"`` the last id is not detokenized when it is the
engine's int ``stop_reason``, a request ``stop_token_ids`` member (``stop_reason`` filled in), or
an EOS id (unless ``ignore_eos``; every EOS id but the primary one is reported as
``stop_reason``); never with ``include_stop_str_in_output``. Stop strings: vLLM's per-token check
after ``min_tokens``, earliest completing match first, then list order, applied only when the
engine finished with ``"stop"`` and reported no stop token (``test_derender_engine_rules.py``);
streams hold back text that could begin a stop string. Every chunking must give the whole response's
text, and that text must equal ``stop_oracle`` over the vLLM reference's per-token deltas.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from helpers.derender_util import (
    CHAT,
    COMPLETION,
    PATHS,
    assert_error,
    chunk_text,
    chunkings,
    gen_choice,
    gen_chunk,
    gen_response,
    generate_chunks,
    generations,
    load_derenderer,
    ok,
    options_field,
    post,
    run_stream_calls,
    stop_oracle,
    whole_body,
    whole_text,
)
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import c1_target, vllm_is_right
from tokenizers import Tokenizer

from oracles.vllm_reference import VllmReference

QWEN = "qwen3"
IM_START, USER, NL, IM_END, END_OF_TEXT = 151644, 872, 198, 151645, 151643
HELLO, WORLD, BANG, ZHONG, WEN, WAVE_A, WAVE_B, DOT = 9707, 1879, 0, 72858, 16744, 61804, 233, 13
PROMPT = [IM_START, USER, NL]
BYE_NOW = [HELLO, WORLD, BANG, ZHONG, WEN, WAVE_A, WAVE_B, 89325, 1431, DOT]  # ... 👋 Bye now.
TEXT = "Hello world! 中文 👋 Bye now."


@pytest.mark.parametrize(
    ("name", "eos"),
    [
        ("qwen3", (IM_END,)),
        ("gpt2", (50256,)),
        ("deepseek-r1", (1,)),
        ("bert-all-minilm-l6-v2", ()),
    ],
)
def test_default_eos_from_tokenizer_config(name: str, eos: tuple[int, ...]) -> None:
    """No generation_config.json beside these files: the ``eos_token`` of tokenizer_config."""
    r = load_derenderer(name)
    assert tuple(r.eos_token_ids) == eos
    assert r.served_model_name == "tokstream-test" and r.max_model_len is None


STOP_TOKEN_CASES = [
    # (last id, finish_reason, engine stop_reason or "unset", request fields, dropped, stop_reason)
    (IM_END, "stop", "unset", {}, True, None),
    (IM_END, "stop", None, {}, True, None),
    (IM_END, "stop", None, {"ignore_eos": True}, False, None),
    (IM_END, "length", None, {}, False, None),
    (IM_END, "stop", None, {"include_stop_str_in_output": True}, False, None),
    (END_OF_TEXT, "stop", None, {"stop_token_ids": [END_OF_TEXT]}, True, END_OF_TEXT),
    (END_OF_TEXT, "stop", END_OF_TEXT, {}, True, END_OF_TEXT),
    (END_OF_TEXT, "stop", END_OF_TEXT, {"include_stop_str_in_output": True}, False, END_OF_TEXT),
    (END_OF_TEXT, "stop", None, {}, False, None),
    (
        END_OF_TEXT,
        "stop",
        None,
        {"stop_token_ids": [END_OF_TEXT], "ignore_eos": True},
        True,
        END_OF_TEXT,
    ),
    (DOT, "stop", DOT, {}, True, DOT),
    (DOT, "stop", None, {"stop_token_ids": [7, DOT]}, True, DOT),
    (DOT, "length", None, {"stop_token_ids": [DOT]}, False, None),
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    ("last", "finish", "engine", "fields", "dropped", "reason"), STOP_TOKEN_CASES
)
def test_stop_tokens(
    path: str, last: int, finish: str, engine: Any, fields: Any, dropped: bool, reason: Any
) -> None:
    """Whole and streamed (stop id in the last chunk); ids and usage keep the stop id."""
    tok = load_tokenizer(QWEN)
    r = load_derenderer(QWEN)
    gen = [HELLO, WORLD, last]
    want = c1_target(tok, PROMPT, gen[:-1] if dropped else gen, False)
    options = {"skip_special_tokens": False, "return_token_ids": True} | fields
    stop = {} if engine == "unset" else {"stop_reason": engine}
    choice = gen_choice(gen, finish_reason=finish, **stop)
    response = gen_response([choice], usage=None)
    answer = ok(r, path, whole_body(path, response, prompt_token_ids=PROMPT, options=options))
    (got,) = answer["choices"]
    assert whole_text(path, got) == want
    assert (got["finish_reason"], got["stop_reason"], got["token_ids"]) == (finish, reason, gen)
    assert answer["usage"]["completion_tokens"] == 3
    first = gen_chunk([gen_choice(gen[:1])], prompt_token_ids=PROMPT)
    final = gen_chunk([gen_choice(gen[1:], finish_reason=finish, **stop)])
    run = run_stream_calls(r, path, [first, final], **options_field(path, options))
    assert run.text == want
    (got,) = run.answers[-1]["chunk"]["choices"]
    assert (got["finish_reason"], got["stop_reason"], got["token_ids"]) == (finish, reason, gen[1:])


def test_configured_eos_ids_replace_the_default() -> None:
    tok = load_tokenizer(QWEN)
    r = load_derenderer(QWEN, eos_token_ids=(DOT,))
    options = {"chat_request": {"skip_special_tokens": False}}
    for last, dropped in ((DOT, True), (IM_END, False)):
        gen = [HELLO, last]
        response = gen_response([gen_choice(gen, finish_reason="stop")])
        (got,) = ok(r, CHAT, whole_body(CHAT, response) | options)["choices"]
        text = tok.decode(gen[: 1 if dropped else 2], skip_special_tokens=False)
        assert got["message"]["content"] == text
        assert got["stop_reason"] is None


# --- stop strings -----------------------------------------------------------------------------

STOP_STRING_CASES = [
    # (stop, include_stop_str_in_output, min_tokens, text, stop_reason)
    (["中文"], False, 0, "Hello world! ", "中文"),
    (["中文"], True, 0, "Hello world! 中文", "中文"),
    ("👋", False, 0, "Hello world! 中文 ", "👋"),
    (["world", "Hello world"], False, 0, "Hello ", "world"),
    (["Hello world", "world"], False, 0, "", "Hello world"),
    (["中文", "world"], False, 0, "Hello ", "world"),
    (["Hello"], False, 1, TEXT, None),
    (["Hello"], False, 0, "", "Hello"),
    (["o w"], False, 1, "Hell", "o w"),
    (["", "now"], False, 0, "Hello world! 中文 👋 Bye ", "now"),
    ([" 👋 B"], False, 0, "Hello world! 中文", " 👋 B"),
    (["文 👋"], True, 0, "Hello world! 中文 👋", "文 👋"),
    (["!", "Bye"], False, 3, "Hello world! 中文 👋 ", "Bye"),
    (["xyz", "now!"], False, 0, TEXT, None),
    ([".!"], True, 0, TEXT, None),
    ([], False, 0, TEXT, None),
]


def qwen_deltas() -> list[str]:
    """vLLM's per-token deltas of the fixture generation (no prompt, skipping specials)."""
    deltas, _ = VllmReference(load_tokenizer(QWEN), True).run(BYE_NOW)
    return deltas


def check_stream(
    r: Any,
    path: str,
    chunks: list[list[int]],
    options: dict[str, Any],
    want: tuple[str, str | None],
    where: str,
    prompt: list[int] | None = None,
) -> None:
    """Streams ``chunks``: text and reason as wanted, held text short, nothing after a match."""
    stops = options.get("stop") or []
    stops = [stops] if isinstance(stops, str) else stops
    longest = max((len(s) for s in stops), default=0)
    # The engine ends a choice that a stop string ended with "stop" and, like older generate
    # hosts, no stop_reason; with "length" the request's stop strings are not applied.
    finish = "length" if want[1] is None else "stop"
    sent = generate_chunks(chunks, finish_reason=finish, prompt_token_ids=prompt)
    run = run_stream_calls(r, path, sent, **options_field(path, options))
    assert run.text == want[0], where
    matched = None
    for n, answer in enumerate(run.answers):
        state, choices = answer["stream_state"], answer["chunk"]["choices"]
        assert len(state["held_text"]) < max(longest, 1), f"chunk {n}: {state} {where}"
        if matched is not None:
            assert choices == [] and state["stopped"] is True, f"chunk {n}: {answer} {where}"
            continue
        (choice,) = choices
        if want[1] is not None and choice["stop_reason"] == want[1]:
            assert choice["finish_reason"] == "stop" and state["stopped"] is True, where
            matched = n
        else:
            assert state["stopped"] is False, f"chunk {n}: {state} {where}"
            if n < len(run.answers) - 1:
                assert choice["finish_reason"] is None, f"chunk {n}: {choice} {where}"
    if want[1] is None:
        (last,) = run.answers[-1]["chunk"]["choices"]
        assert (last["finish_reason"], last["stop_reason"]) == ("length", None), where
    else:
        assert matched is not None, f"no chunk reported the match: {where}"


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("stop", "include", "min_tokens", "text", "reason"), STOP_STRING_CASES)
def test_stop_strings_whole_and_every_chunking(
    path: str, stop: Any, include: bool, min_tokens: int, text: str, reason: str | None
) -> None:
    stops = [stop] if isinstance(stop, str) else stop
    assert stop_oracle(qwen_deltas(), stops, include, min_tokens) == (text, reason)
    r = load_derenderer(QWEN)
    options = {"stop": stop, "include_stop_str_in_output": include, "min_tokens": min_tokens}
    finish = "length" if reason is None else "stop"
    response = gen_response([gen_choice(BYE_NOW, finish_reason=finish)])
    (choice,) = ok(r, path, whole_body(path, response, options=options))["choices"]
    assert whole_text(path, choice) == text
    want_finish = ("length", None) if reason is None else ("stop", reason)
    assert (choice["finish_reason"], choice["stop_reason"]) == want_finish
    for shape, chunks in chunkings(BYE_NOW, f"{stop}{include}{min_tokens}").items():
        check_stream(r, path, chunks, options | {"stream": True}, (text, reason), shape)


def test_stop_string_split_across_chunks_is_held_in_the_state() -> None:
    """中 ends the first chunk: it could begin 中文, so it waits in ``held_text``."""
    r = load_derenderer(QWEN)
    options = {"chat_request": {"stop": ["中文"], "stream": True}}
    chunks = [gen_chunk([gen_choice(BYE_NOW[:4])]), gen_chunk([gen_choice(BYE_NOW[4:6])])]
    run = run_stream_calls(r, CHAT, chunks, **options)
    assert run.texts == ["Hello world! ", ""]
    first, second = (a["stream_state"] for a in run.answers)
    assert (first["held_text"], first["stopped"]) == ("中", False)
    assert (second["held_text"], second["stopped"]) == ("", True)
    (choice,) = run.answers[1]["chunk"]["choices"]
    assert (choice["finish_reason"], choice["stop_reason"]) == ("stop", "中文")
    later = gen_chunk([gen_choice(BYE_NOW[6:], finish_reason="length")])
    after = run_stream_calls(r, CHAT, [later], state=run.state, **options)
    assert after.answers[0]["chunk"]["choices"] == [] and after.texts == [""]


def picked_stops(rng: random.Random, text: str) -> list[tuple[list[str], bool, int]]:
    """Stop-string configurations for one generation: substrings of its text and misses."""
    miss = "\u2603\u00a7"
    assert miss not in text

    def piece() -> str:
        at = rng.randrange(len(text) // 4, len(text))
        return text[at : at + rng.randint(1, 4)]

    return [
        ([piece()], False, 0),
        ([miss, piece(), piece()], True, 0),
        ([piece()], rng.random() < 0.5, rng.randint(1, 12)),
        ([miss, text[-1] + miss], False, 0),
    ]


def test_stop_strings_on_every_tokenizer(name: str, tok: Tokenizer) -> None:
    """CJK, emoji and markers around the matches: each chunking equals whole equals the oracle."""
    r = load_derenderer(name)
    ref = VllmReference(tok, True)
    rng = random.Random(name)
    checked = 0
    for sample, ids in generations(tok):
        for cut in (0, len(ids) // 4):
            prompt, gen = ids[:cut], ids[cut:]
            deltas, states = ref.run(gen, ref.seed(prompt))
            last = states[-1] if states else ref.seed(prompt)
            target = c1_target(tok, prompt, gen, True)
            if not target or not vllm_is_right(ref, deltas, last, target):
                continue
            checked += 1
            for stops, include, min_tokens in picked_stops(rng, target):
                want = stop_oracle(deltas, stops, include, min_tokens)
                if want[1] is None:
                    want = (target, None)
                where = f"{name} {sample} cut={cut} stop={stops} {include} {min_tokens} gen={gen}"
                options = {"stop": stops, "include_stop_str_in_output": include}
                options["min_tokens"] = min_tokens
                finish = "length" if want[1] is None else "stop"
                for path in PATHS:
                    response = gen_response([gen_choice(gen, finish_reason=finish)])
                    body = whole_body(path, response, prompt_token_ids=prompt or None)
                    (choice,) = ok(r, path, body | options_field(path, options))["choices"]
                    assert whole_text(path, choice) == want[0], f"{path}: {where}"
                    assert choice["stop_reason"] == want[1], f"{path}: {where}"
                for shape, chunks in chunkings(gen, where).items():
                    path = CHAT if len(chunks) % 2 else COMPLETION
                    streamed = options | {"stream": True}
                    at = f"{shape} {path}: {where}"
                    check_stream(r, path, chunks, streamed, want, at, prompt or None)
    assert checked, f"{name}: no generation where the reference is right"


A = 64  # "a" on qwen3 (byte-level: one id per ASCII letter)
B = 65  # "b"


def long_stops(count: int, length: int) -> list[str]:
    """Stop strings that hold back ``length - 1`` chars of a run of "a" and never match it."""
    return ["a" * (length - 1) + chr(0x4E00 + k) for k in range(count - 1)] + ["a" * length + "b"]


@pytest.mark.timeout(60)
def test_long_stop_strings_cost_linear_time() -> None:
    """32 stop strings of 4 KiB over 6,000 ids, whole and streamed: one automaton, no rescans.

    Matching cost cubic time before (a 135 KB body took 28 s); the timeout only proves that the
    request finishes, the figures are in BENCHMARKS.md. The last stop string matches at the end,
    beginning thousands of chars back, in text a stream held over many chunks.
    """
    r = load_derenderer(QWEN)
    stops = long_stops(32, 4096)
    ids = [A] * 6000 + [B]
    want = "a" * (6000 - 4096)
    for path in PATHS:
        options = {"stop": stops}
        response = gen_response([gen_choice(ids, finish_reason="stop")])
        body = whole_body(path, response) | options_field(path, options)
        (choice,) = ok(r, path, body)["choices"]
        assert whole_text(path, choice) == want
        assert (choice["finish_reason"], choice["stop_reason"]) == ("stop", stops[-1])
        state, texts = None, []
        streamed = options_field(path, options | {"stream": True})
        for at in range(0, len(ids), 500):
            chunk = gen_chunk([gen_choice(ids[at : at + 500])])
            body = {"stream": True, "generate_chunk": chunk, "stream_state": state, **streamed}
            answer = ok(r, path, body)
            state = answer["stream_state"]
            assert len(state["held_text"]) < 4097
            texts += [chunk_text(path, c) for c in answer["chunk"]["choices"]]
        assert "".join(texts) == want and state["stopped"]


def test_stop_strings_over_one_mebibyte_are_refused() -> None:
    """The automaton's memory is bounded: more than 1 MiB of stop strings is a 400 on ``stop``."""
    r = load_derenderer(QWEN)
    stops = ["x" * (1 << 19), "y" * (1 << 19), "z"]
    for path in PATHS:
        response = gen_response([gen_choice([HELLO], finish_reason="length")])
        body = whole_body(path, response) | options_field(path, {"stop": stops})
        status, answer = post(r, path, body)
        message = assert_error(status, answer, 400)
        assert "1048576" in message and answer["error"]["param"] == "stop", answer
        assert ok(r, path, whole_body(path, response) | options_field(path, {"stop": stops[:2]}))
