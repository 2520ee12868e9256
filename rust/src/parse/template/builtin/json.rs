//! The built-in templates' JSON for formats whose calls are JSON (or that have none), one
//! constant a family, as a checkpoint would carry it.

/// Qwen3: `<think>` reasoning and `<tool_call>` JSON calls.
pub(super) const QWEN3: &str = r##"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
    "tool_calls": {
      "open": "<tool_call>", "close_pattern": "</tool_call>\\s*", "repeats": true,
      "content": "json", "transform": {"type": "function", "function": "{content}"}
    },
    "content": {"close_pattern": "<\\|im_end\\|>\\s*"}
  }
}"##;

/// DeepSeek-R1: reasoning until `</think>` (its prompt opens `<think>`).
pub(super) const DEEPSEEK_R1: &str = r##"{
  "start_anchor": "<｜Assistant｜>",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
    "content": {"close_pattern": "<｜end▁of▁sentence｜>\\s*"}
  }
}"##;

/// DeepSeek-V3: `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME` and a fenced JSON block.
pub(super) const DEEPSEEK_V3: &str = r##"{
  "start_anchor": "<｜Assistant｜>",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
    "tool_calls": {
      "open_pattern": "(?:<｜tool▁calls▁begin｜>\\s*)?<｜tool▁call▁begin｜>(?:function)?<｜tool▁sep｜>(?P<name>[^\\n<]+)\\n```(?:json)?\\n",
      "close_pattern": "\\n?```\\s*<｜tool▁call▁end｜>\\s*(?:<｜tool▁calls▁end｜>\\s*)?",
      "repeats": true, "content": "json",
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {"close_pattern": "<｜end▁of▁sentence｜>\\s*"}
  }
}"##;

/// DeepSeek-V3.1: `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGUMENTS<｜tool▁call▁end｜>`.
pub(super) const DEEPSEEK_V31: &str = r##"{
  "start_anchor": "<｜Assistant｜>",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
    "tool_calls": {
      "open_pattern": "(?:<｜tool▁calls▁begin｜>\\s*)?<｜tool▁call▁begin｜>(?P<name>[^<]+?)<｜tool▁sep｜>",
      "close_pattern": "<｜tool▁call▁end｜>\\s*(?:<｜tool▁calls▁end｜>\\s*)?",
      "repeats": true, "content": "json",
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {"close_pattern": "<｜end▁of▁sentence｜>\\s*"}
  }
}"##;

/// Llama 3.x: a bare `{"name": ..., "parameters": ...}` object (optionally after
/// `<|python_tag|>`, several separated by `;`).
pub(super) const LLAMA3_JSON: &str = r##"{
  "start_anchor": "<|start_header_id|>assistant<|end_header_id|>\n\n",
  "fields": {
    "tool_calls": {
      "open_pattern": "(?:<\\|python_tag\\|>)?\\{\\s*\"name\":\\s*\"(?P<name>[^\"]+)\",\\s*\"(?:parameters|arguments)\":\\s*",
      "close_pattern": "\\}\\s*(?:;\\s*|<\\|eot_id\\|>\\s*|<\\|eom_id\\|>\\s*|$)",
      "repeats": true, "content": "json",
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {"close_pattern": "<\\|eot_id\\|>\\s*"}
  }
}"##;

/// Mistral v0.3: `[TOOL_CALLS] [{"name": ..., "arguments": ...}, ...]`.
pub(super) const MISTRAL: &str = r##"{
  "start_anchor": "[/INST]",
  "fields": {
    "tool_calls": {
      "open": "[TOOL_CALLS]", "content": "json",
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
      "transform_each": true
    },
    "content": {}
  }
}"##;

