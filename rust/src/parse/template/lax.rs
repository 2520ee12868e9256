//! The `json` content parser's dialect knobs (`content_args`): strings between custom
//! delimiters (`string_delims`) and bare keys (`unquoted_keys`), turned into standard JSON when
//! a call closes. Text in such a dialect is not JSON until then, so it is not streamed.
//!
//! `"bare_values": "string"` (our addition, for Gemma 4's calls under vLLM's `gemma4` name) reads
//! the text as vLLM's Gemma 4 parser does (`vllm/parser/gemma4.py`): `key:value` pairs inside the
//! call's outer `{}` or `()`, a value delimited, a `{}` object or a `[]` list of values, or bare
//! text up to the next `,`, `}` or `]`, which stays a string (the tool's schema types it later).
//! A delimited string left open at the end runs to the end; nothing is refused.

use serde_json::Value;

use super::typed::{self, Val};

/// Deepest nesting read as objects and lists; deeper, a value is read as bare text.
const MAX_DEPTH: usize = 64;

/// A call's arguments dialect.
#[derive(Debug, Clone, Default)]
pub(crate) struct Dialect {
    pub unquoted_keys: bool,
    /// Bare values are strings, read as [`Dialect::pairs`] reads them.
    pub bare_strings: bool,
    /// `(open, close)` pairs around strings.
    pub delims: Vec<(String, String)>,
}

impl Dialect {
    /// The knobs of a field's `content_args`, if any is set.
    pub(crate) fn of(args: &serde_json::Map<String, Value>) -> Result<Option<Dialect>, String> {
        let unquoted_keys = args
            .get("unquoted_keys")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let bare_strings = match args.get("bare_values") {
            None => false,
            Some(Value::String(s)) if s == "string" => true,
            Some(_) => return Err("bare_values must be \"string\"".to_owned()),
        };
        let mut delims = Vec::new();
        if let Some(list) = args.get("string_delims") {
            let bad = || "string_delims must be a list of [open, close] string pairs".to_owned();
            for pair in list.as_array().ok_or_else(bad)? {
                match pair.as_array().map(Vec::as_slice) {
                    Some([Value::String(o), Value::String(c)])
                        if !o.is_empty() && !c.is_empty() =>
                    {
                        delims.push((o.clone(), c.clone()));
                    }
                    _ => return Err(bad()),
                }
            }
        }
        if bare_strings && delims.len() > 1 {
            return Err("bare_values reads one pair of string_delims".to_owned());
        }
        Ok(
            (unquoted_keys || bare_strings || !delims.is_empty()).then_some(Dialect {
                unquoted_keys,
                bare_strings,
                delims,
            }),
        )
    }

    /// The arguments of a call in the `bare_values: "string"` reading: the text inside the
    /// call's outer `{}` or `()` (either may be missing) as key and value pairs.
    pub(crate) fn pairs(&self, text: &str) -> Vec<(String, Val)> {
        let text = py_trim(text);
        let body = text.strip_prefix(['{', '(']).unwrap_or(text);
        let opens = body.matches('(').count();
        let closes = body.matches(')').count();
        let body = match body.strip_suffix('}') {
            Some(b) => b,
            None if opens < closes => body.strip_suffix(')').unwrap_or(body),
            None => body,
        };
        let delim = self.delims.first().map_or("\u{0}", |(o, _)| o.as_str());
        let mut reader = Reader {
            text: body,
            at: 0,
            delim,
        };
        reader.fields(None, 0)
    }

    /// `text` as standard JSON (compact), or the converted text when it still does not parse.
    pub(crate) fn to_json(&self, text: &str) -> String {
        let mut strings: Vec<String> = Vec::new();
        let mut working = text.to_owned();
        for (open, close) in &self.delims {
            let mut out = String::with_capacity(working.len());
            let mut rest = working.as_str();
            while let Some(at) = rest.find(open.as_str()) {
                let after = rest.get(at + open.len()..).unwrap_or_default();
                let Some(end) = after.find(close.as_str()) else {
                    break;
                };
                out.push_str(rest.get(..at).unwrap_or_default());
                out.push_str(&format!("\u{1}{}\u{2}", strings.len()));
                strings.push(after.get(..end).unwrap_or_default().to_owned());
                rest = after.get(end + close.len()..).unwrap_or_default();
            }
            out.push_str(rest);
            working = out;
        }
        if self.unquoted_keys {
            working = quote_keys(&working);
        }
        if !strings.is_empty() {
            working = restore(&working, &strings);
        }
        match serde_json::from_str::<Value>(&working) {
            Ok(v) => v.to_string(),
            Err(_) => working,
        }
    }
}

