"""The typed face of the Derenderer: pydantic requests in, pydantic responses out, typed errors.

``derender_chat`` / ``derender_completion`` / ``derender_chat_stream`` /
``derender_completion_stream`` are the library face of the same derender code as ``handle_json``
(STYLE G0: two faces, one implementation), so their answers must equal the JSON face's, and their
failures are ``BadRequestError`` / ``NotFoundError`` with the status, param and type. With a
parser configured, they carry its state like ``handle_json``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.derender_util import (
    CHAT,
    COMPLETION,
    SERVED,
    gen_choice,
    gen_chunk,
    gen_response,
    load_derenderer,
    ok,
    whole_body,
)
from helpers.parsers_oracle import NAMES, VARIANT, cases, chat_request
from helpers.parsers_util import MODES, Streamed, derenderer, message_result, stream
from helpers.parsers_util import whole as parsed_whole
from helpers.parsers_util import whole_body as parsed_whole_body
from tokstream import protocol as P

QWEN = "qwen3"
PROMPT = [151644, 872, 198]
GEN = [9707, 1879, 0, 72858, 16744, 61804, 233]  # Hello world! 中文 👋
LOGPROBS = {
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


def errors() -> Any:
    """``tokstream.errors``, with the derender exceptions (skips while they are not built)."""
    load_derenderer(QWEN)  # skips, or fails under CI, while the Derenderer is missing
    import tokstream.errors

    return tokstream.errors


def without_created(value: Any) -> Any:
    """The JSON form of a model or answer, with every ``created`` dropped."""
    data = json.loads(value.model_dump_json()) if hasattr(value, "model_dump_json") else value
    data = copy_json(data)
    for holder in (data, data.get("chunk", {})):
        holder.pop("created", None)
    return data


def copy_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def whole(path: str) -> dict[str, Any]:
    choice = gen_choice(GEN, finish_reason="length", logprobs=LOGPROBS)
    options = {"logprobs": True, "top_logprobs": 1} if path == CHAT else {"logprobs": 1}
    options["return_token_ids"] = True
    response = gen_response([choice], request_id="typed", prompt_token_ids=PROMPT)
    return whole_body(path, response, prompt_tokens=3, options=options)


def streamed(path: str) -> dict[str, Any]:
    chunk = gen_chunk(
        [gen_choice(GEN[:4], logprobs=None)], request_id="typed", prompt_token_ids=PROMPT
    )
    key = "chat_request" if path == CHAT else "completion_request"
    return {"stream": True, "generate_chunk": chunk, "prompt_tokens": 3, key: {"stream": True}}


FACES = [
    ("derender_chat", CHAT, whole, P.DerenderChatRequest, P.ChatCompletionResponse),
    ("derender_completion", COMPLETION, whole, P.DerenderCompletionRequest, P.CompletionResponse),
    (
        "derender_chat_stream",
        CHAT,
        streamed,
        P.DerenderChatStreamRequest,
        P.DerenderChatStreamResponse,
    ),
    (
        "derender_completion_stream",
        COMPLETION,
        streamed,
        P.DerenderCompletionStreamRequest,
        P.DerenderCompletionStreamResponse,
    ),
]


@pytest.mark.parametrize(("method", "path", "make", "request_model", "response_model"), FACES)
def test_typed_face_equals_the_json_face(
    method: str, path: str, make: Any, request_model: Any, response_model: Any
) -> None:
    r = load_derenderer(QWEN)
    body = make(path)
    typed = getattr(r, method)(request_model.model_validate(body))
    assert isinstance(typed, response_model)
    answer = ok(r, path, body)
    got = without_created(typed)
    want = without_created(answer)
    if "stream_state" in got:
        # The pydantic state may not declare tokstream's extension fields; the rest must match.
        assert set(got["stream_state"]) <= set(want["stream_state"])
        want["stream_state"] = {k: want["stream_state"][k] for k in got["stream_state"]}
    assert got == want


def test_typed_stream_state_carries_over() -> None:
    """The state a typed chunk answer returns continues the stream on the next typed call."""
    r = load_derenderer(QWEN)
    first = r.derender_chat_stream(
        P.DerenderChatStreamRequest.model_validate(
            {"stream": True, "generate_chunk": gen_chunk([gen_choice(GEN[:6])])}
        )
    )
    second = r.derender_chat_stream(
        P.DerenderChatStreamRequest(
            stream=True,
            generate_chunk=P.GenerateStreamResponse.model_validate(
                gen_chunk([gen_choice(GEN[6:], finish_reason="length")])
            ),
            stream_state=first.stream_state,
        )
    )
    texts = [a.chunk.choices[0].delta.content for a in (first, second)]
    assert "".join(texts) == "Hello world! 中文 👋"
    assert first.chunk.choices[0].delta.role == "assistant"
    assert second.chunk.choices[0].delta.role is None


def check_error(exc: Any, status: int, kind: str) -> None:
    mod = errors()
    assert isinstance(exc, mod.DerenderError)
    assert isinstance(exc, mod.TokstreamError) and isinstance(exc, ValueError)
    assert (exc.status_code, exc.error_type) == (status, kind)
    assert exc.param is None or isinstance(exc.param, str)
    assert str(exc) and "Traceback" not in str(exc)


@pytest.mark.parametrize(("method", "path", "make", "request_model", "response_model"), FACES)
def test_typed_face_unknown_model_is_not_found(
    method: str, path: str, make: Any, request_model: Any, response_model: Any
) -> None:
    r = load_derenderer(QWEN)
    request = request_model.model_validate(make(path) | {"model": "other"})
    with pytest.raises(errors().NotFoundError) as info:
        getattr(r, method)(request)
    check_error(info.value, 404, "NotFoundError")
    assert str(info.value) == "The model `other` does not exist."
    assert getattr(r, method)(request_model.model_validate(make(path) | {"model": SERVED}))


def hostile(path: str, what: str) -> dict[str, Any]:
    if what == "empty token_ids":
        return whole_body(path, gen_response([gen_choice([], finish_reason="length")]))
    body = streamed(path)
    if what == "two choices":
        body["generate_chunk"]["choices"] = [gen_choice([1], index=0), gen_choice([2], index=1)]
    elif what == "unknown token":
        body["stream_state"] = {"prev_tokens": ["no-such-token"], "read_offset": 1}
    return body


@pytest.mark.parametrize("path", [CHAT, COMPLETION])
@pytest.mark.parametrize("what", ["empty token_ids", "two choices", "unknown token"])
def test_typed_face_bad_request(path: str, what: str) -> None:
    """Requests the models accept but derender refuses: ``BadRequestError``, status 400."""
    r = load_derenderer(QWEN)
    body = hostile(path, what)
    kind = "chat" if path == CHAT else "completion"
    method = f"derender_{kind}_stream" if body.get("stream") is True else f"derender_{kind}"
    model = {
        "derender_chat": P.DerenderChatRequest,
        "derender_completion": P.DerenderCompletionRequest,
        "derender_chat_stream": P.DerenderChatStreamRequest,
        "derender_completion_stream": P.DerenderCompletionStreamRequest,
    }[method]
    with pytest.raises(errors().BadRequestError) as info:
        getattr(r, method)(model.model_validate(body))
    check_error(info.value, 400, "BadRequestError")


# --- with a parser ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", NAMES)
def test_typed_faces_carry_the_parser_state(name: str, mode: str) -> None:
    """``derender_chat`` / ``derender_chat_stream`` answer what ``handle_json`` answers, the
    state passed back as the typed ``DerenderStreamState`` (so it must keep the parser state)."""
    r = derenderer(name, VARIANT[name], "hermes", mode)
    case = cases(name)[3]
    body = parsed_whole_body(case.prompt, case.gen, chat_request(), "stop")
    typed = r.derender_chat(P.DerenderChatRequest.model_validate(body))
    want = parsed_whole(r, case.prompt, case.gen, chat_request(), "stop")
    (choice,) = json.loads(typed.model_dump_json())["choices"]
    assert message_result(choice) == want
    chunks = [case.gen[i : i + 3] for i in range(0, len(case.gen), 3)]
    json_run = stream(r, case.prompt, chunks, chat_request(), "stop", mode=mode)
    run = Streamed()
    state = None
    for n, ids in enumerate(chunks):
        last = n == len(chunks) - 1
        chunk = gen_chunk([gen_choice(ids, finish_reason="stop" if last else None)])
        fields = {"chat_request": chat_request(), "stream_state": state}
        if n == 0 or mode == "replay":
            fields["prompt_token_ids"] = case.prompt
        request = P.DerenderChatStreamRequest.model_validate(
            {"stream": True, "generate_chunk": chunk} | fields
        )
        answer = r.derender_chat_stream(request)
        state = answer.stream_state
        wire = json.loads(answer.model_dump_json())
        (chosen,) = wire["chunk"]["choices"]
        run.deltas.append(chosen["delta"])
        run.finishes.append(chosen["finish_reason"])
    assert run.result() == json_run.result()
    assert run.result().message == want.message
