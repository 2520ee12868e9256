//! Tool calls written as JSON (`{"name": ..., "arguments": ...}`, or a list of them), scanned a
//! char at a time: the name is sent once it is read, the arguments' raw text as it arrives.

use serde::{Deserialize, Serialize};

use super::super::delta::{Delta, ToolRules};

/// Most bytes of a name, a key, and of arguments held until the name is known.
pub(crate) const MAX_NAME: usize = 256;
const MAX_KEY: usize = 64;
pub(crate) const MAX_PENDING: usize = 1536;

/// Where the scanner is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
enum At {
    /// Before the first `{` or `[`.
    #[default]
    #[serde(rename = "s")]
    Start,
    /// In a list of calls, between them.
    #[serde(rename = "l")]
    Between,
    #[serde(rename = "k")]
    Key,
    #[serde(rename = "K")]
    InKey,
    #[serde(rename = "c")]
    Colon,
    #[serde(rename = "v")]
    Value,
    #[serde(rename = "S")]
    InString,
    #[serde(rename = "O")]
    InContainer,
    #[serde(rename = "N")]
    InScalar,
    #[serde(rename = "a")]
    After,
    #[serde(rename = "d")]
    Done,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Part {
    #[default]
    #[serde(rename = "o")]
    Other,
    #[serde(rename = "n")]
    Name,
    #[serde(rename = "a")]
    Arguments,
}

/// The scanner's state (carried: every field small and bounded).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Scan {
    #[serde(rename = "a", default)]
    at: At,
    /// The calls are a JSON list.
    #[serde(rename = "L", default, skip_serializing_if = "std::ops::Not::not")]
    list: bool,
    /// Depth inside an object or array value.
    #[serde(rename = "d", default, skip_serializing_if = "is_zero")]
    depth: u32,
    #[serde(rename = "q", default, skip_serializing_if = "std::ops::Not::not")]
    quoted: bool,
    #[serde(rename = "e", default, skip_serializing_if = "std::ops::Not::not")]
    escaped: bool,
    #[serde(rename = "k", default, skip_serializing_if = "String::is_empty")]
    key: String,
    #[serde(rename = "r", default)]
    part: Part,
    /// The name's raw JSON string content, while it is read.
    #[serde(rename = "m", default, skip_serializing_if = "String::is_empty")]
    name: String,
    /// The call's first delta (its name) was sent.
    #[serde(rename = "s", default, skip_serializing_if = "std::ops::Not::not")]
    sent: bool,
    /// Arguments read before the name was known.
    #[serde(rename = "p", default, skip_serializing_if = "String::is_empty")]
    pending: String,
    /// The arguments value was met (a repeated key's value is not sent).
    #[serde(rename = "g", default, skip_serializing_if = "std::ops::Not::not")]
    has_arguments: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Where a scanner's calls go.
pub(crate) struct Sink<'a> {
    /// Calls begun so far in the choice.
    pub calls: &'a mut u32,
    pub rules: ToolRules,
    pub out: &'a mut Delta,
    pub name_key: &'a str,
    pub args_key: &'a str,
}

impl Sink<'_> {
    fn index(&self) -> u32 {
        self.calls.saturating_sub(1)
    }

    /// This call's deltas are dropped (`parallel_tool_calls` false and not the first call).
    pub(crate) fn muted(&self) -> bool {
        !self.rules.parallel && *self.calls > 1
    }
}

