//! The parser names accepted, by kind: the hand-written parsers', the built-in templates', the
//! vLLM names another name's parser serves ([`ALIASES`]), and `"auto"`; and the vLLM names that
//! are refused with their reason ([`REFUSED`]).

use super::{AUTO, TEMPLATES};
use crate::detokenizer::Detokenizer;
use crate::parse::{REASONING_PARSERS, TOOL_PARSERS};

/// Which option a parser name is given to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `reasoning_parser`, `--reasoning-parser`.
    Reasoning,
    /// `tool_parser`, `--tool-call-parser`.
    Tool,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Reasoning => "reasoning",
            Kind::Tool => "tool",
        }
    }

    fn hand_written(self) -> &'static [&'static str] {
        match self {
            Kind::Reasoning => &REASONING_PARSERS,
            Kind::Tool => &TOOL_PARSERS,
        }
    }
}

/// vLLM 0.33.0's names that another name's parser serves here, as vLLM's registries map them
/// to one class (`glm47` and `glm45`, `qwen3_json` and `hermes`, ...): `(kind, vLLM's name,
/// the name that serves it)`; `None` for the kind means both. `mistral` is not here: which
/// template serves it depends on the vocabulary (see [`crate::select_parser`]).
pub const ALIASES: [(Option<Kind>, &str, &str); 13] = [
    (Some(Kind::Tool), "openai", "gpt_oss"),
    (Some(Kind::Reasoning), "openai_gptoss", "gpt_oss"),
    (None, "glm47", "glm45"),
    (Some(Kind::Tool), "llama4_json", "llama3_json"),
    (Some(Kind::Tool), "qwen3_json", "hermes"),
    (Some(Kind::Tool), "qwen3_xml", "qwen3_coder"),
    (None, "hf", AUTO),
    // Beam's parser is vLLM's `hf` parser over the checkpoint's response template; what it
    // adds is a grammar for the engine's sampling, which a derender does not run.
    (None, "beam", AUTO),
    // vLLM registers it as an alias of `muse`.
    (None, "musespark1x", "muse"),
    // DeepSeek-V3's reasoning with thinking on unless the request switches it off.
    (Some(Kind::Reasoning), "holo2", "deepseek_v3"),
    (Some(Kind::Reasoning), "step5", "deepseek_r1"),
    // Qwen3-Coder's calls, the content's whitespace as written.
    (Some(Kind::Tool), "step5", "qwen3_coder"),
    // MiniMax-M2's output, all of it content after the `<think>` the prompt opened.
    (
        Some(Kind::Reasoning),
        "minimax_m2_append_think",
        "minimax_m2",
    ),
];

/// vLLM's names that are not served, with the format that has no built-in template yet:
/// `(kind, name, format)`; `None` for the kind means both. Every name of vLLM 0.33.0 is
/// served: the list is where a later version's new names wait.
pub const REFUSED: [(Option<Kind>, &str, &str); 0] = [];

/// Why vLLM's parser name `name` of `kind` is refused here ([`REFUSED`]), or `None` for a name
/// that is not refused (served, or unknown).
pub fn refusal(kind: Kind, name: &str) -> Option<String> {
    let (_, _, format) = REFUSED
        .iter()
        .find(|(k, n, _)| *n == name && k.is_none_or(|k| k == kind))?;
    Some(format!(
        "the {} parser {name:?} (vLLM's) is not served yet: {format} format has no built-in \
         template; give the checkpoint's own response template (--response-template, or the \
         parser {AUTO:?})",
        kind.word()
    ))
}

/// The names that stand for the checkpoint's own response template: [`AUTO`] and vLLM's names
/// that [`ALIASES`] maps to it (`hf`, `beam`), of either kind.
pub fn auto_names() -> Vec<&'static str> {
    let mut out = vec![AUTO];
    out.extend(
        ALIASES
            .iter()
            .filter(|&&(_, _, target)| target == AUTO)
            .map(|&(_, name, _)| name),
    );
    out
}

/// Every name accepted for `kind`, in the order `serve --help` lists them.
pub fn accepted(kind: Kind) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = kind.hand_written().to_vec();
    out.extend(TEMPLATES);
    out.extend(
        ALIASES
            .iter()
            .filter(|(k, _, _)| k.is_none_or(|k| k == kind))
            .map(|&(_, name, _)| name),
    );
    out.push(AUTO);
    out
}

/// The name given, checked: the name whose parser serves it here, and (for an alias) vLLM's
/// name as a `'static` string to report. `mistral` is `mistral_v11` where the vocabulary has
/// its v11 marker (`[ARGS]` for tool calls, `[THINK]` for reasoning), as vLLM picks the format
/// from the tokenizer; a reasoning `mistral` on a vocabulary without `[THINK]` parses no
/// reasoning (`Ok(None)`).
pub fn resolve<'n>(
    det: &Detokenizer,
    kind: Kind,
    name: &'n str,
) -> Result<Option<(&'n str, Option<&'static str>)>, String> {
    if let Some(&(_, alias, target)) = ALIASES
        .iter()
        .find(|(k, n, _)| *n == name && k.is_none_or(|k| k == kind))
    {
        return Ok(Some((target, Some(alias))));
    }
    if name == "mistral" {
        let special = |marker: &str| {
            det.token_to_id(marker)
                .is_some_and(|id| det.decode(&[id], false).is_ok_and(|t| t == marker))
        };
        return Ok(match kind {
            Kind::Tool if special("[ARGS]") => Some(("mistral_v11", Some("mistral"))),
            Kind::Tool => Some(("mistral", None)),
            Kind::Reasoning if special("[THINK]") => Some(("mistral_v11", Some("mistral"))),
            Kind::Reasoning => None,
        });
    }
    if kind.hand_written().contains(&name) || TEMPLATES.contains(&name) || name == AUTO {
        return Ok(Some((name, None)));
    }
    if let Some(why) = refusal(kind, name) {
        return Err(why);
    }
    let quoted: Vec<String> = accepted(kind).iter().map(|n| format!("{n:?}")).collect();
    Err(format!(
        "unknown {} parser {name:?}; known: {}",
        kind.word(),
        quoted.join(", ")
    ))
}
