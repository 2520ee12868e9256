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
pub(crate) const MAX_ARGS: usize = super::exec::MAX_BODY;
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

/// A call of a Python list opens (`Name`) or gets its arguments, as the rules allow.
pub(super) fn list_event(
    calls: &mut u32,
    k: super::exec::Knobs<'_>,
    e: Event,
    out: &mut crate::parse::delta::Delta,
) {
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

/// A call's argument text (between its parentheses) as the JSON object `json.dumps` writes of
/// its keyword arguments; `None` where it is not Python keyword arguments of literal values.
pub(crate) fn arguments(src: &str) -> Option<String> {
    let mut p = Parser { s: src, i: 0 };
    let mut pairs: Vec<(String, Val)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    p.ws();
    while !p.end() {
        if let Some(key) = p.keyword() {
            let (value, _) = p.value(0)?;
            // A repeated keyword keeps its first place and takes the last value, as the dict
            // vLLM builds of `ast.parse`'s keywords does.
            match at.get(&key) {
                Some(&n) => {
                    if let Some(slot) = pairs.get_mut(n) {
                        slot.1 = value;
                    }
                }
                None => {
                    at.insert(key.clone(), pairs.len());
                    pairs.push((key, value));
                }
            }
        } else {
            p.skip_positional()?;
        }
        p.ws();
        if p.end() {
            break;
        }
        p.eat(',')?;
        p.ws();
    }
    Some(typed::dump_args(&pairs))
}

struct Parser<'a> {
    s: &'a str,
    i: usize,
}

/// Whether a parsed value is a constant (`ast.Constant`), which a dict key must be.
type Constant = bool;

