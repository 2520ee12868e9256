//! The hermes tool-call parser: `<tool_call>{"name": ..., "arguments": ...}</tool_call>`.

use serde::{Deserialize, Serialize};

use super::delta::{Delta, ToolRules};
use super::markers::{Parsers, Tag};
use crate::holdback::{joined, open_suffix};

/// Most chars of arguments held while the name is not known yet, and of a name.
const MAX_PENDING: usize = 1536;
const MAX_NAME: usize = 256;
const MAX_KEY: usize = 64;
/// Most bytes of text held back for a tag (`</tool_call>` is 12).
pub(crate) const MAX_HELD_BYTES: usize = 16;

/// Where the scanner is in a call's top-level JSON object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
enum At {
    /// Before the object's `{`.
    #[default]
    #[serde(rename = "s")]
    Start,
    /// Expecting a key (or `}`).
    #[serde(rename = "k")]
    Key,
    /// Inside a key string.
    #[serde(rename = "K")]
    InKey,
    /// After a key, expecting `:`.
    #[serde(rename = "c")]
    Colon,
    /// Expecting a value.
    #[serde(rename = "v")]
    Value,
    /// Inside a string value.
    #[serde(rename = "S")]
    InString,
    /// Inside an object or array value.
    #[serde(rename = "O")]
    InContainer,
    /// Inside a number, `true`, `false` or `null`.
    #[serde(rename = "N")]
    InScalar,
    /// After a value, expecting `,` or `}`.
    #[serde(rename = "a")]
    After,
    /// The object is closed.
    #[serde(rename = "d")]
    Done,
}

/// What the value being scanned is to the call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Role {
    #[default]
    #[serde(rename = "o")]
    Other,
    #[serde(rename = "n")]
    Name,
    #[serde(rename = "a")]
    Arguments,
}

/// The tool parser's state (carried, so every field is small and bounded).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ToolState {
    /// Calls begun so far.
    #[serde(rename = "n", default)]
    calls: u32,
    /// Inside a call.
    #[serde(rename = "i", default)]
    in_call: bool,
    /// Text held back because it may begin a tag (text-matched tags only).
    #[serde(rename = "h", default, skip_serializing_if = "String::is_empty")]
    held: String,
    #[serde(rename = "a", default)]
    at: At,
    /// Nesting depth inside an object or array value (1 = the value's own brackets).
    #[serde(rename = "d", default)]
    depth: u32,
    /// Inside a JSON string within a container value.
    #[serde(rename = "q", default)]
    quoted: bool,
    /// The previous char was a backslash inside a string.
    #[serde(rename = "e", default)]
    escaped: bool,
    #[serde(rename = "k", default, skip_serializing_if = "String::is_empty")]
    key: String,
    #[serde(rename = "r", default)]
    role: Role,
    /// The name's raw JSON string content, while it is read.
    #[serde(rename = "m", default, skip_serializing_if = "String::is_empty")]
    name: String,
    /// The call's first delta (id, name) was sent.
    #[serde(rename = "s", default)]
    sent: bool,
    /// Arguments text scanned before the name was known.
    #[serde(rename = "p", default, skip_serializing_if = "String::is_empty")]
    pending: String,
    /// The call's arguments value was met (a repeated key's value is not sent).
    #[serde(rename = "g", default)]
    has_arguments: bool,
}

impl ToolState {
    fn index(&self) -> u32 {
        self.calls.saturating_sub(1)
    }

    /// This call's output is dropped (`parallel_tool_calls` false and not the first call).
    fn muted(&self, rules: ToolRules) -> bool {
        !rules.parallel && self.calls > 1
    }

    fn content(&self, text: &str, out: &mut Delta) {
        if self.calls == 0 {
            out.content.push_str(text);
        }
    }

