"""Derenderer wire format: hand-written vLLM generate JSON in, every field of the answer checked.

The bodies are what vLLM's generate server emits (``GenerateResponse`` / ``GenerateStreamResponse``
with every field, logprobs by id and in the older chat shape, a finish-only chunk, a usage-only
chunk with ``choices: []``), posted as bytes through ``handle_json``. The expected answers are
written out in full from the response shapes of the derender contract: every declared field is
present, nulls included. Texts come from ``tokenizers``' decode (checked in each test). What the
request decides beyond the shapes (seeding, id, model, path, usage) is in
``test_derender_request.py``.
"""

# ruff: noqa: RUF001
from __future__ import annotations

import time
from typing import Any

import pytest
from helpers.derender_util import (
    CHAT,
    COMPLETION,
    PATHS,
    SERVED,
    answer_usage,
    gen_choice,
    gen_chunk,
    gen_response,
    load_derenderer,
    ok,
    run_stream_calls,
    usage_only_chunk,
)
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import c1_target

QWEN = "qwen3"
# qwen3 ids: "<|im_start|>user\n" and the generation "Hello world! 中文 👋." then <|im_end|>.
IM_START, USER, NL, IM_END = 151644, 872, 198, 151645
HELLO, WORLD, BANG, ZHONG, WEN, WAVE_A, WAVE_B, DOT = 9707, 1879, 0, 72858, 16744, 61804, 233, 13
PROMPT = [IM_START, USER, NL]


def alt(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode())}


def entry(token: str, logprob: float, *top: tuple[str, float]) -> dict[str, Any]:
    return alt(token, logprob) | {"top_logprobs": [alt(t, lp) for t, lp in top]}


def message(content: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "refusal": None,
        "annotations": None,
        "audio": None,
        "function_call": None,
        "reasoning": None,
    }


#: What vLLM's answers carry that derender never fills in.
UNSET_CHOICE = {"routed_experts": None, "weight_versions": None}
UNSET_WHOLE = {"prompt_text": None, "ec_transfer_params": None, "metrics": None}


def created_now(answer: dict[str, Any], before: int) -> dict[str, Any]:
    """Checks ``created`` is the current Unix time, then returns the answer without it."""
    created = answer.pop("created")
    assert isinstance(created, int) and before - 1 <= created <= int(time.time()) + 1, created
    return answer


WHOLE_CHAT_BY_ID = b"""{"model": null, "prompt_tokens": 9, "prompt_token_ids": null,
 "chat_request": {"model": "tokstream-test", "messages": [{"role": "user", "content": "Hi"}],
   "logprobs": true, "top_logprobs": 1, "return_token_ids": true},
 "generate_response": {"request_id": "gen-7f3a", "model": null, "created": null,
  "choices": [{"index": 0, "logprobs": {"content": [
     {"token_id": 9707, "logprob": -0.0123, "rank": 1, "top_logprobs": [
       {"token_id": 9707, "logprob": -0.0123, "rank": 1},
       {"token_id": 13048, "logprob": -4.61, "rank": 2}]},
     {"token_id": 1879, "logprob": -0.25, "rank": 1, "top_logprobs": [
       {"token_id": 1879, "logprob": -0.25, "rank": 1}]},
     {"token_id": 0, "logprob": -0.5, "rank": 2, "top_logprobs": [
       {"token_id": 13, "logprob": -0.4, "rank": 1}, {"token_id": 0, "logprob": -0.5, "rank": 2}]},
     {"token_id": 72858, "logprob": -1.0, "rank": 1, "top_logprobs": []},
     {"token_id": 16744, "logprob": -0.125, "rank": 1, "top_logprobs": []},
     {"token_id": 61804, "logprob": -2.0, "rank": 1, "top_logprobs": [
       {"token_id": 61804, "logprob": -2.0, "rank": 1}]},
     {"token_id": 233, "logprob": -0.001, "rank": 1, "top_logprobs": [
       {"token_id": 233, "logprob": -0.001, "rank": 1}]},
     {"token_id": 151645, "logprob": -9999.0, "rank": null, "top_logprobs": []}]},
   "finish_reason": "stop", "token_ids": [9707, 1879, 0, 72858, 16744, 61804, 233, 151645],
   "routed_experts": null, "sampling_mask": null}],
  "usage": {"prompt_tokens": 9, "total_tokens": 17, "completion_tokens": 8,
            "prompt_tokens_details": null, "completion_tokens_details": null},
  "prompt_logprobs": null, "prompt_token_id_logprobs": null,
  "prompt_token_ids": [151644, 872, 198], "mm_placeholders": null, "metrics": null,
  "kv_transfer_params": null, "ec_transfer_params": null}}"""


