//! Built-in response templates, written for this project, for the families whose checkpoints
//! do not carry one yet. Each is a template in the same JSON a checkpoint would carry (so
//! transformers' `parse_response` reads them too), run by the same executor.
//!
//! End-of-turn markers the engine stops on (`<|im_end|>`, `<|eot_id|>`) are not in the text a
//! derender parses, so no template relies on them.

use super::spec::Template;

/// Qwen3: `<think>` reasoning and `<tool_call>` JSON calls.
const QWEN3: &str = r##"{
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
const QWEN3_CODER: &str = r##"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
    "tool_calls": {
      "open_pattern": "<tool_call>\\s*<function=(?P<name>[^\\n>]+)>",
      "close_pattern": "</tool_call>\\s*", "repeats": true,
      "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<parameter=(?P<key>[^>\\n]+)>\\n?(?P<value>.*?)\\n?</parameter>",
        "value_parser": {"name": "json", "args": {"allow_non_json": true}}
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {"close_pattern": "<\\|im_end\\|>\\s*"}
  }
}"##;

/// DeepSeek-R1: reasoning until `</think>` (its prompt opens `<think>`).
const DEEPSEEK_R1: &str = r##"{
  "start_anchor": "<｜Assistant｜>",
  "fields": {
    "reasoning_content": {"open": "<think>", "close_pattern": "</think>"},
    "content": {"close_pattern": "<｜end▁of▁sentence｜>\\s*"}
  }
}"##;

/// DeepSeek-V3: `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME` and a fenced JSON block.
const DEEPSEEK_V3: &str = r##"{
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
const DEEPSEEK_V31: &str = r##"{
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
const LLAMA3_JSON: &str = r##"{
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
const MISTRAL: &str = r##"{
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
const MISTRAL_V11: &str = r##"{
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
const GLM45: &str = r##"{
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
const KIMI_K2: &str = r##"{
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
const GPT_OSS: &str = r##"{
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

/// The built-in templates' names, in the order they are listed.
pub const TEMPLATES: [&str; 11] = [
    "qwen3_template",
    "qwen3_coder",
    "deepseek_r1_template",
    "deepseek_v3",
    "deepseek_v31",
    "llama3_json",
    "mistral",
    "mistral_v11",
    "glm45",
    "kimi_k2",
    "gpt_oss",
];

const JSON: [&str; 11] = [
    QWEN3,
    QWEN3_CODER,
    DEEPSEEK_R1,
    DEEPSEEK_V3,
    DEEPSEEK_V31,
    LLAMA3_JSON,
    MISTRAL,
    MISTRAL_V11,
    GLM45,
    KIMI_K2,
    GPT_OSS,
];

/// How vLLM 0.33.0's parser of a built-in template's name keeps whitespace, where it is one of
/// its declarative engine parsers (`vllm/parser/engine/`): content as written (whitespace-only
/// content before a call dropped), reasoning as written or (`Some(true)`, the engine's
/// `strip_trailing_reasoning_whitespace`) without its trailing whitespace; and of the older
/// parsers that keep text as written. `None`: the template's own `strip` (transformers' rule).
/// Where vLLM's whole answer strips content that comes with calls, its stream cannot, and the
/// stream's answer is the one given.
pub(crate) fn vllm_space(name: &str) -> Option<bool> {
    match name {
        "qwen3_template" | "qwen3_coder" => Some(false),
        // Older parsers that keep the text as written too.
        "deepseek_r1_template" | "deepseek_v3" | "deepseek_v31" | "mistral" | "gpt_oss" => {
            Some(false)
        }
        "glm45" | "kimi_k2" | "mistral_v11" => Some(true),
        _ => None,
    }
}

/// A built-in template's JSON text.
pub fn json(name: &str) -> Option<&'static str> {
    let at = TEMPLATES.iter().position(|&n| n == name)?;
    JSON.get(at).copied()
}

/// The template of two built-in ones of one chat format (the same start anchor): the fields
/// of `reasoning`'s but its tool calls, and the tool calls of `tools`'s.
pub(crate) fn paired(reasoning: &str, tools: &str) -> Option<String> {
    let read = |name: &str| serde_json::from_str::<serde_json::Value>(json(name)?).ok();
    let (mut r, t) = (read(reasoning)?, read(tools)?);
    if r.get("start_anchor")? != t.get("start_anchor")? {
        return None;
    }
    let calls = t.get("fields")?.get("tool_calls").cloned();
    let fields = r.get_mut("fields")?.as_object_mut()?;
    match calls {
        Some(calls) => fields.insert("tool_calls".to_owned(), calls),
        None => fields.remove("tool_calls"),
    };
    Some(r.to_string())
}

/// A built-in template, compiled, with its name.
pub(crate) fn get(name: &str) -> Option<(&'static str, Template)> {
    let at = TEMPLATES.iter().position(|&n| n == name)?;
    let name = TEMPLATES.get(at)?;
    Template::from_json(JSON.get(at)?).ok().map(|t| (*name, t))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_template_compiles() {
        for (name, json) in TEMPLATES.iter().zip(JSON) {
            Template::from_json(json).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
}
