//! The executor: one choice's position in a template (which region is open, what is held back,
//! the open call) and how text moves it on. The whole state is [`TemplateState`], carried in
//! `stream_state["parser"]["x"]`.
//!
//! Performance notes (qwen3, one id a chunk in a call's arguments, whole `handle_json` call):
//! 4.8 µs a chunk at 64 and at 4,096 output ids, against 4.3 µs for the hand-written
//! `qwen3` + `hermes` parsers. A token's text is joined to the held text (no copy when nothing
//! is held) and each watched delimiter runs its DFA only from bytes its first-byte table
//! allows, so plain text costs a table look-up a byte per delimiter. Re-running the DFA from
//! the held text's start each token was kept over carrying DFA states: held text is a partial
//! delimiter (a few bytes), and the state stays plain JSON. Tag-form calls under vLLM's names
//! are read tag by tag with the two halves of their tag pattern, each as a delimiter, so a
//! string value's text leaves the state as it comes (`tags`); the others append their text and
//! read it once, at the close, rather than re-matching the tag pattern every token.

use serde::{Deserialize, Serialize};

use super::MAX_BODY;
use super::args::{Args, Step};
use super::delim::{Delim, Found};
use super::pythonic::{Event, Py};
use super::spec::{Calls, Role, Template, Values};
use super::tree;
use super::typed::{self, Typing, Val};
use super::unescape::Unescape;
use crate::parse::carry::carried;
use crate::parse::json::{Scan, Sink};
use std::borrow::Cow;

use crate::holdback::joined;
use crate::parse::delta::{Delta, ToolRules};

mod calls;
mod close;
mod tags;
mod text;
mod watch;

/// Most bytes held back for a delimiter that may still match; past it the oldest text goes on
/// as text (a delimiter match longer than this is not found).
pub(crate) const MAX_HELD: usize = 1024;
/// Most bytes of trailing whitespace held for stripping; past it the whitespace is sent.
const MAX_SPACE: usize = 256;

/// What is on for this choice.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Knobs<'r> {
    pub reasoning: bool,
    /// A call's open delimiter ends a reasoning region (and opens the call).
    pub calls_end_reasoning: bool,
    /// Where given, only a call open that begins with this text ends reasoning (a bare call
    /// without its block marker is reasoning text there).
    pub reasoning_call_lead: Option<&'static str>,
    /// Reasoning ends once: after a reasoning region closed (in the output or the prompt), its
    /// open delimiter is text.
    pub reasoning_once: bool,
    pub tools: bool,
    /// Where calls are off, a call block is dropped (`tools_block`); not under vLLM's
    /// `minimax_m3` beside its reasoning parser, which leaves the block in the content.
    pub calls_off_block: bool,
    /// The call block is dropped also where no tool parser is named (`tools_block`; vLLM's
    /// Cohere parser consumes it whatever is named).
    pub calls_off_unnamed: bool,
    pub rules: ToolRules,
    /// The chat request's JSON text, whose tool schemas type built arguments.
    pub request: Option<&'r str>,
    /// Whose rules type them.
    pub typing: Typing,
    /// Under a vLLM parser's name, text keeps its whitespace as vLLM's parser keeps it, whatever
    /// the fields' `strip` say: content as written, reasoning as written or (`Some(true)`)
    /// without its trailing whitespace. `None`: the template's `strip`.
    pub vllm_space: Option<bool>,
    /// The output's first content loses its leading newlines (`granite_thinking_parser`).
    pub content_lstrip_newlines: bool,
    /// Until content has been sent, its leading whitespace is held across a call and sent
    /// before the next other content text, and dropped at the end (vLLM's `k2_horizon`).
    pub lead_across_calls: bool,
    /// Reasoning and content have their escaped newlines read back ([`super::unescape`], vLLM's
    /// `minicpmv`).
    pub unescape_newlines: bool,
    /// vLLM's `hf` (and `beam`) rules for the checkpoint's template: text as written, and JSON
    /// calls read only when their region closes (at its close delimiter, wherever it matches),
    /// a region that does not read as calls dropped.
    pub hf: bool,
}

