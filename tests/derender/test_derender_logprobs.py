"""Derender logprobs (REFERENCE section 4): token strings, bytes, top_logprobs, text_offset.

A character split over byte tokens reports ``""``, ``""``, then the character, also when the
split crosses chunk boundaries (the context travels in ``logprob_context_token_ids``); ``bytes``
is the UTF-8 of the reported string; ``top_logprobs`` is cut to the request's count; completion
``text_offset`` stays absolute across chunks (``logprob_text_offset``). Expected strings come
from ``tokenizers``' decode, never from tokstream.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from helpers.derender_util import (
    CHAT,
    COMPLETION,
    PATHS,
    gen_choice,
    gen_chunk,
    gen_response,
    load_derenderer,
    ok,
    options_field,
    run_stream_calls,
    whole_body,
)
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import BYTE_LEVEL, SENTENCEPIECE
from tokenizers import Tokenizer

from oracles.corpus import encode_text

MISTRAL = "mistral-7b-v0.1"
HELLO, HI, THERE, OK, WORLD = 22557, 15359, 736, 3614, 1526  # ▁Hello ▁Hi ▁there ▁ok ▁world
E4, B8, AD = 231, 187, 176  # 中 = E4 B8 AD as <0xNN> tokens
GEN = [HI, E4, B8, AD, OK]
STRINGS = [" Hi", "", "", "中", " ok"]
LOGPROBS = [-0.125, -0.5, -0.25, -0.0625, -3.0]
SPLIT_TEXT = "Hi 中文 삥뽕빵 👨‍👩‍👧‍👦 🇯🇵 नमस्ते, done."


def by_id(ids: list[int], logprobs: list[float], alternatives: int = 2) -> dict[str, Any]:
    """By-id generate logprobs: each position's top list is the sampled id, ▁there, ▁world."""
    content = []
    for token_id, lp in zip(ids, logprobs, strict=True):
        top = [(token_id, lp), (THERE, lp - 1), (WORLD, lp - 2)][: 1 + alternatives]
        content.append(
            {
                "token_id": token_id,
                "logprob": lp,
                "rank": 1,
                "top_logprobs": [
                    {"token_id": t, "logprob": v, "rank": n + 1} for n, (t, v) in enumerate(top)
                ],
            }
        )
    return {"content": content}


def chat_shape(ids: list[int], logprobs: list[float]) -> dict[str, Any]:
    """The same in the older chat shape, ``"token_id:N"`` placeholders and null bytes."""
    content = []
    for entry in by_id(ids, logprobs)["content"]:
        top = [
            {"token": f"token_id:{t['token_id']}", "logprob": t["logprob"], "bytes": None}
            for t in entry["top_logprobs"]
        ]
        content.append(
            {
                "token": f"token_id:{entry['token_id']}",
                "logprob": entry["logprob"],
                "bytes": None,
                "top_logprobs": top,
            }
        )
    return {"content": content}


def chat_entries(strings: list[str], logprobs: list[float], keep: int) -> list[dict[str, Any]]:
    """The chat-shape answer for positions whose tops were (sampled, " there", " world")."""

    def alt(token: str, lp: float) -> dict[str, Any]:
        return {"token": token, "logprob": lp, "bytes": list(token.encode())}

    return [
        alt(s, lp)
        | {"top_logprobs": [alt(s, lp), alt(" there", lp - 1), alt(" world", lp - 2)][:keep]}
        for s, lp in zip(strings, logprobs, strict=True)
    ]


def completion_logprobs(
    strings: list[str], logprobs: list[float], keep: int, start: int
) -> dict[str, Any]:
    """The completion-shape answer: offsets from ``start`` by each reported string's length."""
    offsets, at = [], start
    for s in strings:
        offsets.append(at)
        at += len(s)
    tops = [
        dict([(s, lp), (" there", lp - 1), (" world", lp - 2)][:keep])
        for s, lp in zip(strings, logprobs, strict=True)
    ]
    return {
        "text_offset": offsets,
        "token_logprobs": logprobs,
        "tokens": strings,
        "top_logprobs": tops,
    }


