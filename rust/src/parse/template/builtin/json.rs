//! The built-in templates' JSON, one constant a family, as a checkpoint would carry it.

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

/// Qwen3-Coder: `<tool_call><function=NAME><parameter=KEY>VALUE</parameter>...`.
pub(super) const QWEN3_CODER: &str = r##"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
    "tool_calls": {
      "open_pattern": "<tool_call>\\s*<function=(?P<name>[^\\n>]+)>",
      "close_pattern": "</tool_call>\\s*", "repeats": true,
      "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<parameter=(?P<key>[^>\\n]+)>\\n?(?P<value>.*?)\\n?(?:</parameter>|(?P<next><parameter=))",
        "value_stops": ["\n</function>", "</function>"],
        "value_parser": {"name": "json", "args": {"allow_non_json": true}}
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
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

/// GLM-4.5: `<tool_call>NAME` then `<arg_key>K</arg_key><arg_value>V</arg_value>` pairs.
pub(super) const GLM45: &str = r##"{
  "start_anchor": "<|assistant|>",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
    "tool_calls": {
      "open_pattern": "<tool_call>(?P<name>[^\\s<]+)\\s*",
      "close_pattern": "</tool_call>\\s*", "repeats": true,
      "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<arg_key>\\s*(?P<key>[^<]*?)\\s*</arg_key>\\s*<arg_value>(?P<value>.*?)</arg_value>",
        "value_parser": {"name": "json", "args": {"allow_non_json": true}}
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {"close_pattern": "<\\|user\\|>\\s*"}
  }
}"##;

/// Kimi-K2: `<|tool_call_begin|>functions.NAME:N<|tool_call_argument_begin|>{...}`.
pub(super) const KIMI_K2: &str = r##"{
  "start_anchor": "<|im_assistant|>assistant<|im_middle|>",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
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

/// Ling 3: GLM-4.5's format (`<think>` reasoning, `<tool_call>NAME` with
/// `<arg_key>`/`<arg_value>` pairs).
pub(super) const LING3: &str = r##"{
  "start_anchor": "<role>ASSISTANT</role>",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>\\s*"},
    "tool_calls": {
      "open_pattern": "<tool_call>(?P<name>[^\\s<]+)\\s*",
      "close_pattern": "</tool_call>\\s*", "repeats": true,
      "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<arg_key>\\s*(?P<key>[^<]*?)\\s*</arg_key>\\s*<arg_value>(?P<value>.*?)</arg_value>",
        "value_parser": {"name": "json", "args": {"allow_non_json": true}}
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
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

/// Step3: reasoning until `</think>` (the output starts in it), and
/// `<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="NAME">` calls with
/// `<steptml:parameter name="KEY">VALUE</steptml:parameter>` arguments.
pub(super) const STEP3: &str = r##"{
  "start_anchor": "<|BOT|>assistant\n",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>\\s*"},
    "tool_calls": {
      "open_pattern": "(?:<｜tool_calls_begin｜>\\s*)?<｜tool_call_begin｜>\\s*function\\s*<｜tool_sep｜>\\s*<steptml:invoke name=\"(?P<name>[^\"]+)\">",
      "close_pattern": "\\s*</steptml:invoke>\\s*<｜tool_call_end｜>\\s*(?:<｜tool_calls_end｜>\\s*)?",
      "repeats": true, "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<steptml:parameter name=\"(?P<key>[^\"]+)\">\\s*(?P<value>.*?)\\s*</steptml:parameter>"
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {}
  }
}"##;

/// xLAM: a bare JSON list of `{"name": ..., "arguments": ...}` calls.
pub(super) const XLAM: &str = r##"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "tool_calls": {
      "open_pattern": "(?=\\[\\s*\\{\\s*\"name\"\\s*:)", "content": "json", "repeats": true,
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
      "transform_each": true
    },
    "content": {"close_pattern": "</?tool_call>|\\[TOOL_CALLS\\]|<\\|im_end\\|>"}
  }
}"##;

