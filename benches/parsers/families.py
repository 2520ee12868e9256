"""Per-chunk cost of one chunk late in a tool call, one family of each format group, against
generation length, and vLLM 0.33.0's cost for the same chunk, measured in one run.

A family's generation is its reasoning (where it has any), one sentence of content, then one call
of ``write_file`` whose ``content`` argument (the repeated words of ``WORDS``) makes the
generation ``length`` ids long, in the family's own format, tokenized with its fixture. The
measured chunk is one id, three ids before the argument's value ends, with the state of a
stream of one id a chunk before it. The state's size (compact JSON) is given there, inside the
call, and after the generation's last chunk. The family ``none`` is the same kind of stream
without parsers, its chunk late in the content: each side's own cost of a chunk. tokstream
answers the chunk with ``Derenderer.handle_json`` (resumable parser state); vLLM with its own
derender route (``acceptance/vllm/oracle.py``: its router and serving objects in process,
through Starlette's test client), whose state is the history, replayed through its parsers on
every chunk. Before timing, tokstream's stream of the
whole generation must equal its whole answer, and vLLM's whole answer must have the same call.

Run with the acceptance virtualenv of ``.ci/vllm-acceptance`` as the peer (``--vllm-python``)
and an interpreter that has tokstream installed::

    python benches/parsers/families.py                    # 64, 2,048 and 4,096 ids, 3 rounds
    python benches/parsers/families.py --lengths 64 --rounds 1

Rounds alternate: in each round, each length of a family is timed on tokstream, then on vLLM.
The figures are medians; tokstream's growth is the median over rounds of a length's time over
the shortest length's in the same round. Each run is written to
``benches/results/families.json``.
"""

# ruff: noqa: RUF001
# (Full-width bars are the real spelling of DeepSeek's and Hunyuan's markers.)
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from tokenizers import Tokenizer  # noqa: E402

import fixtures  # noqa: E402

CHAT = "/v1/chat/completions/derender"
MODEL = "Qwen/Qwen3-8B"
WORDS = "the quick brown fox jumps over the lazy dog while rivers carry stones to the sea "
PATH = "notes.txt"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            },
        },
    }
]
CHATML = "<|im_start|>user\nWrite it.<|im_end|>\n<|im_start|>assistant\n"


@dataclass(frozen=True)
class Family:
    """A format group's representative: its parsers, fixture, prompt and call writer."""

    group: str
    reasoning: str | None
    tool: str | None
    fixture: str
    prompt: str
    #: The text before the argument's value, and the text after it.
    call: Callable[[], tuple[str, str]]
    request: dict[str, Any] | None = None


def _json_tags() -> tuple[str, str]:
    return (
        '<think>Plan.</think>Writing it.<tool_call>{"name": "write_file", "arguments": '
        f'{{"path": "{PATH}", "content": "',
        '"}}</tool_call>',
    )


def _xml_parameters() -> tuple[str, str]:
    return (
        "<think>Plan.</think>Writing it.<tool_call>\n<function=write_file>\n"
        f"<parameter=path>\n{PATH}\n</parameter>\n<parameter=content>\n",
        "\n</parameter>\n</function>\n</tool_call>",
    )


def _arg_tags() -> tuple[str, str]:
    return (
        f"<think>Plan.</think>Writing it.<tool_call>write_file\n<arg_key>path</arg_key>"
        f"<arg_value>{PATH}</arg_value><arg_key>content</arg_key><arg_value>",
        "</arg_value></tool_call>",
    )


def _dsml() -> tuple[str, str]:
    d = "｜DSML｜"
    return (
        f'Writing it.<{d}function_calls>\n<{d}invoke name="write_file">\n'
        f'<{d}parameter name="path" string="true">{PATH}</{d}parameter>\n'
        f'<{d}parameter name="content" string="true">',
        f"</{d}parameter>\n</{d}invoke>\n</{d}function_calls>",
    )


def _pythonic() -> tuple[str, str]:
    return (f"[write_file(path='{PATH}', content='", "')]")


def _xtml() -> tuple[str, str]:
    o, c, s = "<|open|>", "<|close|>", "<|sep|>"
    return (
        f"{o}think{s}Plan.{c}think{s}{o}response{s}Writing it.{c}response{s}{o}tools{s}"
        f'{o}call tool="write_file" index="1"{s}{o}argument key="path" type="string"{s}{PATH}'
        f'{c}argument{s}{o}argument key="content" type="string"{s}',
        f"{c}argument{s}{c}call{s}{c}tools{s}{c}message{s}",
    )


