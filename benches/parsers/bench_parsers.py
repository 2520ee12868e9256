"""Chat derender with parsers, per chunk, against generation length (qwen3, one id a chunk).

Three implementations answer the same chunk bodies: tokstream's resumable parsers
(``Derenderer(..., reasoning_parser="qwen3", tool_parser="hermes")``, the parser state carried in
``stream_state``), tokstream's replay path (``parser_state="replay"``, vLLM's state: every output
id so far, replayed each chunk in Rust) and the plain-Python replay reference
(``oracles/parser_reference.py``, vLLM's way: pydantic validation, a fresh parser and the whole
history re-detokenized and re-parsed every chunk).

The generation (``generation_of``) is built to an exact length of 64, 512, 4,096 or 8,192 ids:
``<think>`` reasoning, content, then a hermes ``write_file`` call whose ``content`` argument (the
multilingual answer of ``generation.py``, JSON-escaped) takes half the ids, then
``<|im_end|>``; reasoning, content and arguments are cut at clean token boundaries from repeated
source text, so the expected final messages are known. The prompt is the chat template's, tools
in the system message, thinking on (it opens no ``<think>``).

A round answers one steady chunk: an id a few ids before the end of the arguments (whole
characters, no escape or quote; late in the generation, where replay has the most history), with
the state that implementation answered for the chunk before it. Before timing, each
implementation streams the whole generation, and its final content, reasoning, tool names,
arguments and ``finish_reason`` must equal the expected ones. The reference is O(n^2) per chunk
in Python, so beyond 512 ids it streams the generation in 256 chunks for that check (any
chunking must give the same messages), and its one-id states come from single answers: the
chunk before the measured one and the last chunk, each answered with the state tokstream's
replay path carried into it (vLLM's wire state; the two must agree on the answer and on the
history there). Its timed rounds are few.

State bytes (compact JSON of ``stream_state``) are the maximum over the generation's one-id
chunks (for the reference beyond 512 ids: over the chunks it answered one id at a time, the last
one included, where the replay state is largest); the resumable path must stay under 2 KiB.
Groups are ``parsers-<length> qwen3``, the resumable path their baseline; the session summary
prints the states, the medians, the resumable path's 4,096 / 64 ids ratio and the reference's
ratio to it at 4,096 ids. With ``--benchmark-disable`` only 64 and 512 ids run (about 5 s).
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from generation import GENERATION
from support import load_tokenizer, tokenizer_path
from tokstream import _core
from tokstream.protocol import GenerateStreamResponse

from oracles.parser_reference import ReplayChatDerenderer

NAME = "qwen3"
MODEL = "Qwen/Qwen3-8B"
CHAT = _core.CHAT_PATH
REQUEST_ID = "gen-7f3c2a91b04e4d5c8e6a"
EOS = "<|im_end|>"
LENGTHS = (64, 512, 4096, 8192)
QUICK = (64, 512)
IMPLS = ("resumable", "replay", "reference")
LABELS = {
    "resumable": "tokstream resumable",
    "replay": "tokstream replay",
    "reference": "reference",
}
#: Timed rounds of the reference (a chunk at 8,192 ids costs it about 2 s).
REFERENCE_ROUNDS = {64: 100, 512: 20, 4096: 5, 8192: 3}
#: Up to this length the reference streams every generation one id a chunk.
REFERENCE_ONE_ID = 512
STATE_LIMIT = 2048
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Write a text file in the user's workspace.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    }
]
QUESTION = "Write a short guide to incremental detokenization to docs/streaming.md."
REASONING = (
    "The user wants a guide saved as a file, so I should call write_file with the whole text. "
    "It needs a Python example, a note on Unicode and short summaries in Chinese, Japanese and "
    "Korean; byte-level tokenizers split characters like 語 or 👨‍👩‍👧 over several ids. "
)
CONTENT = "I'll write the guide to `docs/streaming.md` now: it covers windows, Unicode and 東京. "
CALL_OPEN = '\n\n<tool_call>\n{"name": "write_file", "arguments": {"path": "docs/streaming.md", '
CALL_CLOSE = '"}}\n</tool_call>'


@dataclass
class Generation:
    """Output ids (the last one ``<|im_end|>``), the expected messages, the measured position."""

    ids: list[int]
    reasoning: str
    content: str
    arguments: str
    position: int


@dataclass
class Run:
    """What one implementation's stream added up to, and the states kept along the way."""

    reasoning: str = ""
    content: str = ""
    tools: dict[int, list[str]] = field(default_factory=dict)  # index -> [id, name, arguments]
    finish: str | None = None
    state_max: int = 0
    states_in: dict[int, Any] = field(default_factory=dict)  # chunk index -> state carried in
    answers: dict[int, dict[str, Any]] = field(default_factory=dict)  # kept chunk answers

    def add(self, answer: dict[str, Any]) -> None:
        for choice in answer["chunk"]["choices"]:
            delta = choice["delta"]
            self.reasoning += delta["reasoning"] or ""
            self.content += delta["content"] or ""
            for call in delta.get("tool_calls", []):
                entry = self.tools.setdefault(call["index"], [call["id"], "", ""])
                entry[1] += call["function"]["name"] or ""
                entry[2] += call["function"]["arguments"] or ""
            self.finish = choice["finish_reason"] or self.finish
        self.state_max = max(self.state_max, len(dumps(answer["stream_state"])))