/// dots.llm1: `<dots_function_call>` blocks of `<invoke name="NAME">` calls with
/// `<parameter name="KEY">VALUE</parameter>` arguments.
pub(super) const DOTS: &str = r##"{
  "start_anchor": "<|response|>",
  "fields": {
    "tool_calls": {
      "open_pattern": "(?:<dots_function_call>\\s*)?<invoke\\s+name\\s*=\\s*\"?(?P<name>[^\">]+?)\"?\\s*>",
      "close_pattern": "\\s*</invoke>\\s*(?:</dots_function_call>\\s*)?",
      "repeats": true, "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<parameter\\s+name\\s*=\\s*\"?(?P<key>[^\">]+?)\"?\\s*>\\s*(?P<value>.*?)\\s*</parameter>"
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {"close_pattern": "<\\|endofresponse\\|>\\s*"}
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

/// Llama 3.2 (and ToolACE): the output is a Python list of calls, `[get_weather(city="Paris")]`,
/// from its first char (vLLM's `pythonic` reads a call list only there).
pub(super) const PYTHONIC: &str = r##"{
  "start_anchor": "<|start_header_id|>assistant<|end_header_id|>\n\n",
  "fields": {
    "tool_calls": {
      "open_pattern": "^\\[\\s*(?P<name>[a-zA-Z]\\w*)\\s*\\(", "content": "pythonic"
    },
    "content": {}
  }
}"##;

/// Llama 4: `pythonic`'s list, optionally between `<|python_start|>` and `<|python_end|>` (the
/// close is taken where it follows the list).
pub(super) const LLAMA4_PYTHONIC: &str = r##"{
  "start_anchor": "<|header_start|>assistant<|header_end|>\n\n",
  "fields": {
    "tool_calls": {
      "open_pattern": "^(?:<\\|python_start\\|>)?\\[\\s*(?P<name>[a-zA-Z]\\w*)\\s*\\(",
      "close": "<|python_end|>", "content": "pythonic"
    },
    "content": {}
  }
}"##;

/// Olmo 3: `<think>` reasoning (plain text; the output starts in it) and Python calls one a
/// line between `<function_calls>` and `</function_calls>`.
pub(super) const OLMO3: &str = r##"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
    "tool_calls": {
      "open_pattern": "<function_calls>\\s*(?P<name>[a-zA-Z]\\w*)\\s*\\(",
      "close_pattern": "</function_calls>\\s*", "repeats": true,
      "content": "pythonic", "content_args": {"lines": true}
    },
    "content": {}
  }
}"##;

/// LFM2: a Python call list between `<|tool_call_start|>` and `<|tool_call_end|>`; the text
/// before and after the calls joined by a newline.
pub(super) const LFM2: &str = r##"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "tool_calls": {
      "open_pattern": "<\\|tool_call_start\\|>\\s*\\[\\s*(?P<name>[a-zA-Z_][\\w.]*)\\s*\\(",
      "close": "<|tool_call_end|>", "repeats": true, "content": "pythonic"
    },
    "content": {"repeats": true, "join": "\n"}
  }
}"##;

/// Nemotron 3 (and Granite 4.2's `granite_thinking_parser`): Qwen3's `<think>` reasoning (its
/// calls, Qwen3-Coder's, come from the `qwen3_coder` template named beside it).
pub(super) const NEMOTRON_V3: &str = QWEN3;

/// Step-3.5 (and Step-3.7): Qwen3-Coder's calls and `<think>` reasoning; the output starts in
/// reasoning whatever the request asks (the prompt always opens `<think>`).
pub(super) const STEP3P5: &str = QWEN3_CODER;

/// MiniMax-M2: reasoning until `</think>` (its prompt opens `<think>`), and
/// `<minimax:tool_call>` blocks of `<invoke name="NAME">` calls (a call without its block
/// marker too) with `<parameter name="KEY">VALUE</parameter>` arguments, values as written.
pub(super) const MINIMAX_M2: &str = r##"{
  "start_anchor": "]~b]ai\n",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
    "tool_calls": {
      "open_pattern": "(?:<minimax:tool_call>\\s*)?<invoke name=[\"']?(?P<name>[^\"'>]+)[\"']?>",
      "close_pattern": "\\s*</invoke>\\s*(?:</minimax:tool_call>\\s*)?",
      "repeats": true, "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<\\s*parameter\\s+name\\s*=\\s*[\"']?(?P<key>[^\"'>]+?)[\"']?\\s*>(?P<value>.*?)(?:<\\s*/\\s*parameter\\s*>|(?P<next><\\s*parameter\\s+name))"
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {}
  }
}"##;

