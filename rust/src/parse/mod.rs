//! Reasoning and tool-call parsing of chat output (REFERENCE section 6), resumable.
//!
//! The parsers run over the output one token at a time: each token's text (as the stream emits
//! it) and, for the markers that are a single token in the vocabulary, the marker it is. Their
//! whole state is a small serializable value, so a stateless stream carries it from chunk to
//! chunk and no chunk needs the history; replaying the history from a fresh state gives the same
//! state, which is how a replay-buffer state (vLLM's) is continued.
//!
//! - `think` reasoning (`deepseek_r1`, `qwen3`): output between `<think>` and `</think>` is
//!   reasoning. The prompt decides where the output starts: inside reasoning when its last think
//!   marker opens one, in content when it closes one; with neither, DeepSeek-R1 starts in
//!   reasoning (its template opens `<think>` for the model) and Qwen3 in content.
//! - `hermes` tool calls: `<tool_call>{"name": ..., "arguments": ...}</tool_call>`. Content is
//!   the text before the first call. In a call a JSON scanner finds the name (sent once known)
//!   and the raw text of the arguments value (sent as it grows); `</tool_call>` inside a JSON
//!   string does not end the call.
//!
//! The wire layer drives any parser through [`ChatParser`] and [`Session`]: the built-in ones
//! ([`Parsers`]) and a user's (a Python object, in the binding) take the same path, so ids,
//! the finish rewrite, statuses and errors are the wire's, whichever parser runs.

mod hermes;

use serde::{Deserialize, Serialize};

use crate::detokenizer::Detokenizer;
pub(crate) use hermes::ToolState;

/// Which reasoning parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reasoning {
    /// DeepSeek-R1: output starts in reasoning unless the prompt closed `<think>`.
    DeepSeekR1,
    /// Qwen3: output starts in content unless the prompt opened `<think>`.
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
        } else if self.tools && is(&self.call_open) {
            Some(Tag::CallOpen)
        } else if self.tools && is(&self.call_close) {
            Some(Tag::CallClose)
        } else {
            None
        }
    }

    /// The state a choice's output starts in, from the prompt's ids.
    pub(crate) fn initial(&self, prompt: &[u32]) -> ParseState {
        let reasoning = match self.reasoning {
            None => false,
            Some(kind) => {
                let open = self.think_open.id;
                let close = self.think_close.id;
                let last = prompt
                    .iter()
                    .rev()
                    .find(|&&id| Some(id) == open || Some(id) == close);
                match last {
                    Some(&id) => Some(id) == open,
                    None => kind == Reasoning::DeepSeekR1,
                }
            }
        };
        ParseState {
            reasoning,
            held: String::new(),
            tool: ToolState::default(),
        }
    }
}

/// What the request asks of the tool parser.
#[derive(Debug, Clone, Copy)]
pub struct ToolRules {
    /// Tool calls are parsed at all (`tools` given, `tool_choice` not `"none"`).
    pub enabled: bool,
    /// More than one call may be sent.
    pub parallel: bool,
}

/// One choice's parser state, carried in `stream_state["parser"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParseState {
    /// Inside reasoning.
    #[serde(rename = "r", default)]
    pub(crate) reasoning: bool,
    /// Text held back because it may begin a think marker (text-matched markers only).
    #[serde(rename = "h", default, skip_serializing_if = "String::is_empty")]
    pub(crate) held: String,
    #[serde(rename = "t", default)]
    pub(crate) tool: ToolState,
}

/// A tool call's part of one delta.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallDelta {
    pub index: u32,
    /// The name, on the call's first delta only.
    pub name: Option<String>,
    pub arguments: String,
}

/// What parsing one step added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delta {
    pub content: String,
    pub reasoning: String,
    pub calls: Vec<CallDelta>,
}

impl Delta {
    /// Call `index` starts, with its name.
    pub fn start_call(&mut self, index: u32, name: String) {
        self.calls.push(CallDelta {
            index,
            name: Some(name),
            arguments: String::new(),
        });
    }

    /// More argument text of call `index`.
    pub fn push_arguments(&mut self, index: u32, text: &str) {
        match self.calls.last_mut() {
            Some(last) if last.index == index => last.arguments.push_str(text),
            _ => self.calls.push(CallDelta {
                index,
                name: None,
                arguments: text.to_owned(),
            }),
        }
    }
}

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
        message: String,
        param: Option<String>,
    },
    /// The parser itself failed (a 500 on the wire).
    Parser { message: String },
}

