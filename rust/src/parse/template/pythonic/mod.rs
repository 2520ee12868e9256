//! Python call lists: `[get_weather(city="Paris"), search(query='x')]`, the tool-call format of
//! vLLM's `pythonic`, `llama4_pythonic` and `olmo3` parsers (`vllm/tool_parsers/utils.py`:
//! each keyword argument's value is a Python literal, written as JSON with `json.dumps`).
//!
//! [`Py`] is the streaming half: it follows the list a char at a time (strings, comments and
//! brackets, so a `)` or `]` inside a string is text), sends each call's name when its `(` comes
//! and its arguments when its `)` does. [`arguments`] reads one call's argument text as Python
//! does: keyword values as literals (strings with their prefixes, escapes and implicit
//! concatenation, numbers, `True`/`None` and JSON's `true`/`null`, lists, tuples, sets, dicts
//! with constant keys, signed numbers, f-strings without placeholders), positional arguments
//! skipped. Both are linear in the text; nesting deeper than [`MAX_DEPTH`] is not read.
//! Argument text that is not such a list of keywords is sent as written.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::typed::{self, Val};

/// Most bytes of one call's argument text kept (the rest is scanned, not read).
pub(crate) const MAX_ARGS: usize = super::MAX_BODY;
/// Most bytes of a call's name.
const MAX_NAME: usize = 256;
/// Deepest nesting of literals read.
const MAX_DEPTH: usize = 64;

/// Where the list is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Phase {
    /// Inside a call's parentheses.
    #[default]
    #[serde(rename = "a")]
    Args,
    /// After a call's `)`: `,` or `]`.
    #[serde(rename = "c")]
    After,
    /// After a `,`: the next call's name, or `]`.
    #[serde(rename = "b")]
    Before,
    /// In a call's name.
    #[serde(rename = "n")]
    Name,
    /// After the name, before its `(`.
    #[serde(rename = "p")]
    Paren,
    /// The list ended (its `]`, or text that cannot go on).
    #[serde(rename = "d")]
    Done,
}

/// Where a string or comment in a call's arguments is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Lex {
    #[default]
    #[serde(rename = "o")]
    Out,
    /// One quote seen: a string opens.
    #[serde(rename = "1")]
    Quote1,
    /// Two quotes: an empty string, or a triple-quoted one opening.
    #[serde(rename = "2")]
    Quote2,
    #[serde(rename = "s")]
    Single,
    #[serde(rename = "t")]
    Triple,
    /// In a triple-quoted string, one or two of its quotes seen.
    #[serde(rename = "u")]
    Close1,
    #[serde(rename = "v")]
    Close2,
    #[serde(rename = "#")]
    Comment,
}

/// The open call list's scanner.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Py {
    #[serde(rename = "p", default)]
    phase: Phase,
    #[serde(rename = "l", default)]
    lex: Lex,
    /// The quote of the open string.
    #[serde(rename = "q", default)]
    quote: char,
    /// A backslash in a string: the next char is escaped.
    #[serde(rename = "e", default, skip_serializing_if = "std::ops::Not::not")]
    escaped: bool,
    /// Brackets open in the arguments.
    #[serde(rename = "d", default, skip_serializing_if = "is_zero")]
    depth: u32,
    /// The open call's argument text, or the name being read.
    #[serde(rename = "t", default, skip_serializing_if = "String::is_empty")]
    #[serde(
        serialize_with = "crate::parse::carry::text",
        deserialize_with = "crate::parse::carry::text_in"
    )]
    text: String,
    /// The argument text was longer than [`MAX_ARGS`].
    #[serde(rename = "x", default, skip_serializing_if = "std::ops::Not::not")]
    over: bool,
    /// Calls one a line, not bracketed (Olmo 3).
    #[serde(rename = "n", default, skip_serializing_if = "std::ops::Not::not")]
    lines: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What the list gives.
pub(crate) enum Event {
    /// A call opens with this name.
    Name(String),
    /// The open call's arguments.
    Arguments(String),
}

fn name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '.'
}

impl Py {
    /// A scanner in the first call's arguments (the open delimiter took its `(`).
    pub(crate) fn new(lines: bool) -> Py {
        Py {
            lines,
            ..Py::default()
        }
    }

    /// Whether a carried state is one the scanner could have written.
    pub(crate) fn check(&self) -> Result<(), String> {
        crate::parse::carry::carried("call list text", self.text.len(), MAX_ARGS + 4)
    }