def test_whole_chat_with_logprobs_by_id() -> None:
    """EOS dropped from the text, logprob strings corrected and cut to ``top_logprobs``."""
    tok = load_tokenizer(QWEN)
    gen = [HELLO, WORLD, BANG, ZHONG, WEN, WAVE_A, WAVE_B, IM_END]
    assert c1_target(tok, PROMPT, gen[:-1], True) == "Hello world! 中文 👋"
    before = int(time.time())
    answer = created_now(ok(load_derenderer(QWEN), CHAT, WHOLE_CHAT_BY_ID), before)
    content = [
        entry("Hello", -0.0123, ("Hello", -0.0123)),
        entry(" world", -0.25, (" world", -0.25)),
        entry("!", -0.5, (".", -0.4)),
        entry(" 中", -1.0),
        entry("文", -0.125),
        entry("", -2.0, ("", -2.0)),
        entry(" 👋", -0.001, (" 👋", -0.001)),
        entry("<|im_end|>", -9999.0),
    ]
    assert (
        answer
        == {
            "id": "gen-7f3a",
            "object": "chat.completion",
            "model": SERVED,
            "choices": [
                {
                    "index": 0,
                    "message": message("Hello world! 中文 👋"),
                    "logprobs": {"content": content},
                    "finish_reason": "stop",
                    "stop_reason": None,
                    "token_ids": gen,
                }
                | UNSET_CHOICE
            ],
            "service_tier": None,
            "system_fingerprint": None,
            "usage": answer_usage(9, 8),
            "prompt_logprobs": None,
            "prompt_token_ids": PROMPT,
            "kv_transfer_params": None,
        }
        | UNSET_WHOLE
    )


WHOLE_CHAT_N2_CHAT_SHAPE = b"""{"model": "tokstream-test", "stream": false,
 "prompt_token_ids": [151644, 872, 198],
 "generate_response": {"request_id": "gen-old", "model": null, "created": null,
  "choices": [
   {"index": 0, "logprobs": {"content": [
      {"token": "token_id:104307", "logprob": -0.25, "bytes": null, "top_logprobs": [
        {"token": "token_id:104307", "logprob": -0.25, "bytes": null},
        {"token": "token_id:9707", "logprob": -3.5, "bytes": null}]},
      {"token": "token_id:3837", "logprob": -9999.0, "bytes": null, "top_logprobs": []}]},
    "finish_reason": "length", "token_ids": [104307, 3837],
    "routed_experts": null, "sampling_mask": null},
   {"index": 1, "logprobs": {"content": [
      {"token": "Hello", "logprob": -0.5, "bytes": null, "top_logprobs": [
        {"token": "Hello", "logprob": -0.5, "bytes": [72, 101, 108, 108, 111]}]},
      {"token": "token_id:0", "logprob": -0.75, "bytes": null, "top_logprobs": []}]},
    "finish_reason": "stop", "stop_reason": "##", "token_ids": [9707, 0],
    "routed_experts": null, "sampling_mask": null}],
  "usage": null,
  "prompt_logprobs": [null, {"872": {"logprob": -7.25, "rank": 12, "decoded_token": null}},
    {"198": {"logprob": -0.5, "rank": 1, "decoded_token": null},
     "13048": {"logprob": -1.5, "rank": 2, "decoded_token": null}}],
  "prompt_token_id_logprobs": null, "prompt_token_ids": [9707], "mm_placeholders": null,
  "metrics": null, "kv_transfer_params": null, "ec_transfer_params": null}}"""