/// Mistral v11 and later (Magistral, Small 3.2+): `[THINK]...[/THINK]` and
/// `[TOOL_CALLS]NAME[ARGS]{...}` per call.
pub(super) const MISTRAL_V11: &str = r##"{
  "start_anchor": "[/INST]",
  "fields": {
    "reasoning_content": {"open": "[THINK]", "close_pattern": "\\[/THINK\\]"},
    "tool_calls": {
      "open_pattern": "\\[TOOL_CALLS\\](?P<name>[^\\[]+?)(?:\\[CALL_ID\\][^\\[]*)?\\[ARGS\\]",
      "close_pattern": "(?=\\[TOOL_CALLS\\])", "repeats": true, "content": "json",
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {}
  }
}"##;

/// Kimi-K2: `<|tool_call_begin|>functions.NAME:N<|tool_call_argument_begin|>{...}`; the call
/// section's marker ends reasoning, also where calls are not parsed.
pub(super) const KIMI_K2: &str = r##"{
  "start_anchor": "<|im_assistant|>assistant<|im_middle|>",
  "fields": {
    "reasoning_content": {
      "open": "<think>", "close_pattern": "</think>",
      "content_args": {"stop_pattern": "<\\|tool_calls_section_begin\\|>"}
    },
    "tool_calls": {
      "open_pattern": "(?:<\\|tool_calls_section_begin\\|>\\s*)?<\\|tool_call_begin\\|>\\s*(?:functions\\.)?(?P<name>[^:<\\s]+)(?::\\d+)?\\s*<\\|tool_call_argument_begin\\|>",
      "close_pattern": "<\\|tool_call_end\\|>\\s*(?:<\\|tool_calls_section_end\\|>\\s*)?",
      "repeats": true, "content": "json",
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {"close_pattern": "<\\|im_end\\|>\\s*"}
  }
}"##;

/// gpt-oss (harmony channels): `analysis` is reasoning, `final` and a `commentary` message
/// without a recipient (a preamble) content, a `commentary` message to `functions.NAME` a
/// call; messages of one kind are joined by a newline (as vLLM's `vllm/parser/harmony.py`
/// joins them); text outside a message is dropped.
pub(super) const GPT_OSS: &str = r##"{
  "start_anchor": "<|start|>assistant",
  "fields": {
    "reasoning_content": {
      "open": "<|channel|>analysis<|message|>", "repeats": true, "join": "\n",
      "close_pattern": "<\\|end\\|>\\s*(?:<\\|start\\|>assistant)?"
    },
    "content": {
      "open": ["<|channel|>final<|message|>", "<|channel|>commentary<|message|>"],
      "repeats": true, "join": "\n",
      "close_pattern": "(?:<\\|return\\|>|<\\|end\\|>)\\s*(?:<\\|start\\|>assistant)?"
    },
    "tool_calls": {
      "open_pattern": "(?:<\\|start\\|>assistant\\s*)?(?:<\\|channel\\|>commentary\\s*)?to=functions\\.(?P<name>[^\\s<]+)\\s*(?:<\\|channel\\|>commentary\\s*)?(?:<\\|constrain\\|>\\s*)?json<\\|message\\|>",
      "close_pattern": "<\\|call\\|>\\s*", "repeats": true, "content": "json",
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    }
  }
}"##;

/// ERNIE-4.5: reasoning until `</think>` (the output starts in it), the answer optionally between
/// `<response>` and `</response>` (dropped), and `<tool_call>` JSON calls.
pub(super) const ERNIE45: &str = r##"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>\\s*"},
    "tool_calls": {
      "open": "<tool_call>", "close_pattern": "</tool_call>\\s*", "repeats": true,
      "content": "json", "transform": {"type": "function", "function": "{content}"}
    },
    "content": {"close": ["<response>", "</response>"]}
  }
}"##;