def _hunyuan() -> tuple[str, str]:
    return (
        "<think>Plan.</think>Writing it.<tool_calls><tool_call>write_file<tool_sep>"
        f"<arg_key>path</arg_key><arg_value>{PATH}</arg_value><arg_key>content</arg_key>"
        "<arg_value>",
        "</arg_value></tool_call></tool_calls>",
    )


def _nested_elements() -> tuple[str, str]:
    ns = "]<]minimax[>["
    return (
        f'<mm:think>Plan.</mm:think>Writing it.{ns}<tool_call>\n{ns}<invoke name="write_file">'
        f"{ns}<path>{PATH}{ns}</path>{ns}<content>",
        f"{ns}</content>{ns}</invoke>\n{ns}</tool_call>",
    )


def _muse() -> tuple[str, str]:
    return (
        " to=self<|message|>Plan.<|eom|><|start|>assistant to=write_file<|message|>"
        '<atem:function_calls>\n<atem:invoke name="write_file">\n'
        f'<atem:parameter name="path">{PATH}</atem:parameter>\n<atem:parameter name="content">',
        "</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>",
    )


def _cohere() -> tuple[str, str]:
    return (
        '<|START_THINKING|>Plan.<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0", '
        f'"tool_name": "write_file", "parameters": {{"path": "{PATH}", "content": "',
        '"}}]<|END_ACTION|>',
    )


def _minicpm5() -> tuple[str, str]:
    return (
        f'Writing it.<function name="write_file"><param name="path">{PATH}</param>'
        '<param name="content">',
        "</param></function>",
    )


def _k2_horizon() -> tuple[str, str]:
    return (
        "Plan.</ifm|think>Writing it.<ifm|tool_calls>\n<ifm|tool_call>write_file\n"
        f"<ifm|arg_key>path</ifm|arg_key>\n<ifm|arg_value>{PATH}</ifm|arg_value>\n"
        "<ifm|arg_key>content</ifm|arg_key>\n<ifm|arg_value>",
        "</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls>",
    )


def _plain() -> tuple[str, str]:
    return ("Writing it. ", "")


FAMILIES: dict[str, Family] = {
    # The route's own cost: the same stream without parsers, its chunk late in the content.
    "none": Family("no parsers", None, None, "qwen3", CHATML, _plain),
    "hermes": Family("JSON in tags", "qwen3", "hermes", "qwen3", CHATML, _json_tags),
    "qwen3_coder": Family(
        "XML parameters", "qwen3", "qwen3_coder", "qwen3", CHATML, _xml_parameters
    ),
    "glm45": Family("argument tags", "glm45", "glm45", "qwen3", CHATML, _arg_tags),
    "deepseek_v32": Family(
        "DSML", None, "deepseek_v32", "deepseek-r1", "<｜User｜>Write it.<｜Assistant｜>", _dsml
    ),
    "pythonic": Family("Python calls", None, "pythonic", "qwen3", CHATML, _pythonic),
    "kimi_k3": Family("XTML channels", "kimi_k3", "kimi_k3", "kimi-k3-derived", CHATML, _xtml),
    "hy_v3": Family(
        "Hunyuan tags",
        "hy_v3",
        "hy_v3",
        "hy-v3-derived",
        "<｜hy_User｜>Write it.<｜hy_Assistant｜>",
        _hunyuan,
        {"reasoning_effort": "high"},
    ),
    "minimax_m3": Family(
        "nested elements",
        "minimax_m3",
        "minimax_m3",
        "minimax-m3-derived",
        "]~b]user\nWrite it.[e~[\n]~b]ai\n",
        _nested_elements,
    ),
    "muse": Family(
        "addressed messages",
        "muse",
        "muse",
        "muse-derived",
        "<|start|>user<|message|>Write it.<|eot|><|start|>assistant",
        _muse,
    ),
    "cohere_command3": Family(
        "marker sections",
        "cohere_command3",
        "cohere_command3",
        "cohere-derived",
        "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Write it.<|END_OF_TURN_TOKEN|>"
        "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
        _cohere,
    ),
    "minicpm5": Family("calls read whole", None, "minicpm5", "minicpm5-derived", CHATML, _minicpm5),
    "k2_horizon": Family(
        "a block read whole",
        "k2_horizon",
        "k2_horizon",
        "k2-horizon-derived",
        "<|ifm|im_start|>user\nWrite it.<|ifm|im_end|>\n<|ifm|im_start|>assistant\n<ifm|think>\n",
        _k2_horizon,
    ),
}