/// Seed-OSS: Qwen3-Coder's format with its own markers (`<seed:think>`, `<seed:tool_call>`);
/// a `<function=NAME>` call without its block marker is a call too, as vLLM reads it.
pub(super) const SEED_OSS: &str = r##"{
  "start_anchor": "<seed:bos>assistant\n",
  "fields": {
    "reasoning_content": {"open": "<seed:think>", "close_pattern": "</seed:think>"},
    "tool_calls": {
      "open_pattern": "(?:<seed:tool_call>\\s*)?<function=(?P<name>[^\\n>]+)>",
      "close_pattern": "</function>\\s*(?:</seed:tool_call>\\s*)?|</seed:tool_call>\\s*",
      "repeats": true,
      "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<parameter=(?P<key>[^>\\n]+)>\\n?(?P<value>.*?)\\n?(?:</parameter>|(?P<next><parameter=))",
        "value_parser": {"name": "json", "args": {"allow_non_json": true}}
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {"close_pattern": "<seed:eos>\\s*"}
  }
}"##;

/// MiMo: Qwen3-Coder's calls and Qwen3's reasoning; each parameter's value as written (its
/// newlines kept), then typed by the tool's schema.
pub(super) const MIMO: &str = r##"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
    "tool_calls": {
      "open_pattern": "<tool_call>\\s*<function=(?P<name>[^\\n>]+)>",
      "close_pattern": "</tool_call>\\s*", "repeats": true,
      "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<\\s*parameter\\s*=\\s*(?P<key>[^>]*)>(?P<value>.*?)(?:<\\s*/\\s*parameter\\s*>|(?P<next><\\s*parameter\\s*=))",
        "value_stops": ["</function>"]
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {"close_pattern": "<\\|im_end\\|>\\s*"}
  }
}"##;

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

/// FunctionGemma: `<start_function_call>call:NAME{key:<escape>value<escape>,...}<end_function_call>`
/// calls, each value read as JSON, else as its text.
pub(super) const FUNCTIONGEMMA: &str = r##"{
  "start_anchor": "<start_of_turn>model\n",
  "fields": {
    "tool_calls": {
      "open_pattern": "<start_function_call>call:(?P<name>\\w+)\\{",
      "close_pattern": "\\}<end_function_call>\\s*", "repeats": true,
      "content": "xml-inline",
      "content_args": {
        "tag_pattern": "(?P<key>\\w+):<escape>(?P<value>.*?)<escape>",
        "value_parser": {"name": "json", "args": {"allow_non_json": true}}
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {"close_pattern": "<end_of_turn>\\s*"}
  }
}"##;

/// DeepSeek-V3.2's DSML calls: `<｜DSML｜invoke name="NAME">` calls (in a
/// `<｜DSML｜function_calls>` block, or bare) with
/// `<｜DSML｜parameter name="KEY" string="true|false">VALUE</｜DSML｜parameter>` arguments, a
/// `string="true"` value a string, any other JSON (else its text); the text of the block
/// around its calls, and all text after a call, is dropped.
pub(super) const DEEPSEEK_V32: &str = r##"{
  "start_anchor": "<｜Assistant｜>",
  "fields": {
    "tool_calls": {
      "open_pattern": "<｜DSML｜invoke name=\"(?P<name>.*?)\">",
      "close_pattern": "</｜DSML｜invoke>|</｜DSML｜function_calls>",
      "repeats": true, "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<｜DSML｜parameter\\s+name=\"(?P<key>[^\"]+)\"(?:\\s+string=\"(?P<string>[^\"]*)\")?\\s*>(?P<value>.*?)(?:</｜DSML｜parameter>|(?P<next><｜DSML｜parameter\\s+name=))",
        "wrappers": ["arguments", "input"]
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "tool_text": {
      "open": "<｜DSML｜function_calls>",
      "close_pattern": "(?=<｜DSML｜invoke name=\")"
    },
    "tools_block": {"open": "<｜DSML｜function_calls>", "close": "</｜DSML｜function_calls>"},
    "content": {"close_pattern": "<｜end▁of▁sentence｜>\\s*"}
  }
}"##;

/// DeepSeek-V4: `<think>` reasoning (a `</think>` outside it dropped, as an empty reasoning
/// region) and V3.2's DSML calls in a `<｜DSML｜tool_calls>` block (or its spellings
/// `toolcalls` and `tool`), which ends reasoning.
pub(super) const DEEPSEEK_V4: &str = r##"{
  "start_anchor": "<｜Assistant｜>",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
    "thinking": {"open": "</think>", "close_pattern": "(?=)"},
    "tool_calls": {
      "open_pattern": "(?:<｜DSML｜(?:tool_calls|toolcalls|tool)>\\s*)?<｜DSML｜invoke name=\"(?P<name>.*?)\">",
      "close_pattern": "</｜DSML｜invoke>|</｜DSML｜tool_calls>",
      "repeats": true, "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<｜DSML｜parameter\\s+name=\"(?P<key>[^\"]+)\"(?:\\s+string=\"(?P<string>[^\"]*)\")?\\s*>(?P<value>.*?)(?:</｜DSML｜parameter>|(?P<next><｜DSML｜parameter\\s+name=))",
        "wrappers": ["arguments", "input"]
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "tool_text": {
      "open": ["<｜DSML｜tool_calls>", "<｜DSML｜toolcalls>", "<｜DSML｜tool>"],
      "close_pattern": "(?=<｜DSML｜invoke name=\")"
    },
    "tools_block": {"open": ["<｜DSML｜tool_calls>", "<｜DSML｜toolcalls>", "<｜DSML｜tool>"], "close": ["</｜DSML｜tool_calls>", "</｜DSML｜toolcalls>", "</｜DSML｜tool>"]},
    "content": {"close_pattern": "<｜end▁of▁sentence｜>\\s*"}
  }
}"##;

