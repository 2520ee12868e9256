"""What the parser-test step expects of vLLM 0.33.0's parser tests run on tokstream.

vLLM's unit tests of its tool and reasoning parsers (``tests/tool_parsers/``,
``tests/reasoning/``) run with ``tokstream_parsers``' classes in place of vLLM's parsers. Every
test file of those directories is run or listed in ``NOT_APPLICABLE_FILES``; every collected
test is exactly one of:

- **passed**: it must pass;
- **EXPECTED_FAILURES**: it must fail (not with ``NotServedError``). The reason says which:
  a deliberate difference (docs/differences.md or docs/parsers.md), or vLLM's own strict xfail;
- **CHECKED_THEN_INTERNAL**: it checks tokstream's answers, which must all pass, then asks for
  the member named, one of vLLM's internals: it must end in ``NotServedError`` for that member;
- **NOT_APPLICABLE**: deselected, with the reason.

A listed failure that passes, an unlisted failure, a skip, a test that passes without a single
answer from tokstream or builds one of vLLM's own parsers, or an entry that matches no test
fails the step. Keys are test ids relative to vLLM's ``tests/`` tree: an exact id, or a test
function or class (all its parameters). First written from a run's outcomes (the plugin's
``TOKSTREAM_PARSERS_OUTCOMES`` dump) and classification rules, then each entry read.
"""
# ruff: noqa: E501, RUF001 (vLLM's test ids, whole; Step3's full-width bars)

from __future__ import annotations

