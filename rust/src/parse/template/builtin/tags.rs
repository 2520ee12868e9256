//! The built-in templates' JSON for formats whose calls are tags (`xml-inline`) or Python
//! calls (`pythonic`), one constant a family, as a checkpoint would carry it.

/// Qwen3-Coder: `<tool_call><function=NAME><parameter=KEY>VALUE</parameter>...`; a
/// `<function=NAME>` call without its `<tool_call>` is a call too, as vLLM reads it.
pub(super) const QWEN3_CODER: &str = r##"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
    "tool_calls": {
      "open_pattern": "(?:<tool_call>\\s*)?<function=(?P<name>[^\\n>]+)>",
      "close_pattern": "</function>\\s*(?:</tool_call>\\s*)?|</tool_call>\\s*", "repeats": true,
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

/// dots.llm1: `<dots_function_call>` blocks of `<invoke name="NAME">` calls with
/// `<parameter name="KEY">VALUE</parameter>` arguments, or of one JSON call
/// (`{"name": ..., "arguments": ...}`).
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
    "tool_calls.json": {
      "open_pattern": "<dots_function_call>\\s*(?=\\{)",
      "close_pattern": "\\s*</dots_function_call>\\s*", "repeats": true, "content": "json",
      "transform": {"type": "function", "function": "{content}"}
    },
    "content": {"close_pattern": "<\\|endofresponse\\|>\\s*"}
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