/// Hunyuan-A13B: `<think>\n...\n</think>\n<answer>\n...\n</answer>` (plain text, not special
/// tokens) and a `<tool_calls>[...]</tool_calls>` JSON list.
pub(super) const HUNYUAN_A13B: &str = r##"{
  "start_anchor": "<|extra_0|>",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>\\s*(?:<answer>\\s*)?"},
    "tool_calls": {
      "open": "<tool_calls>", "close_pattern": "</tool_calls>\\s*", "content": "json",
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
      "transform_each": true, "repeats": true
    },
    "content": {"close": ["<answer>", "</answer>"]}
  }
}"##;

/// Granite 3.x: reasoning between the phrases "Here is my thought process:" and "Here is my
/// response:" (or "Here's"), and a JSON list of calls after `<|tool_call|>` or `<tool_call>`.
pub(super) const GRANITE: &str = r##"{
  "start_anchor": "<|start_of_role|>assistant<|end_of_role|>",
  "fields": {
    "reasoning_content": {
      "open_pattern": "(?:Here's|Here is) my thought process:",
      "close_pattern": "(?:Here's|Here is) my response:\\s*"
    },
    "tool_calls": {
      "open": ["<|tool_call|>", "<tool_call>"], "content": "json", "repeats": true,
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
      "transform_each": true
    },
    "content": {}
  }
}"##;

/// Granite 4: `<tool_call>` JSON calls, as Qwen3's.
pub(super) const GRANITE4: &str = r##"{
  "start_anchor": "<|start_of_role|>assistant<|end_of_role|>",
  "fields": {
    "tool_calls": {
      "open": "<tool_call>", "close_pattern": "</tool_call>\\s*", "repeats": true,
      "content": "json", "transform": {"type": "function", "function": "{content}"}
    },
    "content": {"close_pattern": "<\\|end_of_text\\|>\\s*"}
  }
}"##;

/// Granite-20B-FunctionCalling: `<function_call>` before each call's JSON object, no close.
pub(super) const GRANITE_20B_FC: &str = r##"{
  "start_anchor": "ASSISTANT:",
  "fields": {
    "tool_calls": {
      "open": "<function_call>", "repeats": true,
      "content": "json", "transform": {"type": "function", "function": "{content}"}
    },
    "content": {}
  }
}"##;

/// Jamba: a JSON list of calls between `<tool_calls>` and `</tool_calls>`.
pub(super) const JAMBA: &str = r##"{
  "start_anchor": "<|assistant|>",
  "fields": {
    "tool_calls": {
      "open": "<tool_calls>", "close_pattern": "</tool_calls>\\s*", "content": "json",
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
      "transform_each": true, "repeats": true
    },
    "content": {}
  }
}"##;

/// Phi-4-mini: `functools[...]`, a JSON list of calls.
pub(super) const PHI4_MINI_JSON: &str = r##"{
  "start_anchor": "<|assistant|>",
  "fields": {
    "tool_calls": {
      "open": "functools", "content": "json", "repeats": true,
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
      "transform_each": true
    },
    "content": {"close_pattern": "<\\|end\\|>\\s*"}
  }
}"##;

/// InternLM2: `<|action_start|><|plugin|>` and a `{"name": ..., "parameters": ...}` object
/// (or `"arguments"`), closed by `<|action_end|>`.
pub(super) const INTERNLM: &str = r##"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "tool_calls": {
      "open_pattern": "<\\|action_start\\|><\\|plugin\\|>\\s*\\{\\s*\"name\":\\s*\"(?P<name>[^\"]+)\",\\s*\"(?:parameters|arguments)\":\\s*",
      "close_pattern": "\\s*<\\|action_end\\|>\\s*", "repeats": true, "content": "json",
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {"close_pattern": "<\\|im_end\\|>\\s*"}
  }
}"##;

/// LongCat-Flash: `<longcat_tool_call>` JSON calls, as Qwen3's.
pub(super) const LONGCAT: &str = r##"{
  "start_anchor": "ASSISTANT:",
  "fields": {
    "tool_calls": {
      "open": "<longcat_tool_call>", "close_pattern": "</longcat_tool_call>\\s*",
      "repeats": true, "content": "json",
      "transform": {"type": "function", "function": "{content}"}
    },
    "content": {}
  }
}"##;

