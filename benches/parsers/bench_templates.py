"""Response templates per chunk, against generation length (qwen3, one id a chunk).

The generation and the measured chunk are ``bench_parsers``' (reasoning, content, then a
``write_file`` call whose arguments take half the ids; the chunk is one id late in the
arguments). Four implementations answer it:

- ``template``: the built-in ``qwen3_template`` response template on the resumable executor
  (its state carried in ``stream_state["parser"]``), the baseline;
- ``hand-written``: the hand-written ``qwen3`` and ``hermes`` parsers, resumable, on the same
  bodies (what the template replaces);
- ``template replay``: the same template with ``parser_state="replay"``: every chunk
  re-detokenizes and re-runs the template over the whole history, in Rust;
- ``transformers replay``: transformers' ``ResponseParser`` (the reference implementation of
  response templates) fed the whole history's text each chunk, as a stateless server built on
  it must (the history decoded by ``tokenizers``), in Python.

Before timing, the template and hand-written paths stream the whole generation and must give
its reasoning, content (as written: ``qwen3_template`` keeps whitespace as vLLM's Qwen3
parsers do), call and ``finish_reason``, and the measured chunk's delta must be that id's text
in the arguments; the transformers replay must have the arguments so far in its open tool-call
region. The state (compact JSON) is the maximum over the stream and must stay under 2 KiB.
The summary prints the medians, the template's 4,096 / 64 ids ratio (target within 1.5x), its
state, and the replays' ratios to it at 4,096 ids (target at least 100x). With
``--benchmark-disable`` only 64 and 512 ids run.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import bench_parsers as bp
import pytest
from support import load_tokenizer, tokenizer_path

LENGTHS = (64, 512, 4096)
QUICK = (64, 512)
IMPLS = ("template", "hand-written", "template replay", "transformers replay")
TEMPLATE = "qwen3_template"
#: Timed rounds of the transformers replay (a chunk at 4,096 ids costs it milliseconds).
REPLAY_ROUNDS = {64: 200, 512: 50, 4096: 20}


@functools.cache
def handlers() -> dict[str, Any]:
    """``handle_json`` of the three tokstream paths (the transformers replay is separate)."""
    from tokstream import Derenderer, Detokenizer

    detok = Detokenizer.from_file(str(tokenizer_path(bp.NAME)))
    eos = (load_tokenizer(bp.NAME).token_to_id(bp.EOS),)
    names = {"reasoning_parser": TEMPLATE, "tool_parser": TEMPLATE}

    def make(**kw: Any) -> Any:
        return Derenderer(detok, served_model_name=bp.MODEL, eos_token_ids=eos, **kw).handle_json

    return {
        "template": make(**names),
        "hand-written": make(reasoning_parser="qwen3", tool_parser="hermes"),
        "template replay": make(parser_state="replay", **names),
    }


def stream(impl: str, gen: bp.Generation) -> tuple[bp.Run, Any]:
    """Streams ``gen`` one id a chunk; returns the run and the state carried into the chunk."""
    run, state, carried = bp.Run(), None, None
    handle = handlers()[impl]
    mode = "replay" if impl == "template replay" else "resumable"
    for k, token in enumerate(gen.ids):
        if k == gen.position:
            carried = state
        status, raw = handle(bp.CHAT, bp.body_of([token], k == len(gen.ids) - 1, state, mode))
        assert status == 200, raw[:500]
        answer = json.loads(raw)
        run.add(answer)
        state = answer["stream_state"]
    return run, carried


def check(run: bp.Run, gen: bp.Generation, impl: str) -> None:
    assert run.reasoning == gen.reasoning, impl
    assert run.content == gen.content, impl
    assert [(t[1], t[2]) for t in run.tools.values()] == [("write_file", gen.arguments)], impl
    assert run.finish == "tool_calls", impl


@functools.cache
def passes(length: int) -> dict[str, tuple[bp.Run, Any]]:
    gen = bp.generation_of(length)
    runs = {impl: stream(impl, gen) for impl in IMPLS[:3]}
    for impl, (run, _) in runs.items():
        check(run, gen, impl)
    return runs


@functools.cache
def transformers_replay() -> Any:
    """One chunk as a stateless server on transformers' ``ResponseParser`` answers it."""
    from tokstream import _core
    from transformers.utils.chat_parsing import ResponseParser

    template = json.loads(_core.builtin_template(TEMPLATE))
    tok = load_tokenizer(bp.NAME)
    prefix = tok.decode(list(bp.prompt_ids()), skip_special_tokens=False)

    def chunk(history: list[int]) -> list[dict[str, Any]]:
        parser = ResponseParser(template, prefix=prefix)
        return parser.feed(tok.decode(history, skip_special_tokens=False))

    return chunk


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    quick = metafunc.config.getoption("benchmark_disable")
    metafunc.parametrize("length", QUICK if quick else LENGTHS)


