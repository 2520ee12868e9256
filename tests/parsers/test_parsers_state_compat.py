"""Parsers: hermes states carried by streams begun before hermes ran on the shared JSON scanner.

``data/hermes_states_v1.json`` holds stream states that tokstream 0.1.0 at e54ef1e (hermes with
its own copy of the scanner) answered for one generation, streamed one id a chunk on Qwen3 (the
tags are single ids) and DeepSeek-R1 (the tags are text): in a call's name, in its arguments,
after its object but before ``</tool_call>``, between two calls, and after the name of a call
with no arguments. Each must resume to the rest of the stream's text and tool calls (ids, names,
arguments) as that version gave them, also recorded there. The carried ``parser`` keys are the
same in both versions, so no version bump: the shared scanner reads the old keys as its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.parsers_oracle import (
    END_THINK,
    NAMES,
    VARIANT,
    call,
    chat_request,
    ids_of,
    prompt_ids,
)
from helpers.parsers_util import derenderer, singles, stream

STATES = json.loads((Path(__file__).parents[1] / "data" / "hermes_states_v1.json").read_text())
#: The generation the states were captured on.
PIECES = [
    "Check the weather.",
    END_THINK,
    "\n\nOn it.",
    *call('{"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}'),
    "\n",
    *call('{"name": "get_time"}'),
]
CASES = [(name, case["label"]) for name in NAMES for case in STATES[name]]


def summary(deltas: list[dict[str, Any]]) -> dict[str, Any]:
    """Content, reasoning and, per tool index, the first id sent, the name and the arguments."""
    content = reasoning = ""
    calls: dict[str, list[Any]] = {}
    for delta in deltas:
        content += delta["content"] or ""
        reasoning += delta["reasoning"] or ""
        for tool_call in delta.get("tool_calls", []):
            entry = calls.setdefault(str(tool_call["index"]), [tool_call["id"], "", ""])
            entry[1] += tool_call["function"]["name"] or ""
            entry[2] += tool_call["function"]["arguments"]
    return {"content": content, "reasoning": reasoning, "calls": calls}


@pytest.mark.parametrize(("name", "label"), CASES)
def test_an_earlier_versions_state_resumes_as_it_did(name: str, label: str) -> None:
    """The recorded state, carried into the rest of the chunks, gives the recorded rest."""
    (case,) = [c for c in STATES[name] if c["label"] == label]
    chunks = singles(ids_of(name, PIECES))
    r = derenderer(name, VARIANT[name], "hermes")
    prompt = prompt_ids(name, "open")
    rest = stream(r, prompt, chunks[case["at"] :], chat_request(), "length", state=case["state"])
    assert summary(rest.deltas) == case["rest"], (name, label)
    assert rest.finishes[-1] == case["finish"]


@pytest.mark.parametrize("name", NAMES)
def test_a_fresh_stream_passes_the_recorded_points_with_the_same_answer(name: str) -> None:
    """Streamed from its start, each recorded rest is what this version sends from that chunk
    on: the recorded states and today's lead to the same text and calls."""
    chunks = singles(ids_of(name, PIECES))
    r = derenderer(name, VARIANT[name], "hermes")
    full = stream(r, prompt_ids(name, "open"), chunks, chat_request(), "length")
    for case in STATES[name]:
        assert summary(full.deltas[case["at"] :]) == case["rest"], (name, case["label"])
