//! Where a call's raw JSON arguments end, for the calls whose open delimiter captures the name
//! and whose region's text is the arguments: the arguments are one JSON value, and text after
//! it is not theirs (vLLM's JSON parsers read the value with `raw_decode` and stop there).
//!
//! The open delimiter's own text may leave JSON containers open (Llama's
//! `{"name": "f", "parameters": ` leaves the call's object open): the call ends where those
//! close, its arguments where the value after them does. Text that cannot be JSON (outside a
//! string, a char no JSON value has) ends the tracking: from there the region runs to its close
//! delimiter as written.

use serde::{Deserialize, Serialize};

/// The tracking state of one call's arguments (carried in the template state).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Args {
    /// Containers open, the open delimiter's included.
    #[serde(rename = "d", default, skip_serializing_if = "is_zero")]
    depth: u32,
    /// Containers the open delimiter left open.
    #[serde(rename = "b", default, skip_serializing_if = "is_zero")]
    base: u32,
    #[serde(rename = "q", default, skip_serializing_if = "std::ops::Not::not")]
    quoted: bool,
    #[serde(rename = "e", default, skip_serializing_if = "std::ops::Not::not")]
    escaped: bool,
    /// The arguments value has begun.
    #[serde(rename = "s", default, skip_serializing_if = "std::ops::Not::not")]
    started: bool,
    /// The arguments value has ended.
    #[serde(rename = "v", default, skip_serializing_if = "std::ops::Not::not")]
    done: bool,
    /// The text is not JSON: no longer tracked.
    #[serde(rename = "x", default, skip_serializing_if = "std::ops::Not::not")]
    lost: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What a char is to the arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Text of the arguments.
    Arguments,
    /// Text of the call after its arguments (the rest of an object the open began).
    Call,
    /// The char that ends the call (it closes the object the open began); not taken.
    Last,
    /// The call had ended before this char; not taken.
    After,
}

impl Args {
    /// The tracking of a call whose open delimiter's text is `open`.
    pub(crate) fn after_open(open: &str) -> Args {
        let mut a = Args::default();
        for c in open.chars() {
            if a.quoted {
                a.string_char(c);
            } else {
                match c {
                    '"' => a.quoted = true,
                    '{' | '[' => a.depth = a.depth.saturating_add(1),
                    '}' | ']' => a.depth = a.depth.saturating_sub(1),
                    _ => {}
                }
            }
        }
        a.quoted = false;
        a.escaped = false;
        a.base = a.depth;
        a
    }

    fn string_char(&mut self, c: char) {
        if self.escaped {
            self.escaped = false;
        } else if c == '\\' {
            self.escaped = true;
        } else if c == '"' {
            self.quoted = false;
        }
    }

    /// Whether the text is tracked (it is JSON so far).
    pub(crate) fn tracked(&self) -> bool {
        !self.lost
    }

    /// Whether a close delimiter here is text of the call: inside a string, or inside the
    /// call's JSON before it is whole.
    pub(crate) fn inside(&self) -> bool {
        !self.lost && (self.quoted || (self.started && self.depth > 0) || self.depth > self.base)
    }

    /// Whether the text is inside a JSON string of the arguments.
    pub(crate) fn quoted(&self) -> bool {
        !self.lost && self.quoted
    }

    /// Whether any of the arguments has come (their value has begun, or text that is not JSON).
    pub(crate) fn begun(&self) -> bool {
        self.started || self.lost || self.base > 0
    }

    /// Whether the call's JSON is whole: its close delimiter, if one follows, is what comes
    /// next.
    pub(crate) fn ended(&self) -> bool {
        !self.lost && self.done && self.depth == 0
    }

    /// Whether the call ends with `c`, the next char (it closes the object the open began).
    pub(crate) fn ends_with(&self, c: char) -> bool {
        !self.lost && self.done && !self.quoted && self.depth == 1 && matches!(c, '}' | ']')
    }

    /// Takes the char that ends the call (see [`Args::ends_with`]).
    pub(crate) fn take_last(&mut self) {
        self.depth = 0;
    }

    /// Reads one char of the region's text.
    pub(crate) fn step(&mut self, c: char) -> Step {
        if self.lost {
            return Step::Arguments;
        }
        if self.ended() {
            return Step::After;
        }
        if self.ends_with(c) {
            return Step::Last;
        }
        let before = self.done;
        if self.quoted {
            self.string_char(c);
            if !self.quoted && self.depth == self.base {
                self.done = true;
            }
        } else if !c.is_whitespace() {
            match c {
                '"' => {
                    self.quoted = true;
                    self.started = true;
                }
                '{' | '[' => {
                    self.depth = self.depth.saturating_add(1);
                    self.started = true;
                }
                '}' | ']' if self.depth > self.base || (self.done && self.depth > 0) => {
                    self.depth -= 1;
                    if self.depth == self.base {
                        self.done = true;
                    }
                }
                // Scalars inside a container, and the call's own keys after its arguments.
                ':' | ',' | '-' | '+' | '.' if self.depth > self.base || self.done => {}
                c if c.is_ascii_alphanumeric() && (self.depth > self.base || self.done) => {}
                _ => {
                    self.lost = true;
                    return Step::Arguments;
                }
            }
        }
        if before { Step::Call } else { Step::Arguments }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arguments' text, and the text left after the call.
    fn split(open: &str, text: &str) -> (String, String, bool) {
        let mut a = Args::after_open(open);
        let mut args = String::new();
        for (i, c) in text.char_indices() {
            match a.step(c) {
                Step::Arguments => args.push(c),
                Step::Call => {}
                Step::Last => {
                    a.take_last();
                    return (args, text[i + c.len_utf8()..].to_owned(), a.ended());
                }
                Step::After => return (args, text[i..].to_owned(), a.ended()),
            }
        }
        (args, String::new(), a.ended())
    }

    #[test]
    fn the_value_ends_the_arguments() {
        let (args, rest, ended) = split("", r#"{"a": {"b": "}]"}, "n": [1, -2.5e3, true]} tail"#);
        assert_eq!(args, r#"{"a": {"b": "}]"}, "n": [1, -2.5e3, true]}"#);
        assert_eq!(rest, " tail");
        assert!(ended);
    }

    #[test]
    fn an_object_the_open_began_ends_the_call() {
        let open = r#"{"name": "f", "parameters": "#;
        let (args, rest, ended) = split(open, "{\"city\": \"Paris\"}}\nI have called it.");
        assert_eq!(args, r#"{"city": "Paris"}"#);
        assert_eq!(rest, "\nI have called it.");
        assert!(ended);
        let (args, rest, _) = split(open, r#"{"x": 1}, "id": "7"}; {"name""#);
        assert_eq!(
            (args.as_str(), rest.as_str()),
            (r#"{"x": 1}"#, r#"; {"name""#)
        );
    }

    #[test]
    fn text_that_is_not_json_is_not_tracked() {
        let (args, rest, ended) = split("", "<tool_call>{}");
        assert_eq!(
            (args.as_str(), rest.as_str(), ended),
            ("<tool_call>{}", "", false)
        );
        let mut a = Args::after_open("");
        assert!(!a.inside());
        a.step('{');
        assert!(a.inside());
    }
}