def generation(name: str, length: int) -> dict[str, Any]:
    """The family's generation of ``length`` ids (or the first length above it) and the
    measured chunk's index, as JSON-ready data both interpreters build the bodies from."""
    f = FAMILIES[name]
    tok = Tokenizer.from_file(str(fixtures.tokenizer_json(f.fixture)))
    encode = lambda text: tok.encode(text, add_special_tokens=False).ids  # noqa: E731
    head, tail = f.call()
    words = WORDS.split(" ")
    n = 1
    while True:
        value = " ".join(words[i % (len(words) - 1)] for i in range(n))
        ids = encode(head + value + tail)
        if len(ids) >= length or n > 100_000:
            break
        n += max(1, (length - len(ids)) // 2)
    upto = encode(head + value)
    at = len(upto) - 3
    assert ids[:at] == upto[:at], name
    return {
        "name": name,
        "prompt": encode(f.prompt),
        "ids": ids,
        "at": at,
        "value": value,
        "request": {
            "model": MODEL,
            "messages": [{"role": "user", "content": "Write it."}],
            "tools": TOOLS,
            "tool_choice": "auto",
            **(f.request or {}),
        },
    }


def _choice(ids: list[int], finish: str | None) -> dict[str, Any]:
    return {"index": 0, "logprobs": None, "finish_reason": finish, "token_ids": ids}


def whole_body(g: dict[str, Any]) -> dict[str, Any]:
    response = {"request_id": "gen-1", "choices": [_choice(g["ids"], "stop")], "usage": None}
    return {
        "generate_response": response,
        "prompt_tokens": len(g["prompt"]),
        "prompt_token_ids": g["prompt"],
        "chat_request": g["request"],
    }


def chunk_body(
    g: dict[str, Any], ids: list[int], state: Any, finish: str | None = None
) -> dict[str, Any]:
    chunk = {
        "request_id": "gen-1",
        "choices": [_choice(ids, finish)],
        "usage": None,
        "prompt_token_ids": None,
    }
    return {
        "stream": True,
        "generate_chunk": chunk,
        "chat_request": g["request"],
        "prompt_token_ids": g["prompt"],
        "stream_state": state,
    }


def _call_of(message: dict[str, Any]) -> list[str]:
    calls = message.get("tool_calls") or []
    return [[c["function"]["name"], c["function"]["arguments"]] for c in calls]


def _time(post: Callable[[], Any], reps: int) -> float:
    """The median of ``reps`` calls' wall time, in µs."""
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        post()
        times.append((time.perf_counter() - t) * 1e6)
    return statistics.median(times)


# ── tokstream ────────────────────────────────────────────────────────────────


def tokstream_chunk(name: str, g: dict[str, Any]) -> tuple[Callable[[], Any], dict[str, Any]]:
    import tokstream

    f = FAMILIES[name]
    det = tokstream.Detokenizer.from_file(str(fixtures.tokenizer_json(f.fixture)))
    r = tokstream.Derenderer(
        det, served_model_name=MODEL, reasoning_parser=f.reasoning, tool_parser=f.tool
    )

    def post(body: dict[str, Any]) -> dict[str, Any]:
        status, out = r.handle_json(CHAT, json.dumps(body).encode())
        assert status == 200, out
        return json.loads(out)

    whole = post(whole_body(g))["choices"][0]["message"]
    state: Any = None
    args = ""
    last = len(g["ids"]) - 1
    for i, tid in enumerate(g["ids"]):
        answer = post(chunk_body(g, [tid], state, "stop" if i == last else None))
        state = answer["stream_state"]
        for call in answer["chunk"]["choices"][0]["delta"].get("tool_calls") or []:
            args += call["function"].get("arguments") or ""
        if i == g["at"] - 1:
            measured = chunk_body(g, [g["ids"][g["at"]]], state)
            inside = len(json.dumps(state, separators=(",", ":")))
    after = len(json.dumps(state, separators=(",", ":")))
    if f.tool is not None:
        assert _call_of(whole) == [["write_file", args]], (name, _call_of(whole), args)
        assert g["value"][-20:] in json.loads(args)["content"], name
    body = json.dumps(measured).encode()
    info = {"call": _call_of(whole), "state_in_call": inside, "state_after": after}
    return (lambda: r.handle_json(CHAT, body)), info


# ── vLLM (run in its virtualenv: ``--worker``) ───────────────────────────────


def _worker() -> None:
    """Answers jobs from stdin, one JSON line each: build a family's client and chunk, then time
    it ``reps`` times; prints the median µs (and the whole answer's call) as a JSON line."""
    import oracle

    # The oracle's model length is the derender tests' (2,048); these streams run longer.
    oracle.MAX_MODEL_LEN = 1 << 20
    prepared: dict[tuple[str, int], tuple[Any, dict[str, Any], list[Any]]] = {}
    for line in sys.stdin:
        job = json.loads(line)
        key = (job["name"], job["length"])
        if key not in prepared:
            f = FAMILIES[job["name"]]
            g = generation(job["name"], job["length"])
            c = oracle.client(f.fixture, None, f.reasoning, f.tool)
            whole = c.post(CHAT, json=whole_body(g))
            assert whole.status_code == 200, whole.text
            first = c.post(CHAT, json=chunk_body(g, g["ids"][: g["at"]], None))
            assert first.status_code == 200, first.text
            measured = chunk_body(g, [g["ids"][g["at"]]], first.json()["stream_state"])
            call = _call_of(whole.json()["choices"][0]["message"])
            prepared[key] = (c, measured, call)
        c, measured, call = prepared[key]

        def post(c: Any = c, measured: dict[str, Any] = measured) -> None:
            response = c.post(CHAT, json=measured)
            assert response.status_code == 200, response.text

        print(json.dumps({"us": _time(post, job["reps"]), "call": call}), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vllm-python", default=str(ROOT / "target/vllm-acceptance/venv/bin/python"))
    ap.add_argument("--lengths", type=int, nargs="+", default=[64, 2048, 4096])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--families", nargs="+", default=list(FAMILIES))
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _worker()
        return
    acceptance = ROOT / "acceptance" / "vllm"
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONDONTWRITEBYTECODE="1")
    env["PYTHONPATH"] = os.pathsep.join(map(str, [acceptance / "standins", acceptance, ROOT]))
    worker = subprocess.Popen(
        [args.vllm_python, str(Path(__file__).resolve()), "--worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=(ROOT / "target" / "families-vllm.log").open("w"),
        text=True,
        env=env,
    )

    def vllm(job: dict[str, Any]) -> dict[str, Any]:
        assert worker.stdin is not None and worker.stdout is not None
        worker.stdin.write(json.dumps(job) + "\n")
        worker.stdin.flush()
        line = worker.stdout.readline()
        if not line:
            raise SystemExit("the vLLM worker stopped: see target/families-vllm.log")
        return json.loads(line)

    rows: list[dict[str, Any]] = []
    for name in args.families:
        built = {}
        for length in args.lengths:
            g = generation(name, length)
            built[length] = (g, *tokstream_chunk(name, g))
        ours: dict[int, list[float]] = {n: [] for n in args.lengths}
        theirs: dict[int, list[float]] = {n: [] for n in args.lengths}
        # Each round times every length on both sides, so that the growth from the shortest
        # length is read from times taken close together (a shared machine's speed drifts).
        for _ in range(args.rounds):
            for length in args.lengths:
                g, post, info = built[length]
                ours[length].append(_time(post, 2000))
                reps = 10 if length > 512 else 50
                answer = vllm({"name": name, "length": length, "reps": reps})
                assert answer["call"] == info["call"], (name, answer["call"], info["call"])
                theirs[length].append(answer["us"])
        first = args.lengths[0]
        for length in args.lengths:
            g, _, info = built[length]
            pairs = zip(theirs[length], ours[length], strict=True)
            growth = zip(ours[length], ours[first], strict=True)
            row = {
                "family": name,
                "group": FAMILIES[name].group,
                "ids": len(g["ids"]),
                "tokstream_us": statistics.median(ours[length]),
                "vllm_us": statistics.median(theirs[length]),
                "ratio": statistics.median(t / o for t, o in pairs),
                "tokstream_growth": statistics.median(o / b for o, b in growth),
                "state_in_call": info["state_in_call"],
                "state_after": info["state_after"],
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    worker.stdin.close()  # type: ignore[union-attr]
    worker.wait()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    run = {
        "commit": commit,
        "load": os.getloadavg()[0],
        "command": " ".join(sys.argv),
        "rows": rows,
    }
    out = ROOT / "benches" / "results" / "families.json"
    runs = json.loads(out.read_text()) if out.exists() else []
    out.write_text(json.dumps([*runs, run], indent=1) + "\n")
    print(
        "| group (family) | ids | tokstream | growth | vLLM | vLLM / tokstream | state: call |"
        " after |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['group']} (`{row['family']}`) | {row['ids']:,} | {row['tokstream_us']:.1f} µs"
            f" | {row['tokstream_growth']:.2f}x | {row['vllm_us']:,.0f} µs | {row['ratio']:,.0f}x"
            f" | {row['state_in_call']:,} B | {row['state_after']:,} B |"
        )


if __name__ == "__main__":
    main()