/// DeepSeek-V4.1: V4's format with spaced DSML markers (`<｜DSML｜ calls>`,
/// `<｜DSML｜ invoke name="NAME">`, `<｜DSML｜ parameter ...>`).
pub(super) const DEEPSEEK_V41: &str = r##"{
  "start_anchor": "<｜Assistant｜>",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
    "thinking": {"open": "</think>", "close_pattern": "(?=)"},
    "tool_calls": {
      "open_pattern": "(?:<｜DSML｜ calls>\\s*)?<｜DSML｜ invoke name=\"(?P<name>.*?)\">",
      "close_pattern": "</｜DSML｜ invoke>|</｜DSML｜ calls>",
      "repeats": true, "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<｜DSML｜ parameter\\s+name=\"(?P<key>[^\"]+)\"(?:\\s+string=\"(?P<string>[^\"]*)\")?\\s*>(?P<value>.*?)(?:</｜DSML｜ parameter>|(?P<next><｜DSML｜ parameter\\s+name=))",
        "wrappers": ["arguments", "input"]
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "tool_text": {
      "open": "<｜DSML｜ calls>",
      "close_pattern": "(?=<｜DSML｜ invoke name=\")"
    },
    "tools_block": {"open": "<｜DSML｜ calls>", "close": "</｜DSML｜ calls>"},
    "content": {"close_pattern": "<｜end▁of▁sentence｜>\\s*"}
  }
}"##;

/// Kimi K3's XTML channels, each `<|open|>NAME<|sep|>...<|close|>NAME<|sep|>`: `think` is
/// reasoning (a `response` channel's open ends it too); `response` is content, its markers (and `<|close|>message<|sep|>`) dropped; a
/// `tools` channel holds `call tool="NAME"` elements whose `argument key="KEY" type="TYPE"`
/// children are a string where the type is `string` (or not given), else JSON (their text where
/// it is not JSON), `&quot;` and `&amp;` in names and keys read as `"` and `&`; a call is sent
/// once it closes (one the output cuts is dropped). A think channel where reasoning is not
/// parsed, and a tools channel where calls are not, are dropped; so is the text of the tools
/// channel around its calls. The
/// prompt is read from its last message element's open (`<|open|>message ...<|sep|>`).
pub(super) const KIMI_K3: &str = r##"{
  "start_anchor_pattern": "<\\|open\\|>message[^<]*<\\|sep\\|>",
  "fields": {
    "reasoning_content": {
      "open": "<|open|>think<|sep|>",
      "close_pattern": "<\\|close\\|>think<\\|sep\\|>|<\\|open\\|>response<\\|sep\\|>"
    },
    "response": {
      "open": ["<|open|>response<|sep|>", "<|close|>response<|sep|>", "<|close|>message<|sep|>"],
      "close_pattern": "(?=)"
    },
    "think": {"open": "<|open|>think<|sep|>", "close_pattern": "<\\|close\\|>think<\\|sep\\|>"},
    "tool_calls": {
      "open_pattern": "<\\|open\\|>call tool=\"(?P<name>[^\"]*)\"[^<]*<\\|sep\\|>",
      "close_pattern": "<\\|close\\|>call<\\|sep\\|>",
      "repeats": true, "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<\\|open\\|>argument key=\"(?P<key>[^\"]*)\"(?: type=\"(?P<type>[^\"]*)\")?[^<]*<\\|sep\\|>(?P<value>.*?)<\\|close\\|>argument<\\|sep\\|>",
        "closed_only": true, "entities": true
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "tool_text": {"open": "<|open|>tools<|sep|>", "close_pattern": "(?=<\\|open\\|>call )"},
    "tools_channel": {"open": "<|open|>tools<|sep|>", "close_pattern": "<\\|close\\|>tools<\\|sep\\|>"},
    "content": {}
  }
}"##;

