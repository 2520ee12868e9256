//! One call's argument text read as Python reads it: keyword values as literals, positional
//! arguments skipped (see the module above).

use super::*;

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

/// Python's `ast.literal_eval` of `src`, where it is one literal value (as JSON can hold it).
pub(crate) fn literal(src: &str) -> Option<Val> {
    let mut p = Parser { s: src, i: 0 };
    p.ws();
    let (value, _) = p.value(0)?;
    p.ws();
    p.end().then_some(value)
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
