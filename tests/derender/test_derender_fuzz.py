"""Derender under hostile input (hypothesis): random JSON, mutated valid bodies, random bytes.

Every answer has status 200, 400 or 404 and a body that parses as JSON, in the error shape when
it is an error; afterwards the same ``Derenderer`` still answers a valid request exactly. The
profiles of ``conftest`` decide the number of examples (``HYPOTHESIS_PROFILE``).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from helpers.derender_util import (
    CHAT,
    COMPLETION,
    PATHS,
    assert_error,
    gen_choice,
    gen_chunk,
    gen_response,
    load_derenderer,
    ok,
    whole_body,
)
from hypothesis import event, given
from hypothesis import strategies as st
from tokstream import _core

QWEN = "qwen3"
HELLO, WORLD, BANG, ZHONG, WAVE_A, WAVE_B = 9707, 1879, 0, 72858, 61804, 233
GEN = [HELLO, WORLD, BANG, ZHONG, WAVE_A, WAVE_B]
TEXT = "Hello world! 中 👋"

#: Field names of the protocol, so random objects reach past the top level.
KEYS = (
    "stream",
    "model",
    "generate_response",
    "generate_responses",
    "generate_chunk",
    "choices",
    "index",
    "token_ids",
    "finish_reason",
    "stop_reason",
    "logprobs",
    "content",
    "token_id",
    "token",
    "logprob",
    "top_logprobs",
    "prompt_token_ids",
    "prompt_tokens",
    "prompt_logprobs",
    "stream_state",
    *_core.STATE_KEYS,
    "chat_request",
    "completion_request",
    "stop",
    "min_tokens",
    "skip_special_tokens",
    "usage",
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.sampled_from([0, 1, -1, 2**32 - 1, 2**32, 2**63, HELLO, 151645])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(["Hello", "Ġworld", "<0xE4>", "token_id:9707", "stop", "中", ""])
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=5)
    ),
    max_leaves=24,
)

#: Values of the same JSON type, to keep mutated bodies close to valid ones.
LIKE: dict[type, st.SearchStrategy[Any]] = {
    bool: st.booleans(),
    int: st.integers(-2, 8) | st.integers(0, 2**33) | st.sampled_from([HELLO, 151645, 2**32 - 1]),
    float: st.floats(-1e4, 0.0),
    str: st.sampled_from(["Hello", "Ġworld", "<0xE4>", "token_id:9707", "stop", "中", "", "x"]),
    list: st.lists(st.integers(0, 200_000), max_size=6),
}


def valid_bodies() -> list[tuple[str, dict[str, Any]]]:
    """One valid body of each shape, with logprobs, a state, stop strings and options."""
    logprobs = {
        "content": [
            {
                "token_id": i,
                "logprob": -0.5,
                "rank": 1,
                "top_logprobs": [{"token_id": i, "logprob": -0.5}],
            }
            for i in GEN
        ]
    }
    choice = gen_choice(GEN, finish_reason="stop", logprobs=logprobs)
    response = gen_response([choice], prompt_token_ids=[151644, 872, 198])
    state = {
        "prev_tokens": ["Hello", "Ġworld"],
        "prefix_offset": 0,
        "read_offset": 2,
        "role_sent": True,
        "logprob_context_token_ids": [HELLO, WORLD],
        "logprob_text_offset": 11,
        "held_text": "",
        "generated_tokens": 2,
        "stopped": False,
    }
    chunk = gen_chunk([gen_choice(GEN[2:], finish_reason="length", logprobs=None)])
    options = {"stop": ["xyz"], "logprobs": True, "top_logprobs": 1, "min_tokens": 1}
    return [
        (CHAT, whole_body(CHAT, response, prompt_tokens=3, options=options)),
        (COMPLETION, whole_body(COMPLETION, response, prompt_tokens=3, options={"logprobs": 1})),
        (CHAT, {"stream": True, "generate_chunk": chunk, "stream_state": state}),
        (COMPLETION, {"stream": True, "generate_chunk": chunk, "stream_state": None}),
    ]


VALID = valid_bodies()


def check_answer(r: Any, path: str, raw: bytes) -> None:
    """Any body: a status of the contract and a JSON answer in the right shape."""
    status, answer = r.handle_json(path, raw)
    event(f"status {status}")
    assert status in (200, 400, 404), (status, answer, raw[:500])
    parsed = json.loads(answer)
    if status == 200:
        assert isinstance(parsed, dict) and (
            set(parsed) == {"chunk", "stream_state"} or "choices" in parsed
        )
    else:
        assert_error(status, parsed, status)


def still_works(r: Any) -> None:
    """The Derenderer answers a plain valid request exactly after whatever came before."""
    response = gen_response([gen_choice(GEN, finish_reason="length")])
    (choice,) = ok(r, CHAT, whole_body(CHAT, response))["choices"]
    assert choice["message"]["content"] == TEXT


@given(path=st.sampled_from([*PATHS, "/v1/other"]), body=JSON)
def test_random_json(path: str, body: Any) -> None:
    r = load_derenderer(QWEN, max_model_len=64)
    check_answer(r, path, json.dumps(body).encode())
    still_works(r)


def locations(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``value`` (dict keys and list indices)."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(locations(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(locations(item, (*prefix, index)))
    return found


@given(data=st.data())
def test_mutated_valid_bodies(data: st.DataObject) -> None:
    r = load_derenderer(QWEN, max_model_len=64)
    path, body = data.draw(st.sampled_from(VALID))
    body = copy.deepcopy(body)
    for _ in range(data.draw(st.integers(1, 3))):
        where = locations(body)
        if not where:
            break
        target = data.draw(st.sampled_from(where))
        node = body
        for key in target[:-1]:
            node = node[key]
        action = data.draw(st.sampled_from(["same type", "replace", "delete", "duplicate"]))
        value = node[target[-1]]
        if action == "delete":
            del node[target[-1]]
        elif action == "duplicate" and isinstance(node, list):
            node.append(copy.deepcopy(value))
        elif action == "same type" and type(value) in LIKE:
            node[target[-1]] = data.draw(LIKE[type(value)])
        else:
            node[target[-1]] = data.draw(JSON)
    check_answer(r, path, json.dumps(body).encode())
    still_works(r)


@given(data=st.data())
def test_damaged_bytes(data: st.DataObject) -> None:
    r = load_derenderer(QWEN)
    path, body = data.draw(st.sampled_from(VALID))
    raw = bytearray(json.dumps(body, ensure_ascii=False).encode())
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw)))
        kind = data.draw(st.sampled_from(["cut", "flip", "insert"]))
        if kind == "cut":
            del raw[at:]
        elif kind == "flip" and at < len(raw):
            raw[at] ^= data.draw(st.integers(1, 255))
        else:
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=4))
    check_answer(r, path, bytes(raw))
    still_works(r)
