"""vLLM 0.33.0's parsed chat answers, on CPU, for generations written as text.

This is how the expected messages of the parser-family tests (``tests/parsers/test_templates_*.py``)
are measured. It needs the acceptance virtualenv (see ``oracle.py``):

    PYTHONPATH=acceptance/vllm/standins:acceptance/vllm:. \\
        target/vllm-acceptance/venv/bin/python acceptance/vllm/parsers_oracle.py CASES.json

``CASES.json`` is a list of ``{"label", "fixture", "reasoning", "tool", "prompt", "text"}``
(optionally ``"request"``: fields added to the chat request, such as ``chat_template_kwargs``;
``"tools"``: the request's tools, else the four of ``TOOLS``; ``"finish"``, the engine's
finish reason, ``"stop"`` unless given; ``"model_type"``). ``prompt`` and ``text`` are encoded
with the fixture's tokenizer (``tokenizers``, no special tokens added), so a marker that is one
token of the vocabulary is that token, as in the tests. Each case is sent to vLLM's own
derender route (``oracle.answer``) whole and streamed at 1 and 3 ids a chunk; the answer, per
label, is each shape's message as ``{"content", "reasoning", "calls": [[name, arguments]],
"finish_reason"}`` (``{"status", "error"}`` for a refusal).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import oracle
from tokenizers import Tokenizer

import fixtures

CHAT = "/v1/chat/completions/derender"
SHAPES = (("whole", 0), ("stream_1", 1), ("stream_3", 3))


def _tool(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": list(properties)[:1]}
    return {"type": "function", "function": {"name": name, "parameters": schema}}


#: The tools a case's request offers unless it gives its own (those of ``tests/helpers``).
TOOLS = [
    _tool("get_weather", {"city": {"type": "string"}, "unit": {"type": "string"}}),
    _tool("search", {"query": {"type": "string"}, "filters": {"type": "object"}}),
    _tool("get_time", {}),
    _tool("write_file", {"path": {"type": "string"}, "content": {"type": "string"}}),
]


def _choice(ids: list[int], finish: str | None) -> dict[str, Any]:
    return {
        "index": 0,
        "logprobs": None,
        "finish_reason": finish,
        "token_ids": ids,
        "routed_experts": None,
        "sampling_mask": None,
    }


def _cases(case: dict[str, Any]) -> list[dict[str, Any]]:
    tok = Tokenizer.from_file(str(fixtures.tokenizer_json(case["fixture"])))
    prompt = tok.encode(case["prompt"], add_special_tokens=False).ids
    gen = tok.encode(case["text"], add_special_tokens=False).ids
    request = {
        "model": oracle.MODEL,
        "messages": [{"role": "user", "content": "Weather?"}],
        "tools": case.get("tools", TOOLS),
        "tool_choice": "auto",
        **case.get("request", {}),
    }
    finish = case.get("finish", "stop")
    server = {
        "fixture": case["fixture"],
        "reasoning_parser": case.get("reasoning"),
        "tool_parser": case.get("tool"),
        "model_type": case.get("model_type"),
    }
    out = []
    for shape, size in SHAPES:
        name = f"{case['label']}\0{shape}"
        if size == 0:
            response = {
                "request_id": "gen-1",
                "model": None,
                "created": None,
                "choices": [_choice(gen, finish)],
                "usage": None,
            }
            body = {
                "generate_response": response,
                "prompt_tokens": len(prompt),
                "prompt_token_ids": prompt,
                "chat_request": request,
            }
            out.append({"name": name, "path": CHAT, "body": body, **server})
            continue
        steps = []
        chunks = [gen[i : i + size] for i in range(0, len(gen), size)] or [[]]
        for n, ids in enumerate(chunks):
            last = n == len(chunks) - 1
            chunk = {
                "request_id": "gen-1",
                "choices": [_choice(ids, finish if last else None)],
                "usage": None,
                "prompt_token_ids": None,
            }
            steps.append(
                {
                    "stream": True,
                    "generate_chunk": chunk,
                    "chat_request": request,
                    # vLLM's replay state needs the prompt on every call.
                    "prompt_token_ids": prompt,
                }
            )
        out.append({"name": name, "path": CHAT, "steps": steps, **server})
    return out


def _message(answer: dict[str, Any]) -> dict[str, Any]:
    if "steps" not in answer:
        if answer["status"] != 200:
            return {"status": answer["status"], "error": answer["body"]}
        (choice,) = answer["body"]["choices"]
        message = choice["message"]
        calls = [
            [c["function"]["name"], c["function"]["arguments"]]
            for c in message.get("tool_calls") or []
        ]
        return {
            "content": message["content"],
            "reasoning": message.get("reasoning"),
            "calls": calls,
            "finish_reason": choice["finish_reason"],
        }
    content = reasoning = None
    calls: dict[int, list[str]] = {}
    finish = None
    for step in answer["steps"]:
        if step["status"] != 200:
            return {"status": step["status"], "error": step["body"]}
        for choice in step["body"]["chunk"]["choices"]:
            delta = choice["delta"]
            if delta.get("content") is not None:
                content = (content or "") + delta["content"]
            if delta.get("reasoning") is not None:
                reasoning = (reasoning or "") + delta["reasoning"]
            for call in delta.get("tool_calls") or []:
                slot = calls.setdefault(call["index"], ["", ""])
                slot[0] += call["function"].get("name") or ""
                slot[1] += call["function"].get("arguments") or ""
            finish = choice["finish_reason"] or finish
    return {
        "content": content,
        "reasoning": reasoning,
        "calls": [calls[i] for i in sorted(calls)],
        "finish_reason": finish,
    }


def answer(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """Each case's message per shape, by label."""
    sent = [c for case in cases for c in _cases(case)]
    answers = oracle.answer(sent)
    out: dict[str, Any] = {}
    for name, got in answers.items():
        label, shape = name.split("\0")
        out.setdefault(label, {})[shape] = _message(got)
    return out


if __name__ == "__main__":
    cases = json.loads(Path(sys.argv[1]).read_text())
    print(json.dumps(answer(cases), indent=1, ensure_ascii=False))
