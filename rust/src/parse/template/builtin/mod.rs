//! Built-in response templates, written for this project, for the families whose checkpoints
//! do not carry one yet. Each is a template in the same JSON a checkpoint would carry (so
//! transformers' `parse_response` reads them too), run by the same executor.
//!
//! End-of-turn markers the engine stops on (`<|im_end|>`, `<|eot_id|>`) are not in the text a
//! derender parses, so no template relies on them.

use super::spec::Template;
use super::typed::Typing;

mod framed;
mod json;
mod tags;

/// The built-in templates: each name (also a parser name of both kinds) with its JSON.
const BUILTIN: [(&str, &str); 55] = [
    ("qwen3_template", json::QWEN3),
    ("qwen3_coder", tags::QWEN3_CODER),
    ("deepseek_r1_template", json::DEEPSEEK_R1),
    ("deepseek_v3", json::DEEPSEEK_V3),
    ("deepseek_v31", json::DEEPSEEK_V31),
    ("llama3_json", json::LLAMA3_JSON),
    ("mistral", json::MISTRAL),
    ("mistral_v11", json::MISTRAL_V11),
    ("glm45", tags::GLM45),
    ("kimi_k2", json::KIMI_K2),
    ("gpt_oss", json::GPT_OSS),
    ("ernie45", json::ERNIE45),
    ("hunyuan_a13b", json::HUNYUAN_A13B),
    ("granite", json::GRANITE),
    ("granite4", json::GRANITE4),
    ("granite-20b-fc", json::GRANITE_20B_FC),
    ("jamba", json::JAMBA),
    ("phi4_mini_json", json::PHI4_MINI_JSON),
    ("internlm", json::INTERNLM),
    ("longcat", json::LONGCAT),
    ("ling3", tags::LING3),
    ("gigachat3", json::GIGACHAT3),
    ("step3", tags::STEP3),
    ("xlam", json::XLAM),
    ("dots", tags::DOTS),
    ("apertus", json::APERTUS),
    ("gemma4", json::GEMMA4),
    ("functiongemma", tags::FUNCTIONGEMMA),
    ("pythonic", tags::PYTHONIC),
    ("llama4_pythonic", tags::LLAMA4_PYTHONIC),
    ("olmo3", tags::OLMO3),
    ("lfm2", tags::LFM2),
    ("nemotron_v3", json::NEMOTRON_V3),
    ("granite_thinking_parser", json::NEMOTRON_V3),
    ("step3p5", json::STEP3P5),
    ("minimax_m2", tags::MINIMAX_M2),
    ("seed_oss", tags::SEED_OSS),
    ("mimo", tags::MIMO),
    ("deepseek_v32", tags::DEEPSEEK_V32),
    ("deepseek_v4", tags::DEEPSEEK_V4),
    ("deepseek_v41", tags::DEEPSEEK_V41),
    ("kimi_k3", tags::KIMI_K3),
    ("hy_v3", tags::HY_V3),
    ("hy_v4", tags::HY_V4),
    ("plamo3", json::PLAMO3),
    ("poolside_v1", tags::POOLSIDE_V1),
    ("inkling", json::INKLING),
    ("minimax_m3", framed::MINIMAX_M3),
    ("muse", framed::MUSE),
    ("muse_glimmer", framed::MUSE_GLIMMER),
    ("cohere_command3", framed::COHERE_COMMAND3),
    ("cohere_command4", framed::COHERE_COMMAND4),
    ("minicpm5", framed::MINICPM5),
    ("k2_horizon", framed::K2_HORIZON),
    ("minicpmv", framed::MINICPMV),
];

/// The built-in templates' names, each also a parser name of both kinds.
pub const TEMPLATES: [&str; BUILTIN.len()] = names(&BUILTIN);

const fn names<const N: usize>(table: &[(&'static str, &'static str); N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = table[i].0;
        i += 1;
    }
    out
}
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
        "glm45"
        | "kimi_k2"
        | "mistral_v11"
        | "gemma4"
        | "nemotron_v3"
        | "granite_thinking_parser"
        | "step3p5"
        | "minimax_m2"
        | "deepseek_v32"
        | "deepseek_v4"
        | "deepseek_v41" => Some(true),
        "pythonic" | "llama4_pythonic" | "olmo3" | "seed_oss" | "mimo" | "kimi_k3" | "hy_v3"
        | "hy_v4" | "plamo3" | "poolside_v1" | "minimax_m3" | "muse" | "muse_glimmer"
        | "k2_horizon" | "minicpmv" => Some(false),
        "inkling" => Some(true),
        _ => None,
    }
}