# --- reasons --------------------------------------------------------------------------------
STRUCTURAL = "xgrammar structural tags for guided decoding (before generation): no parse to derender; it imports xgrammar, which the acceptance virtualenv does not have"
UTILS = "unit tests of vLLM's helper functions (partial JSON, argument repair, keyword renaming), not of a parser's answer"
GPTOSS = "checks only GptOssReasoningParser.is_reasoning_end, the engine's structured-output hook, on a mock tokenizer"
BASE_CLASS = "tests vLLM's BaseThinkingReasoningParser through subclasses the test defines: vLLM's own code, not a registered parser name tokstream serves"
PATCHES_INTERNALS = "patches the parser's private regex attribute to simulate a regex timeout: vLLM's implementation, no derender counterpart"
STATE = "reads or drives the parser's internal streaming state (current_tool_id, get_remaining_unstreamed_args): vLLM's implementation"
CLASS_TREE = "asserts vLLM's class hierarchy (isinstance of ParserEngineReasoningAdapter, its _parser_engine) before parsing"
EMPTY_OUTPUT = "an empty output: a whole derender of no ids is a 400 in vLLM's derender contract (online_derenderer: 'choice 0 has empty or null token_ids') as in tokstream's, and a stream of no chunks asks nothing"
SELF_SKIP = "vLLM's test skips itself for the granite4 parser ('enforces a complete response')"
IS_REASONING_END = "asks is_reasoning_end / is_reasoning_end_streaming first: the engine's structured-output hook on token ids, no derender counterpart"
COUNT_TOKENS = "asks count_reasoning_tokens: vLLM's usage accounting hook, not part of the message"
ADJUST_REQUEST = "asks adjust_request / get_structural_tag: request rewriting for guided decoding before generation; a derender runs after it"
OLD_NAMES = "calls extract_reasoning_content(_streaming), the pre-0.11 method names this class keeps, not the parser API vLLM's server calls"
PRIVATE = "reads the parser's private helpers or attributes (_parse_arguments, _buffer_delta_text, _parser, _parser_engine, _named_tool, token ids, preprocess_model_output, the format or markers it resolved: tool_format, start_token): vLLM's implementation"
DELEGATING = "drives the parser through vLLM's DelegatingParser (parse_delta with a finished flag), which calls the reasoning parser's engine hooks (is_reasoning_end): vLLM's unified-parser plumbing, not the parser API the adapter answers"
NO_TOKSTREAM = "asks the parser nothing tokstream answers (the registry, a class attribute, a constructor, module helpers or a request rewrite): passing or failing, it says nothing about tokstream"
K2_FORMAT_CHECK = "asks adjust_request to reject an unsupported chat_template_kwargs.tool_call_format before generation: vLLM's request hook. tokstream rejects the same values when it derenders, a 400 with vLLM's message (docs/differences.md, k2_horizon row; checked by hand for yaml, python, xml_untyped, '', None, 1)"
K2_TOOL_FORMAT = 'asserts parser.tool_format, the format vLLM\'s parser resolved from the request (its state), before it checks the answer. tokstream\'s answer for the same output was checked by hand: content \'Before  after.\', calls lookup {"query": "123", "limit": 3} and ping, as the test expects'
K2_EFFORT_CHECK = "expects the parser's constructor to raise for an unsupported reasoning_effort: vLLM checks it when it builds the parser, before any output. tokstream rejects the same values when it derenders, a 400 with vLLM's message (docs/differences.md, k2_horizon row; checked by hand for 'none', 'unknown', None); the adapter's constructor asks tokstream nothing"
IS_REASONING_END_EACH_DELTA = "asks is_reasoning_end_streaming (the engine's structured-output hook on token ids) after every delta, before it checks anything. tokstream's streamed reasoning and content for these chunks were checked by hand: all as the test expects"
STRIP = "deliberate (docs/parsers.md, response templates): text fields stream stripped of surrounding whitespace and a field's later regions are appended to its earlier ones; vLLM keeps the whitespace as written (the granite4 case: the text between three calls is joined without it)"
TEXT_AFTER_CALLS = "deliberate (docs/differences.md, 'text after the calls' and 'text after a bare JSON call'): vLLM's whole response drops text after the calls; tokstream keeps it as content"
TEXT_AFTER_CALLS_PRINCIPLE = "deliberate (docs/parsers.md: a field's later regions follow its earlier ones; 'nothing lost'): text between or after the calls is content; vLLM's whole response keeps only the text before the first call. docs/differences.md lists the rule for other families, not this one"
CUT_CALL = "deliberate (docs/parsers.md, hand-written parsers: a call cut off by the end of the output is kept if its name was known): vLLM's whole response has no call when the JSON does not close"
UNOFFERED_TOOL = "deliberate (docs/differences.md, 'a call to a tool the request did not offer (ling3, dots)'): tokstream keeps the call, vLLM drops it"
GEMMA4 = "deliberate (docs/differences.md, gemma4 row): a <channel|> with no <|channel> open is content, and content keeps its whitespace, as vLLM's streams give it"
FORCE_NONEMPTY = "deliberate (docs/differences.md, nemotron_v3 / granite_thinking_parser row): reasoning and content are not swapped for force_nonempty_content, since a stream cannot take back the reasoning it sent"
LFM2_ECHO = "deliberate (docs/differences.md, lfm2 row): a call echoed before a second <|tool_call_end|> is content, not dropped"
MINICPM5_TEXT_BESIDE_CALL = "deliberate (docs/differences.md, 'minicpm5 whole: text beside a call'): vLLM's whole response drops the text around the calls (content null once a call stands); tokstream keeps it as content ('Intro before.\\n\\nOutro after.\\n'), as vLLM's streams do"
AS_VLLM_XFAIL = "vLLM's own test marks this strict xfail (its Step3 parser fails it; the stage runs with --runxfail): tokstream fails it too, for the reason below (calls without 'function<｜tool_sep｜>')"
STEP3_SEP = "deliberate (docs/differences.md, step3 row): step3 calls written without 'function<｜tool_sep｜>' after <｜tool_call_begin｜>; vLLM's stream reads them, its whole response does not (content); tokstream reads neither, so whole and streamed agree"
KIMI_IDS = "deliberate (docs/differences.md, kimi_k2 call id row): vLLM's Kimi K2 parser keeps the model's own id 'functions.get_weather:0'; tokstream sends 'chatcmpl-tool-<32 hex>'"
KIMI_BAD_ID = "deliberate (docs/differences.md, kimi_k2 call id row): vLLM drops a Kimi K2 call whose id is malformed ('functions.invalid.0', no ':N'); tokstream keeps it (its id is its own)"
KIMI_SECTION_TEXT = "deliberate (docs/differences.md, kimi_k2 streamed row): text inside a Kimi K2 call section outside a call, and text after the section, are content in tokstream ('nothing lost'); vLLM's stream drops them"
GLM_CONTENT_STRIP = "deliberate (docs/differences.md, 'content that comes with calls'): vLLM's whole response strips the content before a call ('I'll check it.'); tokstream keeps it as written ('I'll check it. '), as vLLM's streams do"
CHAT_TEMPLATE_THINKING = "deliberate (docs/differences.md, glm45 reasoning row): vLLM's GLM parser reads the tokenizer's chat template and keeps thinking on for a GLM-5.3-style template that ignores enable_thinking; tokstream follows the request's enable_thinking false (the output is content)"
EMPTY_REASONING = "deliberate (docs/differences.md, deepseek_r1 row): for '</think>This is the rest' vLLM's whole response has reasoning '' (empty string); tokstream's message has null (it never sends an empty field)"
R1_LEADING_TEXT = "deliberate (docs/differences.md, deepseek_r1 row): deepseek_r1 output '\\n<think>This is a reasoning section</think>...': vLLM's whole response drops the '\\n' before <think> (reasoning 'This is a reasoning section'); tokstream keeps it as reasoning ('\\nThis is a reasoning section'), as vLLM's streams do"
EOS_TEXT = "deliberate (docs/differences.md, gigachat3 row): the text '</s>' spelled at the end of a GigaChat output is content in tokstream; vLLM's parser strips it. tokstream leaves out an end-of-sequence token by id (the engine's stop token), not its spelling"
GEMMA4_NAME = "deliberate (docs/differences.md, gemma4 malformed call row): a malformed gemma4 call 'call:bad_func no brace' is named 'bad_func' (the name ends at whitespace); vLLM names it 'bad_func no brace'"
DOTS_MARKUP = "deliberate (docs/differences.md, dots streamed row): dots markup that holds no call (a stray </dots_function_call>, a <dots_function_call>garbage</dots_function_call> block) is content as written in tokstream; vLLM strips the markers"
MINICPM5_SPACE_MARKERS = "deliberate (docs/differences.md, minicpm5 'Ġ and Ċ' row): text spelled with the byte-level markers 'Ġ' and 'Ċ' ('ĊFirst,ĠIĠneed...') is content as decoded in tokstream; vLLM's minicpm5 parser reads them as a space and a newline, whole and streamed ('\\nFirst, I need...')"
LFM2_RAW = "deliberate (docs/differences.md, lfm2 unbalanced quotes row): a Python call whose string value has unbalanced quotes gets its arguments as the raw text (\"command='sed -n '360,450p' ...'\", not JSON); vLLM repairs it to JSON"
INVALID_JSON_ARGS = 'deliberate (docs/differences.md, llama3_json arguments that are not JSON row): for \'{"name": "get_weather", "parameters": {invalid json}\' tokstream sends a call with the arguments as written (\'{invalid json}\'), whole and streamed; vLLM\'s whole response has no call and the text as content, and its stream a call with arguments ""'
DOTS_JSON_DELTA = 'deliberate (docs/differences.md, dots JSON call in one chunk row): a JSON call that arrives in one chunk is one delta in tokstream, its name and its arguments as written (\'{"query":"chairs"}\'); vLLM sends the name, then the arguments as json.dumps writes them'

#: Test files that do not run, with the reason.
NOT_APPLICABLE_FILES: dict[str, str] = {
    "tests/reasoning/test_base_thinking_reasoning_parser.py": BASE_CLASS,
    "tests/reasoning/test_gptoss_reasoning_parser.py": GPTOSS,
    "tests/tool_parsers/test_structural_tag_registry.py": STRUCTURAL,
    "tests/tool_parsers/test_utils.py": UTILS,
}