/// GigaChat 3: the answer until `<|message_sep|>`, then one `{"name": ..., "arguments": ...}`
/// object after `function call<|role_sep|>` (or `<|function_call|>`).
pub(super) const GIGACHAT3: &str = r##"{
  "start_anchor": "assistant<|role_sep|>\n",
  "fields": {
    "tool_calls": {
      "open_pattern": "(?:function call<\\|role_sep\\|>\\n|<\\|function_call\\|>)",
      "repeats": true, "content": "json",
      "transform": {"type": "function", "function": "{content}"}
    },
    "content": {"close_pattern": "<\\|message_sep\\|>\\s*"}
  }
}"##;

/// xLAM: a bare JSON list of `{"name": ..., "arguments": ...}` calls, or one in a code fence
/// (the fence dropped with the calls, as vLLM drops it).
pub(super) const XLAM: &str = r##"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "tool_calls": {
      "open_pattern": "(?:```(?:json)?\\s*)?(?=\\[\\s*\\{\\s*\"name\"\\s*:)",
      "close_pattern": "\\s*```", "content_args": {"ends_with_json": true},
      "content": "json", "repeats": true,
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
      "transform_each": true
    },
    "content": {"close_pattern": "</?tool_call>|\\[TOOL_CALLS\\]|<\\|im_end\\|>"}
  }
}"##;

/// Apertus: `<|tools_prefix|>[{"NAME": {...}}, ...]<|tools_suffix|>`, each call an object of
/// one key, its name; the text before and after the calls joined by a newline.
pub(super) const APERTUS: &str = r##"{
  "start_anchor": "<|assistant_start|>",
  "fields": {
    "tool_calls": {
      "open": "<|tools_prefix|>", "close_pattern": "<\\|tools_suffix\\|>\\s*", "repeats": true,
      "content": "json", "content_args": {"name_is_key": true}
    },
    "content": {"close_pattern": "<\\|assistant_end\\|>\\s*", "repeats": true, "join": "\n"}
  }
}"##;

/// Nemotron 3 (and Granite 4.2's `granite_thinking_parser`): Qwen3's `<think>` reasoning (its
/// calls, Qwen3-Coder's, come from the `qwen3_coder` template named beside it).
pub(super) const NEMOTRON_V3: &str = QWEN3;

/// Step-3.5 (and Step-3.7): Qwen3-Coder's calls and `<think>` reasoning; the output starts in
/// reasoning whatever the request asks (the prompt always opens `<think>`).
pub(super) const STEP3P5: &str = super::tags::QWEN3_CODER;

/// Gemma 4: reasoning in a `<|channel>` block (its `thought` line dropped) closed by `<channel|>`,
/// and `<|tool_call>call:NAME{key:value,...}<tool_call|>` calls whose strings are delimited by
/// `<|"|>`, bare values read as strings and typed by the tool's schema.
pub(super) const GEMMA4: &str = r##"{
  "start_anchor": "<|turn>model\n",
  "fields": {
    "reasoning_content": {"open_pattern": "<\\|channel>(?:thought\\n)?", "close_pattern": "<channel\\|>"},
    "tool_calls": {
      "open_pattern": "<\\|tool_call>\\s*(?:call)?:\\s*(?P<name>[^{(<\\s]+)\\s*",
      "close_pattern": "<tool_call\\|>", "repeats": true,
      "content": "json",
      "content_args": {"string_delims": [["<|\"|>", "<|\"|>"]], "unquoted_keys": true, "bare_values": "string"},
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {"close_pattern": "<turn\\|>\\s*"}
  }
}"##;

