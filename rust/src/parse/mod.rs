//! Reasoning and tool-call parsing of chat output (REFERENCE section 6), resumable.
//!
//! The parsers run over the output one token at a time: each token's text (as the stream emits
//! it) and, for the markers that are a single token in the vocabulary, the marker it is. Their
//! whole state is a small serializable value, so a stateless stream carries it from chunk to
//! chunk and no chunk needs the history; replaying the history from a fresh state gives the same
//! state, which is how a replay-buffer state (vLLM's) is continued.
//!
//! - `think` reasoning (`deepseek_r1`, `qwen3`), as vLLM's parsers: output is reasoning until
//!   `</think>` ends it (a `<think>` inside it is dropped); reasoning ends once, and think
//!   markers after it are content text. DeepSeek-R1 starts in reasoning unless the prompt's last
//!   think marker is `</think>`. Qwen3 starts in reasoning unless the request turns thinking off
//!   (`chat_template_kwargs.enable_thinking`) or the prompt closed it in the current turn, and a
//!   `<tool_call>` ends its reasoning too (the call is then parsed).
//! - `hermes` tool calls: `<tool_call>{"name": ..., "arguments": ...}</tool_call>`. Content is
//!   the text before the first call. In a call a JSON scanner finds the name (sent once known)
//!   and the raw text of the arguments value (sent as it grows; `{}` when the call ends without
//!   one); `</tool_call>` inside a JSON string does not end the call.
//!
//! The wire layer drives any parser through [`ChatParser`] and [`Session`]: the built-in ones
//! ([`Parsers`]) and a user's (a Python object, in the binding) take the same path, so ids,
//! the finish rewrite, statuses and errors are the wire's, whichever parser runs.

mod carry;
mod delta;
mod hermes;
mod json;
mod markers;
mod template;
mod think;

pub use delta::{CallDelta, Delta, ToolRules};
pub use markers::{Parsers, REASONING_PARSERS, Reasoning, TOOL_PARSERS};
pub use template::{
    ALIASES, AUTO, Kind, REFUSED, TEMPLATE_NAME, TEMPLATES, Template, TemplateParser,
    TemplateState, accepted_names, auto_names, builtin_json, refusal as parser_refusal,
    select as select_parser,
};
pub use think::ParseState;

/// What a parser is started with, for one choice's output.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The whole prompt's ids.
    pub prompt: &'a [u32],
    /// The original chat request's JSON text, for parsers that ask for it
    /// ([`ChatParser::needs_request`]).
    pub request: Option<&'a str>,
    /// What the request allows the tool parser.
    pub rules: ToolRules,
    /// The whole output comes at once (a whole response), not chunk by chunk.
    pub whole: bool,
}

/// Why a parser could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The request is wrong for this parser (a 400 on the wire).
    Request {
        /// What is wrong, for the error object's `message`.
        message: String,
        /// The request field at fault, for the error object's `param`.
        param: Option<String>,
    },
    /// The parser itself failed (a 500 on the wire).
    Parser {
        /// What failed.
        message: String,
    },
}

/// A reasoning and tool-call parser for chat output: the built-in [`Parsers`], or a user's.
pub trait ChatParser: Send + Sync + std::fmt::Debug {
    /// A parser for one choice's output, from its beginning (it may borrow the request).
    fn start<'s>(&'s self, cx: &Context<'s>) -> Result<Box<dyn Session + 's>, ParseError>;

    /// A parser continued from the state an earlier chunk carried, when its state can travel
    /// (`None`: streams replay their history instead).
    fn resume<'s>(
        &'s self,
        _state: ParseState,
        _cx: &Context<'s>,
    ) -> Option<Box<dyn Session + 's>> {
        None
    }

    /// Whether [`Context::request`] must carry the request's text (reading it costs a second
    /// pass over the body).
    fn needs_request(&self) -> bool {
        false
    }

    /// Whether [`ChatParser::resume`] continues a state.
    fn resumable(&self) -> bool {
        false
    }

    /// The built-in reasoning parser's name, if this is one.
    fn reasoning_name(&self) -> Option<&'static str> {
        None
    }

    /// The built-in tool parser's name, if this is one.
    fn tool_name(&self) -> Option<&'static str> {
        None
    }
}