#: Tests deselected, with the reason.
NOT_APPLICABLE: dict[str, str] = {
    # tests/reasoning/test_deepseekr1_reasoning_parser.py
    "tests/reasoning/test_deepseekr1_reasoning_parser.py::test_reasoning[empty]": EMPTY_OUTPUT,
    "tests/reasoning/test_deepseekr1_reasoning_parser.py::test_reasoning[empty_streaming]": EMPTY_OUTPUT,
    # tests/reasoning/test_deepseekv3_reasoning_parser.py
    "tests/reasoning/test_deepseekv3_reasoning_parser.py::test_count_reasoning_tokens_delegates": COUNT_TOKENS,
    "tests/reasoning/test_deepseekv3_reasoning_parser.py::test_deepseek_v4_reasoning_parser_alias": NO_TOKSTREAM,
    "tests/reasoning/test_deepseekv3_reasoning_parser.py::test_identity_reasoning_parser_basic": NO_TOKSTREAM,
    "tests/reasoning/test_deepseekv3_reasoning_parser.py::test_parser_selection": PRIVATE,
    # tests/reasoning/test_gemma4_reasoning_parser.py
    "tests/reasoning/test_gemma4_reasoning_parser.py::test_gemma4_adjust_request": NO_TOKSTREAM,
    "tests/reasoning/test_gemma4_reasoning_parser.py::test_gemma4_new_turn_reasoning_end_matches_enable_thinking": IS_REASONING_END,
    "tests/reasoning/test_gemma4_reasoning_parser.py::test_gemma4_reasoning[empty]": EMPTY_OUTPUT,
    # tests/reasoning/test_glm4_moe_reasoning_parser.py
    "tests/reasoning/test_glm4_moe_reasoning_parser.py::test_glm47_template_honors_thinking_disable": CLASS_TREE,
    "tests/reasoning/test_glm4_moe_reasoning_parser.py::test_glm53_template_forces_reasoning": CLASS_TREE,
    "tests/reasoning/test_glm4_moe_reasoning_parser.py::test_is_reasoning_end_full_prompt": IS_REASONING_END,
    # tests/reasoning/test_granite_thinking_reasoning_parser.py
    "tests/reasoning/test_granite_thinking_reasoning_parser.py::test_granite_thinking_streaming_chunking_independent": DELEGATING,
    "tests/reasoning/test_granite_thinking_reasoning_parser.py::test_granite_thinking_streaming_enable_thinking_false": DELEGATING,
    "tests/reasoning/test_granite_thinking_reasoning_parser.py::test_granite_thinking_streaming_no_promotion_with_real_content": DELEGATING,
    "tests/reasoning/test_granite_thinking_reasoning_parser.py::test_granite_thinking_streaming_no_promotion_without_opt_in": DELEGATING,
    "tests/reasoning/test_granite_thinking_reasoning_parser.py::test_granite_thinking_streaming_promotes_reasoning_to_content": DELEGATING,
    "tests/reasoning/test_granite_thinking_reasoning_parser.py::test_granite_thinking_streaming_strips_leading_newline": DELEGATING,
    # tests/reasoning/test_holo2_reasoning_parser.py
    "tests/reasoning/test_holo2_reasoning_parser.py::test_holo2_default_parser_is_deepseekr1": PRIVATE,
    "tests/reasoning/test_holo2_reasoning_parser.py::test_holo2_supports_structured_output": IS_REASONING_END,
    "tests/reasoning/test_holo2_reasoning_parser.py::test_parser_selection": PRIVATE,
    # tests/reasoning/test_hy_v3_reasoning_parser.py
    "tests/reasoning/test_hy_v3_reasoning_parser.py::test_constructor_does_not_mutate_shared_chat_template_kwargs": NO_TOKSTREAM,
    "tests/reasoning/test_hy_v3_reasoning_parser.py::test_constructor_falls_back_to_outer_reasoning_effort": NO_TOKSTREAM,
    "tests/reasoning/test_hy_v3_reasoning_parser.py::test_is_reasoning_end_full_prompt": IS_REASONING_END,
    # tests/reasoning/test_k2_horizon_reasoning_parser.py
    "tests/reasoning/test_k2_horizon_reasoning_parser.py::test_composed_streaming_reasoning_to_tool_handoff": DELEGATING,
    "tests/reasoning/test_k2_horizon_reasoning_parser.py::test_invalid_reasoning_effort_raises": K2_EFFORT_CHECK,
    "tests/reasoning/test_k2_horizon_reasoning_parser.py::test_latest_boundary_controls_reasoning_state": IS_REASONING_END,
    "tests/reasoning/test_k2_horizon_reasoning_parser.py::test_reasoning_effort_precedence_and_default": PRIVATE,
    "tests/reasoning/test_k2_horizon_reasoning_parser.py::test_reasoning_effort_selects_tokens": PRIVATE,
    "tests/reasoning/test_k2_horizon_reasoning_parser.py::test_reasoning_parser_registered": NO_TOKSTREAM,
    # tests/reasoning/test_kimi_k2_reasoning_parser.py
    "tests/reasoning/test_kimi_k2_reasoning_parser.py::test_streaming_reasoning_then_content": PRIVATE,
    "tests/reasoning/test_kimi_k2_reasoning_parser.py::test_streaming_tool_section_ends_reasoning": PRIVATE,
    # tests/reasoning/test_kimi_k3_reasoning_parser.py
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_adjust_request_keeps_xtml_markers_contiguous": ADJUST_REQUEST,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_count_reasoning_tokens_is_zero_when_thinking_disabled": COUNT_TOKENS,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_count_reasoning_tokens_matches_think_channel": COUNT_TOKENS,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_count_reasoning_tokens_through_delegating_parser": COUNT_TOKENS,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_delegating_parser_thinking_false_streams_response_content": DELEGATING,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_extract_reasoning_with_generation_prefix_consumed": OLD_NAMES,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_extract_reasoning_with_xtml_tags": OLD_NAMES,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_is_reasoning_end_ignores_stale_close_from_prior_turn": IS_REASONING_END,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_is_reasoning_end_streaming_accepts_an_iterator_delta": IS_REASONING_END,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_is_reasoning_end_streaming_detects_marker_across_step_boundary": IS_REASONING_END,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_is_reasoning_end_streaming_only_scans_the_step_window": IS_REASONING_END,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_is_reasoning_end_streaming_reopened_block_is_not_ended": IS_REASONING_END,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_is_reasoning_end_streaming_thinking_disabled": IS_REASONING_END,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_is_reasoning_end_uses_full_input_ids": IS_REASONING_END,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_parser_manager_selects_kimi_k3_parser_for_reasoning_only": NO_TOKSTREAM,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_parser_selection_thinking_disabled": PRIVATE,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_reasoning_end_matches_reference_over_marker_dense_sequences": IS_REASONING_END,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_streaming_split_close_marker_hands_content_downstream": OLD_NAMES,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_streaming_split_open_marker_is_held_back": OLD_NAMES,
    "tests/reasoning/test_kimi_k3_reasoning_parser.py::test_thinking_disabled_streams_content": OLD_NAMES,
    # tests/reasoning/test_minimax_m2_append_reasoning_parser.py
    "tests/reasoning/test_minimax_m2_append_reasoning_parser.py::test_reasoning[empty]": EMPTY_OUTPUT,
    "tests/reasoning/test_minimax_m2_append_reasoning_parser.py::test_reasoning[empty_streaming]": EMPTY_OUTPUT,
    # tests/reasoning/test_minimax_m2_reasoning_parser.py
    "tests/reasoning/test_minimax_m2_reasoning_parser.py::test_reasoning[empty_streaming]": EMPTY_OUTPUT,
    # tests/reasoning/test_minimax_m3_reasoning_parser.py
    "tests/reasoning/test_minimax_m3_reasoning_parser.py::test_parser_registration": NO_TOKSTREAM,
    "tests/reasoning/test_minimax_m3_reasoning_parser.py::test_streaming_boundary_can_emit_reasoning_and_content": IS_REASONING_END_EACH_DELTA,
    "tests/reasoning/test_minimax_m3_reasoning_parser.py::test_streaming_drops_leading_end_tag": IS_REASONING_END_EACH_DELTA,
    "tests/reasoning/test_minimax_m3_reasoning_parser.py::test_streaming_enabled_mode_starts_in_reasoning": IS_REASONING_END_EACH_DELTA,
    "tests/reasoning/test_minimax_m3_reasoning_parser.py::test_streaming_non_leading_end_tag_is_content": IS_REASONING_END_EACH_DELTA,
    "tests/reasoning/test_minimax_m3_reasoning_parser.py::test_streaming_plain_content_ends_reasoning_phase": IS_REASONING_END_EACH_DELTA,
    "tests/reasoning/test_minimax_m3_reasoning_parser.py::test_streaming_reasoning_tags_are_not_returned": IS_REASONING_END_EACH_DELTA,
    "tests/reasoning/test_minimax_m3_reasoning_parser.py::test_streaming_split_end_marker_content_ids_are_stripped": IS_REASONING_END,
    "tests/reasoning/test_minimax_m3_reasoning_parser.py::test_streaming_split_leading_end_marker_text_across_deltas": IS_REASONING_END_EACH_DELTA,
    "tests/reasoning/test_minimax_m3_reasoning_parser.py::test_streaming_split_marker_text_across_deltas": IS_REASONING_END_EACH_DELTA,
    "tests/reasoning/test_minimax_m3_reasoning_parser.py::test_streaming_split_marker_text_drives_end_state": IS_REASONING_END,
    "tests/reasoning/test_minimax_m3_reasoning_parser.py::test_streaming_split_marker_tokens_are_not_returned": IS_REASONING_END_EACH_DELTA,
    "tests/reasoning/test_minimax_m3_reasoning_parser.py::test_streaming_split_marker_tokens_enabled_mode": IS_REASONING_END_EACH_DELTA,
    "tests/reasoning/test_minimax_m3_reasoning_parser.py::test_token_id_helpers": IS_REASONING_END,
    "tests/reasoning/test_minimax_m3_reasoning_parser.py::test_token_id_helpers_enabled_mode": IS_REASONING_END,
    "tests/reasoning/test_minimax_m3_reasoning_parser.py::test_token_id_helpers_with_split_marker_tokens": IS_REASONING_END,
    # tests/reasoning/test_nemotron_v3_reasoning_parser.py
    "tests/reasoning/test_nemotron_v3_reasoning_parser.py::test_nemotron_v3_streaming_no_promotion_with_real_content": DELEGATING,
    "tests/reasoning/test_nemotron_v3_reasoning_parser.py::test_nemotron_v3_streaming_no_promotion_without_opt_in": DELEGATING,
    "tests/reasoning/test_nemotron_v3_reasoning_parser.py::test_nemotron_v3_streaming_promotes_reasoning_to_content": DELEGATING,
    # tests/reasoning/test_step3_reasoning_parser.py
    "tests/reasoning/test_step3_reasoning_parser.py::test_count_reasoning_tokens_stops_at_think_end": PRIVATE,
    "tests/reasoning/test_step3_reasoning_parser.py::test_count_reasoning_tokens_without_think_end": COUNT_TOKENS,
    # tests/reasoning/test_step3p5_reasoning_parser.py
    "tests/reasoning/test_step3p5_reasoning_parser.py::test_reasoning[empty]": EMPTY_OUTPUT,
    "tests/reasoning/test_step3p5_reasoning_parser.py::test_reasoning[empty_streaming]": EMPTY_OUTPUT,
    # tests/tool_parsers/test_deepseekv32_tool_parser.py
    "tests/tool_parsers/test_deepseekv32_tool_parser.py::TestDelimiterPreservation::test_tool_detection_skip_special_tokens_false": ADJUST_REQUEST,
    # tests/tool_parsers/test_deepseekv4_tool_parser.py
    "tests/tool_parsers/test_deepseekv4_tool_parser.py::test_get_vllm_registry_structural_tag_returns_structural_tag": ADJUST_REQUEST,
    "tests/tool_parsers/test_deepseekv4_tool_parser.py::test_registered": NO_TOKSTREAM,
    # tests/tool_parsers/test_dots_tool_parser.py
    "tests/tool_parsers/test_dots_tool_parser.py::test_registered_in_tool_parser_manager": NO_TOKSTREAM,
    # tests/tool_parsers/test_functiongemma_tool_parser.py
    "tests/tool_parsers/test_functiongemma_tool_parser.py::TestAdjustRequest::test_skip_special_tokens_disabled": ADJUST_REQUEST,
    "tests/tool_parsers/test_functiongemma_tool_parser.py::TestAdjustRequest::test_skip_special_tokens_when_tool_choice_none": ADJUST_REQUEST,
    "tests/tool_parsers/test_functiongemma_tool_parser.py::TestBufferDeltaText::test_complete_tag_flushed": PRIVATE,
    "tests/tool_parsers/test_functiongemma_tool_parser.py::TestBufferDeltaText::test_regular_text_not_buffered": PRIVATE,
    "tests/tool_parsers/test_functiongemma_tool_parser.py::TestParseArguments::test_argument_with_spaces": PRIVATE,
    "tests/tool_parsers/test_functiongemma_tool_parser.py::TestParseArguments::test_boolean_argument": PRIVATE,
    "tests/tool_parsers/test_functiongemma_tool_parser.py::TestParseArguments::test_empty_arguments": PRIVATE,
    "tests/tool_parsers/test_functiongemma_tool_parser.py::TestParseArguments::test_multiple_arguments": PRIVATE,
    "tests/tool_parsers/test_functiongemma_tool_parser.py::TestParseArguments::test_numeric_argument": PRIVATE,
    "tests/tool_parsers/test_functiongemma_tool_parser.py::TestParseArguments::test_single_string_argument": PRIVATE,
    # tests/tool_parsers/test_gemma4_tool_parser.py
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_array_of_strings": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_boolean_false": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_boolean_true": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_delimited_keys_stripped": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_empty_string": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_empty_value": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_empty_value_after_other_keys_partial_withheld": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_empty_value_partial_withheld": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_float_value": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_integer_value": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_malformed_partial_array": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_mixed_types": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_multiple_string_values": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_nested_object": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_null_value": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_single_string_value": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_string_value_with_comma": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_trailing_dot_float_partial_withheld": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_unterminated_string": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Args::test_whitespace_only": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Array::test_bare_values": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Array::test_empty_array": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Array::test_stray_closing_bracket": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Array::test_string_array": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Array::test_string_element_with_closing_bracket": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestParseGemma4Array::test_trailing_dot_float_partial_withheld": NO_TOKSTREAM,
    "tests/tool_parsers/test_gemma4_tool_parser.py::test_named_custom_tool_choice_skips_structured_outputs": ADJUST_REQUEST,
    # tests/tool_parsers/test_glm4_moe_tool_parser.py
    "tests/tool_parsers/test_glm4_moe_tool_parser.py::test_glm45_uses_shared_glm47_parser": NO_TOKSTREAM,
    # tests/tool_parsers/test_hermes_tool_parser.py
    "tests/tool_parsers/test_hermes_tool_parser.py::test_hermes_parser_non_streaming_tool_call_until_eos[granite4]": SELF_SKIP,
    # tests/tool_parsers/test_k2_horizon_tool_parser.py
    "tests/tool_parsers/test_k2_horizon_tool_parser.py::test_auto_required_and_named_use_ifm_parser": ADJUST_REQUEST,
    "tests/tool_parsers/test_k2_horizon_tool_parser.py::test_invalid_request_format_rejected_before_generation": K2_FORMAT_CHECK,
    "tests/tool_parsers/test_k2_horizon_tool_parser.py::test_named_tool_resolves_custom_choice": PRIVATE,
    "tests/tool_parsers/test_k2_horizon_tool_parser.py::test_tool_parser_registered": NO_TOKSTREAM,
    "tests/tool_parsers/test_k2_horizon_tool_parser.py::test_xml_default_parses_multiple_calls_and_coerces_schema": K2_TOOL_FORMAT,
    # tests/tool_parsers/test_kimi_k2_tool_parser.py
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestAdjustRequest::test_no_change_when_no_tools": ADJUST_REQUEST,
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestAdjustRequest::test_no_change_when_tool_choice_none": ADJUST_REQUEST,
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestAdjustRequest::test_sets_skip_special_tokens_false": ADJUST_REQUEST,
    # tests/tool_parsers/test_kimi_k3_named_tool_choice.py
    "tests/tool_parsers/test_kimi_k3_named_tool_choice.py::test_named_choice_allowed_with_structural_tag": ADJUST_REQUEST,
    "tests/tool_parsers/test_kimi_k3_named_tool_choice.py::test_named_choice_rejected_without_structural_tag": ADJUST_REQUEST,
    "tests/tool_parsers/test_kimi_k3_named_tool_choice.py::test_named_custom_choice_allowed_with_structural_tag": ADJUST_REQUEST,
    "tests/tool_parsers/test_kimi_k3_named_tool_choice.py::test_named_custom_choice_rejected_without_structural_tag": ADJUST_REQUEST,
    # tests/tool_parsers/test_lfm2_tool_parser.py
    "tests/tool_parsers/test_lfm2_tool_parser.py::test_adjust_request_disables_skip_special_tokens": NO_TOKSTREAM,
    "tests/tool_parsers/test_lfm2_tool_parser.py::test_regex_timeout_handling": PATCHES_INTERNALS,
    # tests/tool_parsers/test_llama3_json_tool_parser.py
    "tests/tool_parsers/test_llama3_json_tool_parser.py::test_regex_timeout_handling": PATCHES_INTERNALS,
    # tests/tool_parsers/test_llama4_pythonic_tool_parser.py
    "tests/tool_parsers/test_llama4_pythonic_tool_parser.py::test_regex_timeout_handling": PATCHES_INTERNALS,
    # tests/tool_parsers/test_minicpm5xml_tool_parser.py
    "tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_adjust_request_skip_special_tokens": ADJUST_REQUEST,
    "tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_adjust_request_tool_choice_none": ADJUST_REQUEST,
    "tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_registered_in_tool_parser_manager": NO_TOKSTREAM,
    # tests/tool_parsers/test_minimax_m3_tool_parser.py
    "tests/tool_parsers/test_minimax_m3_tool_parser.py::test_minimax_m3_parser_registered": NO_TOKSTREAM,
    "tests/tool_parsers/test_minimax_m3_tool_parser.py::test_required_tool_choice_keeps_native_syntax": ADJUST_REQUEST,
    # tests/tool_parsers/test_olmo3_tool_parser.py
    "tests/tool_parsers/test_olmo3_tool_parser.py::test_regex_timeout_handling": PATCHES_INTERNALS,
    # tests/tool_parsers/test_poolside_v1_tool_parser.py
    "tests/tool_parsers/test_poolside_v1_tool_parser.py::test_auto_still_keeps_special_tokens": ADJUST_REQUEST,
    "tests/tool_parsers/test_poolside_v1_tool_parser.py::test_named_custom_tool_choice_skips_structured_outputs_responses": ADJUST_REQUEST,
    "tests/tool_parsers/test_poolside_v1_tool_parser.py::test_named_skips_structured_outputs_chatcompletion": ADJUST_REQUEST,
    "tests/tool_parsers/test_poolside_v1_tool_parser.py::test_named_skips_structured_outputs_responses": ADJUST_REQUEST,
    "tests/tool_parsers/test_poolside_v1_tool_parser.py::test_required_skips_structured_outputs_chatcompletion": ADJUST_REQUEST,
    "tests/tool_parsers/test_poolside_v1_tool_parser.py::test_required_skips_structured_outputs_responses": ADJUST_REQUEST,
    "tests/tool_parsers/test_poolside_v1_tool_parser.py::test_streaming_responses_request_with_logprobs_emits_empty_delta": PRIVATE,
    "tests/tool_parsers/test_poolside_v1_tool_parser.py::test_streaming_responses_request_without_logprobs": PRIVATE,
    # tests/tool_parsers/test_pythonic_tool_parser.py
    "tests/tool_parsers/test_pythonic_tool_parser.py::test_regex_timeout_handling": PATCHES_INTERNALS,
    # tests/tool_parsers/test_qwen3coder_tool_parser.py
    "tests/tool_parsers/test_qwen3coder_tool_parser.py::test_adjust_request_auto_uses_vllm_registry_structural_tag": ADJUST_REQUEST,
    "tests/tool_parsers/test_qwen3coder_tool_parser.py::test_adjust_request_required_prefers_structural_tag": ADJUST_REQUEST,
    "tests/tool_parsers/test_qwen3coder_tool_parser.py::test_get_vllm_registry_structural_tag_returns_structural_tag": ADJUST_REQUEST,
    # tests/tool_parsers/test_xlam_tool_parser.py
    "tests/tool_parsers/test_xlam_tool_parser.py::test_preprocess_model_output": PRIVATE,
    "tests/tool_parsers/test_xlam_tool_parser.py::test_streaming_with_list_structure": STATE,
}

