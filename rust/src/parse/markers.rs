//! The built-in parsers, by name, and their markers in a vocabulary: which token (if one) each
//! marker is, so a marker that is one token counts by id only.

use crate::detokenizer::Detokenizer;

/// Which reasoning parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reasoning {
    /// DeepSeek-R1: output starts in reasoning unless the prompt closed `<think>`.
    DeepSeekR1,
    /// Qwen3: output starts in reasoning (unless the request turns thinking off or the prompt
    /// closed `<think>` in the current turn), and `<tool_call>` ends reasoning too.
    Qwen3,
}

/// The built-in reasoning parsers' names, in [`Reasoning`] order.
pub const REASONING_PARSERS: [&str; 2] = ["deepseek_r1", "qwen3"];
/// The built-in tool parsers' names.
pub const TOOL_PARSERS: [&str; 1] = ["hermes"];

impl Reasoning {
    const ALL: [Reasoning; 2] = [Reasoning::DeepSeekR1, Reasoning::Qwen3];

    /// The parser of a name (one of [`REASONING_PARSERS`]).
    pub fn from_name(name: &str) -> Option<Reasoning> {
        let at = REASONING_PARSERS.iter().position(|&n| n == name)?;
        Reasoning::ALL.get(at).copied()
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Reasoning::DeepSeekR1 => REASONING_PARSERS[0],
            Reasoning::Qwen3 => REASONING_PARSERS[1],
        }
    }
}

/// The turn markers of ChatML, which Qwen3's template writes around every message.
const TURN_MARKERS: [&str; 2] = ["<|im_start|>", "<|im_end|>"];

/// A marker's text, and its id when it is one token of the vocabulary (then only that token
/// counts as the marker; otherwise its text does, wherever it appears).
#[derive(Debug, Clone)]
pub(crate) struct Marker {
    pub text: &'static str,
    pub id: Option<u32>,
}

impl Marker {
    fn new(det: &Detokenizer, text: &'static str) -> Marker {
        let id = det
            .token_to_id(text)
            .filter(|&id| det.decode(&[id], false).is_ok_and(|t| t == text));
        Marker { text, id }
    }
}

/// What a token is, to the parsers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tag {
    ThinkOpen,
    ThinkClose,
    CallOpen,
    CallClose,
}

/// The configured parsers and their markers in this vocabulary.
#[derive(Debug, Clone)]
pub struct Parsers {
    pub(crate) reasoning: Option<Reasoning>,
    pub(crate) tools: bool,
    pub(crate) think_open: Marker,
    pub(crate) think_close: Marker,
    pub(crate) call_open: Marker,
    pub(crate) call_close: Marker,
    /// The ChatML turn markers (`<|im_start|>`, `<|im_end|>`) when they are tokens: a Qwen3
    /// prompt's think markers count only after the last of them.
    pub(crate) turns: [Option<u32>; 2],
}

impl Parsers {
    /// Parsers for `det`'s vocabulary; `None` when neither is asked for.
    pub fn new(det: &Detokenizer, reasoning: Option<Reasoning>, tools: bool) -> Option<Parsers> {
        if reasoning.is_none() && !tools {
            return None;
        }
        Some(Parsers {
            reasoning,
            tools,
            think_open: Marker::new(det, "<think>"),
            think_close: Marker::new(det, "</think>"),
            call_open: Marker::new(det, "<tool_call>"),
            call_close: Marker::new(det, "</tool_call>"),
            turns: TURN_MARKERS.map(|text| Marker::new(det, text).id),
        })
    }

    /// The built-in parsers of the names given (`Ok(None)` when neither is); a name that is not
    /// built in is an error that lists the ones that are.
    pub fn from_names(
        det: &Detokenizer,
        reasoning: Option<&str>,
        tool: Option<&str>,
    ) -> Result<Option<Parsers>, String> {
        let known = |names: &[&str]| {
            let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
            quoted.join(", ")
        };
        let reasoning = match reasoning {
            None => None,
            Some(name) => Some(Reasoning::from_name(name).ok_or_else(|| {
                format!(
                    "unknown reasoning parser {name:?}; built in: {}",
                    known(&REASONING_PARSERS)
                )
            })?),
        };
        let tools = match tool {
            None => false,
            Some(name) if TOOL_PARSERS.contains(&name) => true,
            Some(name) => {
                return Err(format!(
                    "unknown tool parser {name:?}; built in: {}",
                    known(&TOOL_PARSERS)
                ));
            }
        };
        Ok(Parsers::new(det, reasoning, tools))
    }

    /// The reasoning parser, if any.
    pub fn reasoning(&self) -> Option<Reasoning> {
        self.reasoning
    }

    /// Whether the hermes tool parser is on.
    pub fn tools(&self) -> bool {
        self.tools
    }

    /// The marker `id` is, if it is one that counts by id.
    #[inline]
    pub(crate) fn tag(&self, id: u32) -> Option<Tag> {
        let is = |m: &Marker| m.id == Some(id);
        if self.reasoning.is_some() && is(&self.think_open) {
            Some(Tag::ThinkOpen)
        } else if self.reasoning.is_some() && is(&self.think_close) {
            Some(Tag::ThinkClose)
        } else if (self.tools || self.reasoning == Some(Reasoning::Qwen3)) && is(&self.call_open) {
            Some(Tag::CallOpen)
        } else if self.tools && is(&self.call_close) {
            Some(Tag::CallClose)
        } else {
            None
        }
    }
}