def test_whole_chat_two_choices_chat_shape_logprobs_and_prompt_logprobs() -> None:
    """Placeholders resolved, a real token kept (bytes filled), prompt logprobs decoded."""
    before = int(time.time())
    answer = created_now(ok(load_derenderer(QWEN), CHAT, WHOLE_CHAT_N2_CHAT_SHAPE), before)
    first = [entry("天气", -0.25, ("天气", -0.25), ("Hello", -3.5)), entry("，", -9999.0)]
    second = [entry("Hello", -0.5, ("Hello", -0.5)), entry("!", -0.75)]
    assert (
        answer
        == {
            "id": "gen-old",
            "object": "chat.completion",
            "model": SERVED,
            "choices": [
                {
                    "index": 0,
                    "message": message("天气，"),
                    "logprobs": {"content": first},
                    "finish_reason": "length",
                    "stop_reason": None,
                    "token_ids": None,
                }
                | UNSET_CHOICE,
                {
                    "index": 1,
                    "message": message("Hello!"),
                    "logprobs": {"content": second},
                    "finish_reason": "stop",
                    "stop_reason": "##",
                    "token_ids": None,
                }
                | UNSET_CHOICE,
            ],
            "service_tier": None,
            "system_fingerprint": None,
            "usage": answer_usage(0, 4),
            "prompt_logprobs": [
                None,
                {"872": {"logprob": -7.25, "rank": 12, "decoded_token": "user"}},
                {
                    "198": {"logprob": -0.5, "rank": 1, "decoded_token": "\n"},
                    "13048": {"logprob": -1.5, "rank": 2, "decoded_token": "Hi"},
                },
            ],
            "prompt_token_ids": None,
            "kv_transfer_params": None,
        }
        | UNSET_WHOLE
    )


def test_whole_completion_several_responses() -> None:
    """Choices of every response, indexed in order; usage totals; the first response's id, its
    kv_transfer_params only when every response has the same (vLLM's merge)."""
    kv = {"remote_engine_id": "p0", "remote_block_ids": [1, 2]}
    first = gen_response(
        [gen_choice([HELLO, WORLD, BANG], finish_reason="length")],
        request_id="gen-a",
        prompt_token_ids=PROMPT,
        prompt_logprobs=[None, {"872": {"logprob": -2.5, "rank": 4, "decoded_token": None}}, None],
        kv_transfer_params=kv,
    )
    second = gen_response(
        [
            gen_choice([ZHONG, WEN], index=0, finish_reason="stop"),
            gen_choice([WAVE_A, WAVE_B], index=1, finish_reason="length"),
        ],
        request_id="gen-b",
        prompt_token_ids=[IM_START],
        kv_transfer_params={"remote_engine_id": "p1"},
    )
    body = {
        "generate_responses": [first, second],
        "prompt_tokens": [3, 4],
        "prompt_token_ids": [None, [HELLO]],  # null: the first response's own ids
        "completion_request": {"prompt": "Hi", "return_token_ids": True},
    }
    before = int(time.time())
    answer = created_now(ok(load_derenderer(QWEN), COMPLETION, body), before)

    def choice(index: int, text: str, finish: str, ids: list[int], prompt: list[int]) -> Any:
        return {
            "index": index,
            "text": text,
            "logprobs": None,
            "finish_reason": finish,
            "stop_reason": None,
            "token_ids": ids,
            "prompt_logprobs": None,
            # As vLLM: each generate response's own prompt ids.
            "prompt_token_ids": prompt,
        } | UNSET_CHOICE

    prompt_logprobs = [None, {"872": {"logprob": -2.5, "rank": 4, "decoded_token": "user"}}, None]
    assert answer == {
        "id": "gen-a",
        "object": "text_completion",
        "model": SERVED,
        "choices": [
            choice(0, "Hello world!", "length", [HELLO, WORLD, BANG], PROMPT)
            | {"prompt_logprobs": prompt_logprobs},
            choice(1, " 中文", "stop", [ZHONG, WEN], [IM_START]),
            choice(2, " 👋", "length", [WAVE_A, WAVE_B], [IM_START]),
        ],
        "service_tier": None,
        "system_fingerprint": None,
        "usage": answer_usage(7, 7),
        "kv_transfer_params": None,
        "ec_transfer_params": None,
        "metrics": None,
    }
    same = {**body, "generate_responses": [first, {**second, "kv_transfer_params": kv}]}
    assert ok(load_derenderer(QWEN), COMPLETION, same)["kv_transfer_params"] == kv


def chat_chunk(choices: list[Any], usage_: Any = None, request_id: str = "gen-7f3a") -> Any:
    return {
        "id": request_id,
        "object": "chat.completion.chunk",
        "model": SERVED,
        "choices": choices,
        "usage": usage_,
        "system_fingerprint": None,
        "prompt_token_ids": None,
        "prompt_text": None,
        "metrics": None,
        "kv_transfer_params": None,
    }