#: Tests that check tokstream's answers, then ask for vLLM's internals: the member, then why.
CHECKED_THEN_INTERNAL: dict[str, str] = {
    # tests/reasoning/test_deepseekr1_reasoning_parser.py
    "tests/reasoning/test_deepseekr1_reasoning_parser.py::test_reasoning": "is_reasoning_end: checks the reasoning and content tokstream answered (all passed), then asks is_reasoning_end, the engine's structured-output hook on token ids",
    # tests/reasoning/test_gemma4_reasoning_parser.py
    "tests/reasoning/test_gemma4_reasoning_parser.py::test_gemma4_reasoning": "is_reasoning_end: checks the reasoning and content tokstream answered (all passed), then asks is_reasoning_end, the engine's structured-output hook on token ids",
    # tests/reasoning/test_glm4_moe_reasoning_parser.py
    "tests/reasoning/test_glm4_moe_reasoning_parser.py::test_reasoning": "is_reasoning_end: checks the reasoning and content tokstream answered (all passed), then asks is_reasoning_end, the engine's structured-output hook on token ids",
    # tests/reasoning/test_hy_v3_reasoning_parser.py
    "tests/reasoning/test_hy_v3_reasoning_parser.py::test_reasoning": "is_reasoning_end: checks the reasoning and content tokstream answered (all passed), then asks is_reasoning_end, the engine's structured-output hook on token ids",
    # tests/reasoning/test_minimax_m2_append_reasoning_parser.py
    "tests/reasoning/test_minimax_m2_append_reasoning_parser.py::test_reasoning": "is_reasoning_end: checks the reasoning and content tokstream answered (all passed), then asks is_reasoning_end, the engine's structured-output hook on token ids",
    # tests/reasoning/test_minimax_m2_reasoning_parser.py
    "tests/reasoning/test_minimax_m2_reasoning_parser.py::test_reasoning": "is_reasoning_end: checks the reasoning and content tokstream answered (all passed), then asks is_reasoning_end, the engine's structured-output hook on token ids",
    # tests/reasoning/test_step3p5_reasoning_parser.py
    "tests/reasoning/test_step3p5_reasoning_parser.py::test_reasoning": "is_reasoning_end: checks the reasoning and content tokstream answered (all passed), then asks is_reasoning_end, the engine's structured-output hook on token ids",
    # tests/tool_parsers/test_internlm2_tool_parser.py
    "tests/tool_parsers/test_internlm2_tool_parser.py::test_streaming_arguments_match_final_arguments": "get_remaining_unstreamed_args: checks the streamed calls tokstream answered (all passed), then asks get_remaining_unstreamed_args, vLLM's end-of-stream internal",
}

