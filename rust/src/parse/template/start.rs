//! Where a built-in template's reasoning starts, by the reasoning parser's name.

use crate::parse::ToolRules;

/// Where a built-in template's reasoning starts, as vLLM's reasoning parser of the name given
/// starts it. Where reasoning is on, the output starts in it (a first open delimiter is
/// dropped, also after a prompt that opened it) and the prompt's text after the start anchor
/// moves it on (a prompt that closed it starts the output in content); where it is off, the
/// reasoning delimiters are not watched (their text stays where it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Start {
    /// Where the template's open delimiter says (a template given as JSON, and names vLLM has
    /// no reasoning parser of).
    AsWritten,
    /// `qwen3` (and the Qwen3 templates, `minicpmv`): on unless `enable_thinking` is off
    /// ([`ToolRules::thinking`]); a call's open delimiter ends it.
    Qwen3,
    /// `deepseek_r1`, `ernie45`, `step3`: always on.
    DeepSeekR1,
    /// `olmo3`, `step3p5`, `minimax_m2`, `k2_horizon`: always on; a call's open delimiter ends
    /// it.
    UntilCall,
    /// `granite`, `hunyuan_a13b`: on, but the output starts in content: reasoning is where the
    /// output's open delimiter opens it, once.
    Marked,
    /// `glm45`, `kimi_k2`, `ling3`: on unless the request switches thinking off
    /// ([`ToolRules::thinking_unless_off`]); a call's open delimiter ends it.
    UnlessOff,
    /// `deepseek_v3`: on only where the request switches thinking on
    /// ([`ToolRules::thinking_asked`]).
    Asked,
    /// `holo2`: `deepseek_v3`'s reasoning, on unless the request switches thinking off
    /// ([`ToolRules::thinking_unless_off`]).
    AskedUnlessOff,
    /// `gemma4`, `inkling`: the output starts in content; reasoning is where the output's open
    /// delimiter opens it (each time), and a call's open delimiter ends it.
    Opened,
    /// `deepseek_v4`, `deepseek_v41`: the output starts in reasoning unless the request switches
    /// thinking off ([`ToolRules::thinking_unless_given_off`]); either way reasoning is
    /// also where the output's open delimiter opens it (each time), and a call block ends it.
    DeepSeekV4,
    /// `kimi_k3`: on unless the request switches thinking off
    /// ([`ToolRules::thinking_first`]).
    KimiK3,
    /// `hy_v3`: on where the request's reasoning effort is given and not `"no_think"`
    /// ([`ToolRules::effort_thinks`]).
    HyV3,
    /// `hy_v4`: on unless the request's reasoning effort is `"no_think"`
    /// ([`ToolRules::effort_thinks_by_default`]).
    HyV4,
    /// `plamo3`: on unless `enable_thinking` is off ([`ToolRules::thinking`]); reasoning
    /// is also where the output's open delimiter opens it, each time, and a call block ends it.
    Plamo3,
    /// `minimax_m3`: on; the output starts in it only where `chat_template_kwargs.thinking_mode`
    /// is `"enabled"` ([`ToolRules::thinking_mode_enabled`]), else reasoning is where the
    /// output's open delimiter opens it, once. A call does not end it.
    MiniMaxM3,
}

impl Start {
    /// The rule of the reasoning parser named `name`.
    pub(super) fn of(name: Option<&str>) -> Start {
        match name {
            Some(
                "qwen3"
                | "qwen3_template"
                | "qwen3_coder"
                | "nemotron_v3"
                | "granite_thinking_parser"
                | "seed_oss"
                | "mimo"
                | "minicpmv",
            ) => Start::Qwen3,
            Some("deepseek_r1" | "deepseek_r1_template" | "ernie45" | "step3") => Start::DeepSeekR1,
            Some("olmo3" | "step3p5" | "minimax_m2") => Start::UntilCall,
            Some("granite" | "hunyuan_a13b") => Start::Marked,
            Some("glm45" | "kimi_k2" | "ling3") => Start::UnlessOff,
            Some("deepseek_v3" | "poolside_v1") => Start::Asked,
            Some("holo2") => Start::AskedUnlessOff,
            Some("gemma4" | "inkling") => Start::Opened,
            Some("deepseek_v4" | "deepseek_v41") => Start::DeepSeekV4,
            Some("kimi_k3") => Start::KimiK3,
            Some("hy_v3") => Start::HyV3,
            Some("hy_v4") => Start::HyV4,
            Some("plamo3") => Start::Plamo3,
            Some("k2_horizon") => Start::UntilCall,
            Some("minimax_m3") => Start::MiniMaxM3,
            _ => Start::AsWritten,
        }
    }

    /// Whether the output starts in reasoning, where reasoning is on.
    pub(super) fn opens(self, rules: &ToolRules) -> bool {
        match self {
            Start::AsWritten | Start::Marked | Start::Opened => false,
            Start::DeepSeekV4 => rules.thinking_unless_given_off,
            Start::MiniMaxM3 => rules.thinking_mode_enabled,
            _ => true,
        }
    }

    /// Whether reasoning is on for a request with these rules.
    pub(super) fn on(self, rules: &ToolRules) -> bool {
        match self {
            Start::AsWritten
            | Start::DeepSeekR1
            | Start::UntilCall
            | Start::Marked
            | Start::Opened
            | Start::DeepSeekV4
            | Start::MiniMaxM3 => true,
            Start::Qwen3 => rules.thinking,
            Start::UnlessOff | Start::AskedUnlessOff => rules.thinking_unless_off,
            Start::Asked => rules.thinking_asked,
            Start::KimiK3 => rules.thinking_first,
            Start::HyV3 => rules.effort_thinks,
            Start::HyV4 => rules.effort_thinks_by_default,
            Start::Plamo3 => rules.thinking,
        }
    }
}
