//! A choice's `finish_reason`: the three the derender reads or writes, and whatever else an
//! engine reports, kept as it was given.

use std::borrow::Cow;

/// Why a choice finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason<'a> {
    /// `"stop"`: a stop token or string ended it (the only finish whose last id is checked as
    /// a stop token, and the one a stop string sets).
    Stop,
    /// `"length"`: the token budget ended it.
    Length,
    /// `"tool_calls"`: it stopped after calling tools ([`FinishReason::rewritten`]).
    ToolCalls,
    /// Any other reason the engine gave (`"abort"`, say), passed on as written.
    Other(Cow<'a, str>),
}

impl<'a> FinishReason<'a> {
    /// The reason an engine reported.
    pub fn of(reason: Cow<'a, str>) -> FinishReason<'a> {
        match reason.as_ref() {
            "stop" => FinishReason::Stop,
            "length" => FinishReason::Length,
            "tool_calls" => FinishReason::ToolCalls,
            _ => FinishReason::Other(reason),
        }
    }

    /// Its wire spelling.
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Other(reason) => reason,
        }
    }

    /// `"tool_calls"` for a choice that called tools and that the engine stopped, unless the
    /// request named the function (then the call was asked for, not chosen).
    pub fn rewritten(self, tools: bool, named: bool) -> FinishReason<'a> {
        match self {
            FinishReason::Stop if tools && !named => FinishReason::ToolCalls,
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reason_reads_back_as_written() {
        for s in ["stop", "length", "tool_calls", "abort", ""] {
            assert_eq!(FinishReason::of(Cow::Borrowed(s)).as_str(), s);
        }
        assert_eq!(
            FinishReason::Stop.rewritten(true, false),
            FinishReason::ToolCalls
        );
        assert_eq!(FinishReason::Stop.rewritten(true, true), FinishReason::Stop);
        assert_eq!(
            FinishReason::Length.rewritten(true, false),
            FinishReason::Length
        );
    }
}