/// PLaMo 3: reasoning between `<|plamo:begin_think:plamo|>` and `<|plamo:end_think:plamo|>`
/// (reopened by each open); calls in a `<|plamo:begin_tool_requests:plamo|>` block, each a
/// `begin_tool_request` holding its name between `begin_tool_name` and `end_tool_name` and its
/// JSON arguments after `<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>`.
/// The block's other text, the end-of-turn `<|plamo:tag|>` and (where reasoning is on) a stray
/// `end_think` are dropped; so is the block where the request turns calls off. A call without
/// arguments has `{}`. The prompt is not read.
pub(super) const PLAMO3: &str = r##"{
  "start_anchor_pattern": "\\z",
  "fields": {
    "reasoning_content": {
      "open": "<|plamo:begin_think:plamo|>",
      "close_pattern": "<\\|plamo:end_think:plamo\\|>|<\\|plamo:tag\\|>"
    },
    "thinking": {"open": "<|plamo:end_think:plamo|>", "close_pattern": "(?=)"},
    "turn_end": {"open": "<|plamo:tag|>", "close_pattern": "(?=)"},
    "tool_calls": {
      "open_pattern": "(?:<\\|plamo:begin_tool_requests:plamo\\|>\\s*)?<\\|plamo:begin_tool_request:plamo\\|>\\s*<\\|plamo:begin_tool_name:plamo\\|>(?P<name>.*?)<\\|plamo:end_tool_name:plamo\\|>\\s*<\\|plamo:begin_tool_arguments:plamo\\|><\\|plamo:constrain\\|>json<\\|plamo:msg\\|>",
      "close_pattern": "<\\|plamo:end_tool_arguments:plamo\\|>\\s*<\\|plamo:end_tool_request:plamo\\|>",
      "repeats": true, "content": "json",
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "tool_text": {"open": "<|plamo:begin_tool_requests:plamo|>", "close": "<|plamo:end_tool_requests:plamo|>"},
    "tools_block": {"open": "<|plamo:begin_tool_requests:plamo|>", "close": "<|plamo:end_tool_requests:plamo|>"},
    "content": {}
  }
}"##;

/// Inkling: blocks of `<|message_model|>`, an optional header (dropped), a content-kind marker
/// and the block's text to `<|end_message|>` (or `<|content_model_end_sampling|>`): thinking
/// blocks are reasoning, `<|content_invoke_tool_json|>` blocks a call's `{"name", "args"}`
/// JSON, the others content. A thinking block where reasoning is not parsed, and a call block
/// where the request turns calls off, are dropped. The prompt is read after its last `<|end_message|>` (the
/// output goes on from its `<|message_model|>`).
pub(super) const INKLING: &str = r##"{
  "start_anchor": "<|end_message|>",
  "fields": {
    "header": {"open": "<|message_model|>", "close_pattern": "(?=<\\|content_)"},
    "reasoning_content": {
      "open": "<|content_thinking|>",
      "close_pattern": "<\\|end_message\\|>|<\\|content_model_end_sampling\\|>"
    },
    "tool_calls": {
      "open": "<|content_invoke_tool_json|>",
      "close_pattern": "<\\|end_message\\|>|<\\|content_model_end_sampling\\|>",
      "repeats": true, "content": "json",
      "transform": {"type": "function", "function": {"name": "{content.name}", "arguments": "{content.args}"}}
    },
    "thinking_block": {
      "open": "<|content_thinking|>",
      "close_pattern": "<\\|end_message\\|>|<\\|content_model_end_sampling\\|>"
    },
    "tools_block": {
      "open": "<|content_invoke_tool_json|>",
      "close_pattern": "<\\|end_message\\|>|<\\|content_model_end_sampling\\|>"
    },
    "markers": {
      "open": ["<|content_text|>", "<|content_invoke_tool_text|>", "<|content_tool_error|>",
               "<|end_message|>", "<|content_model_end_sampling|>"],
      "close_pattern": "(?=)"
    },
    "content": {}
  }
}"##;