/// A reasoning and tool-call parser for chat output: the built-in [`Parsers`], or a user's.
pub trait ChatParser: Send + Sync + std::fmt::Debug {
    /// A parser for one choice's output, from its beginning.
    fn start<'s>(&'s self, cx: &Context<'_>) -> Result<Box<dyn Session + 's>, ParseError>;

    /// A parser continued from the state an earlier chunk carried, when its state can travel
    /// (`None`: streams replay their history instead).
    fn resume<'s>(
        &'s self,
        _state: ParseState,
        _cx: &Context<'_>,
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
            state: self.initial(cx.prompt),
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

/// `held` then `text`, copied only when something was held.
pub(crate) fn joined(mut held: String, text: &str) -> std::borrow::Cow<'_, str> {
    if held.is_empty() {
        std::borrow::Cow::Borrowed(text)
    } else {
        held.push_str(text);
        std::borrow::Cow::Owned(held)
    }
}

/// Longest suffix of `text` (on a char boundary) that is a proper prefix of `marker`.
pub(crate) fn open_suffix(text: &str, marker: &str) -> usize {
    let max = marker.len().saturating_sub(1).min(text.len());
    (1..=max)
        .rev()
        .find(|&n| {
            text.is_char_boundary(text.len() - n)
                && marker.starts_with(text.get(text.len() - n..).unwrap_or_default())
        })
        .unwrap_or(0)
}

impl ParseState {
    /// Feeds one token's text; `tag` is the marker the token is, if it counts by id.
    pub(crate) fn feed(
        &mut self,
        text: &str,
        tag: Option<Tag>,
        p: &Parsers,
        rules: ToolRules,
        out: &mut Delta,
    ) {
        if p.reasoning.is_none() {
            self.tool.feed(text, tag, p, rules, out);
            return;
        }
        match tag {
            Some(t @ (Tag::ThinkOpen | Tag::ThinkClose)) => {
                let marker = if t == Tag::ThinkOpen {
                    &p.think_open
                } else {
                    &p.think_close
                };
                let before = text.strip_suffix(marker.text).unwrap_or(text);
                self.route(before, None, p, rules, out);
                self.reasoning = t == Tag::ThinkOpen;
            }
            _ if p.think_open.id.is_some() && p.think_close.id.is_some() => {
                self.route(text, tag, p, rules, out);
            }
            _ => self.scan_think(text, tag, p, rules, out),
        }
    }

    /// Sends text to reasoning or, in content, on to the tool parser.
    fn route(
        &mut self,
        text: &str,
        tag: Option<Tag>,
        p: &Parsers,
        rules: ToolRules,
        out: &mut Delta,
    ) {
        if self.reasoning {
            out.reasoning.push_str(text);
        } else {
            self.tool.feed(text, tag, p, rules, out);
        }
    }

    /// Think markers matched by text: scan for the one that ends the current mode, holding back
    /// a suffix that may begin it.
    fn scan_think(
        &mut self,
        text: &str,
        tag: Option<Tag>,
        p: &Parsers,
        rules: ToolRules,
        out: &mut Delta,
    ) {
        let buf = joined(std::mem::take(&mut self.held), text);
        let mut rest: &str = &buf;
        loop {
            let marker = if self.reasoning {
                p.think_close.text
            } else {
                p.think_open.text
            };
            if let Some(at) = rest.find(marker) {
                self.route(rest.get(..at).unwrap_or_default(), None, p, rules, out);
                self.reasoning = !self.reasoning;
                rest = rest.get(at + marker.len()..).unwrap_or_default();
                continue;
            }
            let keep = open_suffix(rest, marker);
            let (send, hold) = rest.split_at(rest.len() - keep);
            self.route(send, tag, p, rules, out);
            self.held = hold.to_owned();
            break;
        }
    }