/// Puts each `\u{1}N\u{2}` placeholder's string back, as a JSON string, in one pass.
fn restore(text: &str, strings: &[String]) -> String {
    let mut out = String::with_capacity(text.len() + 16 * strings.len());
    let mut rest = text;
    while let Some(at) = rest.find('\u{1}') {
        out.push_str(rest.get(..at).unwrap_or_default());
        let after = rest.get(at + 1..).unwrap_or_default();
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let string = after
            .get(digits..)
            .filter(|r| r.starts_with('\u{2}'))
            .and_then(|_| after.get(..digits)?.parse::<usize>().ok())
            .and_then(|i| strings.get(i));
        match string {
            Some(s) => {
                out.push_str(&Value::String(s.clone()).to_string());
                rest = after.get(digits + 1..).unwrap_or_default();
            }
            None => {
                out.push('\u{1}');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Reads Gemma 4's argument text ([`Dialect::pairs`]) with one cursor: each byte is looked at a
/// bounded number of times.
struct Reader<'a> {
    text: &'a str,
    at: usize,
    delim: &'a str,
}

impl<'a> Reader<'a> {
    fn rest(&self) -> &'a str {
        self.text.get(self.at..).unwrap_or_default()
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn skip(&mut self, chars: &[char]) {
        let rest = self.rest();
        let n = rest.len() - rest.trim_start_matches(chars).len();
        self.at += n;
    }

    /// A delimited string, the cursor just past its open delimiter.
    fn string(&mut self) -> String {
        let rest = self.rest();
        match rest.find(self.delim) {
            Some(end) => {
                let s = rest.get(..end).unwrap_or_default().to_owned();
                self.at += end + self.delim.len();
                s
            }
            None => {
                let s = rest.to_owned();
                self.at = self.text.len();
                s
            }
        }
    }

    /// Bare text up to one of `stops` (or the end), trimmed.
    fn bare(&mut self, stops: &[char]) -> String {
        let rest = self.rest();
        let end = rest.find(stops).unwrap_or(rest.len());
        self.at += end;
        py_trim(rest.get(..end).unwrap_or_default()).to_owned()
    }

    /// A value: delimited, an object, a list or bare text up to one of `stops`. `None` where
    /// bare text is empty (the reader stops there, as vLLM's does).
    fn value(&mut self, stops: &[char], depth: usize) -> Option<Val> {
        if self.rest().starts_with(self.delim) {
            self.at += self.delim.len();
            return Some(Val::Str(self.string()));
        }
        match self.peek() {
            Some('{') if depth < MAX_DEPTH => {
                self.at += 1;
                Some(Val::Dict(self.fields(Some('}'), depth + 1)))
            }
            Some('[') if depth < MAX_DEPTH => {
                self.at += 1;
                Some(Val::List(self.items(depth + 1)))
            }
            _ => {
                let start = self.at;
                let text = self.bare(stops);
                (self.at > start).then_some(Val::Str(text))
            }
        }
    }

    /// `key:value` pairs up to `close` (consumed) or the end.
    fn fields(&mut self, close: Option<char>, depth: usize) -> Vec<(String, Val)> {
        let mut pairs = Vec::new();
        loop {
            self.skip(&[' ', ',', '\n', '\t']);
            let Some(c) = self.peek() else { break };
            if Some(c) == close {
                self.at += 1;
                break;
            }
            let rest = self.rest();
            let Some(colon) = rest.find(':') else {
                self.at = self.text.len();
                break;
            };
            let mut key = py_trim(rest.get(..colon).unwrap_or_default());
            if key.len() >= 2 * self.delim.len() {
                key = key
                    .strip_prefix(self.delim)
                    .and_then(|k| k.strip_suffix(self.delim))
                    .unwrap_or(key);
            }
            let key = key.to_owned();
            self.at += colon + 1;
            self.skip(&[' ', '\n', '\t']);
            if self.peek().is_none() {
                typed::put(&mut pairs, key, Val::Str(String::new()));
                break;
            }
            match self.value(&[',', '}', ']'], depth) {
                Some(v) => typed::put(&mut pairs, key, v),
                None => {
                    self.at = self.text.len();
                    break;
                }
            }
        }
        pairs
    }

    /// List items up to `]` (consumed) or the end.
    fn items(&mut self, depth: usize) -> Vec<Val> {
        let mut items = Vec::new();
        loop {
            self.skip(&[' ', ',', '\n', '\t']);
            match self.peek() {
                None => break,
                Some(']') => {
                    self.at += 1;
                    break;
                }
                Some(_) => match self.value(&[',', ']'], depth) {
                    Some(v) => items.push(v),
                    None => {
                        self.at = self.text.len();
                        break;
                    }
                },
            }
        }
        items
    }
}

/// Python's `str.strip()` of ASCII whitespace and the Unicode spaces it knows.
fn py_trim(s: &str) -> &str {
    s.trim_matches(char::is_whitespace)
}

/// Quotes a bare key (word chars then `:`) that follows `{` or `,`.
fn quote_keys(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut prev: Option<char> = None;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if matches!(prev, Some('{' | ',')) {
            let word: usize = rest
                .char_indices()
                .find(|&(_, w)| !(w.is_alphanumeric() || w == '_'))
                .map_or(rest.len(), |(i, _)| i);
            if word > 0 && rest.get(word..).is_some_and(|r| r.starts_with(':')) {
                out.push('"');
                out.push_str(rest.get(..word).unwrap_or_default());
                out.push_str("\":");
                prev = Some(':');
                rest = rest.get(word + 1..).unwrap_or_default();
                continue;
            }
        }
        out.push(c);
        prev = Some(c);
        rest = rest.get(c.len_utf8()..).unwrap_or_default();
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn delimited_strings_and_bare_keys_become_json() {
        let d = Dialect {
            unquoted_keys: true,
            bare_strings: false,
            delims: vec![("<|\"|>".into(), "<|\"|>".into())],
        };
        assert_eq!(
            d.to_json("{a:1,b:<|\"|>x, y: \"z\"<|\"|>,c:{d:[true]}}"),
            r#"{"a":1,"b":"x, y: \"z\"","c":{"d":[true]}}"#
        );
        assert_eq!(d.to_json("{a:"), "{\"a\":");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod pairs_tests {
    use super::*;

    fn gemma() -> Dialect {
        Dialect {
            unquoted_keys: true,
            bare_strings: true,
            delims: vec![("<|\"|>".into(), "<|\"|>".into())],
        }
    }

    fn dump(text: &str) -> String {
        typed::dump_args(&gemma().pairs(text))
    }

    #[test]
    fn bare_values_stay_strings_and_nesting_is_read() {
        assert_eq!(
            dump("{a:42,b:<|\"|>x, {y}<|\"|>,c:{d:[1,<|\"|>e<|\"|>]},f:true}"),
            r#"{"a": "42", "b": "x, {y}", "c": {"d": ["1", "e"]}, "f": "true"}"#
        );
        assert_eq!(dump("(city:<|\"|>Paris<|\"|>)"), r#"{"city": "Paris"}"#);
        assert_eq!(dump("{city:<|\"|>Pa"), r#"{"city": "Pa"}"#);
        assert_eq!(dump("{}"), "{}");
        assert_eq!(dump("{a:"), r#"{"a": ""}"#);
    }

    #[test]
    fn deep_nesting_is_linear_and_does_not_overflow() {
        let deep = format!("{{a:{}1{}}}", "[".repeat(100_000), "]".repeat(100_000));
        let out = dump(&deep);
        assert!(out.starts_with(r#"{"a": [[["#), "{}", &out[..40]);
    }

    #[test]
    fn many_strings_are_restored_in_one_pass() {
        let d = Dialect {
            unquoted_keys: false,
            bare_strings: false,
            delims: vec![("<q>".into(), "</q>".into())],
        };
        let text = format!("[{}]", vec!["<q>x</q>"; 20_000].join(","));
        let json = d.to_json(&text);
        assert_eq!(json.matches("\"x\"").count(), 20_000);
    }
}