def test_byte_tokens_fixture_matches_tokenizers() -> None:
    """The fixture's strings are what decode gives for these ids after a word."""
    tok = load_tokenizer(MISTRAL)
    assert [tok.id_to_token(i) for i in (E4, B8, AD)] == ["<0xE4>", "<0xB8>", "<0xAD>"]
    assert tok.decode([HELLO, *GEN]) == "Hello" + "".join(STRINGS)


@pytest.mark.parametrize("shape", ["by_id", "chat"])
def test_whole_chat_byte_tokens_report_empty_empty_char(shape: str) -> None:
    logprobs = (by_id if shape == "by_id" else chat_shape)(GEN, LOGPROBS)
    response = gen_response([gen_choice(GEN, finish_reason="length", logprobs=logprobs)])
    options = {"logprobs": True, "top_logprobs": 2}
    body = whole_body(CHAT, response, prompt_token_ids=[HELLO], options=options)
    (choice,) = ok(load_derenderer(MISTRAL), CHAT, body)["choices"]
    assert choice["message"]["content"] == " Hi中 ok"
    assert choice["logprobs"] == {"content": chat_entries(STRINGS, LOGPROBS, 2)}


@pytest.mark.parametrize("path", PATHS)
def test_top_logprobs_kept_whole_without_a_request(path: str) -> None:
    response = gen_response(
        [gen_choice(GEN, finish_reason="length", logprobs=by_id(GEN, LOGPROBS))]
    )
    body = whole_body(path, response, prompt_token_ids=[HELLO])
    (choice,) = ok(load_derenderer(MISTRAL), path, body)["choices"]
    if path == CHAT:
        assert choice["logprobs"] == {"content": chat_entries(STRINGS, LOGPROBS, 3)}
    else:
        assert choice["logprobs"] == completion_logprobs(STRINGS, LOGPROBS, 3, 0)


def test_whole_completion_text_offset_and_top_cut() -> None:
    response = gen_response(
        [gen_choice(GEN, finish_reason="length", logprobs=by_id(GEN, LOGPROBS))]
    )
    options = {"prompt": "Hello", "logprobs": 1}
    body = whole_body(COMPLETION, response, prompt_token_ids=[HELLO], options=options)
    (choice,) = ok(load_derenderer(MISTRAL), COMPLETION, body)["choices"]
    assert choice["text"] == " Hi中 ok"
    # logprobs + 1 candidates: the sampled token, then the top k (vLLM's cut).
    assert choice["logprobs"] == completion_logprobs(STRINGS, LOGPROBS, 2, 0)
    assert choice["logprobs"]["text_offset"] == [0, 3, 3, 3, 4]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("shape", ["by_id", "chat"])
def test_split_character_across_chunks(path: str, shape: str) -> None:
    """中's three byte tokens over two chunks: the context and the text offset are carried."""
    make = by_id if shape == "by_id" else chat_shape
    cuts = [(0, 2), (2, 4), (4, 5)]
    chunks = []
    for a, b in cuts:
        finish = "length" if b == len(GEN) else None
        choice = gen_choice(GEN[a:b], finish_reason=finish, logprobs=make(GEN[a:b], LOGPROBS[a:b]))
        chunks.append(gen_chunk([choice]))
    request = {"logprobs": True, "top_logprobs": 2} if path == CHAT else {"logprobs": 2}
    request["stream"] = True
    run = run_stream_calls(
        load_derenderer(MISTRAL),
        path,
        chunks,
        prompt_token_ids=[HELLO],
        **options_field(path, request),
    )
    assert run.texts == [" Hi", "中", " ok"]
    states = [a["stream_state"] for a in run.answers]
    assert [s["logprob_context_token_ids"] for s in states] == [GEN[:2], GEN[:4], GEN[1:]]
    assert [s["logprob_text_offset"] for s in states] == [3, 4, 7]
    for (a, b), answer, start in zip(cuts, run.answers, (0, 3, 4), strict=True):
        (choice,) = answer["chunk"]["choices"]
        if path == CHAT:
            want = {"content": chat_entries(STRINGS[a:b], LOGPROBS[a:b], 2)}
        else:
            want = completion_logprobs(STRINGS[a:b], LOGPROBS[a:b], 3, start)
        assert choice["logprobs"] == want


