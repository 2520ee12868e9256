"""What the acceptance stage expects of vLLM 0.33.0's two derender test files run on tokstream.

Every collected test is exactly one of:

- **run**: it reaches the server over HTTP (it uses one of the ``server`` fixtures), so it runs
  against ``tokstream serve`` and must pass, unless it is listed in ``EXPECTED_FAILURES``, where
  it must fail. A listed test that passes fails the stage: the entry goes when the fix lands.
- **not applicable**: listed in ``NOT_APPLICABLE`` (by test function, or class, name) with the
  reason; it is deselected, and the stage prints it.

A test that is neither (a new test in a newer vLLM, say) fails the stage, and so does an entry
that matches no collected test. Test ids are relative to vLLM's ``tests/`` tree.
"""

from __future__ import annotations

_D = "tests/entrypoints/scale_out/derender/test_derender.py::"
_S = "tests/entrypoints/scale_out/derender/test_derender_stream.py::"

#: HTTP tests that fail on tokstream, each with the reason (a deliberate difference, listed in
#: docs/differences.md).
EXPECTED_FAILURES: dict[str, str] = {
    _D + "test_derender_chat_oversized_logprobs_rejected": (
        "deliberate (docs/differences.md): the 70 MB body gets 413 from the body "
        "limit before it is read; vLLM reads it and answers 400"
    ),
}

_INTERNAL = (
    "calls vLLM's Python internals directly (OnlineDerenderer built on a stand-in renderer, "
    "its private methods or module functions), not the HTTP contract"
)
_STOP_TABLE = (
    _INTERNAL + "; its 11 rows x 2 endpoints are our conformance tests in "
    "tests/derender/test_vllm_parity.py (issue 10 item 3)"
)
_SERVING = "calls vLLM's ServingDerender with a mocked OnlineDerenderer, not the HTTP contract"
_MODELS = "validates vLLM's own pydantic protocol models in process, not a server's answer"
_PARSER_INTERNAL = (
    "tests vLLM's parser plumbing with stub parsers injected into OnlineDerenderer "
    "(replay, merging, ids), which has no HTTP counterpart"
)
_HARMONY = (
    "needs the gpt-oss tokenizer (o200k_harmony), which its fixture downloads from Azure, and "
    "the stage runs offline; tokstream serves the Harmony channels as gpt_oss (vLLM's openai), "
    "tested in tests/parsers/test_templates_aliases.py"
)

#: Tests that cannot apply to tokstream, by test function or class name, with the reason.
NOT_APPLICABLE: dict[str, str] = {
    # test_derender.py, HTTP but Harmony
    _D + "test_e2e_harmony_plain_roundtrip": _HARMONY,
    _D + "test_e2e_harmony_tool_choice_none_drops_tool_calls": _HARMONY,
    _D + "test_e2e_harmony_reasoning_default_parser": _HARMONY,
    _D + "test_e2e_harmony_reasoning": _HARMONY,
    # test_derender.py, in process
    _D + "test_derender_chat_finish_reason_matches_chat_completion": _PARSER_INTERNAL,
    _D + "test_derender_chat_tool_call_id_matches_chat_completion": _INTERNAL,
    _D + "test_derender_chat_keeps_parser_tool_call_id": _PARSER_INTERNAL,
    _D + "test_derender_chat_drops_tool_calls_without_tool_choice": _PARSER_INTERNAL,
    _D + "test_derender_batch_trims_stop_like_engine": _STOP_TABLE,
    _D + "test_derender_completion_stream_leaves_out_stop_token": _INTERNAL,
    _D + "test_derender_completion_preserves_requested_token_ids": _INTERNAL,
    # test_derender_stream.py, in process
    _S + "test_non_streaming_derender_initializes_parser_prefix": _PARSER_INTERNAL,
    _S + "test_parsed_derender_leaves_out_stop_token_like_engine": _PARSER_INTERNAL,
    _S + "test_derender_text_choices_builds_request_from_parse_context": _INTERNAL,
    _S + "test_derender_text_choices_drops_tool_calls_without_tool_choice": _PARSER_INTERNAL,
    _S + "TestDetokenizeDelta": _INTERNAL + " (_detokenize_delta, _decode_params)",
    _S + "TestSeedStreamState": _INTERNAL + " (_seed_stream_state)",
    _S + "TestPromptSeededLeadingSpace": _INTERNAL,
    _S + "test_streaming_detokenization_runs_off_event_loop": (
        _INTERNAL + " (which thread vLLM's detokenization runs on)"
    ),
    _S + "TestDerenderCompletionStream": _INTERNAL,
    _S + "TestStreamLogprobs": _INTERNAL,
    _S + "TestDerenderChatStream": _INTERNAL,
    _S + "TestDerenderChatStreamParsed": _PARSER_INTERNAL,
    _S + "TestDerenderChatStreamHarmony": _HARMONY,
    _S + "TestDerenderStreamStateValidation": _MODELS,
    _S + "test_negative_prompt_token_ids_rejected": _MODELS,
    _S + "TestServingDerenderStreamErrorHandling": _SERVING,
    _S + "TestServingDerenderStreamValidation": _SERVING,
}
