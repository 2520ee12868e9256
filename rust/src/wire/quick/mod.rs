//! A hand reader for what every derender body carries; serde reads the rest.
//!
//! [`super::read::parse`] tries this reader before serde. It reads the fields that come with
//! requests (the generate choices' ids, finish reasons and logprobs, the stream state, the
//! flags, the request objects' shape) and skips the fields derender does not read with the
//! checks serde makes when it ignores them. Each other field's value is read by serde where it
//! stands, in one pass that says where it ended (its nesting bounded as the whole body's would
//! be), so its type and its checks stay serde's.
//!
//! Whatever it is not sure of gives `None`: an escaped key, a duplicate field, a number serde
//! refuses for its type, a float serde could read otherwise (a long integer, `-0`, a value out
//! of range or rounded to zero), a lone surrogate, a control character in a string, nesting
//! deeper than [`MAX_DEPTH`], and prompt logprobs (handed to serde they would be read twice).
//! Serde then parses the whole body, so a body this reader takes reads as serde reads it, and
//! every error keeps serde's message and path. The tests hold the two to the same result: on
//! hand-picked bodies, on every one-byte edit of two bodies, and on random edits of a few bytes.
//!
//! Over 2,000 one-id chat chunks of the load test (855 bytes each on average), callgrind counts
//! 18,350 instructions a body for serde's parse and 12,845 for this reader's.

use crate::escape::special;
use std::borrow::Cow;

use serde::Deserialize;

use super::input::Body;

mod objects;
#[cfg(test)]
mod tests;

/// Deeper than this, serde reads the body (its own limit is 128, counted from the top).
const MAX_DEPTH: usize = 64;

/// The body, if this reader is sure of it.
pub(crate) fn body<'a>(text: &'a str, out: &mut Body<'a>) -> Option<()> {
    let mut r = Reader {
        text,
        at: 0,
        depth: 0,
    };
    r.body(out)?;
    r.ws();
    (r.at == text.len()).then_some(())
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
    /// Containers open around the reader.
    depth: usize,
}

/// The fields of one object read so far: serde refuses a field that comes twice.
#[derive(Default)]
struct Seen(u32);

impl Seen {
    fn once(&mut self, field: u32) -> Option<()> {
        let bit = 1u32 << field;
        if self.0 & bit != 0 {
            return None;
        }
        self.0 |= bit;
        Some(())
    }

    fn has(&self, field: u32) -> bool {
        self.0 & (1u32 << field) != 0
    }
}

impl<'a> Reader<'a> {
    // --- values ------------------------------------------------------------------------