/// How a region's text is stripped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strip {
    /// As Python's `strip()` strips the region's value.
    Both,
    /// Only trailing whitespace (it is held until more text follows, and dropped at the end).
    Trailing,
    /// Whitespace before the region's first other text is held: sent with that text, or when
    /// the region ends, unless a call opens there (vLLM's engine parsers drop whitespace-only
    /// content before a call).
    Lead,
    /// Not at all.
    None,
}

impl Knobs<'_> {
    fn on(&self, role: &Role) -> bool {
        match role {
            Role::Reasoning => self.reasoning,
            Role::Tools(_) | Role::CallText => self.tools && self.rules.enabled,
            Role::CallsOff => {
                self.calls_off_block
                    && ((self.tools && !self.rules.enabled)
                        || (!self.tools && self.calls_off_unnamed))
            }
            _ => true,
        }
    }
}

/// One choice's template state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateState {
    /// The explicit field whose region is open (`None`: the implicit field's, or none).
    #[serde(rename = "c", default, skip_serializing_if = "Option::is_none")]
    current: Option<u8>,
    /// The open region has had text (the implicit one opens with its first text).
    #[serde(rename = "o", default, skip_serializing_if = "std::ops::Not::not")]
    opened: bool,
    /// Text from where a delimiter may still match.
    #[serde(rename = "h", default, skip_serializing_if = "String::is_empty")]
    held: String,
    /// Text has been sent in the open region (leading whitespace is stripped until then).
    #[serde(rename = "t", default, skip_serializing_if = "std::ops::Not::not")]
    texted: bool,
    /// Trailing whitespace, sent only if more text follows in the region.
    #[serde(rename = "w", default, skip_serializing_if = "String::is_empty")]
    space: String,
    /// Fields (by bit) that have sent text: a later region of one first sends its `join`.
    #[serde(rename = "f", default, skip_serializing_if = "is_zero")]
    sent: u32,
    /// Tool calls begun.
    #[serde(rename = "n", default, skip_serializing_if = "is_zero")]
    calls: u32,
    /// The open JSON calls region's scanner.
    #[serde(rename = "j", default, skip_serializing_if = "Option::is_none")]
    scan: Option<Scan>,
    /// The open tag-form call's text (where its tags are sent as they come, the text they do
    /// not yet decide).
    #[serde(rename = "b", default, skip_serializing_if = "String::is_empty")]
    #[serde(
        serialize_with = "crate::parse::carry::text",
        deserialize_with = "crate::parse::carry::text_in"
    )]
    body: String,
    /// The open tag-form call's arguments object has begun (`{` is sent).
    #[serde(rename = "g", default, skip_serializing_if = "std::ops::Not::not")]
    begun: bool,
    /// The open tag-form call is sending a string value (its text is `body`'s until an end
    /// matches).
    #[serde(rename = "v", default, skip_serializing_if = "std::ops::Not::not")]
    in_value: bool,
    /// The open tag-form call's tag at the start of `body` holds a typed value, held until
    /// its end.
    #[serde(rename = "u", default, skip_serializing_if = "std::ops::Not::not")]
    held_typed: bool,
    /// The open tag-form call's text is kept and read when it closes (its first key may be a
    /// wrapper alone).
    #[serde(rename = "k", default, skip_serializing_if = "std::ops::Not::not")]
    kept: bool,
    /// The char before the held text, for templates that look behind.
    #[serde(rename = "z", default, skip_serializing_if = "Option::is_none")]
    last: Option<char>,
    /// The open raw JSON call's arguments, tracked to where they end.
    #[serde(rename = "a", default, skip_serializing_if = "is_default")]
    args: Args,
    /// The open region was opened by the request, not by its open delimiter (which, if the
    /// output begins with it, is dropped).
    #[serde(rename = "p", default, skip_serializing_if = "std::ops::Not::not")]
    fresh: bool,
    /// The open built call's name, whose schema types its arguments (kept only where the
    /// request has tool schemas to read).
    #[serde(rename = "m", default, skip_serializing_if = "String::is_empty")]
    name: String,
    /// A reasoning region has closed.
    #[serde(rename = "r", default, skip_serializing_if = "std::ops::Not::not")]
    reasoned: bool,
    /// The open Python call list's scanner.
    #[serde(rename = "y", default, skip_serializing_if = "Option::is_none")]
    py: Option<Py>,
    /// Leading whitespace is dropped from the text that follows, in whatever region, up to its
    /// first other text (a field's `lstrip_after`).
    #[serde(rename = "l", default, skip_serializing_if = "std::ops::Not::not")]
    lstrip: bool,
    /// A region of a field read once has closed: its open delimiter is text from here.
    #[serde(rename = "d", default, skip_serializing_if = "std::ops::Not::not")]
    once_done: bool,
    /// Content's leading whitespace held across a call, for the content after it
    /// ([`Knobs::lead_across_calls`]).
    #[serde(rename = "q", default, skip_serializing_if = "String::is_empty")]
    carry: String,
    /// The newline scanners of reasoning and content, where text is unescaped
    /// ([`Knobs::unescape_newlines`]).
    #[serde(rename = "e", default, skip_serializing_if = "Option::is_none")]
    unescape: Option<Box<[Unescape; 2]>>,
    /// The open tag-form call's arguments are whole and sent (its close began, and more text
    /// can only make the close longer).
    #[serde(rename = "x", default, skip_serializing_if = "std::ops::Not::not")]
    ended_args: bool,
}