/// Hunyuan 3 (HY-V3): `<think>` reasoning, and `<tool_call>NAME<tool_sep>` calls in a
/// `<tool_calls>` block with `<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>` arguments,
/// each value as written, then typed by the tool's schema; the text of the block around its
/// calls, and all text after a call, is dropped.
pub(super) const HY_V3: &str = r##"{
  "start_anchor": "<｜hy_Assistant｜>",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
    "tool_calls": {
      "open_pattern": "(?:<tool_calls>\\s*)?<tool_call>\\s*(?P<name>.*?)\\s*<tool_sep>",
      "close_pattern": "</tool_call>",
      "repeats": true, "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<arg_key>(?P<key>.*?)</arg_key>\\s*<arg_value>(?P<value>.*?)</arg_value>"
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "tool_text": {"open": "<tool_calls>", "close_pattern": "(?=<tool_call>)"},
    "content": {}
  }
}"##;

/// Hunyuan 4 (HY-V4): `<think>` reasoning, and `<tool_call>NAME<arg_key>KEY</arg_key>
/// <arg_value>VALUE</arg_value>...</tool_call>` calls (the name what comes before the first
/// argument, stripped) in a `<tool_calls>` block, each value as written, then typed by the
/// tool's schema; a call is sent once it closes. Each marker may carry the checkpoint's suffix
/// (`<tool_call:6124c78e>`). The text of the block around its calls, and all text after a call,
/// is dropped.
pub(super) const HY_V4: &str = r##"{
  "start_anchor": "<｜hy_Assistant｜>",
  "fields": {
    "reasoning_content": {"open_pattern": "<think(?::[^\\s>]+)?>", "close_pattern": "</think(?::[^\\s>]+)?>"},
    "tool_calls": {
      "open_pattern": "(?:<tool_calls(?::[^\\s>]+)?>\\s*)?<tool_call(?::[^\\s>]+)?>\\s*(?P<name>[^<]*[^<\\s]|)\\s*",
      "close_pattern": "</tool_call(?::[^\\s>]+)?>",
      "repeats": true, "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<arg_key(?::[^\\s>]+)?>(?P<key>.*?)</arg_key(?::[^\\s>]+)?><arg_value(?::[^\\s>]+)?>(?P<value>.*?)</arg_value(?::[^\\s>]+)?>",
        "closed_only": true
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "tool_text": {"open_pattern": "<tool_calls(?::[^\\s>]+)?>", "close_pattern": "(?=<tool_call[:>])"},
    "content": {}
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

/// Poolside's Laguna (`poolside_v1`): DeepSeek-V3's `<think>` reasoning and GLM-4.5's calls,
/// `<tool_call>NAME` then `<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>` arguments, each
/// value as written where the tool's schema says `string`, else read as JSON or a Python
/// literal; a call is sent once it closes, and the text after a call is dropped (the block
/// text field has no marker: its open matches nothing).
pub(super) const POOLSIDE_V1: &str = r##"{
  "start_anchor": "<assistant>",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
    "tool_calls": {
      "open_pattern": "<tool_call>\\s*(?P<name>[^\\n<]*[^\\s<])",
      "close_pattern": "</tool_call>",
      "repeats": true, "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<arg_key>\\s*(?P<key>.*?)\\s*</arg_key>\\s*<arg_value>(?P<value>.*?)</arg_value>",
        "closed_only": true
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "tool_text": {"open_pattern": "[^\\s\\S]", "close_pattern": "(?=<tool_call>)"},
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

/// MiniMax-M3: reasoning between `<mm:think>` and `</mm:think>` (once; a `</mm:think>` the
/// output begins with is dropped and ends it), and calls inside a `]<]minimax[>[<tool_call>`
/// block only: `]<]minimax[>[<invoke name="NAME">`, arguments as nested elements each tag of
/// which begins with the namespace `]<]minimax[>[` (`xml-tree`), up to `]<]minimax[>[</invoke>`.
/// Text in a block around its calls, and after it, is dropped. The prompt is not read.
pub(super) const MINIMAX_M3: &str = r##"{
  "start_anchor_pattern": "\\z",
  "fields": {
    "reasoning_content": {"open": "<mm:think>", "close": "</mm:think>"},
    "thinking": {"open_pattern": "\\A</mm:think>", "close_pattern": "(?=)"},
    "tool_calls": {
      "open_pattern": "\\]<\\]minimax\\[>\\[<invoke name=[\"']?\\s*(?P<name>[^>]*?)\\s*[\"']?>",
      "close": "]<]minimax[>[</invoke>",
      "repeats": true, "content": "xml-tree",
      "content_args": {"marker": "]<]minimax[>[", "in_block": true},
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "tool_text": {"open": "]<]minimax[>[<tool_call>"},
    "tools_block": {"open": "]<]minimax[>[<tool_call>"},
    "content": {}
  }
}"##;

/// Muse Spark (`muse`, also vLLM's `musespark1x`): messages `<|start|>assistant to=R<|message|>`
/// (the first one without `<|start|>assistant`, the prompt's), each ended by `<|eom|>`,
/// `<|eot|>` or the next header. `to=self` and a bare header are reasoning; `to=user` and
/// `to=commentary` content; `to=developer` dropped; any other recipient a tool, whose message
/// holds ATEM calls (`<atem:invoke name="N">` with `<atem:parameter name="K">V</atem:parameter>`
/// tags), sent once each closes, and dropped where calls are not parsed. A call outside a tool
/// message is text; a message's end ends a call left open, which is dropped. Text after a
/// message's end and before the next header is dropped. Equal matches go to the field whose name
/// sorts first: `reasoning_content` over `self_message` (the same messages where reasoning is
/// not parsed), the recipients' fields over `tool_text` and `unparsed_call_message`.
pub(super) const MUSE: &str = r##"{
  "start_anchor": "<|start|>assistant",
  "fields": {
    "reasoning_content": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)(?:to=self)?<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)",
      "repeats": true, "join": "", "content_args": {"strip": false}
    },
    "self_message": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)(?:to=self)?<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "addressed": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)to=(?:user|commentary)<\\|message\\|>",
      "close_pattern": "(?=)"
    },
    "developer": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)to=developer<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "tool_text": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)to=[^\\s<]+<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "unparsed_call_message": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)to=[^\\s<]+<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "tool_calls": {
      "open_pattern": "<atem:invoke\\b[^>]*?\\bname=\"(?P<name>[^\"]+)\"[^>]*>",
      "close": "</atem:invoke>", "repeats": true, "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<atem:parameter\\b[^>]*?\\bname=\"(?P<key>[^\"]+)\"[^>]*?>(?P<value>.*?)</atem:parameter>",
        "closed_only": true, "in_block": true, "collapse_doubled_names": true,
        "stop_pattern": "<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>"
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "message_end": {
      "open": ["<|eom|>", "<|eot|>"],
      "close_pattern": "(?=<\\|start\\|>|[^\\S\\n]*(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "content": {"repeats": true, "join": "", "content_args": {"strip": false}}
  }
}"##;