@pytest.mark.parametrize("impl", IMPLS)
def test_template_chunk(
    benchmark: Any, request: pytest.FixtureRequest, length: int, impl: str
) -> None:
    """One chunk inside the call's arguments, late in a generation of ``length`` ids."""
    gen = bp.generation_of(length)
    runs = passes(length)
    p = gen.position
    benchmark.group = f"templates-{length} {bp.NAME}"
    benchmark.extra_info.update(impl=impl, baseline=impl == "template", length=length, tokens=1)
    if impl == "transformers replay":
        chunk = transformers_replay()
        history = gen.ids[: p + 1]
        events = chunk(history)
        body = "".join(e.get("text", "") for e in events if e.get("field") == "tool_calls")
        assert body.endswith(bp.decode([gen.ids[p]])), body[-80:]
        benchmark.pedantic(chunk, (history,), rounds=REPLAY_ROUNDS[length], warmup_rounds=1)
        state = len(bp.dumps({"output_token_ids": gen.ids[:p]}))
    else:
        run, carried = runs[impl]
        mode = "replay" if impl == "template replay" else "resumable"
        body_bytes = bp.body_of([gen.ids[p]], False, carried, mode)
        handle = handlers()[impl]
        status, raw = handle(bp.CHAT, body_bytes)
        assert status == 200, raw[:500]
        (call,) = json.loads(raw)["chunk"]["choices"][0]["delta"]["tool_calls"]
        assert call["function"]["arguments"] == bp.decode([gen.ids[p]])
        if impl == "template":
            assert run.state_max < bp.STATE_LIMIT, f"state reached {run.state_max} bytes"
        benchmark(handle, bp.CHAT, body_bytes)
        state = run.state_max
    stats = getattr(benchmark, "stats", None)
    Summary.add(request.config, length, impl, state, stats.stats.median if stats else None)


class Summary(bp.Summary):
    """Prints the medians, states and the ratios the issue asks for, at the end."""

    PLUGIN = "templates-summary"

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        write = terminalreporter.write_line
        terminalreporter.write_sep("-", f"response templates ({bp.NAME}, one id a chunk)")
        for length in LENGTHS:
            cells = [
                f"{impl} {s:,} B" + ("" if m is None else f", {m * 1e6:,.1f} µs")
                for impl in IMPLS
                if (length, impl) in self.rows
                for s, m in [self.rows[(length, impl)]]
            ]
            if cells:
                write(f"{length:>5} ids: " + "; ".join(cells))
        median = {k: v[1] for k, v in self.rows.items() if v[1] is not None}
        if (64, "template") in median and (4096, "template") in median:
            ratio = median[(4096, "template")] / median[(64, "template")]
            write(f"template 4,096 / 64 ids: {ratio:.2f}x (target within 1.5x)")
        for other in IMPLS[1:]:
            if (4096, "template") in median and (4096, other) in median:
                ratio = median[(4096, other)] / median[(4096, "template")]
                write(f"{other} / template at 4,096 ids: {ratio:,.1f}x")
