"""Request bodies for the vLLM parity tests (issue 10), built on the tokenizer fixtures.

Plain data, no tokstream import: ``tests/derender/test_vllm_parity.py`` sends them to tokstream, and
``acceptance/vllm/oracle.py`` sends the same bodies to vLLM 0.33.0's own derender route to
measure the expected answers. A case is ``{"name", "fixture", "path", "body"}`` or, for a
stream, ``"steps"`` (bodies sent in turn, each with the ``stream_state`` the previous answer
returned); ``generation_eos`` is the model's generation-config ``eos_token_id`` list.

Token ids are the fixtures' own (``<0xNN>`` byte tokens are ``NN + 3`` on the SentencePiece ones):

- mistral-7b-v0.1: ``▁Hello`` 22557, ``▁world`` 1526, ``▁one two three four`` 624 989 1712 2308,
  ``▁!`` 918, ``▁?`` 1550, ``</s>`` 2.
- phi-3-mini: ``與`` is the byte run E8 88 87 (235 139 138).
- qwen3: ``U+1D518`` is two tokens, 124026 then 246; ``Hello`` 9707, ``Ġworld`` 1879.
"""

from __future__ import annotations

from typing import Any

CHAT = "/v1/chat/completions/derender"
COMPLETION = "/v1/completions/derender"
MODEL = "m"
MAX_MODEL_LEN = 2048

HELLO, WORLD, ONE, TWO, THREE, FOUR, BANG, QUESTION, EOS = (
    22557, 1526, 624, 989, 1712, 2308, 918, 1550, 2,
)  # fmt: skip
COUNT = [ONE, TWO, THREE, FOUR]
STOP_TEXT = "one two three four"
#: generation_config.json's eos_token_id of the stop-table model: the primary EOS and "?".
STOP_TABLE_EOS = [EOS, QUESTION]


def _choice(ids: list[int] | None, finish: str | None = "stop", **extra: Any) -> dict[str, Any]:
    return {"index": 0, "token_ids": ids, "finish_reason": finish, **extra}


def _generate(ids: list[int] | None, finish: str | None = "stop", **extra: Any) -> dict[str, Any]:
    choice_keys = {"stop_reason", "logprobs"}
    choice = {k: v for k, v in extra.items() if k in choice_keys}
    top = {k: v for k, v in extra.items() if k not in choice_keys}
    return {"request_id": "gen-1", "choices": [_choice(ids, finish, **choice)], **top}


def _chat_request(**kwargs: Any) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "user", "content": "Count"}], **kwargs}


def _completion_request(**kwargs: Any) -> dict[str, Any]:
    return {"model": MODEL, "prompt": "Count", **kwargs}


def _entry(token_id: int, logprob: float, candidates: list[tuple[int, float]]) -> dict[str, Any]:
    return {
        "token_id": token_id,
        "logprob": logprob,
        "rank": 1,
        "top_logprobs": [
            {"token_id": t, "logprob": lp, "rank": r + 1} for r, (t, lp) in enumerate(candidates)
        ],
    }


#: One position: the sampled "Hello" first, as generate sends it, then the other candidates.
FIVE = [(HELLO, -1.9), (WORLD, -2.5), (ONE, -3.0), (TWO, -3.5), (THREE, -4.0)]
HELLO_LOGPROBS = {"content": [_entry(HELLO, -1.9, FIVE)]}


def _case(name: str, path: str, body: dict[str, Any], fixture: str = "mistral-7b-v0.1"):
    return {"name": name, "fixture": fixture, "path": path, "body": body}


def _stream(name: str, path: str, bodies: list[dict[str, Any]], fixture: str = "mistral-7b-v0.1"):
    return {"name": name, "fixture": fixture, "path": path, "steps": bodies}