/// Whose rules type a built-in template's tag-form arguments under the tool parser's name: vLLM's
/// schema rules, or (`functiongemma`) each value read as JSON, else as its text, as vLLM's
/// `functiongemma` parser reads it.
pub(crate) fn vllm_typing(name: &str) -> Typing {
    match name {
        "functiongemma" | "kimi_k3" | "muse_glimmer" => Typing::Loads,
        "muse" | "musespark1x" => Typing::Muse,
        "hy_v3" | "hy_v4" => Typing::HyV3,
        "poolside_v1" => Typing::Poolside,
        _ => Typing::Vllm,
    }
}

/// The text a call's open must begin with to end reasoning, under the tool parser's name,
/// where vLLM's parser ends reasoning only at the call block's marker (a bare call there is
/// reasoning text).
pub(crate) fn reasoning_call_lead(name: &str) -> Option<&'static str> {
    match name {
        "minimax_m2" => Some("<minimax:tool_call>"),
        "seed_oss" => Some("<seed:tool_call>"),
        // `<｜DSML｜tool_calls>` and its spellings `toolcalls` and `tool`.
        "deepseek_v4" => Some("<｜DSML｜tool"),
        "deepseek_v41" => Some("<｜DSML｜ calls>"),
        "plamo3" => Some("<|plamo:begin_tool_requests:plamo|>"),
        "k2_horizon" => Some("<ifm|tool_calls>"),
        _ => None,
    }
}

/// Whether, under the tool parser's name, a call block stays content where the request turns
/// calls off and the reasoning parser is named too (vLLM's `minimax_m3` drops it only on the
/// path of its tool parser alone).
pub(crate) fn block_stays_beside_reasoning(name: &str) -> bool {
    name == "minimax_m3"
}

/// Whether the tool parser of this name reports reasoning too, named alone (vLLM's Muse tool
/// parsers send the `to=self` messages' text as reasoning; its Cohere parser parses both parts
/// whatever is named).
pub(crate) fn tool_reports_reasoning(name: &str) -> bool {
    matches!(name, "muse" | "musespark1x" | "muse_glimmer") || cohere(name)
}

/// Cohere Command's names: vLLM parses both parts with the preset of the reasoning parser's name
/// where it is one of them, else of the tool parser's; and drops the call block wherever calls
/// are not parsed, a tool parser named or not.
pub(crate) fn cohere(name: &str) -> bool {
    matches!(name, "cohere_command3" | "cohere_command4")
}

/// A built-in template's JSON text.
pub fn json(name: &str) -> Option<&'static str> {
    BUILTIN
        .iter()
        .find(|&&(n, _)| n == name)
        .map(|&(_, json)| json)
}

/// The template of two built-in ones of one chat format (the same start anchor): the fields
/// of `reasoning`'s but its tool calls (and the text around them), and the tool calls of
/// `tools`'s.
pub(crate) fn paired(reasoning: &str, tools: &str) -> Option<String> {
    let read = |name: &str| serde_json::from_str::<serde_json::Value>(json(name)?).ok();
    let (mut r, t) = (read(reasoning)?, read(tools)?);
    if r.get("start_anchor")? != t.get("start_anchor")? {
        return None;
    }
    let from = t.get("fields")?;
    let fields = r.get_mut("fields")?.as_object_mut()?;
    for part in ["tool_calls", "tool_text"] {
        match from.get(part).cloned() {
            Some(v) => fields.insert(part.to_owned(), v),
            None => fields.remove(part),
        };
    }
    Some(r.to_string())
}

/// A built-in template, compiled, with its name.
pub(crate) fn get(name: &str) -> Option<(&'static str, Template)> {
    let &(name, json) = BUILTIN.iter().find(|&&(n, _)| n == name)?;
    Template::from_json(json).ok().map(|t| (name, t))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_template_compiles() {
        for (name, json) in BUILTIN {
            Template::from_json(json).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    /// Every tag-form call can send its tags as they come (its tag pattern cuts at its value),
    /// but those sent only once closed.
    #[test]
    fn every_builtin_tag_pattern_cuts_at_its_value() {
        use super::super::spec::{Calls, Role};
        let mut tags = 0;
        for (name, json) in BUILTIN {
            let t = Template::from_json(json).unwrap();
            for f in &t.fields {
                if let Role::Tools(Calls::Tags {
                    closed_only, parts, ..
                }) = &f.role
                {
                    tags += 1;
                    assert_eq!(parts.is_some(), !closed_only, "{name}");
                }
            }
        }
        assert!(tags >= 15, "{tags}");
    }
}
