//! Tool calls written as JSON (`{"name": ..., "arguments": ...}`, or a list of them), scanned a
//! char at a time: the name is sent once it is read, the arguments' raw text as it arrives. The
//! one scanner of both the hermes parser (one call a `<tool_call>` tag, [`Sink::single`]) and
//! the response templates' JSON calls.

use serde::de::MapAccess;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::carry::{self, Fields, carried};
use super::delta::{Delta, ToolRules};

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

/// The scanner's state (carried: every field small and bounded). Its keys are written beside
/// those of the state that holds it when that is hermes's ([`Scan::write`], [`Scan::field`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Scan {
    at: At,
    /// The calls are a JSON list.
    list: bool,
    /// Depth inside an object or array value.
    depth: u32,
    quoted: bool,
    escaped: bool,
    key: String,
    part: Part,
    /// The name's raw JSON string content, while it is read.
    name: String,
    /// The call's first delta (its name) was sent.
    sent: bool,
    /// Arguments read before the name was known.
    pending: String,
    /// The arguments value was met (a repeated key's value is not sent).
    has_arguments: bool,
}

impl Scan {
    /// Writes the scanner's keys into `map`, leaving out those at their default (but `a`, `r`).
    pub(crate) fn write<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        map.serialize_entry("a", &self.at)?;
        let flags = [("L", self.list), ("q", self.quoted), ("e", self.escaped)];
        for (k, on) in flags {
            if on {
                map.serialize_entry(k, &true)?;
            }
        }
        if self.depth != 0 {
            map.serialize_entry("d", &self.depth)?;
        }
        for (k, text) in [("k", &self.key), ("m", &self.name), ("p", &self.pending)] {
            if !text.is_empty() {
                map.serialize_entry(k, text)?;
            }
        }
        map.serialize_entry("r", &self.part)?;
        for (k, on) in [("s", self.sent), ("g", self.has_arguments)] {
            if on {
                map.serialize_entry(k, &true)?;
            }
        }
        Ok(())
    }
}

impl Fields for Scan {
    fn field<'de, A: MapAccess<'de>>(&mut self, key: char, map: &mut A) -> Result<bool, A::Error> {
        match key {
            'a' => self.at = map.next_value()?,
            'L' => self.list = map.next_value()?,
            'd' => self.depth = map.next_value()?,
            'q' => self.quoted = map.next_value()?,
            'e' => self.escaped = map.next_value()?,
            'k' => self.key = map.next_value()?,
            'r' => self.part = map.next_value()?,
            'm' => self.name = map.next_value()?,
            's' => self.sent = map.next_value()?,
            'p' => self.pending = map.next_value()?,
            'g' => self.has_arguments = map.next_value()?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

impl Serialize for Scan {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        self.write(&mut map)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for Scan {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        carry::read(d)
    }
}

/// Where a scanner's calls go.
pub(crate) struct Sink<'a> {
    /// Calls begun so far in the choice.
    calls: &'a mut u32,
    rules: ToolRules,
    out: &'a mut Delta,
    name_key: &'a str,
    args_key: &'a str,
    /// The region is one call object, counted when the region opened (hermes's
    /// `<tool_call>`): its `{` begins no call and a `[` is no list.
    single: bool,
}

impl<'a> Sink<'a> {
    /// A template region's calls, their name and arguments under these keys (an empty
    /// `name_key`: each call object's one key is its name, its value the arguments).
    #[inline]
    pub(crate) fn keyed(
        calls: &'a mut u32,
        rules: ToolRules,
        out: &'a mut Delta,
        name_key: &'a str,
        args_key: &'a str,
    ) -> Self {
        Sink {
            calls,
            rules,
            out,
            name_key,
            args_key,
            single: false,
        }
    }

    /// A hermes call's region: one object, `"name"` and `"arguments"` (or `"parameters"`).
    #[inline]
    pub(crate) fn single(calls: &'a mut u32, rules: ToolRules, out: &'a mut Delta) -> Self {
        Sink {
            calls,
            rules,
            out,
            name_key: "name",
            args_key: "arguments",
            single: true,
        }
    }

    fn index(&self) -> u32 {
        self.calls.saturating_sub(1)
    }

    /// This call's deltas are dropped (`parallel_tool_calls` false and not the first call).
    fn muted(&self) -> bool {
        !self.rules.parallel && *self.calls > 1
    }

    /// Arguments text of the current call, unless it is muted.
    pub(crate) fn push_arguments(&mut self, text: &str) {
        if !self.muted() {
            let index = self.index();
            self.out.push_arguments(index, text);
        }
    }
}

impl Scan {
    /// Whether a carried state is one this scanner could have written.
    pub(crate) fn check(&self) -> Result<(), String> {
        carried("key", self.key.len(), MAX_KEY + 4)?;
        carried("name", self.name.len(), MAX_NAME + 4)?;
        carried("pending arguments", self.pending.len(), MAX_PENDING + 4)
    }

    /// Whether the call was sent without an arguments value; it then counts as having one.
    pub(crate) fn sent_without_arguments(&mut self) -> bool {
        let missing = self.sent && !self.has_arguments;
        self.has_arguments |= missing;
        missing
    }

    /// Whether the scanner is inside a JSON string.
    pub(crate) fn in_string(&self) -> bool {
        match self.at {
            At::InKey | At::InString => true,
            At::InContainer => self.quoted,
            _ => false,
        }
    }

    /// Back to a region's start (a string keeps its room: calls come one after another).
    pub(crate) fn reset(&mut self) {
        self.at = At::Start;
        self.list = false;
        self.begin_object();
    }

    /// A call's object begins: nothing of the one before is kept.
    fn begin(&mut self, sink: &mut Sink<'_>) {
        *sink.calls = sink.calls.saturating_add(1);
        self.at = At::Key;
        self.begin_object();
    }

    fn begin_object(&mut self) {
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
            sink.push_arguments(c.encode_utf8(&mut [0; 4]));
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

    /// Whether the region's JSON (its call object, or its list of calls) is whole.
    pub(crate) fn done(&self) -> bool {
        self.at == At::Done
    }

    /// Scans a region's text up to where its JSON is whole; returns the bytes scanned.
    pub(crate) fn feed_until_done(&mut self, text: &str, sink: &mut Sink<'_>) -> usize {
        for (i, c) in text.char_indices() {
            if self.done() {
                return i;
            }
            self.scan(c, sink);
        }
        text.len()
    }

    /// Scans one char of a region's text.
    pub(crate) fn scan(&mut self, c: char, sink: &mut Sink<'_>) {
        match self.at {
            At::Start | At::Between => match c {
                '{' if sink.single => self.at = At::Key,
                '{' => self.begin(sink),
                '[' if self.at == At::Start && !sink.single => {
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
        let is_name = key == sink.name_key;
        // A call named by its key (`{"get_weather": {...}}`): the first key is the name.
        let key_named = sink.name_key.is_empty();
        if key_named && !self.sent && !self.has_arguments {
            self.name.clone_from(&self.key);
            self.send_name(sink);
        }
        self.part = if key_named {
            if self.has_arguments {
                Part::Other
            } else {
                self.has_arguments = true;
                Part::Arguments
            }
        } else if is_name {
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
