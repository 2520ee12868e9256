//! A small JSON writer for the response bodies: they have fixed shapes, so writing them directly
//! is both simpler and faster than building a value tree.
//!
//! The writer owns the punctuation: it knows whether a value is the first of its object or
//! array, so callers say only what comes (`obj`, `key`, a value, `end_obj`), never a comma.

/// Writes the key `$k` (a literal) of the open object: `key!(j, "index")`. The key's bytes,
/// comma included, are one literal, so a key costs one copy.
macro_rules! key {
    ($j:expr, $k:literal) => {
        $j.key_lit(concat!(",\"", $k, "\":"))
    };
}
pub(crate) use key;

/// The logprob that stands for `-inf` (and NaN) on the wire.
pub const LOGPROB_FLOOR: f64 = -9999.0;

/// Appends JSON to a byte buffer.
pub(crate) struct Json {
    buf: Vec<u8>,
    /// The next value opens its container (or follows a key): no comma before it.
    first: bool,
}

impl Json {
    pub fn with_capacity(n: usize) -> Json {
        Json {
            buf: Vec::with_capacity(n),
            first: true,
        }
    }

    /// Bytes written so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// The document.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    #[inline]
    fn sep(&mut self) {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
    }

    /// Opens an object.
    #[inline]
    pub fn obj(&mut self) {
        self.sep();
        self.buf.push(b'{');
        self.first = true;
    }

    /// Closes an object.
    #[inline]
    pub fn end_obj(&mut self) {
        self.buf.push(b'}');
        self.first = false;
    }

    /// Opens an array.
    #[inline]
    pub fn arr(&mut self) {
        self.sep();
        self.buf.push(b'[');
        self.first = true;
    }

    /// Closes an array.
    #[inline]
    pub fn end_arr(&mut self) {
        self.buf.push(b']');
        self.first = false;
    }

    /// A key of the open object, given as `,"name":` (see [`key!`]); its value comes next.
    #[inline]
    pub fn key_lit(&mut self, comma_key: &str) {
        let bytes = comma_key.as_bytes();
        let bytes = if self.first {
            bytes.get(1..).unwrap_or_default()
        } else {
            bytes
        };
        self.buf.extend_from_slice(bytes);
        self.first = true;
    }

    /// A key that may need escaping (one that came in a request).
    pub fn key_str(&mut self, k: &str) {
        self.str(k);
        self.buf.push(b':');
        self.first = true;
    }

    /// A value that is already JSON (passed through from the request).
    #[inline]
    pub fn raw_value(&mut self, json: &str) {
        self.sep();
        self.buf.extend_from_slice(json.as_bytes());
    }

    /// A value that is already JSON, or null.
    pub fn opt_raw(&mut self, json: Option<&str>) {
        self.raw_value(json.unwrap_or("null"));
    }

    #[inline]
    pub fn null(&mut self) {
        self.raw_value("null");
    }

    /// A string value, escaped as JSON requires ([`crate::escape::write_str`]).
    pub fn str(&mut self, s: &str) {
        self.sep();
        self.buf.reserve(s.len() + 2);
        crate::escape::write_str(&mut self.buf, s);
    }

    /// A string or null.
    pub fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => self.str(s),
            None => self.null(),
        }
    }

    /// A string, or null when it is empty.
    pub fn text_or_null(&mut self, s: &str) {
        if s.is_empty() {
            self.null();
        } else {
            self.str(s);
        }
    }

    pub fn u64(&mut self, n: u64) {
        self.sep();
        self.digits(n);
    }

    fn digits(&mut self, n: u64) {
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }

    pub fn i64(&mut self, n: i64) {
        self.sep();
        if n < 0 {
            self.buf.push(b'-');
        }
        self.digits(n.unsigned_abs());
    }

    pub fn bool(&mut self, b: bool) {
        self.raw_value(if b { "true" } else { "false" });
    }

    /// A float in the shortest form that reads back the same, always with a `.` or an exponent
    /// (so `-9999.0`, never `-9999`). Non-finite values are written as the logprob floor.
    pub fn f64(&mut self, x: f64) {
        let mut b = ryu::Buffer::new();
        let x = if x.is_finite() { x } else { LOGPROB_FLOOR };
        self.raw_value(b.format_finite(x));
    }

    /// A list of numbers.
    pub fn nums<T: Copy + Into<u64>>(&mut self, ns: &[T]) {
        self.arr();
        for &n in ns {
            self.u64(n.into());
        }
        self.end_arr();
    }

    /// A list of ids or null.
    pub fn opt_ids(&mut self, ids: Option<&[u32]>) {
        self.opt_nums(ids);
    }

    /// A list of numbers or null.
    pub fn opt_nums<T: Copy + Into<u64>>(&mut self, ns: Option<&[T]>) {
        match ns {
            Some(ns) => self.nums(ns),
            None => self.null(),
        }
    }

    /// A list of strings.
    pub fn strs<S: AsRef<str>>(&mut self, ss: &[S]) {
        self.arr();
        for s in ss {
            self.str(s.as_ref());
        }
        self.end_arr();
    }

    /// Bytes already serialized by another writer, as one value.
    pub fn with_buf(&mut self, write: impl FnOnce(&mut Vec<u8>) -> bool) {
        self.sep();
        let at = self.buf.len();
        if !write(&mut self.buf) {
            self.buf.truncate(at);
            self.buf.extend_from_slice(b"null");
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn strings_numbers_and_floats_read_back() {
        let mut j = Json::with_capacity(64);
        j.arr();
        j.str("a\"b\\c\n\u{1}é中\u{1F600}");
        j.i64(-42);
        j.u64(u64::MAX);
        j.f64(-9999.0);
        j.f64(-1.25e-7);
        j.obj();
        key!(j, "k");
        j.nums(&[1u32, 2]);
        key!(j, "e");
        j.obj();
        j.end_obj();
        j.end_obj();
        j.end_arr();
        let bytes = j.into_bytes();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v[0], "a\"b\\c\n\u{1}é中\u{1F600}");
        assert_eq!(v[1], -42);
        assert_eq!(v[2], u64::MAX);
        assert_eq!(v[3].as_f64(), Some(-9999.0));
        assert_eq!(v[4].as_f64(), Some(-1.25e-7));
        assert_eq!(v[5], serde_json::json!({"k": [1, 2], "e": {}}));
        assert!(String::from_utf8(bytes).unwrap().contains("-9999.0"));
    }
}