/// One choice's parser: fed the output's text token by token, told where chunks end.
pub trait Session {
    /// The text the stream emitted for `id`, or (`None`) its flush at the end of the output.
    fn feed(&mut self, text: &str, id: Option<u32>, out: &mut Delta);

    /// A chunk ended; `ids` are its ids as the engine sent them, `last` says the output ended
    /// with it (a whole response is one last chunk).
    fn end_chunk(&mut self, ids: &[u32], last: bool, out: &mut Delta) -> Result<(), ParseError>;

    /// The state a stream carries to the next chunk, when it can travel.
    fn into_state(self: Box<Self>) -> Option<ParseState>;
}

/// A built-in parser session: [`ParseState`] over [`Parsers`].
struct Builtin<'p> {
    parsers: &'p Parsers,
    rules: ToolRules,
    state: ParseState,
}

impl Session for Builtin<'_> {
    #[inline]
    fn feed(&mut self, text: &str, id: Option<u32>, out: &mut Delta) {
        let tag = id.and_then(|id| self.parsers.tag(id));
        self.state.feed(text, tag, self.parsers, self.rules, out);
    }

    fn end_chunk(&mut self, _ids: &[u32], last: bool, out: &mut Delta) -> Result<(), ParseError> {
        if last {
            self.state.finish(self.parsers, self.rules, out);
        }
        Ok(())
    }

    fn into_state(self: Box<Self>) -> Option<ParseState> {
        Some(self.state)
    }
}

impl ChatParser for Parsers {
    fn start<'s>(&'s self, cx: &Context<'_>) -> Result<Box<dyn Session + 's>, ParseError> {
        Ok(Box::new(Builtin {
            parsers: self,
            rules: cx.rules,
            state: ParseState::initial(self, cx.prompt, cx.rules),
        }))
    }

    fn resume<'s>(&'s self, state: ParseState, cx: &Context<'_>) -> Option<Box<dyn Session + 's>> {
        Some(Box::new(Builtin {
            parsers: self,
            rules: cx.rules,
            state,
        }))
    }

    fn resumable(&self) -> bool {
        true
    }

    fn reasoning_name(&self) -> Option<&'static str> {
        self.reasoning.map(Reasoning::name)
    }

    fn tool_name(&self) -> Option<&'static str> {
        self.tools.then_some(TOOL_PARSERS[0])
    }
}

/// A tool call id that a replayed or retried chunk derives again: from the request id, the
/// choice index and the tool index (two FNV-1a hashes, 32 hex digits).
pub(crate) fn tool_call_id(request_id: &str, choice: u32, tool: u32) -> String {
    let hash = |seed: u64| {
        let mut h = seed;
        let mut eat = |bytes: &[u8]| {
            for &b in bytes {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        eat(request_id.as_bytes());
        eat(&[0]);
        eat(&choice.to_le_bytes());
        eat(&tool.to_le_bytes());
        h
    };
    format!(
        "chatcmpl-tool-{:016x}{:016x}",
        hash(0xcbf2_9ce4_8422_2325),
        hash(0x6c62_272e_07bb_0142)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_distinct() {
        assert_eq!(tool_call_id("r", 0, 1), tool_call_id("r", 0, 1));
        assert_ne!(tool_call_id("r", 0, 1), tool_call_id("r", 0, 2));
        assert_ne!(tool_call_id("r", 0, 1), tool_call_id("r", 1, 1));
        assert_eq!(tool_call_id("r", 0, 0).len(), "chatcmpl-tool-".len() + 32);
    }
}
