//! What the original request asks of derender: the sampling parameters it reads
//! ([`Params`]) and, with a parser, what the parsers may do ([`Ask`]).

use std::borrow::Cow;

use super::error::{Res, WireError};
use super::input::{BoolOrCount, Request};
use crate::parse::ToolRules;
use crate::stop::{MAX_STOP_BYTES, StopStrings};

/// What the original request asks of derender.
pub(crate) struct Params<'r> {
    pub(crate) skip_special: bool,
    pub(crate) stops: StopStrings<'r, Cow<'r, str>>,
    pub(crate) min_tokens: u64,
    pub(crate) include_stop: bool,
    pub(crate) stop_token_ids: &'r [u32],
    pub(crate) ignore_eos: bool,
    pub(crate) return_token_ids: bool,
    /// How many alternatives to keep per logprob position (`None`: all).
    pub(crate) top: Option<usize>,
}

impl<'r> Params<'r> {
    pub(crate) fn new(req: Option<&'r Request<'_>>, chat: bool) -> Res<Params<'r>> {
        let Some(req) = req else {
            return Ok(Params {
                skip_special: true,
                stops: StopStrings::default(),
                min_tokens: 0,
                include_stop: false,
                stop_token_ids: &[],
                ignore_eos: false,
                return_token_ids: false,
                top: None,
            });
        };
        let include_stop = req.include_stop_str_in_output.unwrap_or(false);
        let stops = match &req.stop {
            Some(s) => StopStrings::new(&s.0, include_stop).map_err(|e| {
                WireError::bad_param(
                    format!(
                        "stop strings have {} bytes in all; at most {MAX_STOP_BYTES} are accepted",
                        e.bytes
                    ),
                    "stop",
                )
            })?,
            None => StopStrings::default(),
        };
        // -1 asks for every alternative (None), as in vLLM; below that is no count at all.
        let count = |n: i64, name: &str| match n {
            -1 => Ok(None),
            n if n < -1 => Err(WireError::bad_param(
                format!("{name} must be -1 (every alternative) or a count from 0, got {n}"),
                name,
            )),
            n => Ok(usize::try_from(n).ok()),
        };
        // vLLM's cuts (`chat_top_logprobs_limit`, `completion_top_logprobs_limit`): chat keeps
        // `top_logprobs` candidates, and every one when it does not ask for logprobs; a
        // completion keeps `logprobs + 1` (the sampled token, then the top k), every one when
        // `logprobs` is unset. `logprob_token_ids` keeps every candidate on both.
        let every = req
            .logprob_token_ids
            .as_ref()
            .is_some_and(|ids| !ids.is_empty());
        let top = if chat {
            let asked = match req.logprobs {
                Some(BoolOrCount::Flag(b)) => b,
                Some(BoolOrCount::Count(n)) => n != 0,
                None => false,
            };
            let n = count(req.top_logprobs.unwrap_or(0), "top_logprobs")?;
            if asked && !every { n } else { None }
        } else {
            match req.logprobs {
                Some(BoolOrCount::Count(n)) => count(n, "logprobs")?.map(|n| n.saturating_add(1)),
                _ => None,
            }
            .filter(|_| !every)
        };
        Ok(Params {
            skip_special: req.skip_special_tokens.unwrap_or(true),
            stops,
            min_tokens: req.min_tokens.unwrap_or(0),
            include_stop,
            stop_token_ids: req.stop_token_ids.as_deref().unwrap_or_default(),
            ignore_eos: req.ignore_eos.unwrap_or(false),
            return_token_ids: req.return_token_ids.unwrap_or(false),
            top,
        })
    }
}

/// What the request asks of the parsers.
pub(crate) struct Ask {
    pub(crate) rules: ToolRules,
    pub(crate) include_reasoning: bool,
    /// `tool_choice` names a function: `finish_reason` is never rewritten.
    pub(crate) named: bool,
}

impl Ask {
    pub(crate) fn new(req: &Request<'_>) -> Ask {
        let choice = req.tool_choice.map(|r| r.get().trim_start());
        let named = choice.is_some_and(|c| c.starts_with('{'));
        let none = choice == Some("\"none\"");
        let has_tools = req.tools.as_ref().is_some_and(|t| !t.is_empty());
        // `chat_template_kwargs` is read once; each parser's rule reads its switches.
        let s = switches(req);
        let effort = effort(req, &s);
        Ask {
            rules: ToolRules {
                enabled: has_tools && !none,
                parallel: req.parallel_tool_calls.unwrap_or(true),
                thinking: thinking(req, &s),
                thinking_asked: thinking_asked(req, &s),
                thinking_unless_off: thinking_unless_off(req, &s),
                thinking_unless_given_off: thinking_unless_given_off(req, &s),
                thinking_first: thinking_first(req, &s),
                effort_thinks: effort.as_deref().is_some_and(|e| e != "no_think"),
                effort_thinks_by_default: effort.as_deref().is_none_or(|e| e != "no_think"),
                thinking_mode_enabled: s.thinking_mode.as_ref().and_then(|v| v.as_str())
                    == Some("enabled"),
            },
            include_reasoning: req.include_reasoning.unwrap_or(true),
            named,
        }
    }
}

/// Whether a parser runs with its reasoning hidden (`include_reasoning: false`): logprobs and
/// token ids would show the reasoning, so they are left out too, as vLLM leaves them out.
pub(crate) fn hides_reasoning(ask: Option<&Ask>) -> bool {
    ask.is_some_and(|a| !a.include_reasoning)
}

/// The thinking switches of `chat_template_kwargs`, each as given (`None`: absent).
#[derive(Default)]
struct Switches {
    enable_thinking: Option<serde_json::Value>,
    thinking: Option<serde_json::Value>,
    reasoning_effort: Option<serde_json::Value>,
    thinking_mode: Option<serde_json::Value>,
}

