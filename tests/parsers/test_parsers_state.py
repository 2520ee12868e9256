"""Parsers: the stream state. Resumable stays small at any length; replay carries the history.

Issue 4's bound: the resumable state stays under 2 KiB at every chunk of a 4,000-token
generation (long reasoning, then a tool call with long arguments), where replay mode's
``output_token_ids`` grows to hold every id sent. A replay-mode (vLLM-shaped) state is accepted
by a resumable derenderer mid-stream, which rebuilds the parser by replay and carries on.
"""

from __future__ import annotations

import json

import pytest
from helpers.derender_util import VLLM_STATE_KEYS, chunkings, state_size
from helpers.parsers_oracle import (
    END_THINK,
    NAMES,
    VARIANT,
    build,
    call,
    cases,
    chat_request,
    oracle,
    prompt_ids,
)
from helpers.parsers_util import (
    MODES,
    STATE_LIMIT,
    derenderer,
    stream,
    whole,
)
from helpers.real_tokenizers import load_tokenizer

SENTENCES = (
    "Step {n}: the forecast for Paris says 23 °C, light wind, no rain.",
    " 東京の天気は{n}日目も雨です ☔, humidity {n}%.",
    " Checking 삥뽕빵 and 👨‍👩‍👧‍👦 again ({n}); a < b holds, {{braces}} are fine.",
    " Maybe call get_weather for city #{n}, or search first? 🤔",
)


def long_generation(name: str, target: int = 4000) -> list[int]:
    """About ``target`` ids: reasoning, content, then a call with long nested arguments."""
    tok = load_tokenizer(name)
    scale = target / 3700
    thought = "".join(SENTENCES[n % 4].format(n=n) for n in range(round(60 * scale))) + "\n"
    cities = ["Paris", "東京", "서울"]
    rows = [
        {"day": n, "city": cities[n % 3], "note": f'☀️ {n}\n"ok"'} for n in range(round(70 * scale))
    ]
    text = "".join(SENTENCES[n % 4].format(n=n) for n in range(round(20 * scale)))
    arguments = {"path": "report.md", "content": text, "rows": rows, "meta": {"deep": [[{}]]}}
    obj = json.dumps({"name": "write_file", "arguments": arguments}, ensure_ascii=False)
    ids, _ = build(tok, ["\n", thought, END_THINK, "\n\nWriting the report 📄.\n\n", *call(obj)])
    assert target <= len(ids) <= 1.2 * target, len(ids)
    return ids


@pytest.mark.parametrize("name", NAMES)
def test_resumable_state_stays_under_2_kib_over_a_long_generation(name: str) -> None:
    """Every chunk (1-5 ids, a finish-only tail) of ~4,000 ids: the state under 2,048 bytes
    (``stream`` checks it), ``output_token_ids`` empty; the answer equals the whole response."""
    prompt = prompt_ids(name, "open")
    gen = long_generation(name)
    chunks = chunkings(gen, name)["finish_only_tail"]
    r = derenderer(name, VARIANT[name], "hermes", "resumable")
    run = stream(r, prompt, chunks, chat_request(), "stop", mode="resumable")
    sizes = [state_size(s) for s in run.states]
    assert max(sizes) < STATE_LIMIT, max(sizes)
    want = oracle(name, prompt, gen, reasoning=VARIANT[name], tools=True)
    assert run.result().message == want
    assert whole(r, prompt, gen, chat_request(), "stop").message == want
    ((fn, args),) = want.calls
    assert fn == "write_file" and len(args) > 4000, len(args)


@pytest.mark.parametrize("name", NAMES)
def test_replay_state_holds_every_id_sent(name: str) -> None:
    """Replay mode: ``output_token_ids`` is every id sent so far and ``output_chunk_lens`` the
    chunks' lengths (``stream`` checks both at every chunk); the same answer as resumable."""
    prompt = prompt_ids(name, "open")
    gen = long_generation(name, 1500)
    chunks = chunkings(gen, name)["random"]
    runs = {}
    for mode in MODES:
        r = derenderer(name, VARIANT[name], "hermes", mode)
        runs[mode] = stream(r, prompt, chunks, chat_request(), "length", mode=mode)
    final = runs["replay"].states[-1]
    assert final["output_token_ids"] == gen
    assert final["output_chunk_lens"] == [len(c) for c in chunks]
    assert runs["replay"].result() == runs["resumable"].result()


@pytest.mark.parametrize("name", NAMES)
def test_replay_state_continues_in_resumable_mode(name: str) -> None:
    """A state without ``parser`` but with ``output_token_ids`` (replay mode's, or vLLM's) is
    accepted in resumable mode: rebuilt by replay, the rest of the stream is the same."""
    reasoning = VARIANT[name]
    replay = derenderer(name, reasoning, "hermes", "replay")
    resumable = derenderer(name, reasoning, "hermes", "resumable")
    for case in cases(name):
        chunks = chunkings(case.gen, case.label)["random"]
        full = stream(replay, case.prompt, chunks, chat_request(), case.finish, mode="replay")
        for j in sorted({1, len(chunks) // 2, len(chunks) - 1}):
            if not 0 < j < len(chunks):
                continue
            state = full.states[j - 1]
            assert "parser" not in state or state["parser"] is None, sorted(state)
            vllm = {k: v for k, v in state.items() if k in VLLM_STATE_KEYS}
            for carried in (state, vllm):
                rest = stream(
                    resumable,
                    case.prompt,
                    chunks[j:],
                    chat_request(),
                    case.finish,
                    mode="resumable",
                    state=carried,
                    prompt_every_chunk=True,
                )
                where = (
                    f"{name} {case.label} switch at {j} of {len(chunks)}, keys {sorted(carried)}"
                )
                assert rest.deltas == full.deltas[j:], where
                assert rest.finishes == full.finishes[j:], where
