"""The first step after a 32,000-token prompt, against an ordinary step (qwen3).

tokstream seeds a stream from the last 7 prompt ids (REFERENCE section 2), so the prompt's
length should not matter. ``DecodeStream`` has to be prefilled with the whole prompt
(``step(tokenizer, prompt_ids)``) and then decodes all of it again on the next step.

Rows, and what each is compared with (``extra_info["versus"]``; baselines have none):

- tokstream, new stream + first step (no prompt): baseline for the rows that create a stream;
- tokstream, ``stream(prompt_ids=<32,000 ids>)`` + first step, and the same with a 7-id prompt;
- tokstream, the two stream creations alone (no step), to split seeding from stepping;
- tokstream, an ordinary step: per id of a pass over the generation on a long-lived stream;
- ``DecodeStream`` and the Python reference in the same scenarios, each vs its tokstream row.

Every row but one is a plain calibrated ``benchmark(fn)``; "1,000 fresh streams per round"
designs were tried and dropped: their single cold pass per round made medians vary 2x run to run.
"""

from __future__ import annotations

from typing import Any

from support import generation_ids
from tokenizers.decoders import DecodeStream

from oracles.vllm_reference import RefStream

NAME = "qwen3"
PROMPT_IDS = 32_000
GROUP = f"prompt-32k {NAME}"

NEW = "tokstream new stream + first step"
SEEDED = "tokstream stream(prompt 32k) + first step"
NEW_ONLY = "tokstream new stream, no step"
ORDINARY = "tokstream ordinary step (long-lived stream)"


def prompt_and_next() -> tuple[list[int], int]:
    """The prompt (the generation's ids, repeated to 32,000) and the id that follows it."""
    ids = generation_ids(NAME)
    prompt = [ids[i % len(ids)] for i in range(PROMPT_IDS)]
    return prompt, ids[PROMPT_IDS % len(ids)]


def target(tok: Any, prompt: list[int], next_id: int) -> str:
    """C1: decode(P + [id]) past its common prefix with decode(P)."""
    full = tok.decode([*prompt, next_id], skip_special_tokens=False)
    head = tok.decode(prompt, skip_special_tokens=False)
    common = 0
    while common < min(len(full), len(head)) and full[common] == head[common]:
        common += 1
    return full[common:]


def tag(benchmark: Any, impl: str, versus: str | None, tokens: int = 1) -> None:
    """Names the row; ``tokens`` steps happen per call of the benchmarked function."""
    benchmark.group = GROUP
    benchmark.extra_info.update(
        impl=impl, tokenizer=NAME, prompt_ids=PROMPT_IDS, tokens=tokens, calls=tokens
    )
    if versus is None:
        benchmark.extra_info["baseline"] = True
    else:
        benchmark.extra_info["versus"] = versus


def test_tokstream_new(benchmark: Any, get_tok: Any, get_detok: Any) -> None:
    """A new stream without a prompt, and its first step."""
    detok = get_detok(NAME)
    _, next_id = prompt_and_next()
    first = detok.stream()
    assert first.step(next_id) + first.finish() == get_tok(NAME).decode([next_id])
    tag(benchmark, NEW, None)
    benchmark(lambda: detok.stream().step(next_id))


def test_tokstream_seeded(benchmark: Any, get_tok: Any, get_detok: Any) -> None:
    """``stream(prompt_ids=<32,000 ids>)`` and its first step."""
    detok = get_detok(NAME)
    prompt, next_id = prompt_and_next()
    stream = detok.stream(prompt_ids=prompt)
    assert stream.step(next_id) + stream.finish() == target(get_tok(NAME), prompt, next_id)
    tag(benchmark, SEEDED, NEW)
    benchmark(lambda: detok.stream(prompt_ids=prompt).step(next_id))


