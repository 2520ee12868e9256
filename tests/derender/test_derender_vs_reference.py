"""tokstream's Derenderer against ``derender_reference.ReferenceDerenderer``, answer by answer.

The reference is a plain-Python derender in vLLM's manner (pydantic validation, vLLM's windowed
algorithm from ``vllm_reference``, logprob strings from ``tokenizers``). Where vLLM's algorithm is
right (``vllm_is_right``), and without stop strings (the reference refuses them when streaming),
both must give the same JSON for whole responses and for every stream chunk, logprobs and stop
tokens included. ``created`` is the clock's; the window after the final chunk is spent and not
part of the contract.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from helpers.derender_util import (
    CHAT,
    PATHS,
    SERVED,
    chunkings,
    gen_choice,
    gen_chunk,
    gen_response,
    generations,
    load_derenderer,
    options_field,
    post,
    whole_body,
)
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import c1_target, vllm_is_right
from tokenizers import Tokenizer

from oracles.vllm_reference import VllmReference


@functools.cache
def reference(name: str) -> Any:
    from oracles.derender_reference import ReferenceDerenderer

    eos = tuple(load_derenderer(name).eos_token_ids)
    return ReferenceDerenderer(load_tokenizer(name), SERVED, eos)


def by_id(ids: list[int]) -> dict[str, Any] | None:
    """By-id logprobs: each position's top list is the sampled id and the next sampled one."""
    if not ids:
        return None
    content = []
    for n, token_id in enumerate(ids):
        other = ids[(n + 1) % len(ids)]
        tops = [(token_id, -0.5 - n / 64), (other, -1.5 - n / 64)]
        content.append(
            {
                "token_id": token_id,
                "logprob": tops[0][1],
                "rank": 1,
                "top_logprobs": [{"token_id": t, "logprob": v, "rank": 1} for t, v in tops],
            }
        )
    return {"content": content}


def same(ours: tuple[int, Any], theirs: tuple[int, Any], final: bool, where: str) -> None:
    """Equal statuses and answers, ``created`` aside (and the spent window of a final chunk)."""
    assert ours[0] == theirs[0] == 200, f"{ours} {theirs} {where}"
    a, b = ours[1], theirs[1]
    for answer in (a, b):
        answer.get("chunk", answer).pop("created")
        if final and "stream_state" in answer:
            answer["stream_state"].update(prev_tokens=None, read_offset=None)
    assert a == b, where


@pytest.mark.parametrize("path", PATHS)
def test_same_answers_as_the_reference(name: str, tok: Tokenizer, path: str) -> None:
    ours, theirs = load_derenderer(name), reference(name)
    vref = VllmReference(tok, True)
    eos = list(ours.eos_token_ids)[:1]
    request = {"logprobs": True, "top_logprobs": 1} if path == CHAT else {"logprobs": 1}
    options = options_field(path, request | {"return_token_ids": True})
    compared = 0
    for sample, ids in generations(tok):
        for cut, finish in ((0, "length"), (len(ids) // 2, "stop")):
            prompt, gen = ids[:cut], ids[cut:]
            deltas, states = vref.run(gen, vref.seed(prompt))
            if not vllm_is_right(vref, deltas, states[-1], c1_target(tok, prompt, gen, True)):
                continue
            compared += 1
            gen = gen + eos if finish == "stop" else gen  # an EOS to drop
            where = f"{name} {path} {sample} cut={cut} gen={gen}"
            choice = gen_choice(gen, finish_reason=finish, logprobs=by_id(gen))
            response = gen_response([choice], prompt_token_ids=prompt or None)
            body = whole_body(path, response, prompt_tokens=len(prompt)) | options
            same(post(ours, path, body), post(theirs, path, body), False, where)
            for shape, chunks in chunkings(gen, where).items():
                states_: list[Any] = [None, None]
                for n, part in enumerate(chunks):
                    last = n == len(chunks) - 1
                    choice = gen_choice(part, finish_reason=finish if last else None)
                    choice["logprobs"] = by_id(part)
                    chunk = gen_chunk(
                        [choice], prompt_token_ids=(prompt or None) if n == 0 else None
                    )
                    bodies = [
                        {"stream": True, "generate_chunk": chunk, "stream_state": s} | options
                        for s in states_
                    ]
                    got = post(ours, path, bodies[0]), post(theirs, path, bodies[1])
                    states_ = [got[0][1].get("stream_state"), got[1][1].get("stream_state")]
                    same(got[0], got[1], last, f"{shape} chunk {n}: {where}")
    assert compared, f"{name}: vLLM's algorithm is right on no case, nothing was compared"