/// Muse Glimmer (`muse_glimmer`): Muse Spark's messages, but only `to=self` is reasoning (its
/// messages joined by a newline), `to=user` and a bare header are content, and `to=commentary`
/// and `to=developer` are tools.
pub(super) const MUSE_GLIMMER: &str = r##"{
  "start_anchor": "<|start|>assistant",
  "fields": {
    "reasoning_content": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)to=self<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)",
      "repeats": true, "join": "\n", "content_args": {"strip": false}
    },
    "self_message": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)to=self<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "addressed": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)(?:to=user)?<\\|message\\|>",
      "close_pattern": "(?=)"
    },
    "tool_text": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)to=[^\\s<]+<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "unparsed_call_message": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)to=[^\\s<]+<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "tool_calls": {
      "open_pattern": "<atem:invoke\\b[^>]*?\\bname=\"(?P<name>[^\"]+)\"[^>]*>",
      "close": "</atem:invoke>", "repeats": true, "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<atem:parameter\\b[^>]*?\\bname=\"(?P<key>[^\"]+)\"[^>]*?>(?P<value>.*?)</atem:parameter>",
        "closed_only": true, "in_block": true, "collapse_doubled_names": true,
        "stop_pattern": "<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>"
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "message_end": {
      "open": ["<|eom|>", "<|eot|>"],
      "close_pattern": "(?=<\\|start\\|>|[^\\S\\n]*(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "content": {"repeats": true, "join": "", "content_args": {"strip": false}}
  }
}"##;