def test_tokstream_seeded_short(benchmark: Any, get_detok: Any) -> None:
    """The same with only the prompt's last 7 ids: the prompt's length should not matter."""
    detok = get_detok(NAME)
    prompt, next_id = prompt_and_next()
    tail = prompt[-7:]
    assert detok.stream(prompt_ids=tail).step(next_id) == detok.stream(prompt_ids=prompt).step(
        next_id
    )
    tag(benchmark, "tokstream stream(prompt 7 ids) + first step", SEEDED)
    benchmark(lambda: detok.stream(prompt_ids=tail).step(next_id))


def test_tokstream_new_only(benchmark: Any, get_detok: Any) -> None:
    """Creating a stream without a prompt, no step."""
    detok = get_detok(NAME)
    tag(benchmark, NEW_ONLY, None)
    benchmark(detok.stream)


def test_tokstream_seeded_only(benchmark: Any, get_detok: Any) -> None:
    """Seeding a stream from the 32,000-id prompt, no step."""
    detok = get_detok(NAME)
    prompt, _ = prompt_and_next()
    tag(benchmark, "tokstream stream(prompt 32k), no step", NEW_ONLY)
    benchmark(lambda: detok.stream(prompt_ids=prompt))


def test_tokstream_ordinary(benchmark: Any, get_tok: Any, get_detok: Any) -> None:
    """Ordinary steps: one pass over the generation per call, on a stream that lives on."""
    detok = get_detok(NAME)
    ids = list(generation_ids(NAME))

    def passes(stream: Any) -> Any:
        step = stream.step
        return lambda: [step(i) for i in ids]

    checked = detok.stream()
    run = passes(checked)
    text = "".join(run() + run()) + checked.finish()
    assert text == get_tok(NAME).decode(ids + ids)
    tag(benchmark, ORDINARY, None, tokens=len(ids))
    benchmark(passes(detok.stream()))


def test_decodestream_new(benchmark: Any, get_tok: Any) -> None:
    """A new ``DecodeStream`` and its first step."""
    tok = get_tok(NAME)
    _, next_id = prompt_and_next()
    assert tok.decode([next_id]).startswith(DecodeStream().step(tok, next_id) or "")
    tag(benchmark, "DecodeStream new + first step", NEW)
    benchmark(lambda: DecodeStream(skip_special_tokens=False).step(tok, next_id))


def test_decodestream_prefilled(benchmark: Any, get_tok: Any) -> None:
    """A ``DecodeStream`` prefilled with ``step(tokenizer, prompt_ids)``, then one step."""
    tok = get_tok(NAME)
    prompt, next_id = prompt_and_next()

    def run() -> str | None:
        stream = DecodeStream(skip_special_tokens=False)
        stream.step(tok, prompt)
        return stream.step(tok, next_id)

    assert target(tok, prompt, next_id).startswith(run() or "")
    tag(benchmark, "DecodeStream prefill 32k + first step", SEEDED)
    benchmark(run)


def test_decodestream_first_step(benchmark: Any, get_tok: Any) -> None:
    """The first step alone after a 32,000-id prefill (prefill untimed, milliseconds)."""
    tok = get_tok(NAME)
    prompt, next_id = prompt_and_next()

    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        stream = DecodeStream(skip_special_tokens=False)
        stream.step(tok, prompt)
        return (stream,), {}

    tag(benchmark, "DecodeStream first step after 32k prefill", ORDINARY)
    benchmark.pedantic(lambda s: s.step(tok, next_id), setup=setup, rounds=20, warmup_rounds=1)


def test_reference_seeded(benchmark: Any, get_tok: Any) -> None:
    """The Python reference seeded from the prompt (it reads the last 7 ids), then one step."""
    tok = get_tok(NAME)
    prompt, next_id = prompt_and_next()
    assert target(tok, prompt, next_id).startswith(RefStream(tok, prompt).step(next_id))
    tag(benchmark, "reference prompt 32k + first step", SEEDED)
    benchmark(lambda: RefStream(tok, prompt).step(next_id))
