//! The hermes tool-call parser: `<tool_call>{"name": ..., "arguments": ...}</tool_call>`. A
//! call's JSON is read by the one JSON call scanner ([`Scan`], the templates' too), a call a tag.

use serde::de::MapAccess;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::carry::{self, Fields, carried};
use super::delta::{Delta, ToolRules};
use super::json::{Scan, Sink};
use super::markers::{Parsers, Tag};
use crate::holdback::{first_marker, joined};

/// Most bytes of text held back for a tag (`</tool_call>` is 12).
pub(crate) const MAX_HELD_BYTES: usize = 16;

/// The tool parser's state (carried, so every field is small and bounded): `n` calls begun,
/// `i` inside one, `h` held text, and beside them the open call's scanner's keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ToolState {
    /// Calls begun so far.
    calls: u32,
    /// Inside a call.
    in_call: bool,
    /// Text held back because it may begin a tag (text-matched tags only).
    held: String,
    /// The open call's JSON.
    scan: Scan,
}

impl Serialize for ToolState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("n", &self.calls)?;
        map.serialize_entry("i", &self.in_call)?;
        if !self.held.is_empty() {
            map.serialize_entry("h", &self.held)?;
        }
        self.scan.write(&mut map)?;
        map.end()
    }
}

impl Fields for ToolState {
    fn field<'de, A: MapAccess<'de>>(&mut self, key: char, map: &mut A) -> Result<bool, A::Error> {
        match key {
            'n' => self.calls = map.next_value()?,
            'i' => self.in_call = map.next_value()?,
            'h' => self.held = map.next_value()?,
            _ => return self.scan.field(key, map),
        }
        Ok(true)
    }
}

impl<'de> Deserialize<'de> for ToolState {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        carry::read(d)
    }
}

impl ToolState {
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
            Some(Tag::CallClose) if self.in_call && !self.scan.in_string() => {
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
                let mut sink = Sink::single(&mut self.calls, rules, out);
                self.scan.feed(text, &mut sink);
            } else {
                self.content(text, out);
            }
            return;
        }
        let buf = joined(std::mem::take(&mut self.held), text);
        let mut rest: &str = &buf;
        'outer: loop {
            if !self.in_call {
                match first_marker(rest, std::iter::once(((), p.call_open.text))) {
                    Ok((at, (), marker)) => {
                        self.content(rest.get(..at).unwrap_or_default(), out);
                        rest = rest.get(at + marker.len()..).unwrap_or_default();
                        self.open();
                        continue;
                    }
                    Err(keep) => {
                        let (send, hold) = rest.split_at(rest.len() - keep);
                        self.content(send, out);
                        self.held = hold.to_owned();
                        return;
                    }
                }
            }
            let marker = p.call_close.text;
            for (i, c) in rest.char_indices() {
                if !self.scan.in_string() && c == '<' {
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
                self.scan
                    .scan(c, &mut Sink::single(&mut self.calls, rules, out));
            }
            return;
        }
    }

    fn open(&mut self) {
        self.calls = self.calls.saturating_add(1);
        self.in_call = true;
        self.scan.reset();
    }

    /// Ends the call: a call whose name was found but not sent yet is sent now, and a sent call
    /// that had no arguments value gets `{}` (vLLM's stream ends such a call with it).
    fn close(&mut self, rules: ToolRules, out: &mut Delta) {
        let mut sink = Sink::single(&mut self.calls, rules, out);
        self.scan.close(&mut sink);
        if self.scan.sent_without_arguments() {
            sink.push_arguments("{}");
        }
        self.in_call = false;
        self.scan.reset();
    }

    /// Whether a carried state is one this parser could have written (bounded fields).
    pub(crate) fn check(&self) -> Result<(), String> {
        carried("held text", self.held.len(), MAX_HELD_BYTES)?;
        self.scan.check()
    }

    /// The output ended: held text is content (or the open call's), and an open call closes.
    pub(crate) fn finish(&mut self, rules: ToolRules, out: &mut Delta) {
        let held = std::mem::take(&mut self.held);
        if self.in_call {
            let mut sink = Sink::single(&mut self.calls, rules, out);
            self.scan.feed(&held, &mut sink);
            self.close(rules, out);
        } else {
            self.content(&held, out);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A state as the parser wrote it before it ran on the shared scanner: every key written.
    const EARLIER: &str = r#"{"n":1,"i":true,"a":"O","d":1,"q":true,"e":false,"k":"arguments","r":"a","m":"get_weather","s":true,"g":true}"#;

    #[test]
    fn an_earlier_state_reads_and_writes_back_without_its_defaults() {
        let state: ToolState = serde_json::from_str(EARLIER).unwrap();
        assert!(state.in_call && state.scan.in_string());
        let again = serde_json::to_string(&state).unwrap();
        let want = r#"{"n":1,"i":true,"a":"O","q":true,"d":1,"k":"arguments","m":"get_weather","r":"a","s":true,"g":true}"#;
        assert_eq!(again, want);
        assert_eq!(serde_json::from_str::<ToolState>(&again).unwrap(), state);
    }

    #[test]
    fn unknown_keys_are_skipped_and_wrong_values_refused() {
        let state: ToolState = serde_json::from_str(r#"{"n":2,"zz":[1],"x":{},"n":3}"#).unwrap();
        assert_eq!((state.calls, state.in_call), (3, false));
        assert!(serde_json::from_str::<ToolState>(r#"{"a":"no such place"}"#).is_err());
        assert!(serde_json::from_str::<ToolState>(r#"{"n":-1}"#).is_err());
        assert!(serde_json::from_str::<ToolState>("[1]").is_err());
    }
}