/// Cohere Command (`cohere_command3`: Command R7B, Command A): marker-delimited sections, each
/// marker ending the one before it wherever it comes. `<|START_THINKING|>` opens reasoning (any
/// number of times; leading whitespace is trimmed from there up to the first text, in whatever
/// section), `<|END_THINKING|>` and `<|START_RESPONSE|>` content, `<|START_ACTION|>` a JSON list
/// of `{"tool_call_id", "tool_name", "parameters"}` calls (dropped where calls are not parsed);
/// after `<|END_RESPONSE|>` or `<|END_ACTION|>` text is dropped up to the next marker. Content
/// keeps its leading whitespace; citation tags (`<co>`, `</co: 0:[1]>`) are dropped, their text
/// kept. The prompt is not read (the anchor never matches).
pub(super) const COHERE_COMMAND3: &str = r##"{
  "start_anchor_pattern": "<\\|CHATBOT_TOKEN\\|>[^\\s\\S]",
  "fields": {
    "reasoning_content": {
      "open": "<|START_THINKING|>",
      "close_pattern": "(?=<\\|(?:END_THINKING|START_THINKING|START_RESPONSE|START_ACTION|END_RESPONSE|END_ACTION)\\|>)",
      "repeats": true, "join": "", "content_args": {"lstrip_after": true}
    },
    "tool_calls": {
      "open": "<|START_ACTION|>",
      "close_pattern": "(?=<\\|(?:END_THINKING|START_THINKING|START_RESPONSE|START_ACTION|END_RESPONSE|END_ACTION)\\|>)",
      "repeats": true, "content": "json", "transform_each": true,
      "transform": {"type": "function", "function": {"name": "{tool_name}", "arguments": "{parameters}"}}
    },
    "tools_block": {
      "open": "<|START_ACTION|>",
      "close_pattern": "(?=<\\|(?:END_THINKING|START_THINKING|START_RESPONSE|START_ACTION|END_RESPONSE|END_ACTION)\\|>)"
    },
    "after_end": {
      "open": ["<|END_RESPONSE|>", "<|END_ACTION|>"],
      "close_pattern": "(?=<\\|(?:END_THINKING|START_THINKING|START_RESPONSE|START_ACTION)\\|>)"
    },
    "markers": {"open": ["<|START_RESPONSE|>", "<|END_THINKING|>"], "close_pattern": "(?=)"},
    "citations": {"open_pattern": "<co>|</co: [^<>]*>", "content_args": {"inline": true}},
    "content": {"repeats": true, "join": "", "content_args": {"strip": "trailing"}}
  }
}"##;