#: Tests that fail on tokstream, with the reason.
EXPECTED_FAILURES: dict[str, str] = {
    # tests/reasoning/test_deepseekr1_reasoning_parser.py
    "tests/reasoning/test_deepseekr1_reasoning_parser.py::test_reasoning[new_line]": R1_LEADING_TEXT,
    "tests/reasoning/test_deepseekr1_reasoning_parser.py::test_reasoning[shortest_streaming]": EMPTY_REASONING,
    "tests/reasoning/test_deepseekr1_reasoning_parser.py::test_reasoning[shortest_with_think]": EMPTY_REASONING,
    # tests/reasoning/test_gemma4_reasoning_parser.py
    "tests/reasoning/test_gemma4_reasoning_parser.py::test_gemma4_reasoning[invalid_complete]": GEMMA4,
    "tests/reasoning/test_gemma4_reasoning_parser.py::test_gemma4_reasoning[invalid_complete_streaming]": GEMMA4,
    "tests/reasoning/test_gemma4_reasoning_parser.py::test_gemma4_reasoning[invalid_simple]": GEMMA4,
    "tests/reasoning/test_gemma4_reasoning_parser.py::test_gemma4_reasoning[invalid_simple_streaming]": GEMMA4,
    # tests/reasoning/test_glm4_moe_reasoning_parser.py
    "tests/reasoning/test_glm4_moe_reasoning_parser.py::test_glm53_template_forces_reasoning_streaming": CHAT_TEMPLATE_THINKING,
    # tests/reasoning/test_granite_reasoning_parser.py
    "tests/reasoning/test_granite_reasoning_parser.py::test_streaming_subcases[Continuing unexpected start reasoning sequence]": STRIP,
    "tests/reasoning/test_granite_reasoning_parser.py::test_streaming_subcases[Delta breaks potential responise sequence]": STRIP,
    "tests/reasoning/test_granite_reasoning_parser.py::test_streaming_subcases[Delta contains everything]": STRIP,
    "tests/reasoning/test_granite_reasoning_parser.py::test_streaming_subcases[Delta contains some reasoning and response]": STRIP,
    "tests/reasoning/test_granite_reasoning_parser.py::test_streaming_subcases[Reasoning content has started]": STRIP,
    "tests/reasoning/test_granite_reasoning_parser.py::test_streaming_subcases[Response special sequence has started]": STRIP,
    "tests/reasoning/test_granite_reasoning_parser.py::test_streaming_subcases[Response special sequence reset]": STRIP,
    "tests/reasoning/test_granite_reasoning_parser.py::test_streaming_subcases[Response text has started]": STRIP,
    # tests/reasoning/test_granite_thinking_reasoning_parser.py
    "tests/reasoning/test_granite_thinking_reasoning_parser.py::test_granite_thinking_disabled_with_leading_newline": STRIP,
    "tests/reasoning/test_granite_thinking_reasoning_parser.py::test_granite_thinking_force_nonempty_content_moves_into_content": FORCE_NONEMPTY,
    "tests/reasoning/test_granite_thinking_reasoning_parser.py::test_granite_thinking_force_nonempty_swaps_when_content_absent": FORCE_NONEMPTY,
    # tests/reasoning/test_nemotron_v3_reasoning_parser.py
    "tests/reasoning/test_nemotron_v3_reasoning_parser.py::test_nemotron_v3_force_nonempty_content_moves_into_content": FORCE_NONEMPTY,
    # tests/reasoning/test_step3p5_reasoning_parser.py
    "tests/reasoning/test_step3p5_reasoning_parser.py::test_reasoning[new_line]": STRIP,
    "tests/reasoning/test_step3p5_reasoning_parser.py::test_reasoning[new_line_streaming]": STRIP,
    # tests/tool_parsers/test_apertus_tool_parser.py
    "tests/tool_parsers/test_apertus_tool_parser.py::TestStreamingExtraction::test_mtp_streaming_massive_chunk": STRIP,
    # tests/tool_parsers/test_deepseekv31_tool_parser.py
    "tests/tool_parsers/test_deepseekv31_tool_parser.py::test_extract_tool_calls_with_multiple_tools": TEXT_AFTER_CALLS_PRINCIPLE,
    # tests/tool_parsers/test_dots_tool_parser.py
    "tests/tool_parsers/test_dots_tool_parser.py::test_non_stream_unknown_tool_is_left_as_content": UNOFFERED_TOOL,
    "tests/tool_parsers/test_dots_tool_parser.py::test_streaming_emits_complete_json_before_end_marker_without_duplication": DOTS_JSON_DELTA,
    "tests/tool_parsers/test_dots_tool_parser.py::test_streaming_filters_unknown_tools_and_surfaces_content": UNOFFERED_TOOL,
    "tests/tool_parsers/test_dots_tool_parser.py::test_streaming_flushes_partial_opening_marker_at_eof": STRIP,
    "tests/tool_parsers/test_dots_tool_parser.py::test_streaming_malformed_block_does_not_block_later_valid_call": DOTS_MARKUP,
    "tests/tool_parsers/test_dots_tool_parser.py::test_streaming_strips_stray_end_marker": DOTS_MARKUP,
    # tests/tool_parsers/test_gemma4_tool_parser.py
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestBareAndMalformedOpeners::test_bare_malformed_then_well_formed": GEMMA4_NAME,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestBareAndMalformedOpeners::test_malformed_then_well_formed": GEMMA4_NAME,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestBareAndMalformedOpeners::test_three_mixed_calls": GEMMA4_NAME,
    "tests/tool_parsers/test_gemma4_tool_parser.py::TestExtractToolCalls::test_text_before_tool_call": GEMMA4,
    # tests/tool_parsers/test_gigachat3_tool_parser.py
    "tests/tool_parsers/test_gigachat3_tool_parser.py::test_tool_call[mixed_content_nonstreaming_with_eos_gigachat31]": EOS_TEXT,
    "tests/tool_parsers/test_gigachat3_tool_parser.py::test_tool_call[mixed_content_nonstreaming_with_eos_gigachat3]": EOS_TEXT,
    "tests/tool_parsers/test_gigachat3_tool_parser.py::test_tool_call[mixed_content_streaming_with_eos_gigachat31]": EOS_TEXT,
    "tests/tool_parsers/test_gigachat3_tool_parser.py::test_tool_call[mixed_content_streaming_with_eos_gigachat3]": EOS_TEXT,
    # tests/tool_parsers/test_glm4_moe_tool_parser.py
    "tests/tool_parsers/test_glm4_moe_tool_parser.py::test_extract_tool_calls_with_glm45_newline_format": GLM_CONTENT_STRIP,
    # tests/tool_parsers/test_granite4_tool_parser.py
    "tests/tool_parsers/test_granite4_tool_parser.py::test_tool_call_parser_complex[1-1]": STRIP,
    "tests/tool_parsers/test_granite4_tool_parser.py::test_tool_call_parser_complex[1-2]": STRIP,
    "tests/tool_parsers/test_granite4_tool_parser.py::test_tool_call_parser_complex[5-7]": STRIP,
    "tests/tool_parsers/test_granite4_tool_parser.py::test_tool_call_parser_complex[6-20]": STRIP,
    # tests/tool_parsers/test_hermes_tool_parser.py
    "tests/tool_parsers/test_hermes_tool_parser.py::test_hermes_parser_non_streaming_tool_call_invalid_json[granite4]": CUT_CALL,
    "tests/tool_parsers/test_hermes_tool_parser.py::test_hermes_parser_non_streaming_tool_call_invalid_json[llama]": CUT_CALL,
    # tests/tool_parsers/test_hunyuan_a13b_tool_parser.py
    'tests/tool_parsers/test_hunyuan_a13b_tool_parser.py::test_hunyuan_a13b_tool_parser_extract[<tool_calls>[{"name": "get_weather", "arguments": {"city": "Seattle"}}]</tool_calls>\\nThank you!-expected_tool_calls4-None]': TEXT_AFTER_CALLS,
    "tests/tool_parsers/test_hunyuan_a13b_tool_parser.py::test_hunyuan_a13b_tool_parser_extract[model_output3-expected_tool_calls3-I will call the tool now. ]": STRIP,
    # tests/tool_parsers/test_jamba_tool_parser.py
    "tests/tool_parsers/test_jamba_tool_parser.py::test_extract_tool_calls[single_tool_with_content]": STRIP,
    "tests/tool_parsers/test_jamba_tool_parser.py::test_extract_tool_calls_streaming[parallel_tools]": STRIP,
    "tests/tool_parsers/test_jamba_tool_parser.py::test_extract_tool_calls_streaming[single_tool]": STRIP,
    "tests/tool_parsers/test_jamba_tool_parser.py::test_extract_tool_calls_streaming[single_tool_with_content]": STRIP,
    # tests/tool_parsers/test_kimi_k2_tool_parser.py
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestExtractToolCalls::test_extract_tool_calls[angle_brackets_in_json]": KIMI_IDS,
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestExtractToolCalls::test_extract_tool_calls[empty_arguments]": KIMI_IDS,
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestExtractToolCalls::test_extract_tool_calls[multiline_json]": KIMI_IDS,
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestExtractToolCalls::test_extract_tool_calls[no_functions_prefix]": KIMI_IDS,
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestExtractToolCalls::test_extract_tool_calls[parallel_tool_calls]": KIMI_IDS,
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestExtractToolCalls::test_extract_tool_calls[single_tool_call]": KIMI_IDS,
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestExtractToolCalls::test_extract_tool_calls[three_tool_calls]": KIMI_IDS,
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestExtractToolCalls::test_invalid_funcall_id_skipped": KIMI_BAD_ID,
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestExtractToolCalls::test_multi_turn_native_id_continuity": KIMI_IDS,
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestExtractToolCalls::test_native_id_extracted": KIMI_IDS,
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestStreamingEdgeCases::test_content_after_tool_section": KIMI_SECTION_TEXT,
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestStreamingEdgeCases::test_noise_between_markers_suppressed": KIMI_SECTION_TEXT,
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestStreamingEdgeCases::test_truncated_tool_call_no_end_marker": KIMI_IDS,
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestStreamingHappyPath::test_multiple_tool_calls": KIMI_IDS,
    "tests/tool_parsers/test_kimi_k2_tool_parser.py::TestStreamingHappyPath::test_single_tool_call": KIMI_IDS,
    # tests/tool_parsers/test_lfm2_tool_parser.py
    "tests/tool_parsers/test_lfm2_tool_parser.py::test_echoed_tool_call_body_not_leaked_to_content": LFM2_ECHO,
    "tests/tool_parsers/test_lfm2_tool_parser.py::test_tool_call[nested_python_c_nonstreaming]": LFM2_RAW,
    "tests/tool_parsers/test_lfm2_tool_parser.py::test_tool_call[nested_python_c_streaming]": LFM2_RAW,
    "tests/tool_parsers/test_lfm2_tool_parser.py::test_tool_call[nested_quote_nonstreaming]": LFM2_RAW,
    "tests/tool_parsers/test_lfm2_tool_parser.py::test_tool_call[nested_quote_streaming]": LFM2_RAW,
    # tests/tool_parsers/test_llama3_json_tool_parser.py
    "tests/tool_parsers/test_llama3_json_tool_parser.py::test_extract_tool_calls_invalid_json": INVALID_JSON_ARGS,
    "tests/tool_parsers/test_llama3_json_tool_parser.py::test_extract_tool_calls_simple": TEXT_AFTER_CALLS,
    # tests/tool_parsers/test_minicpm5xml_tool_parser.py
    "tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_multiple_calls_interleaved_text": MINICPM5_TEXT_BESIDE_CALL,
    "tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_single_call_with_surrounding_text": MINICPM5_TEXT_BESIDE_CALL,
    "tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_thinking_only_sentencepiece_normalized_in_content": MINICPM5_SPACE_MARKERS,
    # tests/tool_parsers/test_step3_tool_parser.py
    "tests/tool_parsers/test_step3_tool_parser.py::TestStep3ToolParser::test_empty_arguments[False]": AS_VLLM_XFAIL,
    "tests/tool_parsers/test_step3_tool_parser.py::TestStep3ToolParser::test_empty_arguments[True]": STEP3_SEP,
    "tests/tool_parsers/test_step3_tool_parser.py::TestStep3ToolParser::test_escaped_strings[False]": AS_VLLM_XFAIL,
    "tests/tool_parsers/test_step3_tool_parser.py::TestStep3ToolParser::test_escaped_strings[True]": STEP3_SEP,
    "tests/tool_parsers/test_step3_tool_parser.py::TestStep3ToolParser::test_parallel_tool_calls[False]": AS_VLLM_XFAIL,
    "tests/tool_parsers/test_step3_tool_parser.py::TestStep3ToolParser::test_parallel_tool_calls[True]": AS_VLLM_XFAIL,
    "tests/tool_parsers/test_step3_tool_parser.py::TestStep3ToolParser::test_single_tool_call_simple_args[False]": AS_VLLM_XFAIL,
    "tests/tool_parsers/test_step3_tool_parser.py::TestStep3ToolParser::test_single_tool_call_simple_args[True]": STEP3_SEP,
    "tests/tool_parsers/test_step3_tool_parser.py::TestStep3ToolParser::test_surrounding_text[False]": AS_VLLM_XFAIL,
    "tests/tool_parsers/test_step3_tool_parser.py::TestStep3ToolParser::test_surrounding_text[True]": STEP3_SEP,
    "tests/tool_parsers/test_step3_tool_parser.py::TestStep3ToolParser::test_various_data_types[False]": AS_VLLM_XFAIL,
    "tests/tool_parsers/test_step3_tool_parser.py::TestStep3ToolParser::test_various_data_types[True]": STEP3_SEP,
    # tests/tool_parsers/test_step3p5_tool_parser.py
    "tests/tool_parsers/test_step3p5_tool_parser.py::test_extract_tool_calls_non_streaming_mixed_content_and_multiple_tool_calls": TEXT_AFTER_CALLS_PRINCIPLE,
    # tests/tool_parsers/test_xlam_tool_parser.py
}