    /// Whether a carried state is one the parsers could have written: a hostile one (long held
    /// text, say) would cost every later token a scan of it.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.held.len() > hermes::MAX_HELD_BYTES {
            return Err(format!(
                "its held text is {} bytes, at most {} are carried",
                self.held.len(),
                hermes::MAX_HELD_BYTES
            ));
        }
        self.tool.check()
    }

    /// The output ended: what is held back is text after all, and a call still open is closed.
    pub(crate) fn finish(&mut self, p: &Parsers, rules: ToolRules, out: &mut Delta) {
        let held = std::mem::take(&mut self.held);
        self.route(&held, None, p, rules, out);
        self.tool.finish(rules, out);
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
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Parsers whose markers all count by text (as the hermes tags do on DeepSeek-R1).
    fn by_text(reasoning: Option<Reasoning>) -> Parsers {
        let m = |text| Marker { text, id: None };
        Parsers {
            reasoning,
            tools: true,
            think_open: m("<think>"),
            think_close: m("</think>"),
            call_open: m("<tool_call>"),
            call_close: m("</tool_call>"),
        }
    }

    const RULES: ToolRules = ToolRules {
        enabled: true,
        parallel: true,
    };

    /// Content, reasoning and `(name, arguments)` per call, from `pieces` fed in order.
    fn run(p: &Parsers, pieces: &[&str]) -> (String, String, Vec<(String, String)>) {
        let mut state = p.initial(&[]);
        let mut all = Delta::default();
        for piece in pieces {
            let mut d = Delta::default();
            state.feed(piece, None, p, RULES, &mut d);
            // The state travels as JSON between chunks.
            state = serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
            all.content.push_str(&d.content);
            all.reasoning.push_str(&d.reasoning);
            all.calls.extend(d.calls);
        }
        state.finish(p, RULES, &mut all);
        let mut calls: Vec<(String, String)> = Vec::new();
        for c in all.calls {
            match c.name {
                Some(name) => calls.push((name, c.arguments)),
                None => calls.last_mut().unwrap().1.push_str(&c.arguments),
            }
        }
        (all.content, all.reasoning, calls)
    }

    const OUTPUT: &str = "plan 中</think>\n\nHi 👋<tool_call>\n{\"arguments\": {\"q\": \"a}</tool_call>\\\"\", \
                          \"n\": [1, {\"x\": []}]}, \"name\": \"find\", \"arguments\": {\"z\": 1}}\n\
                          </tool_call>\n<tool_call>{\"name\": \"none\"}</tool_call>";

    #[test]
    fn one_piece_gives_content_reasoning_and_calls() {
        let (content, reasoning, calls) = run(&by_text(Some(Reasoning::DeepSeekR1)), &[OUTPUT]);
        assert_eq!(reasoning, "plan 中");
        assert_eq!(content, "\n\nHi 👋");
        let args = "{\"q\": \"a}</tool_call>\\\"\", \"n\": [1, {\"x\": []}]}";
        assert_eq!(
            calls,
            [("find".into(), args.into()), ("none".into(), String::new())]
        );
    }

    #[test]
    fn every_split_gives_the_same_result() {
        let p = by_text(Some(Reasoning::DeepSeekR1));
        let whole = run(&p, &[OUTPUT]);
        let cuts: Vec<usize> = OUTPUT.char_indices().map(|(i, _)| i).collect();
        for &a in &cuts {
            for &b in cuts.iter().filter(|&&b| b > a).step_by(7) {
                let pieces = [&OUTPUT[..a], &OUTPUT[a..b], &OUTPUT[b..]];
                assert_eq!(run(&p, &pieces), whole, "cut at {a} and {b}");
            }
        }
    }

    #[test]
    fn the_prompt_decides_where_the_output_starts() {
        let mut p = by_text(Some(Reasoning::Qwen3));
        p.think_open.id = Some(7);
        p.think_close.id = Some(8);
        assert!(p.initial(&[1, 7, 2]).reasoning);
        assert!(!p.initial(&[7, 8, 2]).reasoning);
        assert!(!p.initial(&[1, 2]).reasoning);
        p.reasoning = Some(Reasoning::DeepSeekR1);
        assert!(p.initial(&[1, 2]).reasoning);
        assert!(!p.initial(&[7, 8]).reasoning);
    }

    #[test]
    fn ids_are_stable_and_distinct() {
        assert_eq!(tool_call_id("r", 0, 1), tool_call_id("r", 0, 1));
        assert_ne!(tool_call_id("r", 0, 1), tool_call_id("r", 0, 2));
        assert_ne!(tool_call_id("r", 0, 1), tool_call_id("r", 1, 1));
        assert_eq!(tool_call_id("r", 0, 0).len(), "chatcmpl-tool-".len() + 32);
    }
}