    /// The value, as serde reads it from its own text (`T` is the field's type).
    fn serde<T: Deserialize<'a>>(&mut self) -> Option<T> {
        // One pass: serde reads the value and says where it ended (a parser state may carry a
        // held call's text, up to a MiB).
        let mut values = serde_json::Deserializer::from_str(self.text.get(self.at..)?).into_iter();
        let value = values.next()?.ok()?;
        self.at += values.byte_offset();
        Some(value)
    }

    /// A null, and only a null.
    fn null(&mut self) -> Option<()> {
        self.word(b"null")
    }

    /// `None` for null, else what `read` reads.
    fn opt<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.null().is_some() {
            return Some(None);
        }
        read(self).map(Some)
    }

    fn bool(&mut self) -> Option<bool> {
        match self.word(b"true") {
            Some(()) => Some(true),
            None => self.word(b"false").map(|()| false),
        }
    }

    /// A non-negative integer written as one (serde refuses `1.0` and `1e0` for an integer).
    fn u64(&mut self) -> Option<u64> {
        let bytes = self.text.as_bytes();
        let mut at = self.at;
        let mut value: u64 = 0;
        match bytes.get(at) {
            Some(b'0') => at += 1,
            Some(b'1'..=b'9') => {
                while let Some(&d @ b'0'..=b'9') = bytes.get(at) {
                    value = value.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
                    at += 1;
                }
            }
            _ => return None,
        }
        if let Some(b'0'..=b'9' | b'.' | b'e' | b'E') = bytes.get(at) {
            return None;
        }
        self.at = at;
        Some(value)
    }

    fn u32(&mut self) -> Option<u32> {
        u32::try_from(self.u64()?).ok()
    }

    fn u8(&mut self) -> Option<u8> {
        u8::try_from(self.u64()?).ok()
    }

    /// A float as serde reads it: both round correctly (serde with `float_roundtrip`), so the
    /// reader takes the numbers where nothing else can differ and leaves serde the rest (long
    /// integers, `-0`, values out of range or rounded to zero).
    fn f64(&mut self) -> Option<f64> {
        let start = self.at;
        let integer = self.number()?;
        let text = self.text.get(start..self.at)?;
        if integer {
            // Exact in an f64 up to 15 digits; serde reads `-0` as an integer.
            return if text.len() <= 15 && !text.starts_with("-0") {
                text.parse().ok()
            } else {
                None
            };
        }
        let mantissa = text.split(['e', 'E']).next().unwrap_or_default();
        if !mantissa.bytes().any(|b| matches!(b, b'1'..=b'9')) {
            // `0.0` and `-0.0` keep their sign, as serde's do.
            return Some(if text.starts_with('-') { -0.0 } else { 0.0 });
        }
        let value: f64 = text.parse().ok()?;
        (value.is_finite() && value != 0.0).then_some(value)
    }

    /// A list of token ids.
    fn ids(&mut self) -> Option<Vec<u32>> {
        self.list(Self::u32)
    }

    fn owned(&mut self) -> Option<String> {
        self.string().map(Cow::into_owned)
    }

    /// A key: a string with no escapes (serde matches a field by its unescaped name, so the
    /// rare escaped key goes to serde).
    fn key(&mut self) -> Option<&'a [u8]> {
        let bytes = self.text.as_bytes();
        if bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        let start = self.at + 1;
        let end = special(bytes, start);
        if bytes.get(end) != Some(&b'"') {
            return None;
        }
        self.at = end + 1;
        bytes.get(start..end)
    }

    /// A string, borrowed from the body unless it has escapes.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let bytes = self.text.as_bytes();
        if bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        let mut at = self.at + 1;
        let mut run = at;
        let mut owned: Option<String> = None;
        loop {
            at = special(bytes, at);
            match *bytes.get(at)? {
                b'"' => {
                    let tail = self.text.get(run..at)?;
                    self.at = at + 1;
                    return Some(match owned {
                        None => Cow::Borrowed(tail),
                        Some(mut s) => {
                            s.push_str(tail);
                            Cow::Owned(s)
                        }
                    });
                }
                b'\\' => {
                    let s = owned.get_or_insert_with(String::new);
                    s.push_str(self.text.get(run..at)?);
                    let (ch, len) = unescape(bytes.get(at + 1..)?)?;
                    s.push(ch);
                    at += 1 + len;
                    run = at;
                }
                _ => return None, // a control character
            }
        }
    }

    // --- structure -----------------------------------------------------------------------

    fn rest(&self) -> &'a [u8] {
        self.text.as_bytes().get(self.at..).unwrap_or_default()
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// Opens `{` or `[` (after whitespace); true when the container is empty (and closed).
    fn open(&mut self, open: u8, close: u8) -> Option<bool> {
        self.ws();
        if self.peek()? != open || self.depth >= MAX_DEPTH {
            return None;
        }
        self.at += 1;
        self.ws();
        if self.peek()? == close {
            self.at += 1;
            return Some(true);
        }
        self.depth += 1;
        Some(false)
    }

    /// After a member: true at `,` (more come), false at `close` (closed).
    fn next(&mut self, close: u8) -> Option<bool> {
        self.ws();
        let b = self.peek()?;
        self.at += 1;
        if b == b',' {
            self.ws();
            Some(true)
        } else if b == close {
            self.depth -= 1;
            Some(false)
        } else {
            None
        }
    }

    /// Reads an object, calling `field` with each key and the reader at its value.
    fn object(&mut self, mut field: impl FnMut(&mut Self, &[u8]) -> Option<()>) -> Option<()> {
        if self.open(b'{', b'}')? {
            return Some(());
        }
        loop {
            let key = self.key()?;
            self.ws();
            if self.peek()? != b':' {
                return None;
            }
            self.at += 1;
            self.ws();
            field(self, key)?;
            if !self.next(b'}')? {
                return Some(());
            }
        }
    }

    fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        let mut items = Vec::new();
        if self.open(b'[', b']')? {
            return Some(items);
        }
        loop {
            items.push(item(self)?);
            if !self.next(b']')? {
                return Some(items);
            }
        }
    }

    /// Skips one value, checking what serde checks when it ignores one (the grammar, escapes
    /// and control characters; not the numbers' range or the surrogates), and returns its text.
    fn skip(&mut self) -> Option<&'a str> {
        let start = self.at;
        let base = self.depth;
        // The containers opened here, innermost in the lowest bit: 1 for an object.
        let mut objects: u64 = 0;
        loop {
            // At a value.
            match self.peek()? {
                b'{' => {
                    if self.open(b'{', b'}')? {
                        // `{}`: a value, done below.
                    } else {
                        objects = objects << 1 | 1;
                        self.member_key()?;
                        continue;
                    }
                }
                b'[' => {
                    if !self.open(b'[', b']')? {
                        objects <<= 1;
                        continue;
                    }
                }
                b'"' => self.skip_string()?,
                b't' => self.word(b"true")?,
                b'f' => self.word(b"false")?,
                b'n' => self.word(b"null")?,
                b'-' | b'0'..=b'9' => {
                    self.number()?;
                }
                _ => return None,
            }
            // After a value: close what ends here, then on to the next member.
            loop {
                if self.depth == base {
                    return self.text.get(start..self.at);
                }
                let object = objects & 1 == 1;
                if self.next(if object { b'}' } else { b']' })? {
                    if object {
                        self.member_key()?;
                    }
                    break;
                }
                objects >>= 1;
            }
        }
    }

    /// A skipped object's key and its colon, up to its value.
    fn member_key(&mut self) -> Option<()> {
        self.skip_string()?;
        self.ws();
        if self.peek()? != b':' {
            return None;
        }
        self.at += 1;
        self.ws();
        Some(())
    }

    fn skip_string(&mut self) -> Option<()> {
        let bytes = self.text.as_bytes();
        if bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        let mut at = self.at + 1;
        loop {
            at = special(bytes, at);
            match *bytes.get(at)? {
                b'"' => {
                    self.at = at + 1;
                    return Some(());
                }
                b'\\' => match *bytes.get(at + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at += 2,
                    b'u' => {
                        hex4(bytes.get(at + 2..at + 6)?)?;
                        at += 6;
                    }
                    _ => return None,
                },
                _ => return None,
            }
        }
    }

    fn word(&mut self, word: &[u8]) -> Option<()> {
        self.rest().starts_with(word).then(|| self.at += word.len())
    }

    /// A number by JSON's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    /// True for an integer (no fraction, no exponent).
    fn number(&mut self) -> Option<bool> {
        let bytes = self.text.as_bytes();
        let mut at = self.at;
        let digits = |at: &mut usize| {
            let start = *at;
            while let Some(b'0'..=b'9') = bytes.get(*at) {
                *at += 1;
            }
            *at > start
        };
        if bytes.get(at) == Some(&b'-') {
            at += 1;
        }
        match bytes.get(at) {
            Some(b'0') => at += 1,
            Some(b'1'..=b'9') => {
                digits(&mut at);
            }
            _ => return None,
        }
        let whole = at;
        if bytes.get(at) == Some(&b'.') {
            at += 1;
            if !digits(&mut at) {
                return None;
            }
        }
        if let Some(b'e' | b'E') = bytes.get(at) {
            at += 1;
            if let Some(b'+' | b'-') = bytes.get(at) {
                at += 1;
            }
            if !digits(&mut at) {
                return None;
            }
        }
        self.at = at;
        Some(at == whole)
    }
}

/// The character an escape (after its backslash) stands for, and the escape's length; `None`
/// for an invalid escape or a surrogate that is not part of a pair.
fn unescape(escape: &[u8]) -> Option<(char, usize)> {
    let ch = match *escape.first()? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let high = hex4(escape.get(1..5)?)?;
            return match high {
                0xD800..=0xDBFF => {
                    if escape.get(5..7)? != b"\\u" {
                        return None;
                    }
                    let low = hex4(escape.get(7..11)?)?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                    Some((char::from_u32(code)?, 11))
                }
                _ => Some((char::from_u32(high)?, 5)),
            };
        }
        _ => return None,
    };
    Some((ch, 1))
}

/// Four hex digits.
fn hex4(digits: &[u8]) -> Option<u32> {
    if digits.len() != 4 {
        return None;
    }
    digits
        .iter()
        .try_fold(0u32, |acc, &d| Some(acc << 4 | char::from(d).to_digit(16)?))
}