def chat_choice(content: str, role: str | None = None, finish: str | None = None) -> Any:
    return {
        "index": 0,
        # An empty delta's content is null, as vLLM's.
        "delta": {"role": role, "content": content or None, "reasoning": None},
        "logprobs": None,
        "finish_reason": finish,
        "stop_reason": None,
        "token_ids": None,
        "weight_versions": None,
    }


def state(window: list[str] | None, read: int | None, offset: int, count: int) -> Any:
    """A carried state; ``logprob_context_token_ids`` is checked by the logprob tests."""
    return {
        "prev_tokens": window,
        "prefix_offset": 0,
        "read_offset": read,
        "role_sent": True,
        "logprob_text_offset": offset,
        "output_token_ids": [],
        "output_chunk_lens": [],
        "tools_streamed": False,
        "last_tool_call_ids": [],
        "held_text": "",
        "generated_tokens": count,
        "stopped": False,
    }


def test_chat_stream_sequence() -> None:
    """Role on the first chunk, a held partial emoji, a finish-only chunk, a usage-only chunk."""
    chunks = [
        gen_chunk([gen_choice([HELLO, WORLD])], request_id="gen-7f3a", prompt_token_ids=PROMPT),
        gen_chunk([gen_choice([BANG, ZHONG, WEN, WAVE_A])], request_id="gen-7f3a"),
        gen_chunk([gen_choice([WAVE_B, DOT])], request_id="gen-7f3a"),
        gen_chunk([gen_choice([], finish_reason="length")], request_id="gen-7f3a"),
        usage_only_chunk("gen-7f3a", 3, 8),
    ]
    before = int(time.time())
    run = run_stream_calls(load_derenderer(QWEN), CHAT, chunks, prompt_tokens=3)
    got = [
        {"chunk": created_now(a["chunk"], before), "stream_state": a["stream_state"]}
        for a in run.answers
    ]
    for n, answer in enumerate(got):
        del answer["stream_state"]["logprob_context_token_ids"]
        if n >= 3:  # the window after the final chunk is spent; the contract does not pin it
            answer["stream_state"].update(prev_tokens=None, read_offset=None)
    ctx = [HELLO, WORLD, BANG, ZHONG, WEN, WAVE_A, WAVE_B, DOT]
    end = state(None, None, 18, 8)
    assert got == [
        {
            "chunk": chat_chunk([chat_choice("Hello world", role="assistant")]),
            "stream_state": state(["Ġworld"], 1, 11, 2),
        },
        {
            "chunk": chat_chunk([chat_choice("! 中文")]),
            "stream_state": state(["æĸĩ", "ĠðŁĳ"], 1, 15, 6),
        },
        {"chunk": chat_chunk([chat_choice(" 👋.")]), "stream_state": state(["."], 1, 18, 8)},
        {"chunk": chat_chunk([chat_choice("", finish="length")]), "stream_state": end},
        {"chunk": chat_chunk([], usage_=answer_usage(3, 8)), "stream_state": end},
    ]
    assert run.answers[4]["stream_state"] == run.answers[3]["stream_state"]
    tok = load_tokenizer(QWEN)
    assert run.text == c1_target(tok, PROMPT, ctx, True)


def test_completion_stream_sequence() -> None:
    """Token ids returned, usage from the chunk (no request ``prompt_tokens``), no role."""
    options = {"prompt": "Hi", "stream": True, "return_token_ids": True}
    chunks = [
        gen_chunk([gen_choice([HELLO, WORLD, BANG])], request_id="gen-c"),
        gen_chunk(
            [gen_choice([ZHONG, WEN], finish_reason="stop")],
            request_id="gen-c",
            usage={"prompt_tokens": 5, "total_tokens": 10, "completion_tokens": 5},
        ),
    ]
    before = int(time.time())
    run = run_stream_calls(
        load_derenderer(QWEN),
        COMPLETION,
        chunks,
        prompt_token_ids=PROMPT,
        completion_request=options,
    )

    def chunk(text: str, ids: list[int], finish: str | None, usage_: Any) -> Any:
        choice = {
            "index": 0,
            "text": text,
            "logprobs": None,
            "finish_reason": finish,
            "stop_reason": None,
            "prompt_token_ids": None,
            "token_ids": ids,
            "weight_versions": None,
        }
        return {
            "id": "gen-c",
            "object": "text_completion",
            "model": SERVED,
            "choices": [choice],
            "usage": usage_,
            "system_fingerprint": None,
            "metrics": None,
            "kv_transfer_params": None,
        }

    got = [created_now(a["chunk"], before) for a in run.answers]
    assert got == [
        chunk("Hello world!", [HELLO, WORLD, BANG], None, None),
        chunk(" 中文", [ZHONG, WEN], "stop", answer_usage(5, 5)),
    ]
    assert run.answers[0]["stream_state"]["role_sent"] is False
    assert run.state is not None and run.state["logprob_text_offset"] == 15


