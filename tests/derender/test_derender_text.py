"""Derender text on the ten real tokenizers: chunkings, whole responses, C1, vLLM state interchange.

Generations are corpus encodings of multilingual text (CJK, emoji, Korean, Devanagari, added and
special tokens). For every chunking (1, 2, 3, random 1-5 ids, a finish-only tail), chat and
completion, with and without prompt ids, both ``skip_special_tokens`` values: the streamed chunk
texts add up to the whole response's text, which is the C1 target computed from ``tokenizers``'
decode; the carried state stays under 1024 bytes. States pass between ``handle_json`` and the
plain-Python reference of vLLM's algorithm in both directions with the reference's deltas.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.derender_util import (
    CHAT,
    COMPLETION,
    PATHS,
    chunkings,
    gen_choice,
    gen_response,
    generate_chunks,
    generations,
    load_derenderer,
    ok,
    options_field,
    run_stream_calls,
    whole_body,
    whole_text,
)
from helpers.stream_util import SENTENCEPIECE, c1_target, chunked, vllm_is_right
from tokenizers import Tokenizer

from oracles.corpus import byte_ids, encode_text, long_generation
from oracles.vllm_reference import State, VllmReference


def mid_character_cut(tok: Tokenizer, ids: list[int]) -> int | None:
    """A prompt cut whose decode ends inside a character (U+FFFD), if the ids have one."""
    for k in range(1, len(ids) - 1):
        if tok.decode(ids[:k], skip_special_tokens=False).endswith("\ufffd"):
            return k
    return None


def prompt_cases(tok: Tokenizer, ids: list[int]) -> list[tuple[str, int]]:
    """(where the prompt travels, cut): none, the request's field, the generate output's field."""
    cases = [("none", len(ids) // 3), ("request", len(ids) // 3), ("generate", len(ids) // 2)]
    inside = mid_character_cut(tok, ids)
    if inside is not None:
        cases.append(("request", inside))
    return cases


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("skip", [False, True])
def test_every_chunking_and_the_whole_response_give_c1(
    name: str, tok: Tokenizer, path: str, skip: bool
) -> None:
    r = load_derenderer(name)
    options = options_field(path, {"skip_special_tokens": skip})
    for sample, ids in generations(tok):
        for mode, cut in prompt_cases(tok, ids):
            prompt, gen = (None if mode == "none" else ids[:cut]), ids[cut:]
            top = prompt if mode == "request" else None
            own = prompt if mode == "generate" else None
            target = c1_target(tok, prompt, gen, skip)
            where = f"{name} {path} skip={skip} {sample} prompt={mode}@{cut} gen={gen}"
            response = gen_response([gen_choice(gen, finish_reason="length")], prompt_token_ids=own)
            body = whole_body(path, response, prompt_token_ids=top) | options
            (choice,) = ok(r, path, body)["choices"]
            assert whole_text(path, choice) == target, where
            for shape, chunks in chunkings(gen, where).items():
                sent = generate_chunks(chunks, prompt_token_ids=own)
                run = run_stream_calls(r, path, sent, prompt_token_ids=top, **options)
                assert run.text == target, f"{shape}: {where}"
                assert run.state is not None
                assert (run.state["held_text"], run.state["stopped"]) == ("", False), where
                assert run.state["generated_tokens"] == len(gen), where
                if path == CHAT:
                    roles = [a["chunk"]["choices"][0]["delta"]["role"] for a in run.answers]
                    assert roles == ["assistant"] + [None] * (len(roles) - 1), where
                finishes = [a["chunk"]["choices"][0]["finish_reason"] for a in run.answers]
                assert finishes == [None] * (len(finishes) - 1) + ["length"], where


def vllm_state(state: State, context: list[int], offset: int, junk: list[str]) -> dict[str, Any]:
    """The state a vLLM server would hand a client, optionally not trimmed (``junk`` in front)."""
    return {
        "prev_tokens": [*junk, *state.tokens],
        "prefix_offset": state.prefix_offset + len(junk),
        "read_offset": state.read_offset + len(junk),
        "role_sent": True,
        "logprob_context_token_ids": context[-4:],
        "logprob_text_offset": offset,
        "output_token_ids": [],
        "output_chunk_lens": [],
        "tools_streamed": False,
        "last_tool_call_ids": [],
    }


@pytest.mark.parametrize("skip", [False, True])
def test_states_interchange_with_the_vllm_reference(name: str, tok: Tokenizer, skip: bool) -> None:
    """A reference state continued by ``handle_json`` gives the reference's deltas; and back."""
    r = load_derenderer(name)
    ref = VllmReference(tok, skip)
    path = CHAT if skip else COMPLETION
    options = options_field(path, {"skip_special_tokens": skip})
    specials = set(ref.special_ids)
    checked = 0
    for sample, ids in generations(tok):
        for cut in (0, len(ids) // 2):
            prompt, gen = ids[:cut], ids[cut:]
            seed = ref.seed(prompt)
            deltas, states = ref.run(gen, seed)
            before = [seed, *states]
            if not vllm_is_right(ref, deltas, before[-1], c1_target(tok, prompt, gen, skip)):
                continue
            checked += 1
            where = f"{name} skip={skip} {sample} cut={cut} gen={gen}"
            chunks = generate_chunks([[i] for i in gen] + [[]])
            run = run_stream_calls(r, path, chunks, prompt_token_ids=prompt or None, **options)
            assert run.texts == [*deltas, ref.flush(before[-1])], where
            got = [a["stream_state"] for a in run.answers[:-1]]
            assert [(s["prev_tokens"], 0, s["read_offset"]) for s in got] == [
                s.window for s in states
            ], where
            junk = [tok.id_to_token(i) or "" for i in gen[:3] if i not in specials]
            for j in sorted({0, 1, len(gen) // 2, len(gen) - 1}):
                at = f"switch={j} {where}"
                sent = "".join(deltas[:j])
                for extra in ([], junk):
                    carried = vllm_state(before[j], gen[:j], len(sent), extra)
                    rest = run_stream_calls(r, path, chunks[j:], state=carried, **options)
                    assert rest.texts == [*deltas[j:], ref.flush(before[-1])], f"{extra} {at}"
                if j == 0:
                    continue
                ours = run.answers[j - 1]["stream_state"]
                window = (ours["prev_tokens"], ours["prefix_offset"], ours["read_offset"])
                more, after = ref.run(gen[j:], State.from_window(window))
                assert more == deltas[j:], at
                assert sent + "".join(more) + ref.flush(after[-1]) == "".join(run.texts), at
    assert checked, f"{name}: vLLM's algorithm is right on no case, so nothing was compared"


@pytest.mark.parametrize("path", PATHS)
def test_state_stays_small_over_a_long_generation(name: str, tok: Tokenizer, path: str) -> None:
    """2,000 varied ids in chunks of 1-5: every carried state under 1024 bytes, text exact."""
    r = load_derenderer(name)
    gen = long_generation(tok, 2000)
    (chunks,) = [c for shape, c in chunkings(gen, name).items() if shape == "finish_only_tail"]
    run = run_stream_calls(r, path, generate_chunks(chunks))
    assert run.text == c1_target(tok, None, gen, True)


@pytest.mark.parametrize("name", SENTENCEPIECE, indirect=True)
def test_byte_run_opened_by_a_stray_continuation_byte(name: str, tok: Tokenizer) -> None:
    """A run ``95 EB B9 B5``: invalid from its first byte, then a whole character (빵).

    ``decode`` renders every byte of such a run as U+FFFD (REFERENCE 3); C1's one exception is a
    run that turns invalid *after* a character was sent, which this is not. A whole response and
    every chunking, each chunk resumed from the carried state, must give that text (C1, and
    REFERENCE 7.11: streamed equals whole).
    """
    r = load_derenderer(name)
    gen = [*byte_ids(tok, b"\x95" + "빵".encode()), *encode_text(tok, " ok")]
    for prompt in (None, encode_text(tok, "Hello")):
        target = c1_target(tok, prompt, gen, True)
        assert target.startswith("\ufffd" * 4), target
        response = gen_response([gen_choice(gen, finish_reason="length")])
        (choice,) = ok(r, CHAT, whole_body(CHAT, response, prompt_token_ids=prompt))["choices"]
        assert whole_text(CHAT, choice) == target
        for size in (1, 2, 3):
            run = run_stream_calls(
                r, CHAT, generate_chunks(chunked(gen, size)), prompt_token_ids=prompt
            )
            assert run.text == target, f"chunks of {size}, prompt {prompt}: {run.texts}"