    /// Feeds content text; `tag` is the tool tag the token is, if tags count by id.
    pub(crate) fn feed(
        &mut self,
        text: &str,
        tag: Option<Tag>,
        p: &Parsers,
        rules: ToolRules,
        out: &mut Delta,
    ) {
        if !rules.enabled || !p.tools {
            out.content.push_str(text);
            return;
        }
        match tag {
            Some(Tag::CallOpen) if !self.in_call => {
                self.text(
                    text.strip_suffix(p.call_open.text).unwrap_or(text),
                    p,
                    rules,
                    out,
                );
                self.open();
            }
            Some(Tag::CallClose) if self.in_call && !self.in_string() => {
                self.text(
                    text.strip_suffix(p.call_close.text).unwrap_or(text),
                    p,
                    rules,
                    out,
                );
                self.close(rules, out);
            }
            _ => self.text(text, p, rules, out),
        }
    }

    fn by_id(p: &Parsers) -> bool {
        p.call_open.id.is_some() && p.call_close.id.is_some()
    }

    /// Text outside a tag token: content before the first call, or the call's JSON.
    fn text(&mut self, text: &str, p: &Parsers, rules: ToolRules, out: &mut Delta) {
        if Self::by_id(p) {
            if self.in_call {
                for c in text.chars() {
                    self.scan(c, rules, out);
                }
            } else {
                self.content(text, out);
            }
            return;
        }
        let buf = joined(std::mem::take(&mut self.held), text);
        let mut rest: &str = &buf;
        'outer: loop {
            if !self.in_call {
                let marker = p.call_open.text;
                if let Some(at) = rest.find(marker) {
                    self.content(rest.get(..at).unwrap_or_default(), out);
                    rest = rest.get(at + marker.len()..).unwrap_or_default();
                    self.open();
                    continue;
                }
                let keep = open_suffix(rest, marker);
                let (send, hold) = rest.split_at(rest.len() - keep);
                self.content(send, out);
                self.held = hold.to_owned();
                return;
            }
            let marker = p.call_close.text;
            for (i, c) in rest.char_indices() {
                if !self.in_string() && c == '<' {
                    let tail = rest.get(i..).unwrap_or_default();
                    if tail.starts_with(marker) {
                        self.close(rules, out);
                        rest = tail.get(marker.len()..).unwrap_or_default();
                        continue 'outer;
                    }
                    if marker.starts_with(tail) {
                        self.held = tail.to_owned();
                        return;
                    }
                }
                self.scan(c, rules, out);
            }
            return;
        }
    }

    fn open(&mut self) {
        self.calls = self.calls.saturating_add(1);
        self.in_call = true;
        self.at = At::Start;
        self.depth = 0;
        self.quoted = false;
        self.escaped = false;
        self.key.clear();
        self.role = Role::Other;
        self.name.clear();
        self.sent = false;
        self.pending.clear();
        self.has_arguments = false;
    }

    /// Ends the call: a call whose name was found but not sent yet is sent now, and a sent call
    /// that had no arguments value gets `{}` (vLLM's stream ends such a call with it).
    fn close(&mut self, rules: ToolRules, out: &mut Delta) {
        if !self.sent && self.at != At::InString && !self.name.is_empty() {
            self.send_name(rules, out);
        }
        if self.sent && !self.has_arguments {
            self.has_arguments = true;
            if !self.muted(rules) {
                out.push_arguments(self.index(), "{}");
            }
        }
        self.in_call = false;
        self.name.clear();
        self.pending.clear();
        self.key.clear();
    }

    /// Whether a carried state is one this parser could have written (bounded fields).
    pub(crate) fn check(&self) -> Result<(), String> {
        let long = |what: &str, len: usize, max: usize| {
            if len > max {
                Err(format!(
                    "its {what} is {len} bytes, at most {max} are carried"
                ))
            } else {
                Ok(())
            }
        };
        long("held text", self.held.len(), MAX_HELD_BYTES)?;
        long("key", self.key.len(), MAX_KEY + 4)?;
        long("name", self.name.len(), MAX_NAME + 4)?;
        long("pending arguments", self.pending.len(), MAX_PENDING + 4)
    }

    /// Whether the scanner is inside a JSON string (where a closing tag is text).
    fn in_string(&self) -> bool {
        match self.at {
            At::InKey | At::InString => true,
            At::InContainer => self.quoted,
            _ => false,
        }
    }

    fn send_name(&mut self, rules: ToolRules, out: &mut Delta) {
        let name = serde_json::from_str::<String>(&format!("\"{}\"", self.name))
            .unwrap_or_else(|_| self.name.clone());
        self.sent = true;
        if !self.muted(rules) {
            out.start_call(self.index(), name);
            if !self.pending.is_empty() {
                out.push_arguments(self.index(), &self.pending);
            }
        }
        self.pending.clear();
    }

    fn arguments(&mut self, c: char, rules: ToolRules, out: &mut Delta) {
        if self.sent {
            if !self.muted(rules) {
                let mut b = [0; 4];
                out.push_arguments(self.index(), c.encode_utf8(&mut b));
            }
        } else if self.pending.len() < MAX_PENDING {
            self.pending.push(c);
        }
    }

    /// One char of a call's JSON.
    fn scan(&mut self, c: char, rules: ToolRules, out: &mut Delta) {
        match self.at {
            At::Start => {
                if c == '{' {
                    self.at = At::Key;
                }
            }
            At::Key => match c {
                '"' => {
                    self.key.clear();
                    self.at = At::InKey;
                }
                '}' => self.at = At::Done,
                _ => {}
            },
            At::InKey => {
                if self.escaped {
                    self.escaped = false;
                } else if c == '\\' {
                    self.escaped = true;
                } else if c == '"' {
                    self.at = At::Colon;
                    return;
                }
                if self.key.len() < MAX_KEY {
                    self.key.push(c);
                }
            }
            At::Colon => {
                if c == ':' {
                    self.at = At::Value;
                }
            }
            At::Value => {
                if c.is_whitespace() {
                    return;
                }
                self.role = match self.key.as_str() {
                    "name" => Role::Name,
                    "arguments" | "parameters" if !self.has_arguments => {
                        self.has_arguments = true;
                        Role::Arguments
                    }
                    _ => Role::Other,
                };
                self.at = match c {
                    '{' | '[' => {
                        self.depth = 1;
                        self.quoted = false;
                        At::InContainer
                    }
                    '"' => At::InString,
                    _ => At::InScalar,
                };
                if self.role == Role::Name && self.at == At::InString {
                    self.name.clear();
                }
                if self.role == Role::Arguments {
                    self.arguments(c, rules, out);
                }
            }
            At::InString => {
                let end = !self.escaped && c == '"';
                if self.escaped {
                    self.escaped = false;
                } else if c == '\\' {
                    self.escaped = true;
                }
                match self.role {
                    Role::Name if !end && self.name.len() < MAX_NAME => self.name.push(c),
                    Role::Arguments => self.arguments(c, rules, out),
                    _ => {}
                }
                if end {
                    self.at = At::After;
                    if self.role == Role::Name && !self.sent {
                        self.send_name(rules, out);
                    }
                }
            }
            At::InContainer => {
                if self.quoted {
                    if self.escaped {
                        self.escaped = false;
                    } else if c == '\\' {
                        self.escaped = true;
                    } else if c == '"' {
                        self.quoted = false;
                    }
                } else {
                    match c {
                        '"' => self.quoted = true,
                        '{' | '[' => self.depth = self.depth.saturating_add(1),
                        '}' | ']' => self.depth = self.depth.saturating_sub(1),
                        _ => {}
                    }
                }
                if self.role == Role::Arguments {
                    self.arguments(c, rules, out);
                }
                if self.depth == 0 {
                    self.at = At::After;
                }
            }
            At::InScalar => match c {
                ',' => self.at = At::Key,
                '}' => self.at = At::Done,
                c if c.is_whitespace() => self.at = At::After,
                _ => {
                    if self.role == Role::Arguments {
                        self.arguments(c, rules, out);
                    }
                }
            },
            At::After => match c {
                ',' => self.at = At::Key,
                '}' => self.at = At::Done,
                _ => {}
            },
            At::Done => {}
        }
    }

    /// The output ended: held text is content (or the open call's), and an open call closes.
    pub(crate) fn finish(&mut self, rules: ToolRules, out: &mut Delta) {
        let held = std::mem::take(&mut self.held);
        if self.in_call {
            for c in held.chars() {
                self.scan(c, rules, out);
            }
            self.close(rules, out);
        } else {
            self.content(&held, out);
        }
    }
}
