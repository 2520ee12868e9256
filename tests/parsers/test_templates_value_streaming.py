"""Tag-form calls under vLLM's names send each tag as its value ends, and a string value's text as
it comes: streamed one id a chunk, a call whose ``content`` is about 20 KB keeps the resumable
state under ``STATE_LIMIT`` bytes in all, the call's text included, and the stream equals the
whole answer.

Each family's value holds text that begins like its value's close (``</param``, ``</arg_``,
``<｜DSML｜par``, a newline before ``<``) without being one, so the stream holds it back and then
sends it as text. A typed value (``mode``, an integer) is sent once its close comes.
"""

# ruff: noqa: RUF001, RUF002
# (Full-width bars are the real spelling of DeepSeek's markers.)
from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.derender_util import state_size
from helpers.family_cases import chunks, encode, tools_of, whole
from helpers.parsers_oracle import Message, chat_request
from helpers.parsers_util import STATE_LIMIT, derenderer, stream

LINE = "line {i}: if a < b: print('</param', \"</arg_\", '<｜DSML｜par', '</invoke x') ☃\n<i>\n"
VALUE = "".join(LINE.format(i=i) for i in range(250))
PROPS = {"path": {"type": "string"}, "content": {"type": "string"}, "mode": {"type": "integer"}}
ARGUMENTS = json.dumps({"path": "a.txt", "content": VALUE, "mode": 644}, ensure_ascii=False)
D = "｜DSML｜"


def _qwen3_coder(value: str) -> str:
    params = [("path", "a.txt"), ("content", value), ("mode", "644")]
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params)
    call = f"<tool_call>\n<function=write_file>\n{body}</function>\n</tool_call>"
    return "<think>Plan.</think>" + call


def _arg_tags(value: str) -> str:
    params = [("path", "a.txt"), ("content", value), ("mode", "644")]
    return "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v in params)


def _dsml(value: str) -> str:
    params = [("path", "a.txt", "true"), ("content", value, "true"), ("mode", "644", "false")]
    body = "".join(
        f'<{D}parameter name="{k}" string="{s}">{v}</{D}parameter>\n' for k, v, s in params
    )
    invoke = f'<{D}invoke name="write_file">\n{body}</{D}invoke>\n'
    return f"<{D}function_calls>\n{invoke}</{D}function_calls>"


def _minimax(value: str) -> str:
    params = [("path", "a.txt"), ("content", value), ("mode", "644")]
    body = "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in params)
    return (
        f'Plan.</think><minimax:tool_call>\n<invoke name="write_file">\n{body}</invoke>\n'
        "</minimax:tool_call>"
    )


def _seed(value: str) -> str:
    params = [("path", "a.txt"), ("content", value), ("mode", "644")]
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params)
    return (
        "<seed:think>Plan.</seed:think><seed:tool_call>\n<function=write_file>\n"
        f"{body}</function>\n</seed:tool_call>"
    )


QWEN_HEAD = "<|im_start|>user\nWrite it.<|im_end|>\n<|im_start|>assistant\n"
#: (name, fixture, reasoning parser, prompt, generation, reasoning in the answer)
FAMILIES: list[tuple[str, str, str | None, str, str, str]] = [
    ("qwen3_coder", "qwen3", "qwen3", QWEN_HEAD, _qwen3_coder(VALUE), "Plan."),
    (
        "glm45",
        "qwen3",
        None,
        "<|user|>\nWrite it.<|assistant|>",
        f"<tool_call>write_file\n{_arg_tags(VALUE)}\n</tool_call>",
        "",
    ),
    (
        "hy_v3",
        "hy-v3-derived",
        "hy_v3",
        QWEN_HEAD,
        f"<tool_calls><tool_call>write_file<tool_sep>{_arg_tags(VALUE)}</tool_call></tool_calls>",
        "",
    ),
    (
        "deepseek_v32",
        "deepseek-r1",
        None,
        "<｜begin▁of▁sentence｜><｜User｜>Write it.<｜Assistant｜>",
        _dsml(VALUE),
        "",
    ),
    (
        "minimax_m2",
        "minimax-m2-derived",
        "minimax_m2",
        "]~b]user\nWrite it.[e~[\n]~b]ai\n<think>\n",
        _minimax(VALUE),
        "Plan.",
    ),
    (
        "seed_oss",
        "seed-oss-derived",
        "seed_oss",
        "<seed:bos>user\nWrite it.<seed:eos><seed:bos>assistant\n",
        _seed(VALUE),
        "Plan.",
    ),
]


def _request() -> dict[str, Any]:
    request = chat_request()
    request["tools"] = tools_of("write_file", PROPS)
    return request


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f[0])
def test_a_long_string_value_streams_in_a_small_state(
    family: tuple[str, str, str | None, str, str, str],
) -> None:
    name, fixture, reasoning, head, text, thought = family
    assert len(VALUE.encode()) > 20_000
    r = derenderer(fixture, reasoning, name, "resumable")
    request = _request()
    prompt, gen = encode(fixture, head), encode(fixture, text)
    got = whole(r, prompt, gen, request, "stop")
    assert got.message == Message("", thought, (("write_file", ARGUMENTS),))
    streamed = stream(r, prompt, chunks(gen, "1"), request, "stop")
    assert streamed.result() == got
    largest = max(state_size(s) for s in streamed.states)
    assert largest < STATE_LIMIT, largest
    # The value's text came as it was written, not at the call's close.
    args = [
        c["function"].get("arguments") or ""
        for d in streamed.deltas
        for c in d.get("tool_calls", [])
    ]
    assert sum(1 for a in args if a) > 100


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f[0])
def test_a_value_the_output_cuts_ends_there(
    family: tuple[str, str, str | None, str, str, str],
) -> None:
    name, fixture, reasoning, head, text, _ = family
    cut = text[: text.index("line 3: if a") + len("line 3: if a")]
    r = derenderer(fixture, reasoning, name, "resumable")
    request = _request()
    prompt, gen = encode(fixture, head), encode(fixture, cut)
    got = whole(r, prompt, gen, request, "length")
    ((call_name, arguments),) = got.message.calls
    assert call_name == "write_file"
    sent = VALUE[: VALUE.index("line 3: if a") + len("line 3: if a")]
    assert json.loads(arguments) == {"path": "a.txt", "content": sent}
    for shape in ("1", "3", "random"):
        assert stream(r, prompt, chunks(gen, shape), request, "length").result() == got, shape
