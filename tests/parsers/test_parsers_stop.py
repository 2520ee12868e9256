"""Stop strings in a parsed chat stream, applied to the raw text before the parsers see it.

vLLM 0.33.0 answers a parsed stream with stop strings 400. Here the request's stop strings cut
the generated text as the engine would have (the stream then ends: later chunks get no choice),
and the text that may begin a stop string is held back in ``stream_state.held_text`` until the
next chunk decides it. The answer is the whole response's, where the same rule already holds,
at every chunking; ``finish_reason`` is ``"stop"`` (``"tool_calls"`` once a call was sent) and
``stop_reason`` the stop string. A parser that replays its history (``parser_state="replay"``)
keeps the 400.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.derender_util import CHAT, error_message, gen_choice, gen_chunk, ok, post
from helpers.parsers_oracle import Message, chat_request
from helpers.parsers_util import derenderer, whole
from helpers.real_tokenizers import load_tokenizer

PROMPT = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
TEXT = (
    "<think>Plan. STOP</think>Sunny today. STOP here <tool_call>\n"
    '{"name": "get_time", "arguments": {}}\n</tool_call>'
)
CALL_FIRST = (
    '<think>Plan.</think>Checking.<tool_call>\n{"name": "get_time", "arguments": {}}\n'
    "</tool_call>Then STOP, and more."
)
#: (stop strings, generation, the expected message, finish_reason, stop_reason)
CASES = [
    (["STOP"], TEXT, Message("", "Plan. ", ()), "stop", "STOP"),
    (["today. ST"], TEXT, None, "stop", "today. ST"),
    (["nomatch", "here <"], TEXT, None, "stop", "here <"),
    (["nomatch"], TEXT, None, "tool_calls", None),
    (["STOP"], CALL_FIRST, None, "tool_calls", "STOP"),
]
NAMES = [("qwen3", "hermes"), ("qwen3_template", "qwen3_template")]


def _ids(text: str) -> list[int]:
    return list(load_tokenizer("qwen3").encode(text, add_special_tokens=False).ids)


def _stream(r: Any, prompt: list[int], gen: list[int], size: int, request: Any) -> dict[str, Any]:
    """Streams ``gen`` ``size`` ids a chunk; the aggregate message, finish and stop reason."""
    content = reasoning = ""
    calls: dict[int, list[str]] = {}
    finish = stop = None
    state = None
    chunks = [gen[i : i + size] for i in range(0, len(gen), size)]
    ended = False
    for n, ids in enumerate(chunks):
        last = n == len(chunks) - 1
        body = {
            "stream": True,
            "generate_chunk": gen_chunk([gen_choice(ids, finish_reason="stop" if last else None)]),
            "stream_state": state,
            "chat_request": request,
        }
        if n == 0:
            body["prompt_token_ids"] = prompt
        answer = ok(r, CHAT, body)
        state = answer["stream_state"]
        choices = answer["chunk"]["choices"]
        if ended:
            assert choices == [] and state["stopped"] is True, (n, answer)
            continue
        (choice,) = choices
        delta = choice["delta"]
        content += delta["content"] or ""
        reasoning += delta["reasoning"] or ""
        for call in delta.get("tool_calls", []):
            slot = calls.setdefault(call["index"], ["", ""])
            slot[0] += call["function"]["name"] or ""
            slot[1] += call["function"]["arguments"]
        if choice["finish_reason"] is not None:
            finish, stop = choice["finish_reason"], choice["stop_reason"]
            ended = True
        else:
            assert len(state["held_text"]) < 16, state["held_text"]
    message = Message(content, reasoning, tuple((a, b) for a, b in calls.values()))
    return {"message": message, "finish": finish, "stop": stop}


@pytest.mark.parametrize("names", NAMES, ids=lambda n: "+".join(n))
@pytest.mark.parametrize(("stops", "text", "expected", "finish", "stop"), CASES)
def test_a_stream_is_cut_where_the_whole_response_is(
    names: tuple[str, str],
    stops: list[str],
    text: str,
    expected: Message | None,
    finish: str | None,
    stop: str | None,
) -> None:
    r = derenderer("qwen3", *names)
    request = chat_request(stop=stops)
    prompt, gen = _ids(PROMPT), _ids(text)
    got = whole(r, prompt, gen, request, "stop")
    if expected is not None:
        assert got.message == expected
    if finish is not None:
        assert got.finish_reason == finish
    for size in (1, 2, 3, 5, 64):
        streamed = _stream(r, prompt, gen, size, request)
        assert streamed["message"] == got.message, size
        assert streamed["finish"] == got.finish_reason, size
        if stop is not None:
            assert streamed["stop"] == stop, size


def test_the_text_before_a_stop_string_is_never_lost() -> None:
    """Every cut point: the stream's text and the whole response's agree, and hold the prefix."""
    r = derenderer("qwen3", "qwen3", "hermes")
    prompt = _ids(PROMPT)
    body = "<think>Plan.</think>The sky is clear over Paris tonight."
    gen = _ids(body)
    for cut in range(len("The sky"), len(body) - len("<think>Plan.</think>")):
        stop = body[len("<think>Plan.</think>") :][cut : cut + 3]
        if len(stop) < 3:
            break
        request = chat_request(stop=[stop])
        got = whole(r, prompt, gen, request, "stop")
        streamed = _stream(r, prompt, gen, 1, request)
        assert streamed["message"] == got.message, stop
        assert body.split("</think>", 1)[1].startswith(got.message.content + stop), stop


def test_a_replaying_parser_still_refuses_stop_strings() -> None:
    r = derenderer("qwen3", "qwen3", "hermes", "replay")
    body = {
        "stream": True,
        "generate_chunk": gen_chunk([gen_choice(_ids("Hi"))]),
        "stream_state": None,
        "chat_request": chat_request(stop=["x"]),
        "prompt_token_ids": _ids(PROMPT),
    }
    status, answer = post(r, CHAT, body)
    assert status == 400
    assert "resumable" in error_message(answer, 400, "BadRequestError")