def test_completion_text_offset_continues_from_a_carried_state() -> None:
    """A later chunk's offsets start at the state's ``logprob_text_offset``."""
    carried = {
        "prev_tokens": ["▁Hello"],
        "prefix_offset": 0,
        "read_offset": 1,
        "logprob_context_token_ids": [HELLO],
        "logprob_text_offset": 100,
    }
    choice = gen_choice(GEN, logprobs=by_id(GEN, LOGPROBS, alternatives=0))
    run = run_stream_calls(
        load_derenderer(MISTRAL), COMPLETION, [gen_chunk([choice])], state=carried
    )
    (got,) = run.answers[0]["chunk"]["choices"]
    assert got["logprobs"]["text_offset"] == [100, 103, 103, 103, 104]
    assert run.state is not None and run.state["logprob_text_offset"] == 100 + len(run.text)
    assert run.text == " Hi中 ok"


def as_continuation(tok: Tokenizer, ids: list[int]) -> str:
    """The text ``ids`` add after a plain first token: no first-token space stripping."""
    head = encode_text(tok, "a")
    return tok.decode([*head, *ids], skip_special_tokens=False)[len(tok.decode(head)) :]


def entry_strings(path: str, logprobs: dict[str, Any]) -> list[str]:
    if path == CHAT:
        for entry in logprobs["content"]:
            assert entry["bytes"] == list(entry["token"].encode()), entry
        return [entry["token"] for entry in logprobs["content"]]
    return list(logprobs["tokens"])


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", [*BYTE_LEVEL, *SENTENCEPIECE, "t5-small"], indirect=True)
def test_logprob_strings_add_up_to_the_text_in_any_chunking(
    name: str, tok: Tokenizer, path: str
) -> None:
    """Split characters on every byte family: the strings concatenate to decode's text."""
    r = load_derenderer(name)
    ids = encode_text(tok, SPLIT_TEXT)
    lps = [-0.5] * len(ids)
    want = as_continuation(tok, ids)
    response = gen_response([gen_choice(ids, finish_reason="length", logprobs=by_id(ids, lps, 0))])
    (choice,) = ok(r, path, whole_body(path, response))["choices"]
    whole = entry_strings(path, choice["logprobs"])
    assert "".join(whole) == want
    assert not any(s.endswith("\ufffd") for s in whole)
    rng = random.Random(f"{name}/{path}")
    for _ in range(4):
        chunks, i = [], 0
        while i < len(ids):
            width = rng.randint(1, 3)
            part = ids[i : i + width]
            chunks.append(
                gen_chunk([gen_choice(part, logprobs=by_id(part, lps[i : i + width], 0))])
            )
            i += width
        run = run_stream_calls(r, path, chunks)
        streamed = [
            s
            for a in run.answers
            for s in entry_strings(path, a["chunk"]["choices"][0]["logprobs"])
        ]
        assert streamed == whole


def test_logprob_context_is_the_last_sampled_ids_even_without_logprobs() -> None:
    """REFERENCE 4: the state carries "the last 4 sampled ids", whether or not a chunk had logprobs.

    A chunk without logprobs (E4 sampled) followed by one with them: B8 and AD still see E4.
    """
    first = gen_chunk([gen_choice([HI, E4])])
    second = gen_chunk([gen_choice([B8, AD], logprobs=by_id([B8, AD], LOGPROBS[2:4], 0))])
    run = run_stream_calls(load_derenderer(MISTRAL), CHAT, [first, second])
    states = [a["stream_state"]["logprob_context_token_ids"] for a in run.answers]
    assert states == [[HI, E4], [HI, E4, B8, AD]]
    (choice,) = run.answers[1]["chunk"]["choices"]
    assert [e["token"] for e in choice["logprobs"]["content"]] == ["", "中"]