def _chunk(ids: list[int], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return _generate(ids, finish, **extra)


def logprob_cases() -> list[dict[str, Any]]:
    """Item 1: how many candidates a position keeps."""
    cases = []
    for n in (0, 3):
        cases.append(
            _case(
                f"completion_logprobs_{n}",
                COMPLETION,
                {
                    "model": MODEL,
                    "generate_responses": [_generate([HELLO], logprobs=HELLO_LOGPROBS)],
                    "completion_request": _completion_request(logprobs=n),
                },
            )
        )
    for name, request in (
        ("completion_no_completion_request", None),
        ("completion_request_without_logprobs", _completion_request()),
    ):
        body: dict[str, Any] = {
            "model": MODEL,
            "generate_responses": [_generate([HELLO], logprobs=HELLO_LOGPROBS)],
        }
        if request is not None:
            body["completion_request"] = request
        cases.append(_case(name, COMPLETION, body))
    cases.append(
        _stream(
            "completion_stream_logprobs_0",
            COMPLETION,
            [
                {
                    "stream": True,
                    "model": MODEL,
                    "generate_chunk": _chunk([HELLO], "stop", logprobs=HELLO_LOGPROBS),
                    "completion_request": _completion_request(logprobs=0),
                }
            ],
        )
    )
    for name, request in (
        ("chat_top_logprobs_2", _chat_request(logprobs=True, top_logprobs=2)),
        ("chat_top_logprobs_0", _chat_request(logprobs=True, top_logprobs=0)),
        ("chat_logprobs_false", _chat_request(logprobs=False)),
        ("chat_no_chat_request", None),
    ):
        body = {"model": MODEL, "generate_response": _generate([HELLO], logprobs=HELLO_LOGPROBS)}
        if request is not None:
            body["chat_request"] = request
        cases.append(_case(name, CHAT, body))
    cases.append(
        _stream(
            "chat_stream_top_logprobs_1",
            CHAT,
            [
                {
                    "stream": True,
                    "model": MODEL,
                    "generate_chunk": _chunk([HELLO], "stop", logprobs=HELLO_LOGPROBS),
                    "chat_request": _chat_request(logprobs=True, top_logprobs=1),
                }
            ],
        )
    )
    return cases


def text_offset_cases() -> list[dict[str, Any]]:
    """Item 2: a streamed completion's text_offset, no prompt, first token ``▁Hello``."""

    def step(ids: list[int], finish: str | None) -> dict[str, Any]:
        logprobs = {"content": [_entry(i, -0.5, []) for i in ids]}
        return {
            "stream": True,
            "model": MODEL,
            "generate_chunk": _chunk(ids, finish, logprobs=logprobs),
        }

    skipped = [HELLO, EOS, WORLD]  # </s> kept out of the text, its string still counted
    request = _completion_request(logprobs=1, ignore_eos=True, skip_special_tokens=True)
    whole = {
        "model": MODEL,
        "generate_responses": [
            _generate(skipped, logprobs={"content": [_entry(i, -0.5, []) for i in skipped]})
        ],
        "completion_request": request,
    }
    return [
        _stream(
            "completion_stream_text_offset",
            COMPLETION,
            [step([HELLO], None), step([WORLD, ONE], "length")],
        ),
        _case("completion_text_offset_skipped_special", COMPLETION, whole),
        _stream(
            "completion_stream_text_offset_skipped_special",
            COMPLETION,
            [
                {**step([i], "stop" if i == skipped[-1] else None), "completion_request": request}
                for i in skipped
            ],
        ),
    ]


#: vLLM's 11 rows (test_derender_batch_trims_stop_like_engine): last id appended, finish_reason,
#: the reported stop_reason, the request's fields. "stop_id" is "▁!", "config_eos" "▁?".
STOP_ROWS: list[tuple[str | None, str, Any, dict[str, Any]]] = [
    (None, "stop", "three", {}),
    (None, "stop", "three", {"include_stop_str_in_output": True}),
    (None, "stop", None, {"stop": ["three", "two"]}),
    (None, "stop", None, {"stop": "two", "min_tokens": 2}),
    (None, "length", None, {"stop": "two"}),
    ("stop_id", "stop", "stop_id", {"stop": "two"}),
    ("eos", "stop", None, {}),
    ("stop_id", "stop", None, {"stop_token_ids": [BANG]}),
    ("config_eos", "stop", None, {}),
    ("config_eos", "stop", None, {"ignore_eos": True}),
    ("eos", "stop", None, {"stop": "four"}),
]
_IDS = {"eos": EOS, "stop_id": BANG, "config_eos": QUESTION}


def stop_cases() -> list[dict[str, Any]]:
    """Item 3: vLLM's stop table on both endpoints, and the stream's stop token."""
    cases = []
    for row, (last, finish, reason, kwargs) in enumerate(STOP_ROWS):
        ids = COUNT + ([_IDS[last]] if last else [])
        generate = _generate(ids, finish, stop_reason=_IDS.get(reason, reason))
        fields = {"skip_special_tokens": False, **kwargs}
        chat = {
            "model": MODEL,
            "generate_response": generate,
            "chat_request": _chat_request(**fields),
        }
        completion = {
            "model": MODEL,
            "generate_responses": [generate],
            "completion_request": _completion_request(**fields),
        }
        for endpoint, path, body in (("chat", CHAT, chat), ("completion", COMPLETION, completion)):
            case = _case(f"stop_row_{row}_{endpoint}", path, body)
            case["generation_eos"] = STOP_TABLE_EOS
            cases.append(case)
    stream = _stream(
        "completion_stream_stop_token",
        COMPLETION,
        [
            {
                "stream": True,
                "model": MODEL,
                "generate_chunk": _chunk([*COUNT, BANG], "stop"),
                "completion_request": _completion_request(stop_token_ids=[BANG]),
            }
        ],
    )
    stream["generation_eos"] = STOP_TABLE_EOS
    cases.append(stream)
    return cases


#: The speculative-decoding metrics of vLLM 0.33.0's test_derender_chat_metrics_passthrough.
METRICS = {
    "speculative_decoding": {
        "mean_acceptance_length": 2.0,
        "draft_acceptance_rate": 0.5,
        "acceptance_histogram": [0, 1],
        "num_spec_steps": 1,
        "num_accepted_draft_tokens": 1,
        "num_draft_tokens": 2,
        "num_spec_tokens": 1,
    }
}


def check_cases() -> list[dict[str, Any]]:
    """Item 4: passthroughs and checks."""
    long_prompt = [HELLO] * (MAX_MODEL_LEN + 1)
    twenty_five = {"content": [_entry(HELLO, -1.0, [(i, -float(i)) for i in range(25)])]}
    return [
        _stream(
            "chat_stream_return_token_ids",
            CHAT,
            [
                {
                    "stream": True,
                    "model": MODEL,
                    "generate_chunk": _chunk([HELLO], "stop", prompt_token_ids=[1, WORLD]),
                    "chat_request": _chat_request(return_token_ids=True),
                }
            ],
        ),
        _stream(
            "completion_stream_return_token_ids",
            COMPLETION,
            [
                {
                    "stream": True,
                    "model": MODEL,
                    "generate_chunk": _chunk([HELLO], "stop", prompt_token_ids=[1, WORLD]),
                    "completion_request": _completion_request(return_token_ids=True),
                }
            ],
        ),
        _case(
            "chat_metrics",
            CHAT,
            {"model": MODEL, "generate_response": _generate([HELLO], metrics=METRICS)},
        ),
        _case(
            "completion_metrics",
            COMPLETION,
            {"model": MODEL, "generate_responses": [_generate([HELLO], metrics=METRICS)]},
        ),
        _stream(
            "chat_stream_metrics",
            CHAT,
            [
                {
                    "stream": True,
                    "model": MODEL,
                    "generate_chunk": _chunk([HELLO], "stop", metrics=METRICS),
                }
            ],
        ),
        _case(
            "chat_prompt_too_long",
            CHAT,
            {
                "model": MODEL,
                "generate_response": _generate([HELLO]),
                "prompt_token_ids": long_prompt,
            },
        ),
        _case(
            "completion_prompt_too_long",
            COMPLETION,
            {
                "model": MODEL,
                "generate_responses": [_generate([HELLO])],
                "prompt_token_ids": [long_prompt],
            },
        ),
        _stream(
            "completion_stream_prompt_too_long",
            COMPLETION,
            [
                {
                    "stream": True,
                    "model": MODEL,
                    "generate_chunk": _chunk([HELLO]),
                    "prompt_token_ids": long_prompt,
                }
            ],
        ),
        _stream(
            "chat_stream_prompt_plus_output_too_long",
            CHAT,
            [
                {
                    "stream": True,
                    "model": MODEL,
                    "generate_chunk": _chunk([HELLO] * 10),
                    "prompt_token_ids": [HELLO] * (MAX_MODEL_LEN - 5),
                }
            ],
        ),
        _case(
            "chat_output_mode_text",
            CHAT,
            {
                "model": MODEL,
                "generate_response": {
                    "request_id": "gen-1",
                    "output_mode": "text",
                    "choices": [_choice([HELLO], text="Hello")],
                },
            },
        ),
        _case(
            "completion_kv_transfer_params_differ",
            COMPLETION,
            {
                "model": MODEL,
                "generate_responses": [
                    _generate([HELLO], kv_transfer_params={"node": "a"}),
                    _generate([WORLD], kv_transfer_params={"node": "b"}),
                ],
            },
        ),
        _case(
            "chat_top_logprobs_over_limit",
            CHAT,
            {"model": MODEL, "generate_response": _generate([HELLO], logprobs=twenty_five)},
        ),
    ]


def field_cases() -> list[dict[str, Any]]:
    """Item 5: the fields each answer carries (phi-3: E8 alone adds no text yet)."""
    return [
        _case("chat_whole_fields", CHAT, {"model": MODEL, "generate_response": _generate([HELLO])}),
        _case(
            "completion_whole_fields",
            COMPLETION,
            {"model": MODEL, "generate_responses": [_generate([HELLO])]},
        ),
        _stream(
            "chat_stream_fields",
            CHAT,
            [
                {"stream": True, "model": MODEL, "generate_chunk": _chunk([235])},
                {"stream": True, "model": MODEL, "generate_chunk": _chunk([139, 138], "stop")},
            ],
            fixture="phi-3-mini",
        ),
        _stream(
            "completion_stream_fields",
            COMPLETION,
            [
                {"stream": True, "model": MODEL, "generate_chunk": _chunk([235])},
                {"stream": True, "model": MODEL, "generate_chunk": _chunk([139, 138], "stop")},
            ],
            fixture="phi-3-mini",
        ),
    ]


def byte_cases() -> list[dict[str, Any]]:
    """Item 6 and vLLM's wrong answers: byte runs and split characters at the edges."""
    yu = [235, 139, 138]  # 與 on phi-3-mini
    cases = []
    for name, tail in (("one", [234]), ("three", [243, 162, 155])):
        ids = yu + tail
        cases.append(
            _case(
                f"phi3_length_dangling_{name}",
                CHAT,
                {"model": MODEL, "generate_response": _generate(ids, "length")},
                fixture="phi-3-mini",
            )
        )
        cases.append(
            _stream(
                f"phi3_stream_length_dangling_{name}",
                CHAT,
                [
                    {"stream": True, "model": MODEL, "generate_chunk": _chunk(yu)},
                    {"stream": True, "model": MODEL, "generate_chunk": _chunk(tail, "length")},
                ],
                fixture="phi-3-mini",
            )
        )
    # qwen3: the prompt ends with the first token of U+1D518, the output completes it.
    cases.append(
        _case(
            "qwen3_prompt_ends_mid_character",
            CHAT,
            {
                "model": MODEL,
                "generate_response": _generate([246, 1879]),
                "prompt_token_ids": [9707, 124026],
            },
            fixture="qwen3",
        )
    )
    # qwen3: a completion stream whose prompt ends inside U+1D518, the output completing it,
    # with logprobs (the offset follows the token strings) and without (it follows the text).
    for lp in (0, None):
        request = _completion_request() | ({} if lp is None else {"logprobs": lp})
        steps = []
        for n, ids in enumerate(([246], [1879])):
            logprobs = None if lp is None else {"content": [_entry(i, -0.5, []) for i in ids]}
            step = {
                "stream": True,
                "model": MODEL,
                "generate_chunk": _chunk(ids, "length" if n else None, logprobs=logprobs),
                "completion_request": request,
            }
            if n == 0:
                step["prompt_token_ids"] = [9707, 124026]
            steps.append(step)
        name = "logprobs" if lp is not None else "text"
        cases.append(
            _stream(f"qwen3_completion_offset_mid_character_{name}", COMPLETION, steps, "qwen3")
        )
    # qwen3: a generation cut by length after the first token of U+1D518.
    cases.append(
        _case(
            "qwen3_length_cut_mid_character",
            CHAT,
            {"model": MODEL, "generate_response": _generate([9707, 124026], "length")},
            fixture="qwen3",
        )
    )
    # phi-3-mini: a prompt whose last ids are the middle of a run of three-byte characters
    # (與與與 without its first byte), so the seeded window opens inside the run; the output
    # finishes the run with one more 與, then " world".
    cases.append(
        _case(
            "phi3_window_opens_mid_run",
            CHAT,
            {
                "model": MODEL,
                "generate_response": _generate([*yu, 3186]),
                "prompt_token_ids": (yu * 3)[1:],
            },
            fixture="phi-3-mini",
        )
    )
    return cases


def all_cases() -> list[dict[str, Any]]:
    return [
        *logprob_cases(),
        *text_offset_cases(),
        *stop_cases(),
        *check_cases(),
        *field_cases(),
        *byte_cases(),
    ]