/// Cohere Command 4 (`cohere_command4`: Command A Reasoning, Vision, MoE): Command 3's sections,
/// the output starting in reasoning, and `<|START_TEXT|>` / `<|END_TEXT|>` as the answer's
/// markers beside `<|START_RESPONSE|>` / `<|END_RESPONSE|>`.
pub(super) const COHERE_COMMAND4: &str = r##"{
  "start_anchor_pattern": "<\\|CHATBOT_TOKEN\\|>[^\\s\\S]",
  "fields": {
    "reasoning_content": {
      "open_pattern": "^(?:<\\|START_THINKING\\|>)?|<\\|START_THINKING\\|>",
      "close_pattern": "(?=<\\|(?:END_THINKING|START_THINKING|START_RESPONSE|START_ACTION|START_TEXT|END_RESPONSE|END_ACTION|END_TEXT)\\|>)",
      "repeats": true, "join": "", "content_args": {"lstrip_after": true}
    },
    "tool_calls": {
      "open": "<|START_ACTION|>",
      "close_pattern": "(?=<\\|(?:END_THINKING|START_THINKING|START_RESPONSE|START_ACTION|START_TEXT|END_RESPONSE|END_ACTION|END_TEXT)\\|>)",
      "repeats": true, "content": "json", "transform_each": true,
      "transform": {"type": "function", "function": {"name": "{tool_name}", "arguments": "{parameters}"}}
    },
    "tools_block": {
      "open": "<|START_ACTION|>",
      "close_pattern": "(?=<\\|(?:END_THINKING|START_THINKING|START_RESPONSE|START_ACTION|START_TEXT|END_RESPONSE|END_ACTION|END_TEXT)\\|>)"
    },
    "after_end": {
      "open": ["<|END_RESPONSE|>", "<|END_TEXT|>", "<|END_ACTION|>"],
      "close_pattern": "(?=<\\|(?:END_THINKING|START_THINKING|START_RESPONSE|START_ACTION|START_TEXT)\\|>)"
    },
    "markers": {
      "open": ["<|START_RESPONSE|>", "<|START_TEXT|>", "<|END_THINKING|>"], "close_pattern": "(?=)"
    },
    "citations": {"open_pattern": "<co>|</co: [^<>]*>", "content_args": {"inline": true}},
    "content": {"repeats": true, "join": "", "content_args": {"strip": "trailing"}}
  }
}"##;

/// MiniCPM5's calls: `<function name="NAME"><param name="KEY">VALUE</param></function>`, each
/// read whole when it closes by the `minicpm5` reader (as XML where it is well-formed, else by
/// patterns, checked against the request's tools); a call that is not one, or that the output
/// cuts, is text. Reasoning between `<think>` and `</think>`, for a reasoning parser named
/// beside it (vLLM has no MiniCPM5 reasoning parser). Text as written.
pub(super) const MINICPM5: &str = r##"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "reasoning_content": {"open": "<think>", "close": "</think>", "content_args": {"strip": false}},
    "tool_calls": {
      "open": "<function", "close": "</function>", "repeats": true,
      "content": "reader", "content_args": {"reader": "minicpm5"}
    },
    "content": {"repeats": true, "content_args": {"strip": false}}
  }
}"##;

/// K2 Horizon: reasoning between `<ifm|think>` and `</ifm|think>` (the high effort's markers;
/// the parser swaps in `<ifm|think_fast>` or `<ifm|think_faster>` by the request's effort), and
/// one call block, `<ifm|tool_calls>` … `</ifm|tool_calls>`, read whole when it closes by the
/// `k2_horizon` reader: all of its calls, or its text as content; later blocks are text. The
/// prompt is read from the start of its last ids, so an earlier turn's close counts.
pub(super) const K2_HORIZON: &str = r##"{
  "start_anchor_pattern": "\\A",
  "fields": {
    "reasoning_content": {"open": "<ifm|think>", "close": "</ifm|think>"},
    "tool_calls": {
      "open": "<ifm|tool_calls>", "close": "</ifm|tool_calls>",
      "content": "reader", "content_args": {"reader": "k2_horizon", "once": true}
    },
    "content": {}
  }
}"##;

/// MiniCPM-V (`minicpmv`, reasoning): Qwen3's `<think>` reasoning, which a `<tool_call>` also
/// ends (the call is content where no tool parser reads it), the vocabulary's other special
/// tokens and reserved markers dropped wherever they are, and escaped newlines (`\n` written as
/// a backslash and `n`) read back outside code and math in reasoning and content, as vLLM's
/// `minicpmv` parser reads them.
pub(super) const MINICPMV: &str = r##"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "reasoning_content": {
      "open": "<think>", "close": "</think>", "content_args": {"stop_pattern": "<tool_call>"}
    },
    "markers": {
      "open": [
        "<|im_end|>", "<|endoftext|>", "<|im_start|>", "<|object_ref_start|>",
        "<|object_ref_end|>", "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>",
        "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>",
        "<reserved_12>", "<reserved_13>", "<reserved_14>", "<reserved_15>",
        "<|reserved_12|>", "<|reserved_13|>", "<|reserved_14|>", "<|reserved_15|>"
      ],
      "content_args": {"inline": true}
    },
    "content": {}
  }
}"##;
