//! A hand reader for what every derender body carries; serde reads the rest.
//!
//! [`super::input::parse`] tries this reader before serde. It reads the fields that come with
//! requests (the generate choices' ids, finish reasons and logprobs, the stream state, the
//! flags, the request objects' shape) and skips the fields derender does not read with the
//! checks serde makes when it ignores them. Each other field's value is handed to serde as its
//! own text (skipped first, which bounds its nesting as the whole body's would be), so its type
//! and its checks stay serde's.
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

use std::borrow::Cow;

use serde::Deserialize;

use super::input::{
    Body, Choice, Generate, LogprobEntry, LogprobToken, Logprobs, Obj, Request, State,
};

/// Deeper than this, serde reads the body (its own limit is 128, counted from the top).
const MAX_DEPTH: usize = 64;

/// The body, if this reader is sure of it.
pub(crate) fn body(text: &str) -> Option<Body<'_>> {
    let mut r = Reader {
        text,
        at: 0,
        depth: 0,
    };
    let body = r.body()?;
    r.ws();
    (r.at == text.len()).then_some(body)
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
    // --- the derender body's objects -----------------------------------------------------

    fn body(&mut self) -> Option<Body<'a>> {
        let mut b = Body::default();
        let mut seen = Seen::default();
        self.object(|r, key| {
            match key {
                b"stream" => {
                    seen.once(0)?;
                    b.stream = r.opt(Self::bool)?;
                }
                b"model" => {
                    seen.once(1)?;
                    b.model = r.opt(Self::string)?;
                }
                b"generate_response" => {
                    seen.once(2)?;
                    b.generate_response = r.opt(Self::generate)?;
                }
                b"generate_responses" => {
                    seen.once(3)?;
                    b.generate_responses = r.opt(|r| r.list(Self::generate))?;
                }
                b"generate_chunk" => {
                    seen.once(4)?;
                    b.generate_chunk = r.opt(Self::generate)?;
                }
                b"stream_state" => {
                    seen.once(5)?;
                    b.stream_state = r.opt(Self::state)?;
                }
                b"prompt_tokens" => {
                    seen.once(6)?;
                    b.prompt_tokens = r.serde()?;
                }
                b"prompt_token_ids" => {
                    seen.once(7)?;
                    b.prompt_token_ids = r.serde()?;
                }
                b"chat_request" => {
                    seen.once(8)?;
                    b.chat_request = r.opt(Self::request)?;
                }
                b"completion_request" => {
                    seen.once(9)?;
                    b.completion_request = r.opt(Self::request)?;
                }
                _ => {
                    r.skip()?;
                }
            }
            Some(())
        })?;
        Some(b)
    }

    fn generate(&mut self) -> Option<Obj<Generate<'a>>> {
        let mut g = Generate {
            request_id: None,
            choices: Vec::new(),
            usage: None,
            prompt_token_ids: None,
            prompt_logprobs: None,
            kv_transfer_params: None,
            output_mode: None,
            metrics: None,
        };
        let mut seen = Seen::default();
        self.object(|r, key| {
            match key {
                b"request_id" => {
                    seen.once(0)?;
                    g.request_id = r.opt(Self::string)?;
                }
                b"choices" => {
                    seen.once(1)?;
                    g.choices = r.list(Self::choice)?;
                }
                b"usage" => {
                    seen.once(2)?;
                    g.usage = r.serde()?;
                }
                b"prompt_token_ids" => {
                    seen.once(3)?;
                    g.prompt_token_ids = r.opt(Self::ids)?;
                }
                b"prompt_logprobs" => {
                    seen.once(4)?;
                    // Handed to serde, a value would be read twice (skipped, then parsed), and
                    // prompt logprobs can be most of a large body: serde reads such a body.
                    r.null()?;
                }
                b"kv_transfer_params" => {
                    seen.once(5)?;
                    g.kv_transfer_params = r.serde()?;
                }
                b"output_mode" => {
                    seen.once(6)?;
                    g.output_mode = r.opt(Self::string)?;
                }
                b"metrics" => {
                    seen.once(7)?;
                    g.metrics = r.serde()?;
                }
                _ => {
                    r.skip()?;
                }
            }
            Some(())
        })?;
        // `choices` is required: serde says so.
        seen.has(1).then_some(Obj(g))
    }

    fn choice(&mut self) -> Option<Obj<Choice<'a>>> {
        let mut c = Choice {
            index: 0,
            logprobs: None,
            finish_reason: None,
            stop_reason: None,
            token_ids: None,
        };
        let mut seen = Seen::default();
        self.object(|r, key| {
            match key {
                b"index" => {
                    seen.once(0)?;
                    c.index = r.u32()?;
                }
                b"logprobs" => {
                    seen.once(1)?;
                    c.logprobs = r.opt(Self::logprobs)?;
                }
                b"finish_reason" => {
                    seen.once(2)?;
                    c.finish_reason = Some(r.opt(Self::string)?);
                }
                b"stop_reason" => {
                    seen.once(3)?;
                    c.stop_reason = r.serde()?;
                }
                b"token_ids" => {
                    seen.once(4)?;
                    c.token_ids = r.opt(Self::ids)?;
                }
                _ => {
                    r.skip()?;
                }
            }
            Some(())
        })?;
        // `index` is required.
        seen.has(0).then_some(Obj(c))
    }

    fn state(&mut self) -> Option<Obj<State>> {
        let mut s = State::default();
        let mut seen = Seen::default();
        self.object(|r, key| {
            // Every field but `parser` defaults when absent and refuses null.
            match key {
                b"prev_tokens" => {
                    seen.once(0)?;
                    s.prev_tokens = r.list(Self::owned)?;
                }
                b"prefix_offset" => {
                    seen.once(1)?;
                    s.prefix_offset = r.u64()?;
                }
                b"read_offset" => {
                    seen.once(2)?;
                    s.read_offset = r.u64()?;
                }
                b"role_sent" => {
                    seen.once(3)?;
                    s.role_sent = r.bool()?;
                }
                b"logprob_context_token_ids" => {
                    seen.once(4)?;
                    s.logprob_context_token_ids = r.ids()?;
                }
                b"logprob_text_offset" => {
                    seen.once(5)?;
                    s.logprob_text_offset = r.u64()?;
                }
                b"output_token_ids" => {
                    seen.once(6)?;
                    s.output_token_ids = r.ids()?;
                }
                b"output_chunk_lens" => {
                    seen.once(7)?;
                    s.output_chunk_lens = r.list(Self::u64)?;
                }
                b"tools_streamed" => {
                    seen.once(8)?;
                    s.tools_streamed = r.bool()?;
                }
                b"last_tool_call_ids" => {
                    seen.once(9)?;
                    s.last_tool_call_ids = r.list(Self::owned)?;
                }
                b"held_text" => {
                    seen.once(10)?;
                    s.held_text = r.owned()?;
                }
                b"generated_tokens" => {
                    seen.once(11)?;
                    s.generated_tokens = r.u64()?;
                }
                b"stopped" => {
                    seen.once(12)?;
                    s.stopped = r.bool()?;
                }
                b"parser" => {
                    seen.once(13)?;
                    s.parser = r.serde()?;
                }
                _ => {
                    r.skip()?;
                }
            }
            Some(())
        })?;
        Some(Obj(s))
    }

    /// A choice's logprobs: every position is read here (an answer with logprobs is mostly
    /// them).
    fn logprobs(&mut self) -> Option<Obj<Logprobs<'a>>> {
        let mut l = Logprobs { content: None };
        let mut seen = Seen::default();
        self.object(|r, key| {
            if key == b"content" {
                seen.once(0)?;
                l.content = r.opt(|r| r.list(Self::position))?;
            } else {
                r.skip()?;
            }
            Some(())
        })?;
        Some(Obj(l))
    }

    fn position(&mut self) -> Option<Obj<LogprobEntry<'a>>> {
        let mut e = LogprobEntry {
            token_id: None,
            token: None,
            logprob: None,
            bytes: None,
            top_logprobs: None,
        };
        let mut seen = Seen::default();
        self.object(|r, key| {
            match key {
                b"token_id" => {
                    seen.once(0)?;
                    e.token_id = r.opt(Self::u32)?;
                }
                b"token" => {
                    seen.once(1)?;
                    e.token = r.opt(Self::string)?;
                }
                b"logprob" => {
                    seen.once(2)?;
                    e.logprob = r.opt(Self::f64)?;
                }
                b"bytes" => {
                    seen.once(3)?;
                    e.bytes = r.opt(|r| r.list(Self::u8))?;
                }
                b"top_logprobs" => {
                    seen.once(4)?;
                    e.top_logprobs = r.opt(|r| r.list(Self::alternative))?;
                }
                _ => {
                    r.skip()?;
                }
            }
            Some(())
        })?;
        Some(Obj(e))
    }

    fn alternative(&mut self) -> Option<Obj<LogprobToken<'a>>> {
        let mut t = LogprobToken {
            token_id: None,
            token: None,
            logprob: None,
            bytes: None,
        };
        let mut seen = Seen::default();
        self.object(|r, key| {
            match key {
                b"token_id" => {
                    seen.once(0)?;
                    t.token_id = r.opt(Self::u32)?;
                }
                b"token" => {
                    seen.once(1)?;
                    t.token = r.opt(Self::string)?;
                }
                b"logprob" => {
                    seen.once(2)?;
                    t.logprob = r.opt(Self::f64)?;
                }
                b"bytes" => {
                    seen.once(3)?;
                    t.bytes = r.opt(|r| r.list(Self::u8))?;
                }
                _ => {
                    r.skip()?;
                }
            }
            Some(())
        })?;
        Some(Obj(t))
    }

    /// A chat or completion request: its fields derender reads are few and small, and most
    /// requests carry none of them, so each goes to serde; what is skipped is the rest
    /// (`messages`, `prompt`, sampling parameters).
    fn request(&mut self) -> Option<Obj<Request<'a>>> {
        let mut q = Request::default();
        let mut seen = Seen::default();
        self.object(|r, key| {
            match key {
                b"stop" => {
                    seen.once(0)?;
                    q.stop = r.serde()?;
                }
                b"stop_token_ids" => {
                    seen.once(1)?;
                    q.stop_token_ids = r.serde()?;
                }
                b"ignore_eos" => {
                    seen.once(2)?;
                    q.ignore_eos = r.serde()?;
                }
                b"min_tokens" => {
                    seen.once(3)?;
                    q.min_tokens = r.serde()?;
                }
                b"include_stop_str_in_output" => {
                    seen.once(4)?;
                    q.include_stop_str_in_output = r.serde()?;
                }
                b"skip_special_tokens" => {
                    seen.once(5)?;
                    q.skip_special_tokens = r.serde()?;
                }
                b"return_token_ids" => {
                    seen.once(6)?;
                    q.return_token_ids = r.serde()?;
                }
                b"logprobs" => {
                    seen.once(7)?;
                    q.logprobs = r.serde()?;
                }
                b"top_logprobs" => {
                    seen.once(8)?;
                    q.top_logprobs = r.serde()?;
                }
                b"logprob_token_ids" => {
                    seen.once(9)?;
                    q.logprob_token_ids = r.serde()?;
                }
                b"tools" => {
                    seen.once(10)?;
                    q.tools = r.serde()?;
                }
                b"tool_choice" => {
                    seen.once(11)?;
                    q.tool_choice = r.serde()?;
                }
                b"parallel_tool_calls" => {
                    seen.once(12)?;
                    q.parallel_tool_calls = r.serde()?;
                }
                b"include_reasoning" => {
                    seen.once(13)?;
                    q.include_reasoning = r.serde()?;
                }
                b"chat_template_kwargs" => {
                    seen.once(14)?;
                    q.chat_template_kwargs = r.serde()?;
                }
                b"reasoning_effort" => {
                    seen.once(15)?;
                    q.reasoning_effort = r.serde()?;
                }
                _ => {
                    r.skip()?;
                }
            }
            Some(())
        })?;
        Some(Obj(q))
    }

    // --- values ------------------------------------------------------------------------

    /// The value, as serde reads it from its own text (`T` is the field's type).
    fn serde<T: Deserialize<'a>>(&mut self) -> Option<T> {
        let text = self.skip()?;
        serde_json::from_str(text).ok()
    }

    /// A null, and only a null.
    fn null(&mut self) -> Option<()> {
        self.word(b"null")
    }

    /// `None` for null, else what `read` reads.
    fn opt<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.rest().starts_with(b"null") {
            self.at += 4;
            return Some(None);
        }
        read(self).map(Some)
    }

    fn bool(&mut self) -> Option<bool> {
        let rest = self.rest();
        if rest.starts_with(b"true") {
            self.at += 4;
            Some(true)
        } else if rest.starts_with(b"false") {
            self.at += 5;
            Some(false)
        } else {
            None
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
        self.number()?;
        let text = self.text.get(start..self.at)?;
        let mantissa = text.split(['e', 'E']).next().unwrap_or_default();
        let zero = !mantissa.bytes().any(|b| matches!(b, b'1'..=b'9'));
        if !text.contains(['.', 'e', 'E']) {
            // An integer: exact in an f64 up to 15 digits; serde reads `-0` as an integer.
            return (text.len() <= 15 && !text.starts_with("-0")).then(|| text.parse().ok())?;
        }
        if zero {
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
                b'-' | b'0'..=b'9' => self.number()?,
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
    fn number(&mut self) -> Option<()> {
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
        Some(())
    }
}

/// Where, from `at` on, the first quote, backslash or control character is (or the end): eight
/// bytes at a time, each word tested for the three at once.
fn special(bytes: &[u8], mut at: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // The high bit of each byte that is zero (the lowest set bit is exact).
    let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGH;
    while let Some(word) = bytes
        .get(at..at + 8)
        .and_then(|w| <[u8; 8]>::try_from(w).ok())
    {
        let w = u64::from_le_bytes(word);
        let hits = zero(w ^ (ONES * 0x22))
            | zero(w ^ (ONES * 0x5C))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGH);
        if hits != 0 {
            return at + (hits.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            return at;
        }
        at += 1;
    }
    at
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use proptest::prelude::*;

    /// The reader either declines or reads what serde reads.
    fn agrees(text: &str) -> bool {
        let Some(quick) = super::body(text) else {
            return false;
        };
        let serde = serde_json::from_str::<super::Body<'_>>(text)
            .unwrap_or_else(|e| panic!("serde refuses what the reader took ({e}): {text}"));
        assert_eq!(format!("{quick:?}"), format!("{serde:?}"), "{text}");
        true
    }

    const CHUNK: &str = r#"{"stream":true,"model":"m","generate_chunk":{"request_id":"gen-1","choices":[{"index":0,"logprobs":null,"finish_reason":null,"token_ids":[223, 9],"routed_experts":null}],"usage":null,"prompt_token_ids":null,"metrics":null},"stream_state":{"prev_tokens":["ĠëĶ","Ķ","a\"b\\c\u00e9\ud83d\ude00\n"],"prefix_offset":0,"read_offset":2,"role_sent":true,"logprob_context_token_ids":[1,2],"logprob_text_offset":2,"output_token_ids":[],"output_chunk_lens":[3],"tools_streamed":false,"last_tool_call_ids":["call_1"],"held_text":"","generated_tokens":4,"stopped":false,"parser":null,"future":{"x":[1,{"y":-2.5e-3}]}},"prompt_tokens":26,"chat_request":{"messages":[{"role":"user","content":"Hi \"there\" \u0041"}],"model":"m","max_tokens":512,"stop":["a","\n"],"logprobs":true,"top_logprobs":2,"chat_template_kwargs":{"enable_thinking":false}}}"#;

    /// A chunk with logprobs: floats in every form the reader takes.
    const LOGPROBS: &str = r#"{"stream":true,"generate_chunk":{"choices":[{"index":0,"logprobs":{"content":[{"token_id":7,"token":"a\"b","logprob":-0.0012345678901234567,"bytes":[97,34,98],"top_logprobs":[{"token_id":7,"logprob":-1.1920928955078125e-07,"bytes":null},{"token":"token_id:9","logprob":-9999.0,"extra":[1]},{"token_id":3,"logprob":0.0},{"token_id":4,"logprob":-0.0},{"token_id":5,"logprob":-12},{"token_id":6,"logprob":2.5E+2}]}],"refusal":null},"finish_reason":null,"token_ids":[7]}]},"stream_state":null}"#;

    #[test]
    fn reads_what_serde_reads() {
        let bodies = [
            CHUNK,
            LOGPROBS,
            r#"{}"#,
            " \t\r\n{ \"stream\" : false , \"model\" : null } \n",
            r#"{"generate_response":{"choices":[{"index":3,"finish_reason":"stop","stop_reason":"x","logprobs":{"content":[{"token_id":5,"logprob":-0.5,"top_logprobs":[]}]}}],"usage":{"prompt_tokens":3,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":1}},"prompt_token_ids":[1,2,3],"prompt_logprobs":null,"kv_transfer_params":{"k":[true]},"output_mode":"tokens"},"completion_request":{"prompt":"x","stop":"s","stop_token_ids":[4],"ignore_eos":true,"min_tokens":2,"include_stop_str_in_output":false,"skip_special_tokens":false,"return_token_ids":true,"logprobs":2,"logprob_token_ids":[1],"tools":[{}],"tool_choice":"auto","parallel_tool_calls":true,"include_reasoning":false,"reasoning_effort":"none"}}"#,
            r#"{"generate_responses":[{"choices":[]},{"choices":[{"index":0,"token_ids":[]}]}],"prompt_token_ids":[[1],null]}"#,
            r#"{"generate_chunk":{"choices":[{"index":0,"stop_reason":7,"finish_reason":"stop"}],"metrics":{"time_to_first_token_ms":1.5}},"stream":true}"#,
            r#"{"unknown":[[[]],{},"\u0000\ud800",0,-0,1.5E+3,true,false,null],"stream_state":null}"#,
            r#"{"stream_state":{"parser":{"r":true,"h":"<"}}}"#,
        ];
        for text in bodies {
            assert!(agrees(text), "declined: {text}");
        }
    }

    #[test]
    fn declines_what_it_is_not_sure_of() {
        let deep = format!("{{\"x\":{}{}}}", "[".repeat(70), "]".repeat(70));
        let bodies = [
            r#"{"stream":true,"stream":true}"#, // duplicate field
            r#"{"generate_response":{"choices":[],"prompt_logprobs":[null]}}"#, // serde's
            r#"{"generate_chunk":{"choices":[{"index":0,"logprobs":{"content":[{"logprob":-0}]}}]}}"#,
            r#"{"generate_chunk":{"choices":[{"index":0,"logprobs":{"content":[{"logprob":1e400}]}}]}}"#,
            r#"{"generate_chunk":{"choices":[{"index":0,"logprobs":{"content":[{"logprob":1e-400}]}}]}}"#,
            r#"{"generate_chunk":{"choices":[{"index":0,"logprobs":{"content":[{"bytes":[256]}]}}]}}"#,
            r#"{"stre\u0061m":true}"#, // escaped key
            r#"{"generate_chunk":{"choices":[{"index":1.0}]}}"#, // a float for an id
            r#"{"generate_chunk":{"choices":[{"index":-1}]}}"#, // negative
            r#"{"generate_chunk":{"choices":[{"index":4294967296}]}}"#, // beyond u32
            r#"{"generate_chunk":{"choices":[{"token_ids":[1]}]}}"#, // no index
            r#"{"generate_chunk":{"request_id":"x"}}"#, // no choices
            r#"{"stream_state":{"prev_tokens":null}}"#, // null for a list
            r#"{"stream_state":{"held_text":"\ud800"}}"#, // lone surrogate
            r#"{"model":"a	b"}"#,      // control character
            r#"{"x":01}"#,
            r#"{"x":1.}"#,
            r#"{"x":[1,]}"#,
            r#"{"x":{"a":1,}}"#,
            r#"{"x":"\q"}"#,
            r#"{"x":NaN}"#,
            r#"{"stream":true} x"#,
            r#"{"stream":true"#,
            r#"[]"#,
            &deep,
        ];
        for text in bodies {
            assert!(super::body(text).is_none(), "took: {text}");
        }
    }

    /// The bytes a mutation puts in: JSON's punctuation and the starts of its values.
    const BYTES: &[u8] = b"{}[]\",:\\ 0123456789-+.eEtfnul\"\x01\xC3\xA9";

    #[test]
    fn every_one_byte_edit_reads_as_serde_reads_it() {
        // Each byte of a chunk replaced, deleted, or preceded by each byte of BYTES.
        for base in [CHUNK.as_bytes(), LOGPROBS.as_bytes()] {
            let (mut took, mut declined) = (0, 0);
            for at in 0..=base.len() {
                let mut edits = vec![];
                for &b in BYTES {
                    let mut e = base.to_vec();
                    e.insert(at, b);
                    edits.push(e);
                    if at < base.len() {
                        let mut e = base.to_vec();
                        e[at] = b;
                        edits.push(e);
                    }
                }
                if at < base.len() {
                    let mut e = base.to_vec();
                    e.remove(at);
                    edits.push(e);
                }
                for e in edits {
                    if let Ok(text) = std::str::from_utf8(&e) {
                        if agrees(text) {
                            took += 1;
                        } else {
                            declined += 1;
                        }
                    }
                }
            }
            // Both sides are exercised: edits inside strings and numbers keep bodies valid.
            let edits = took + declined;
            assert!(
                took * 4 > edits && declined * 4 > edits,
                "took {took}, declined {declined}"
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn mutated_bodies_read_as_serde_reads_them(
            edits in proptest::collection::vec((0usize..900, 0usize..BYTES.len(), 0u8..3), 1..4)
        ) {
            let base = if edits.len() % 2 == 0 { CHUNK } else { LOGPROBS };
            let mut bytes = base.as_bytes().to_vec();
            for (at, b, op) in edits {
                let at = at % (bytes.len() + 1);
                match op {
                    0 => bytes.insert(at, BYTES[b]),
                    1 if at < bytes.len() => { bytes.remove(at); }
                    _ if at < bytes.len() => bytes[at] = BYTES[b],
                    _ => {}
                }
            }
            if let Ok(text) = std::str::from_utf8(&bytes) {
                agrees(text);
            }
        }
    }
}