def dumps(value: Any) -> bytes:
    """Compact JSON, as a client's HTTP library sends it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


@functools.cache
def prompt_ids() -> tuple[int, ...]:
    """Qwen3's chat template with tools in the system message, thinking on."""
    tools = "\n".join(json.dumps(t, ensure_ascii=False) for t in TOOLS)
    system = (
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n"
        f"<tools>\n{tools}\n</tools>\n\nFor each function call, return a json object with "
        "function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
        '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
    )
    text = (
        f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{QUESTION}<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    return tuple(load_tokenizer(NAME).encode(text, add_special_tokens=False).ids)


def encode(text: str) -> list[int]:
    return list(load_tokenizer(NAME).encode(text, add_special_tokens=False).ids)


def decode(ids: list[int]) -> str:
    return load_tokenizer(NAME).decode(ids, skip_special_tokens=False)


def source_ids(text: str, count: int) -> list[int]:
    """``text`` repeated until it encodes to at least ``count`` ids."""
    ids = encode(text)
    return (ids * (count // max(len(ids), 1) + 1))[:count] if ids else []


def plain(token_id: int) -> bool:
    """Whether the id's text is whole characters, none of them a JSON escape or quote."""
    text = decode([token_id])
    return bool(text) and not any(c in text for c in '\ufffd\\"')


def clean_cut(ids: list[int], count: int, escaped: bool) -> int:
    """The largest cut ``<= count`` that ends on a whole character (and escape, if ``escaped``)."""
    while count > 0:
        text = decode(ids[:count])
        backslashes = len(text) - len(text.rstrip("\\"))
        if not text.endswith("\ufffd") and not (escaped and backslashes % 2):
            return count
        count -= 1
    return 0


@functools.cache
def generation_of(length: int) -> Generation:
    """The generation of exactly ``length`` ids; see the module docstring."""
    opening, middle = encode("<think>\n"), encode("\n</think>\n\n")
    call_open, call_close = encode(CALL_OPEN + '"content": "'), encode(CALL_CLOSE)
    fixed = len(opening) + len(middle) + len(call_open) + len(call_close) + 1
    budget = length - fixed
    assert budget >= 12, f"{length} ids leave no room for text"
    answer = json.dumps(GENERATION.split("</think>", 1)[1].strip(), ensure_ascii=False)[1:-1]
    sources = [source_ids(t, budget) for t in (REASONING, CONTENT, answer)]
    reasoning_n = clean_cut(sources[0], budget * 3 // 10, False)
    content_n = clean_cut(sources[1], budget * 2 // 10, False)
    args_n = clean_cut(sources[2], budget - reasoning_n - content_n, True)
    pad = budget - reasoning_n - content_n - args_n  # a few spaces close the content
    reasoning_ids, args_ids = sources[0][:reasoning_n], sources[2][:args_n]
    content_ids = sources[1][:content_n] + encode(" ") * pad
    ids = [
        *opening, *reasoning_ids, *middle, *content_ids, *call_open, *args_ids, *call_close,
        load_tokenizer(NAME).token_to_id(EOS),
    ]  # fmt: skip
    assert len(ids) == length
    reasoning, content, args = decode(reasoning_ids), decode(content_ids), decode(args_ids)
    arguments = '{"path": "docs/streaming.md", "content": "' + args + '"}'
    call = f'{CALL_OPEN}"content": "{args}{CALL_CLOSE}'
    text = f"<think>\n{reasoning}\n</think>\n\n{content}{call}"
    assert decode(ids[:-1]) == text
    assert json.loads(arguments)["path"] == "docs/streaming.md"
    # The measured id: a few ids before the arguments end, it and the one before it plain.
    end = len(ids) - len(call_close) - 1
    position = next(
        k for k in range(end - 4, end - args_n, -1) if plain(ids[k - 1]) and plain(ids[k])
    )
    return Generation(ids, f"\n{reasoning}\n", f"\n\n{content}\n\n", arguments, position)


@functools.cache
def handlers() -> dict[str, Any]:
    """The three ``handle_json`` over qwen3 with the qwen3 and hermes parsers."""
    tok = load_tokenizer(NAME)
    eos = (tok.token_to_id(EOS),)
    from tokstream import Derenderer, Detokenizer

    detok = Detokenizer.from_file(str(tokenizer_path(NAME)))
    options = {"reasoning_parser": "qwen3", "tool_parser": "hermes"}
    resumable = Derenderer(detok, served_model_name=MODEL, eos_token_ids=eos, **options)
    replay = Derenderer(
        detok, served_model_name=MODEL, eos_token_ids=eos, parser_state="replay", **options
    )
    reference = ReplayChatDerenderer(
        tok, MODEL, eos, reasoning_parser="qwen3", tool_parser="hermes"
    )
    return {
        "resumable": resumable.handle_json,
        "replay": replay.handle_json,
        "reference": reference.handle_json,
    }


def body_of(ids: list[int], last: bool, state: Any, impl: str) -> bytes:
    """One chunk request; replay needs the full prompt on every chunk, resumable on the first."""
    choice = {"index": 0, "finish_reason": "stop" if last else None, "token_ids": ids}
    raw = {"request_id": REQUEST_ID, "choices": [choice]}
    chunk = GenerateStreamResponse.model_validate(raw).model_dump(mode="json")  # every field
    request = {
        "messages": [{"role": "user", "content": QUESTION}],
        "model": MODEL,
        "stream": True,
        "tools": TOOLS,
        "max_tokens": 8192,
        "temperature": 0.6,
    }
    body: dict[str, Any] = {"stream": True, "model": MODEL, "generate_chunk": chunk}
    body |= {"stream_state": state, "prompt_tokens": len(prompt_ids())}
    if state is None or impl != "resumable":
        body["prompt_token_ids"] = list(prompt_ids())
    return dumps({**body, "chat_request": request})


def answer_of(impl: str, ids: list[int], last: bool, state: Any) -> dict[str, Any]:
    status, answer = handlers()[impl](CHAT, body_of(ids, last, state, impl))
    assert status == 200, f"{impl}: {answer[:500]!r}"
    return json.loads(answer)  # type: ignore[no-any-return]


def stream(impl: str, gen: Generation, size: int, keep: frozenset[int]) -> Run:
    """Streams ``gen`` in chunks of ``size`` ids, keeping the states carried into ``keep``."""
    run, state = Run(), None
    starts = range(0, len(gen.ids), size)
    for k, start in enumerate(starts):
        if k in keep:
            run.states_in[k] = state
        answer = answer_of(impl, gen.ids[start : start + size], start + size >= len(gen.ids), state)
        if k in keep:
            run.answers[k] = answer
        run.add(answer)
        state = answer["stream_state"]
    return run


def check(run: Run, gen: Generation, impl: str) -> None:
    """The whole stream's messages are the generation's."""
    assert run.reasoning == gen.reasoning, impl
    assert run.content == gen.content, impl
    assert [(t[1], t[2]) for t in run.tools.values()] == [("write_file", gen.arguments)], impl
    assert run.finish == "tool_calls", impl


def delta_of(answer: dict[str, Any]) -> dict[str, Any]:
    """A chunk's message delta without ids and role (compared between implementations)."""
    delta = copy.deepcopy(answer["chunk"]["choices"][0]["delta"])
    delta.pop("role")
    for call in delta.get("tool_calls", []):
        call.pop("id")
    return delta  # type: ignore[no-any-return]


@functools.cache
def passes(length: int) -> dict[str, Run]:
    """Every implementation over the whole generation, checked; see the module docstring."""
    gen = generation_of(length)
    p, n = gen.position, len(gen.ids)
    runs = {impl: stream(impl, gen, 1, frozenset({p - 1, p, n - 1})) for impl in IMPLS[:2]}
    for impl, run in runs.items():
        check(run, gen, impl)
    if length <= REFERENCE_ONE_ID:
        runs["reference"] = stream("reference", gen, 1, frozenset({p}))
        check(runs["reference"], gen, "reference")
    else:
        check(stream("reference", gen, length // 256, frozenset()), gen, "reference (256 chunks)")
        runs["reference"] = reference_states(gen, runs["replay"])
    return runs


def reference_states(gen: Generation, replay: Run) -> Run:
    """The reference's one-id states at the measured chunk and the last one, from replay's.

    The chunk before the measured one and the last chunk are answered with the state tokstream's
    replay path carried into them; the answers (deltas and the replayed history) must agree.
    """
    p, n = gen.position, len(gen.ids)
    run = Run()
    for k in (p - 1, n - 1):
        answer = answer_of("reference", [gen.ids[k]], k == n - 1, replay.states_in[k])
        assert delta_of(answer) == delta_of(replay.answers[k]), f"chunk {k}"
        mine, theirs = answer["stream_state"], replay.answers[k]["stream_state"]
        for key in ("output_token_ids", "output_chunk_lens", "tools_streamed"):
            assert mine[key] == theirs[key], f"{key} after chunk {k}"
        run.state_max = max(run.state_max, len(dumps(mine)))
        run.states_in[k + 1] = mine
    return run


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Lengths: all when timing, 64 and 512 under ``--benchmark-disable`` (CI's quick pass)."""
    quick = metafunc.config.getoption("benchmark_disable")
    metafunc.parametrize("length", QUICK if quick else LENGTHS)


@pytest.mark.parametrize("impl", IMPLS)
def test_parser_chunk(
    benchmark: Any, request: pytest.FixtureRequest, length: int, impl: str
) -> None:
    """One steady chunk inside the tool call's arguments, late in a generation of ``length``."""
    gen = generation_of(length)
    runs = passes(length)
    run, p = runs[impl], gen.position
    handle = handlers()[impl]
    body = body_of([gen.ids[p]], False, run.states_in[p], impl)
    status, answer = handle(CHAT, body)
    assert status == 200, answer[:500]
    expected = delta_of(runs["resumable"].answers[p])
    assert delta_of(json.loads(answer)) == expected
    assert expected["tool_calls"][0]["function"]["arguments"] == decode([gen.ids[p]])
    state_bytes = len(dumps(json.loads(answer)["stream_state"]))
    if impl == "resumable":
        assert run.state_max < STATE_LIMIT, f"stream state reached {run.state_max} bytes"
    benchmark.group = f"parsers-{length} {NAME}"
    benchmark.extra_info.update(
        impl=LABELS[impl],
        baseline=impl == "resumable",
        tokenizer=NAME,
        tokens=1,
        calls=1,
        length=length,
        position=p,
        body_bytes=len(body),
        state_bytes=state_bytes,
        state_bytes_max=run.state_max,
    )
    if impl == "reference":
        benchmark.pedantic(handle, (CHAT, body), rounds=REFERENCE_ROUNDS[length], warmup_rounds=1)
    else:
        benchmark(handle, CHAT, body)
    stats = getattr(benchmark, "stats", None)
    median = stats.stats.median if stats is not None else None
    Summary.add(request.config, length, impl, run.state_max, median)


class Summary:
    """A plugin, registered once, that prints state sizes and per-chunk medians at the end."""

    #: The plugin's name (a subclass that prints other rows registers under its own).
    PLUGIN = "parsers-summary"

    def __init__(self) -> None:
        self.rows: dict[tuple[int, str], tuple[int, float | None]] = {}

    @classmethod
    def add(
        cls, config: pytest.Config, length: int, impl: str, state: int, median: float | None
    ) -> None:
        plugin = config.pluginmanager.get_plugin(cls.PLUGIN)
        if plugin is None:
            plugin = cls()
            config.pluginmanager.register(plugin, cls.PLUGIN)
        plugin.rows[(length, impl)] = (state, median)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Prints one line per length, then the ratios the issue asks for."""
        write = terminalreporter.write_line
        terminalreporter.write_sep("-", f"chat parsers ({NAME}, one id a chunk): state, median")
        for length in LENGTHS:
            cells = []
            for impl in IMPLS:
                if (length, impl) in self.rows:
                    state, median = self.rows[(length, impl)]
                    timing = "" if median is None else f", {median * 1e6:,.1f} µs"
                    cells.append(f"{LABELS[impl]} {state:,} B{timing}")
            if cells:
                write(f"{length:>5} ids: " + "; ".join(cells))
        median = {k: v[1] for k, v in self.rows.items() if v[1] is not None}
        if (64, "resumable") in median and (4096, "resumable") in median:
            ratio = median[(4096, "resumable")] / median[(64, "resumable")]
            write(f"resumable 4,096 / 64 ids: {ratio:.2f}x (target: within 2x)")
        if (4096, "resumable") in median and (4096, "reference") in median:
            ratio = median[(4096, "reference")] / median[(4096, "resumable")]
            write(f"reference / resumable at 4,096 ids: {ratio:,.0f}x (target: at least 50x)")