impl Scan {
    /// Whether a carried state is one this scanner could have written.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.key.len() > MAX_KEY + 4
            || self.name.len() > MAX_NAME + 4
            || self.pending.len() > MAX_PENDING + 4
        {
            return Err("its tool-call scanner holds more than it could".to_owned());
        }
        Ok(())
    }

    /// Whether the scanner is inside a JSON string.
    pub(crate) fn in_string(&self) -> bool {
        match self.at {
            At::InKey | At::InString => true,
            At::InContainer => self.quoted,
            _ => false,
        }
    }

    fn begin(&mut self, sink: &mut Sink<'_>) {
        *sink.calls = sink.calls.saturating_add(1);
        self.at = At::Key;
        self.depth = 0;
        self.quoted = false;
        self.escaped = false;
        self.key.clear();
        self.part = Part::Other;
        self.name.clear();
        self.sent = false;
        self.pending.clear();
        self.has_arguments = false;
    }

    fn send_name(&mut self, sink: &mut Sink<'_>) {
        let name = serde_json::from_str::<String>(&format!("\"{}\"", self.name))
            .unwrap_or_else(|_| self.name.clone());
        self.sent = true;
        if !sink.muted() {
            let index = sink.index();
            sink.out.start_call(index, name);
            if !self.pending.is_empty() {
                sink.out.push_arguments(index, &self.pending);
            }
        }
        self.pending.clear();
    }

    fn arguments(&mut self, c: char, sink: &mut Sink<'_>) {
        if self.sent {
            if !sink.muted() {
                let mut b = [0; 4];
                let index = sink.index();
                sink.out.push_arguments(index, c.encode_utf8(&mut b));
            }
        } else if self.pending.len() < MAX_PENDING {
            self.pending.push(c);
        }
    }

    /// The call object ends (or the region does): a name read but not sent is sent now.
    fn end_object(&mut self, sink: &mut Sink<'_>) {
        if !self.sent && !self.name.is_empty() && self.at != At::InString {
            self.send_name(sink);
        }
        self.at = if self.list { At::Between } else { At::Done };
        self.name.clear();
        self.pending.clear();
        self.key.clear();
    }

    /// The region ends.
    pub(crate) fn close(&mut self, sink: &mut Sink<'_>) {
        if !matches!(self.at, At::Start | At::Between | At::Done) {
            self.end_object(sink);
        }
    }

    /// Scans a region's text.
    pub(crate) fn feed(&mut self, text: &str, sink: &mut Sink<'_>) {
        for c in text.chars() {
            self.scan(c, sink);
        }
    }

    fn scan(&mut self, c: char, sink: &mut Sink<'_>) {
        match self.at {
            At::Start | At::Between => match c {
                '{' => self.begin(sink),
                '[' if self.at == At::Start => {
                    self.list = true;
                    self.at = At::Between;
                }
                ']' if self.at == At::Between => self.at = At::Done,
                _ => {}
            },
            At::Key => match c {
                '"' => {
                    self.key.clear();
                    self.at = At::InKey;
                }
                '}' => self.end_object(sink),
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
            At::Value => self.value(c, sink),
            At::InString => {
                let end = !self.escaped && c == '"';
                if self.escaped {
                    self.escaped = false;
                } else if c == '\\' {
                    self.escaped = true;
                }
                match self.part {
                    Part::Name if !end && self.name.len() < MAX_NAME => self.name.push(c),
                    Part::Arguments => self.arguments(c, sink),
                    _ => {}
                }
                if end {
                    self.at = At::After;
                    if self.part == Part::Name && !self.sent {
                        self.send_name(sink);
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
                if self.part == Part::Arguments {
                    self.arguments(c, sink);
                }
                if self.depth == 0 {
                    self.at = At::After;
                }
            }
            At::InScalar => match c {
                ',' => self.at = At::Key,
                '}' => self.end_object(sink),
                c if c.is_whitespace() => self.at = At::After,
                _ => {
                    if self.part == Part::Arguments {
                        self.arguments(c, sink);
                    }
                }
            },
            At::After => match c {
                ',' => self.at = At::Key,
                '}' => self.end_object(sink),
                _ => {}
            },
            At::Done => {}
        }
    }

    /// The first char of a value.
    fn value(&mut self, c: char, sink: &mut Sink<'_>) {
        if c.is_whitespace() {
            return;
        }
        let key = self.key.as_str();
        let is_args = key == sink.args_key || (sink.args_key == "arguments" && key == "parameters");
        self.part = if key == sink.name_key {
            Part::Name
        } else if is_args && !self.has_arguments {
            self.has_arguments = true;
            Part::Arguments
        } else {
            Part::Other
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
        if self.part == Part::Name && self.at == At::InString {
            self.name.clear();
        }
        if self.part == Part::Arguments {
            self.arguments(c, sink);
        }
    }
}
