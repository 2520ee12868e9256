//! The `json` content parser's dialect knobs (`content_args`): strings between custom
//! delimiters (`string_delims`) and bare keys (`unquoted_keys`), turned into standard JSON when
//! a call closes. Text in such a dialect is not JSON until then, so it is not streamed.

use serde_json::Value;

/// A call's arguments dialect.
#[derive(Debug, Clone, Default)]
pub(crate) struct Dialect {
    pub unquoted_keys: bool,
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
        Ok((unquoted_keys || !delims.is_empty()).then_some(Dialect {
            unquoted_keys,
            delims,
        }))
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
        for (i, s) in strings.iter().enumerate() {
            working = working.replace(
                &format!("\u{1}{i}\u{2}"),
                &Value::String(s.clone()).to_string(),
            );
        }
        match serde_json::from_str::<Value>(&working) {
            Ok(v) => v.to_string(),
            Err(_) => working,
        }
    }
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
            delims: vec![("<|\"|>".into(), "<|\"|>".into())],
        };
        assert_eq!(
            d.to_json("{a:1,b:<|\"|>x, y: \"z\"<|\"|>,c:{d:[true]}}"),
            r#"{"a":1,"b":"x, y: \"z\"","c":{"d":[true]}}"#
        );
        assert_eq!(d.to_json("{a:"), "{\"a\":");
    }
}