fn switches(req: &Request<'_>) -> Switches {
    #[derive(serde::Deserialize)]
    struct Kwargs {
        #[serde(default, deserialize_with = "present")]
        enable_thinking: Option<serde_json::Value>,
        #[serde(default, deserialize_with = "present")]
        thinking: Option<serde_json::Value>,
        #[serde(default, deserialize_with = "present")]
        reasoning_effort: Option<serde_json::Value>,
        #[serde(default)]
        thinking_mode: Option<serde_json::Value>,
    }
    fn present<'de, D: serde::Deserializer<'de>>(
        d: D,
    ) -> Result<Option<serde_json::Value>, D::Error> {
        serde::Deserialize::deserialize(d).map(Some)
    }
    req.chat_template_kwargs
        .and_then(|raw| serde_json::from_str::<Kwargs>(raw.get()).ok())
        .map(|k| Switches {
            enable_thinking: k.enable_thinking,
            thinking: k.thinking,
            reasoning_effort: k.reasoning_effort,
            thinking_mode: k.thinking_mode,
        })
        .unwrap_or_default()
}

/// A JSON value's Python truth.
fn truthy(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Null => false,
        serde_json::Value::Bool(b) => *b,
        serde_json::Value::Number(n) => n.as_f64() != Some(0.0),
        serde_json::Value::String(s) => !s.is_empty(),
        serde_json::Value::Array(a) => !a.is_empty(),
        serde_json::Value::Object(o) => !o.is_empty(),
    }
}

/// `reasoning_effort`, when given and not null, is other than `"none"`.
fn effort_on(req: &Request<'_>) -> Option<bool> {
    req.reasoning_effort
        .map(|e| e.get().trim())
        .filter(|&e| e != "null")
        .map(|e| e != "\"none\"")
}

/// Whether thinking is on, as vLLM's `qwen3` parser reads it: `chat_template_kwargs`'
/// `enable_thinking` by Python truth (absent: true), else `reasoning_effort` not `"none"`.
fn thinking(req: &Request<'_>, s: &Switches) -> bool {
    match &s.enable_thinking {
        Some(v) => truthy(v),
        None => effort_on(req).unwrap_or(true),
    }
}

/// Whether thinking is on, as vLLM's `kimi_k3` parser reads it: `chat_template_kwargs`'
/// `thinking` by Python truth where it is given and not null, else as [`thinking`] reads it.
fn thinking_first(req: &Request<'_>, s: &Switches) -> bool {
    match s.thinking.as_ref().filter(|v| !v.is_null()) {
        Some(v) => truthy(v),
        None => thinking(req, s),
    }
}

/// The reasoning effort vLLM's `hy_v3` and `hy_v4` parsers read: the first of the request's
/// `reasoning_effort` (vLLM's chat parameters put it in the kwargs the parser gets) and
/// `chat_template_kwargs.reasoning_effort` that is true by Python truth, as its JSON text (a
/// string unquoted).
fn effort(req: &Request<'_>, s: &Switches) -> Option<String> {
    let given = req
        .reasoning_effort
        .and_then(|raw| serde_json::from_str::<serde_json::Value>(raw.get()).ok())
        .filter(truthy)
        .or_else(|| s.reasoning_effort.clone().filter(truthy))?;
    Some(match given {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    })
}

/// Whether the request switches thinking on, as vLLM's `deepseek_v3` parser reads it:
/// `chat_template_kwargs`' `thinking` or `enable_thinking` by Python truth (absent: false);
/// without `enable_thinking`, a `reasoning_effort` other than `"none"` sets it (vLLM's chat
/// parameters add it to the kwargs the parser gets).
fn thinking_asked(req: &Request<'_>, s: &Switches) -> bool {
    let enable = match &s.enable_thinking {
        Some(v) => truthy(v),
        None => effort_on(req).unwrap_or(false),
    };
    enable || s.thinking.as_ref().is_some_and(truthy)
}

/// Whether thinking is on, as vLLM's `deepseek_v4` and `deepseek_v41` parsers read it: on when
/// `chat_template_kwargs` has neither `thinking` nor `enable_thinking` (a null is given;
/// `reasoning_effort` stands for `enable_thinking`, true unless `"none"`), else when either is
/// true by Python truth; and off where `chat_template_kwargs.reasoning_effort` is `"none"`.
fn thinking_unless_given_off(req: &Request<'_>, s: &Switches) -> bool {
    let effort_none = s.reasoning_effort.as_ref().and_then(|e| e.as_str()) == Some("none");
    let thinking = s.thinking.as_ref().map(truthy);
    let enable = s
        .enable_thinking
        .as_ref()
        .map(truthy)
        .or_else(|| effort_on(req));
    let on = match (thinking, enable) {
        (None, None) => true,
        (t, e) => t.unwrap_or(false) || e.unwrap_or(false),
    };
    on && !effort_none
}

/// Whether thinking is on, as vLLM's `glm45` and `kimi_k2` parsers read it: on when
/// `chat_template_kwargs` has neither `thinking` nor `enable_thinking` (a null is none;
/// `reasoning_effort` stands for `enable_thinking`, true unless `"none"`), else when either is
/// true by Python truth.
fn thinking_unless_off(req: &Request<'_>, s: &Switches) -> bool {
    let given = |v: &Option<serde_json::Value>| v.as_ref().filter(|v| !v.is_null()).map(truthy);
    let thinking = given(&s.thinking);
    let enable = given(&s.enable_thinking).or_else(|| effort_on(req));
    match (thinking, enable) {
        (None, None) => true,
        (t, e) => t.unwrap_or(false) || e.unwrap_or(false),
    }
}
