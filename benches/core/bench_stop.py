"""Stop strings against body size: one whole chat derender per round (qwen3).

Each body carries 64 stop strings of 4 KiB (a run of "a" that could begin all of them, ending
in a different character) and a generation of "a" ids, both scaled together from about 128 KiB
to 1 MiB, the case where every stop string stays a candidate for thousands of chars. Matching is
one automaton over all stop strings, so a body twice as large should cost about twice as much:
``benches/report.py`` prints each size's median and its ratio to the size before it. Groups are
``stop-strings qwen3``; ``bytes`` is the body size.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from support import tokenizer_path
from tokstream import _core

NAME = "qwen3"
CHAT = _core.CHAT_PATH
A = 64  # "a"
#: (stop strings, chars each, generated ids): 128 KiB to 1 MiB of body.
SIZES = {
    "128k": (16, 4096, 16_000),
    "256k": (32, 4096, 32_000),
    "512k": (64, 4096, 64_000),
    "1m": (128, 4096, 128_000),
}


@functools.cache
def derenderer() -> Any:
    from tokstream import Derenderer, Detokenizer

    return Derenderer(Detokenizer.from_file(str(tokenizer_path(NAME))), served_model_name="m")


def body(stops: int, length: int, ids: int) -> bytes:
    choice = {"index": 0, "token_ids": [A] * ids, "finish_reason": "length", "logprobs": None}
    strings = ["a" * (length - 1) + chr(0x4E00 + k) for k in range(stops)]
    return json.dumps(
        {
            "generate_response": {"request_id": "gen-1", "choices": [choice]},
            "chat_request": {"messages": [], "stop": strings},
        }
    ).encode()


@pytest.mark.parametrize("size", list(SIZES))
def test_stop_strings(benchmark: Any, size: str) -> None:
    raw = body(*SIZES[size])
    handle = derenderer().handle_json
    benchmark.group = f"stop-strings {NAME}"
    benchmark.extra_info.update(bytes=len(raw), size=size)
    status, answer = benchmark(handle, CHAT, raw)
    assert status == 200, answer[:300]
    text = json.loads(answer)["choices"][0]["message"]["content"]
    assert text == "a" * SIZES[size][2]