    /// Whether the list has ended.
    pub(crate) fn done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// Reads `text` up to where the list ends; returns the bytes taken.
    pub(crate) fn feed(&mut self, text: &str, emit: &mut impl FnMut(Event)) -> usize {
        for (i, c) in text.char_indices() {
            if self.phase == Phase::Done {
                return i;
            }
            if !self.step(c, emit) {
                self.phase = Phase::Done;
                return i;
            }
        }
        text.len()
    }

    /// The output ended: a call still open is sent as far as it came.
    pub(crate) fn finish(&mut self, emit: &mut impl FnMut(Event)) {
        if self.phase == Phase::Args {
            let text = std::mem::take(&mut self.text);
            emit(Event::Arguments(text));
        }
        self.phase = Phase::Done;
    }

    /// One char; `false` where it cannot be part of the list (it is not taken).
    fn step(&mut self, c: char, emit: &mut impl FnMut(Event)) -> bool {
        match self.phase {
            Phase::Args => {
                if self.lex == Lex::Out && self.depth == 0 && c == ')' {
                    let text = std::mem::take(&mut self.text);
                    let args = if self.over { None } else { arguments(&text) };
                    emit(Event::Arguments(args.unwrap_or(text)));
                    self.over = false;
                    self.phase = Phase::After;
                    return true;
                }
                self.lex_char(c);
                if self.text.len() + c.len_utf8() <= MAX_ARGS {
                    self.text.push(c);
                } else {
                    self.over = true;
                }
                true
            }
            Phase::After => match c {
                ',' => {
                    self.phase = Phase::Before;
                    true
                }
                '\n' if self.lines => {
                    self.phase = Phase::Before;
                    true
                }
                ']' if !self.lines => {
                    self.phase = Phase::Done;
                    true
                }
                _ => c.is_whitespace(),
            },
            Phase::Before => match c {
                ']' if !self.lines => {
                    self.phase = Phase::Done;
                    true
                }
                _ if c.is_whitespace() => true,
                _ if c.is_alphabetic() || c == '_' => {
                    self.text.clear();
                    self.text.push(c);
                    self.phase = Phase::Name;
                    true
                }
                _ => false,
            },
            Phase::Name | Phase::Paren => match c {
                '(' => {
                    let name = std::mem::take(&mut self.text);
                    emit(Event::Name(name));
                    self.phase = Phase::Args;
                    self.lex = Lex::Out;
                    self.depth = 0;
                    true
                }
                _ if c.is_whitespace() => {
                    self.phase = Phase::Paren;
                    true
                }
                _ if self.phase == Phase::Name
                    && name_char(c)
                    && self.text.len() + c.len_utf8() <= MAX_NAME =>
                {
                    self.text.push(c);
                    true
                }
                _ => false,
            },
            Phase::Done => false,
        }
    }

    /// Follows strings, comments and brackets in the arguments.
    fn lex_char(&mut self, c: char) {
        let q = self.quote;
        match self.lex {
            Lex::Out => match c {
                '\'' | '"' => {
                    self.quote = c;
                    self.lex = Lex::Quote1;
                }
                '#' => self.lex = Lex::Comment,
                '(' | '[' | '{' => self.depth = self.depth.saturating_add(1),
                ')' | ']' | '}' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            },
            Lex::Comment => {
                if c == '\n' {
                    self.lex = Lex::Out;
                }
            }
            Lex::Quote1 if c == q => self.lex = Lex::Quote2,
            Lex::Quote1 => {
                self.lex = Lex::Single;
                self.in_string(c, false);
            }
            Lex::Quote2 if c == q => self.lex = Lex::Triple,
            Lex::Quote2 => {
                self.lex = Lex::Out;
                self.lex_char(c);
            }
            Lex::Single => self.in_string(c, false),
            Lex::Triple | Lex::Close1 | Lex::Close2 => self.in_string(c, true),
        }
    }

    fn in_string(&mut self, c: char, triple: bool) {
        if self.escaped {
            self.escaped = false;
            if triple {
                self.lex = Lex::Triple;
            }
            return;
        }
        if c == '\\' {
            self.escaped = true;
            if triple {
                self.lex = Lex::Triple;
            }
            return;
        }
        if c != self.quote {
            if triple {
                self.lex = Lex::Triple;
            }
            return;
        }
        self.lex = match self.lex {
            Lex::Single | Lex::Close2 => Lex::Out,
            Lex::Triple => Lex::Close1,
            Lex::Close1 => Lex::Close2,
            other => other,
        };
    }
}

mod parser;
#[cfg(test)]
mod tests;

pub(crate) use parser::{arguments, literal};