def test_stream_usage_prompt_tokens_from_the_request_when_given() -> None:
    chunk = gen_chunk(
        [gen_choice([HELLO], finish_reason="length")],
        usage={"prompt_tokens": 5, "total_tokens": 6, "completion_tokens": 1},
    )
    for path in PATHS:
        run = run_stream_calls(load_derenderer(QWEN), path, [chunk], prompt_tokens=40)
        assert run.answers[0]["chunk"]["usage"] == answer_usage(40, 1)


def test_n2_stream_one_state_per_choice_index() -> None:
    """Interleaved choices, each carrying its own state; each gets the role once."""
    r = load_derenderer(QWEN)
    tok = load_tokenizer(QWEN)
    gens = {0: [HELLO, WORLD, BANG, DOT], 1: [ZHONG, WEN, WAVE_A, WAVE_B]}
    order = [1, 0, 1, 1, 0, 0, 1, 0]
    states: dict[int, Any] = {0: None, 1: None}
    pos = {0: 0, 1: 0}
    texts: dict[int, str] = {0: "", 1: ""}
    for index in order:
        ids = gens[index][pos[index] : pos[index] + 1]
        pos[index] += 1
        finish = "length" if pos[index] == len(gens[index]) else None
        chunk = gen_chunk([gen_choice(ids, index=index, finish_reason=finish)])
        run = run_stream_calls(r, CHAT, [chunk], state=states[index], prompt_token_ids=PROMPT)
        (choice,) = run.answers[0]["chunk"]["choices"]
        assert choice["index"] == index
        assert choice["delta"]["role"] == ("assistant" if pos[index] == 1 else None)
        texts[index] += choice["delta"]["content"] or ""
        states[index] = run.state
    assert texts == {i: c1_target(tok, PROMPT, ids, True) for i, ids in gens.items()}


def test_stream_prompt_is_read_on_the_first_chunk_only() -> None:
    """A carried state is never re-seeded, whatever prompt later chunks carry."""
    r = load_derenderer("mistral-7b-v0.1")
    tok = load_tokenizer("mistral-7b-v0.1")
    there, hello, b4, b8, bd = 736, 22557, 231, 187, 176
    chunks = [
        gen_chunk([gen_choice([b4, b8])]),
        gen_chunk([gen_choice([bd, there], finish_reason="length")]),
    ]
    first = run_stream_calls(r, CHAT, chunks[:1], prompt_token_ids=[hello])
    # Re-seeding from [there] would hold 中's last byte behind "there" and lose the character.
    again = run_stream_calls(r, CHAT, chunks[1:], state=first.state, prompt_token_ids=[there])
    assert first.text + again.text == c1_target(tok, [hello], [b4, b8, bd, there], True)


@pytest.mark.parametrize("path", PATHS)
def test_usage_only_chunk_leaves_the_state_as_it_was(path: str) -> None:
    r = load_derenderer(QWEN)
    first = run_stream_calls(r, path, [gen_chunk([gen_choice([HELLO, WAVE_A])])])
    later = run_stream_calls(r, path, [usage_only_chunk("gen-1", 2, 2)], state=first.state)
    assert later.state == first.state
    assert later.answers[0]["chunk"]["choices"] == []
    assert later.answers[0]["chunk"]["usage"] == answer_usage(2, 2)


def test_stream_usage_details_pass_through() -> None:
    """Beyond vLLM (which leaves them null), a chunk's usage details are the engine's, as sent."""
    details = {"cached_tokens": 2}
    chunk = gen_chunk(
        [gen_choice([HELLO], finish_reason="length")],
        usage={
            "prompt_tokens": 5,
            "total_tokens": 6,
            "completion_tokens": 1,
            "prompt_tokens_details": details,
            "completion_tokens_details": {"reasoning_tokens": 0},
        },
    )
    for path in PATHS:
        run = run_stream_calls(load_derenderer(QWEN), path, [chunk])
        got = run.answers[0]["chunk"]["usage"]
        assert got["prompt_tokens_details"] == details
        assert got["completion_tokens_details"] == {"reasoning_tokens": 0}