impl Parser<'_> {
    fn end(&self) -> bool {
        self.i >= self.s.len()
    }

    fn peek(&self) -> Option<char> {
        self.s.get(self.i..)?.chars().next()
    }

    fn peek2(&self) -> Option<char> {
        let mut it = self.s.get(self.i..)?.chars();
        it.next();
        it.next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += c.len_utf8();
        Some(c)
    }

    fn eat(&mut self, c: char) -> Option<()> {
        (self.peek() == Some(c)).then(|| self.i += c.len_utf8())
    }

    /// Whitespace, comments and line continuations (all allowed inside brackets).
    fn ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() || c == '\u{c}' {
                self.i += c.len_utf8();
            } else if c == '#' {
                while let Some(c) = self.bump() {
                    if c == '\n' {
                        break;
                    }
                }
            } else if c == '\\' && matches!(self.peek2(), Some('\n' | '\r')) {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    fn ident(&mut self) -> Option<&str> {
        let start = self.i;
        match self.peek() {
            Some(c) if c.is_alphabetic() || c == '_' => {}
            _ => return None,
        }
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.bump();
        }
        self.s.get(start..self.i)
    }

    /// `NAME =` (not `==`) at the cursor: the keyword, the cursor after the `=`.
    fn keyword(&mut self) -> Option<String> {
        let start = self.i;
        let name = self.ident().map(str::to_owned);
        if let Some(name) = name {
            self.ws();
            if self.eat('=').is_some() && self.peek() != Some('=') {
                self.ws();
                return Some(name);
            }
        }
        self.i = start;
        None
    }

    /// A positional argument (vLLM reads only the keywords): skipped to its comma.
    fn skip_positional(&mut self) -> Option<()> {
        let mut depth = 0u32;
        while let Some(c) = self.peek() {
            match c {
                ',' if depth == 0 => break,
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth = depth.checked_sub(1)?,
                '\'' | '"' => {
                    self.string_body(false, false)?;
                    continue;
                }
                '#' => {
                    self.ws();
                    continue;
                }
                _ => {}
            }
            self.bump();
        }
        Some(())
    }

    /// A literal value.
    fn value(&mut self, depth: usize) -> Option<(Val, Constant)> {
        if depth > MAX_DEPTH {
            return None;
        }
        let c = self.peek()?;
        let v = match c {
            '-' | '+' => {
                self.bump();
                self.ws();
                let (v, _) = self.value(depth + 1)?;
                let v = match (c, v) {
                    ('+', v @ (Val::Int(_) | Val::Float(_))) => v,
                    ('-', Val::Float(x)) => Val::Float(-x),
                    ('-', Val::Int(d)) => Val::Int(match d.strip_prefix('-') {
                        Some(pos) => pos.to_owned(),
                        None if d == "0" => d,
                        None => format!("-{d}"),
                    }),
                    _ => return None,
                };
                (v, false)
            }
            '[' => {
                self.bump();
                (Val::List(self.items(']', depth)?), false)
            }
            '(' => {
                self.bump();
                self.ws();
                if self.eat(')').is_some() {
                    return Some((Val::List(Vec::new()), false));
                }
                let first = self.value(depth + 1)?;
                self.ws();
                if self.eat(')').is_some() {
                    return Some(first);
                }
                self.eat(',')?;
                let mut items = vec![first.0];
                items.extend(self.items(')', depth)?);
                (Val::List(items), false)
            }
            '{' => {
                self.bump();
                (self.braces(depth)?, false)
            }
            '\'' | '"' => self.strings(false, false)?,
            '0'..='9' | '.' => (self.number()?, true),
            _ => {
                let word = self.ident()?.to_owned();
                let lower = word.to_ascii_lowercase();
                if matches!(self.peek(), Some('\'' | '"'))
                    && matches!(
                        lower.as_str(),
                        "r" | "u" | "f" | "fr" | "rf" | "b" | "br" | "rb"
                    )
                {
                    if lower.contains('b') {
                        return None;
                    }
                    self.strings(lower.contains('r'), lower.contains('f'))?
                } else {
                    match word.as_str() {
                        "True" => (Val::Bool(true), true),
                        "False" => (Val::Bool(false), true),
                        "None" => (Val::Null, true),
                        "true" => (Val::Bool(true), false),
                        "false" => (Val::Bool(false), false),
                        "null" => (Val::Null, false),
                        _ => return None,
                    }
                }
            }
        };
        Some(v)
    }

    /// Values up to `close` (a trailing comma allowed), after the opening bracket.
    fn items(&mut self, close: char, depth: usize) -> Option<Vec<Val>> {
        let mut out = Vec::new();
        loop {
            self.ws();
            if self.eat(close).is_some() {
                return Some(out);
            }
            out.push(self.value(depth + 1)?.0);
            self.ws();
            if self.eat(close).is_some() {
                return Some(out);
            }
            self.eat(',')?;
        }
    }

    /// A dict or a set, after its `{`.
    fn braces(&mut self, depth: usize) -> Option<Val> {
        self.ws();
        if self.eat('}').is_some() {
            return Some(Val::Dict(Vec::new()));
        }
        let (first, constant) = self.value(depth + 1)?;
        self.ws();
        if self.eat(':').is_none() {
            let mut items = vec![first];
            if self.eat('}').is_some() {
                return Some(Val::List(items));
            }
            self.eat(',')?;
            items.extend(self.items('}', depth)?);
            return Some(Val::List(items));
        }
        let mut pairs: Vec<(String, Val)> = Vec::new();
        let mut at: HashMap<(bool, String), usize> = HashMap::new();
        let mut key = (first, constant);
        loop {
            if !key.1 {
                return None;
            }
            let k = match key.0 {
                Val::Str(s) => (true, s),
                Val::Int(d) => (false, d),
                Val::Bool(b) => (false, if b { "true" } else { "false" }.to_owned()),
                Val::Null => (false, "null".to_owned()),
                f @ Val::Float(_) => {
                    let mut s = String::new();
                    typed::dump(&f, &mut s);
                    (false, s)
                }
                _ => return None,
            };
            self.ws();
            let (v, _) = self.value(depth + 1)?;
            match at.get(&k) {
                Some(&n) => {
                    if let Some(slot) = pairs.get_mut(n) {
                        slot.1 = v;
                    }
                }
                None => {
                    at.insert(k.clone(), pairs.len());
                    pairs.push((k.1, v));
                }
            }
            self.ws();
            if self.eat('}').is_some() {
                return Some(Val::Dict(pairs));
            }
            self.eat(',')?;
            self.ws();
            if self.eat('}').is_some() {
                return Some(Val::Dict(pairs));
            }
            key = self.value(depth + 1)?;
            self.ws();
            self.eat(':')?;
        }
    }

    /// One or more adjacent string literals (the first's prefix already read), joined.
    fn strings(&mut self, raw: bool, f: bool) -> Option<(Val, Constant)> {
        let mut out = self.string_body(raw, f)?;
        let mut constant = !f;
        loop {
            let back = self.i;
            self.ws();
            let (raw, f) = match self.peek() {
                Some('\'' | '"') => (false, false),
                Some(c) if c.is_alphabetic() => {
                    let word = self.ident().map(str::to_ascii_lowercase);
                    match (word.as_deref(), self.peek()) {
                        (Some(w @ ("r" | "u" | "f" | "fr" | "rf")), Some('\'' | '"')) => {
                            (w.contains('r'), w.contains('f'))
                        }
                        (Some("b" | "br" | "rb"), Some('\'' | '"')) => return None,
                        _ => {
                            self.i = back;
                            break;
                        }
                    }
                }
                _ => {
                    self.i = back;
                    break;
                }
            };
            out.push_str(&self.string_body(raw, f)?);
            constant &= !f;
        }
        Some((Val::Str(out), constant))
    }

    /// A string literal from its opening quote: its value.
    fn string_body(&mut self, raw: bool, f: bool) -> Option<String> {
        let q = self.bump()?;
        let triple = self.peek() == Some(q) && self.peek2() == Some(q);
        if triple {
            self.i += 2 * q.len_utf8();
        }
        let mut out = String::new();
        loop {
            let c = self.bump()?;
            if c == q {
                if !triple {
                    return Some(out);
                }
                if self.peek() == Some(q) && self.peek2() == Some(q) {
                    self.i += 2 * q.len_utf8();
                    return Some(out);
                }
                out.push(c);
                continue;
            }
            match c {
                '\\' if raw => {
                    out.push('\\');
                    if let Some(n) = self.bump() {
                        out.push(n);
                    }
                }
                '\\' => self.escape(&mut out)?,
                '{' | '}' if f => {
                    // Only doubled braces (no placeholders) are a constant's text.
                    self.eat(c)?;
                    out.push(c);
                }
                _ => out.push(c),
            }
        }
    }

    /// An escape sequence after its backslash.
    fn escape(&mut self, out: &mut String) -> Option<()> {
        let c = self.bump()?;
        let code = |p: &mut Self, n: usize| -> Option<char> {
            let start = p.i;
            let digits = p.s.get(start..start + n)?;
            if !digits.chars().all(|d| d.is_ascii_hexdigit()) {
                return None;
            }
            p.i += n;
            char::from_u32(u32::from_str_radix(digits, 16).ok()?)
        };
        match c {
            '\n' => {}
            '\r' => {
                self.eat('\n');
            }
            '\\' | '\'' | '"' => out.push(c),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            'x' => out.push(code(self, 2)?),
            'u' => out.push(code(self, 4)?),
            'U' => out.push(code(self, 8)?),
            '0'..='7' => {
                let mut n = c.to_digit(8)?;
                for _ in 0..2 {
                    match self.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            n = n * 8 + d;
                            self.bump();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(n)?);
            }
            // `\N{NAME}` needs Unicode's name table.
            'N' => return None,
            other => {
                out.push('\\');
                out.push(other);
            }
        }
        Some(())
    }

    /// A number literal.
    fn number(&mut self) -> Option<Val> {
        let start = self.i;
        let radix = match (self.peek(), self.peek2()) {
            (Some('0'), Some('x' | 'X')) => 16,
            (Some('0'), Some('o' | 'O')) => 8,
            (Some('0'), Some('b' | 'B')) => 2,
            _ => 10,
        };
        if radix != 10 {
            self.i += 2;
            let body = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
            let digits: String = body.chars().filter(|&c| c != '_').collect();
            if digits.is_empty() || body.starts_with("__") || body.ends_with('_') {
                return None;
            }
            let n = u128::from_str_radix(&digits, radix).ok()?;
            return Some(Val::Int(n.to_string()));
        }
        let mut float = false;
        self.take_while(|c| c.is_ascii_digit() || c == '_');
        if self.peek() == Some('.') {
            float = true;
            self.bump();
            self.take_while(|c| c.is_ascii_digit() || c == '_');
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            float = true;
            self.bump();
            if matches!(self.peek(), Some('+' | '-')) {
                self.bump();
            }
            self.take_while(|c| c.is_ascii_digit() || c == '_');
        }
        if self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            // `1j`, `1abc`: not a JSON number.
            return None;
        }
        let text = self.s.get(start..self.i)?;
        if text.contains("__") || text.ends_with('_') || text.contains("_.") || text.contains("._")
        {
            return None;
        }
        let clean: String = text.chars().filter(|&c| c != '_').collect();
        if float {
            let x: f64 = clean.parse().ok()?;
            return Some(Val::Float(x));
        }
        let trimmed = clean.trim_start_matches('0');
        if trimmed.is_empty() {
            return (!clean.is_empty()).then(|| Val::Int("0".to_owned()));
        }
        // Python refuses leading zeros on a decimal integer; they are read as the number
        // (as vLLM's `lfm2` reads them).
        Some(Val::Int(trimmed.to_owned()))
    }

    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> &str {
        let start = self.i;
        while self.peek().is_some_and(&keep) {
            self.bump();
        }
        self.s.get(start..self.i).unwrap_or_default()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn args(s: &str) -> Option<String> {
        arguments(s)
    }

    #[test]
    fn literals_are_written_as_json_dumps_writes_them() {
        let cases = [
            (r#"city="Paris""#, r#"{"city": "Paris"}"#),
            ("q='x', n=1", r#"{"q": "x", "n": 1}"#),
            (
                "a=True, b=None, c=false, d=null",
                r#"{"a": true, "b": null, "c": false, "d": null}"#,
            ),
            (
                "x=-1.5e3, y=+2, z=0x1F",
                r#"{"x": -1500.0, "y": 2, "z": 31}"#,
            ),
            (
                "t=(1, 2), s={'a'}, e=()",
                r#"{"t": [1, 2], "s": ["a"], "e": []}"#,
            ),
            (
                "d={'k': [1, {2: 'v'}], True: 1}",
                r#"{"d": {"k": [1, {"2": "v"}], "true": 1}}"#,
            ),
            (
                r"s='a\nb\x41\u00e9', r=r'\d'",
                r#"{"s": "a\nbAé", "r": "\\d"}"#,
            ),
            ("s='a' \"b\"  f'c{{'", r#"{"s": "abc{"}"#),
            ("s='''it's'''", r#"{"s": "it's"}"#),
            ("1, 'x', k=1,", r#"{"k": 1}"#),
            ("", "{}"),
            ("c='a', u=1, c='b'", r#"{"c": "b", "u": 1}"#),
            ("n=007, z=00", r#"{"n": 7, "z": 0}"#),
            ("x=1e16, y=1_000", r#"{"x": 1e+16, "y": 1000}"#),
        ];
        for (src, want) in cases {
            assert_eq!(args(src).as_deref(), Some(want), "{src}");
        }
    }

    #[test]
    fn what_python_refuses_is_not_read() {
        for src in [
            "x=b'a'",
            "x=y",
            "x=1j",
            "x=f'{a}'",
            "x={true: 1}",
            "x={-1: 1}",
            "x=[1,",
            "x='\\N{DASH}'",
        ] {
            assert_eq!(args(src), None, "{src}");
        }
        let deep = format!("x={}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(args(&deep), None);
    }

    #[test]
    fn a_list_streams_as_it_reads_whole() {
        let text = r#"city="Pa)ris", n=[1, ")"]), search(query='x # y') ] tail"#;
        let whole = {
            let mut py = Py::default();
            let mut ev = Vec::new();
            let n = py.feed(text, &mut |e| ev.push(e));
            (n, render(&ev))
        };
        assert_eq!(&text[whole.0..], " tail");
        assert_eq!(
            whole.1,
            r#"{"city": "Pa)ris", "n": [1, ")"]}, =search, {"query": "x # y"}"#
        );
        for cut in 1..text.len() {
            if !text.is_char_boundary(cut) {
                continue;
            }
            let mut py = Py::default();
            let mut ev = Vec::new();
            let a = py.feed(&text[..cut], &mut |e| ev.push(e));
            let py: Py = serde_json::from_str(&serde_json::to_string(&py).unwrap()).unwrap();
            let mut py = py;
            let b = if a == cut {
                py.feed(&text[cut..], &mut |e| ev.push(e))
            } else {
                0
            };
            assert_eq!((a + b, render(&ev)), whole, "{cut}");
        }
    }

    fn render(ev: &[Event]) -> String {
        ev.iter()
            .map(|e| match e {
                Event::Name(n) => format!("={n}"),
                Event::Arguments(a) => a.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}