/// A call of a Python list opens (`Name`) or gets its arguments, as the rules allow.
pub(super) fn list_event(calls: &mut u32, k: Knobs<'_>, e: Event, out: &mut Delta) {
    match e {
        Event::Name(name) => {
            *calls = calls.saturating_add(1);
            if k.rules.parallel || *calls == 1 {
                out.start_call(*calls - 1, name);
            }
        }
        Event::Arguments(arguments) => {
            if k.rules.parallel || *calls == 1 {
                out.push_arguments(calls.saturating_sub(1), &arguments);
            }
        }
    }
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// What ends a call whose JSON is whole.
enum CallEnd {
    /// The region closed; text goes on from here.
    At(usize),
    /// More text decides: hold from here.
    Hold(usize),
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Python's `str.isspace`, which `strip` uses.
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()`.
pub(crate) fn py_strip(s: &str) -> &str {
    s.trim_matches(py_space)
}

/// The largest char boundary at or below `at`.
fn floor_boundary(s: &str, mut at: usize) -> usize {
    while at > 0 && !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

impl TemplateState {
    /// Whether a carried state is one the executor could have written.
    pub(crate) fn check(&self) -> Result<(), String> {
        carried("held text", self.held.len(), MAX_HELD + 4)?;
        carried("held whitespace", self.space.len(), MAX_SPACE + 4)?;
        carried("carried whitespace", self.carry.len(), MAX_SPACE + 4)?;
        if let Some(u) = &self.unescape {
            u.iter().try_for_each(Unescape::check)?;
        }
        carried("call text", self.body.len(), MAX_BODY + 4)?;
        carried("call name", self.name.len(), MAX_HELD + 4)?;
        self.py.as_ref().map_or(Ok(()), Py::check)?;
        self.scan.as_ref().map_or(Ok(()), Scan::check)
    }

    /// The prompt's text has been run: what it sent does not count for the output. With
    /// `fresh`, a reasoning region it left open drops an open delimiter the output begins with.
    pub(crate) fn after_prompt(&mut self, t: &Template, fresh: bool) {
        self.calls = 0;
        self.sent = 0;
        self.texted = false;
        self.space.clear();
        self.carry.clear();
        self.once_done = false;
        self.lstrip = false;
        let reasoning = self
            .current
            .and_then(|c| t.fields.get(usize::from(c)))
            .is_some_and(|f| matches!(f.role, Role::Reasoning));
        self.fresh |= fresh && reasoning;
    }

    /// A state read from a stream whose field is not in this template starts over there.
    pub(crate) fn fit(&mut self, t: &Template) {
        if self
            .current
            .is_some_and(|c| usize::from(c) >= t.fields.len())
        {
            self.reset();
        }
    }

    fn field_index(&self, t: &Template) -> Option<usize> {
        match self.current {
            Some(c) => Some(usize::from(c)),
            None => t.implicit,
        }
    }

    /// Feeds text; at the end of the output (`eos`) every match is final and the open region
    /// closes.
    pub(crate) fn feed(
        &mut self,
        t: &Template,
        k: Knobs<'_>,
        text: &str,
        eos: bool,
        out: &mut Delta,
    ) {
        // A template that looks behind (`^`, `\b`) sees the char before the held text too.
        let (buf, base) = match self.last.filter(|_| t.looks_behind) {
            Some(c) => {
                let mut b = String::with_capacity(4 + self.held.len() + text.len());
                b.push(c);
                b.push_str(&self.held);
                b.push_str(text);
                self.held.clear();
                (Cow::Owned(b), c.len_utf8())
            }
            None => (joined(std::mem::take(&mut self.held), text), 0),
        };
        let buf: &str = &buf;
        let mut pos = base;
        let mut empty_commits = 0u32;
        loop {
            if self.call_ends(t, k, buf, pos) {
                match self.end_call(t, k, buf, pos, eos, out) {
                    CallEnd::At(next) => {
                        pos = next;
                        continue;
                    }
                    CallEnd::Hold(from) => {
                        self.hold(t, buf, base, from);
                        break;
                    }
                }
            }
            let (best, hold) = self.watch(t, k, buf, pos, eos, empty_commits > 2);
            if let Some((field, open, s, e)) = best {
                if s > pos {
                    let n = self.take(t, k, buf.get(pos..s).unwrap_or_default(), out);
                    if n < s - pos || self.call_ends(t, k, buf, s) {
                        pos += n;
                        continue;
                    }
                }
                // A close inside a JSON string of the call is text of the call (where
                // `parse_response` would cut the JSON there and fail), and so is one inside its
                // raw JSON arguments before they are whole that begins as JSON can go on (`}`,
                // `]`, `,`). A close that JSON cannot hold there (a marker) ends the call, as
                // vLLM's parsers end it: the next call is not lost.
                let structural = buf
                    .get(s..)
                    .and_then(|r| r.chars().next())
                    .is_some_and(|c| matches!(c, '}' | ']' | ','));
                if !open
                    && (self.scan.as_ref().is_some_and(Scan::in_string)
                        || self.args.quoted()
                        || (self.args.inside() && structural))
                {
                    let step = buf
                        .get(s..)
                        .and_then(|r| r.chars().next())
                        .map(char::len_utf8);
                    if let Some(end) = step.map(|n| e.max(s + n)) {
                        pos = s + self.take(t, k, buf.get(s..end).unwrap_or_default(), out);
                        continue;
                    }
                }
                // Empty matches in a row at one place are bounded (no loop without progress).
                if s == e {
                    empty_commits += 1;
                } else {
                    empty_commits = 0;
                }
                pos = e;
                // An inline field's match is dropped; the region it is in goes on.
                if open && t.fields.get(field).is_some_and(|f| f.inline) {
                    continue;
                }
                // Reasoning ends here unless its own open delimiter (dropped) reopens it.
                let reopens = open && self.current.map(usize::from) == Some(field);
                self.reasoned |= !reopens
                    && self
                        .current
                        .and_then(|c| t.fields.get(usize::from(c)))
                        .is_some_and(|f| matches!(f.role, Role::Reasoning));
                let call = open
                    && t.fields
                        .get(field)
                        .is_some_and(|f| matches!(f.role, Role::Tools(_) | Role::CallText));
                let call_closed = !open
                    && self
                        .current
                        .and_then(|c| t.fields.get(usize::from(c)))
                        .is_some_and(|f| matches!(f.role, Role::Tools(_)));
                self.held_content_space(t, k, !call, out);
                if call_closed && s == e && self.stopped(t, buf, s, eos) {
                    self.cut(t, k, out);
                } else if call_closed {
                    self.read_region(t, k, buf.get(s..e).unwrap_or_default(), out);
                }
                self.close(t, k, out);
                if open {
                    let caps = t
                        .fields
                        .get(field)
                        .and_then(|f| f.open.as_ref())
                        .map(|d| d.captures(buf, s))
                        .unwrap_or_default();
                    let text = buf.get(s..e).unwrap_or_default();
                    self.open(t, k, field, &caps, text, out);
                } else if call_closed && k.on(&Role::CallText) {
                    // The text after a call is the block's, up to the next call.
                    if let Some(i) = t
                        .fields
                        .iter()
                        .position(|f| matches!(f.role, Role::CallText))
                    {
                        self.open(t, k, i, &[], "", out);
                    }
                }
                continue;
            }
            if eos {
                let rest = buf.get(pos..).unwrap_or_default();
                let n = self.take(t, k, rest, out);
                if n < rest.len() || self.call_ends(t, k, buf, pos + n) {
                    pos += n;
                    continue;
                }
                self.held_content_space(t, k, true, out);
                self.cut(t, k, out);
                self.close(t, k, out);
                break;
            }
            let hold = hold
                .max(floor_boundary(buf, buf.len().saturating_sub(MAX_HELD)))
                .max(pos);
            if hold > pos {
                let n = self.take(t, k, buf.get(pos..hold).unwrap_or_default(), out);
                if n < hold - pos {
                    pos += n;
                    continue;
                }
            }
            self.end_arguments_early(t, k, buf, hold, out);
            self.hold(t, buf, base, hold);
            break;
        }
    }

    /// Reads back the escaped newlines of the reasoning and content `out` gained from `from`
    /// (their lengths before); at the end (`last`) nothing is held back.
    pub(crate) fn unescape(&mut self, out: &mut Delta, from: (usize, usize), last: bool) {
        let u = self.unescape.get_or_insert_with(Box::default);
        let [reasoning, content] = &mut **u;
        let text = out.reasoning.split_off(from.0.min(out.reasoning.len()));
        reasoning.feed(&text, last, &mut out.reasoning);
        let text = out.content.split_off(from.1.min(out.content.len()));
        content.feed(&text, last, &mut out.content);
        if u.iter().all(|s| *s == Unescape::default()) {
            self.unescape = None;
        }
    }

    /// Keeps `buf` from `from` for the next text.
    fn hold(&mut self, t: &Template, buf: &str, base: usize, from: usize) {
        if t.looks_behind && from > base {
            self.last = buf.get(..from).and_then(|b| b.chars().next_back());
        }
        self.held = buf.get(from..).unwrap_or_default().to_owned();
    }

    fn reset(&mut self) {
        self.ended_args = false;
        self.current = None;
        self.opened = false;
        self.texted = false;
        self.space.clear();
        self.scan = None;
        self.body.clear();
        self.begun = false;
        self.in_value = false;
        self.kept = false;
        self.held_typed = false;
        self.args = Args::default();
        self.fresh = false;
        self.name.clear();
        self.py = None;
    }

    /// Opens the first reasoning field's region, as if its open delimiter had matched (the
    /// request asked for reasoning where the template's output opens it with a marker).
    pub(crate) fn open_reasoning(&mut self, t: &Template, k: Knobs<'_>) {
        let Some(field) = t
            .fields
            .iter()
            .position(|f| matches!(f.role, Role::Reasoning))
        else {
            return;
        };
        self.open(t, k, field, &[], "", &mut Delta::default());
        self.fresh = true;
    }

    /// Sends (`keep`) or drops the whitespace a content region holds before its first text
    /// ([`Strip::Lead`]), as the region ends.
    fn held_content_space(&mut self, t: &Template, k: Knobs<'_>, keep: bool, out: &mut Delta) {
        let content = self
            .field_index(t)
            .and_then(|i| t.fields.get(i))
            .is_some_and(|f| matches!(f.role, Role::Content));
        if content && k.vllm_space.is_some() && !self.texted && !self.space.is_empty() {
            let space = std::mem::take(&mut self.space);
            let seen = t
                .implicit
                .is_some_and(|i| self.sent & (1u32 << (i % 32)) != 0);
            match (keep, k.lead_across_calls, seen) {
                (_, true, true) | (true, false, _) => out.content.push_str(&space),
                (false, true, false) => {
                    let room = MAX_SPACE.saturating_sub(self.carry.len());
                    let take = floor_boundary(&space, room.min(space.len()));
                    self.carry.push_str(space.get(..take).unwrap_or_default());
                }
                _ => {}
            }
        }
    }
}
