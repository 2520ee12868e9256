//! A small JSON writer for the response bodies: they have fixed shapes, so writing them directly
//! is both simpler and faster than building a value tree.

/// Appends JSON to a byte buffer. Callers write the punctuation; these methods write values.
pub(crate) struct Json {
    pub buf: Vec<u8>,
}

impl Json {
    pub fn with_capacity(n: usize) -> Json {
        Json {
            buf: Vec::with_capacity(n),
        }
    }

    /// Raw bytes: punctuation, keys, or JSON passed through.
    #[inline]
    pub fn raw(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// A string value, escaped as JSON requires (non-ASCII stays UTF-8).
    pub fn str(&mut self, s: &str) {
        self.buf.push(b'"');
        let bytes = s.as_bytes();
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let escape: &[u8] = match b {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                0x08 => b"\\b",
                0x0c => b"\\f",
                0..=0x1f => {
                    self.buf
                        .extend_from_slice(bytes.get(start..i).unwrap_or_default());
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    self.buf.extend_from_slice(b"\\u00");
                    self.buf.push(HEX[usize::from(b >> 4)]);
                    self.buf.push(HEX[usize::from(b & 0xf)]);
                    start = i + 1;
                    continue;
                }
                _ => continue,
            };
            self.buf
                .extend_from_slice(bytes.get(start..i).unwrap_or_default());
            self.buf.extend_from_slice(escape);
            start = i + 1;
        }
        self.buf
            .extend_from_slice(bytes.get(start..).unwrap_or_default());
        self.buf.push(b'"');
    }

    /// A string or null.
    pub fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => self.str(s),
            None => self.raw("null"),
        }
    }

    pub fn u64(&mut self, n: u64) {
        let mut b = itoa_buf();
        self.buf.extend_from_slice(fmt_u64(n, &mut b));
    }

    pub fn i64(&mut self, n: i64) {
        if n < 0 {
            self.buf.push(b'-');
        }
        self.u64(n.unsigned_abs());
    }

    pub fn bool(&mut self, b: bool) {
        self.raw(if b { "true" } else { "false" });
    }

    /// A float in the shortest form that reads back the same, always with a `.` or an exponent
    /// (so `-9999.0`, never `-9999`). Non-finite values cannot occur: logprobs are clamped.
    pub fn f64(&mut self, x: f64) {
        let mut b = ryu::Buffer::new();
        let x = if x.is_finite() {
            x
        } else {
            super::LOGPROB_FLOOR
        };
        self.raw(b.format_finite(x));
    }

    /// A list of ids.
    pub fn ids(&mut self, ids: &[u32]) {
        self.buf.push(b'[');
        for (i, &id) in ids.iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            self.u64(u64::from(id));
        }
        self.buf.push(b']');
    }

    /// A list of ids or null.
    pub fn opt_ids(&mut self, ids: Option<&[u32]>) {
        match ids {
            Some(ids) => self.ids(ids),
            None => self.raw("null"),
        }
    }

    /// The UTF-8 bytes of `s` as a list of numbers (the `bytes` of a logprob).
    pub fn utf8_bytes(&mut self, s: &str) {
        self.buf.push(b'[');
        for (i, &b) in s.as_bytes().iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            self.u64(u64::from(b));
        }
        self.buf.push(b']');
    }
}

fn itoa_buf() -> [u8; 20] {
    [0; 20]
}

fn fmt_u64(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        // n % 10 < 10, so the cast cannot truncate.
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.get(i..).unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn strings_numbers_and_floats_read_back() {
        let mut j = Json::with_capacity(64);
        j.raw("[");
        j.str("a\"b\\c\n\u{1}é中\u{1F600}");
        j.raw(",");
        j.i64(-42);
        j.raw(",");
        j.u64(u64::MAX);
        j.raw(",");
        j.f64(-9999.0);
        j.raw(",");
        j.f64(-1.25e-7);
        j.raw("]");
        let v: serde_json::Value = serde_json::from_slice(&j.buf).unwrap();
        assert_eq!(v[0], "a\"b\\c\n\u{1}é中\u{1F600}");
        assert_eq!(v[1], -42);
        assert_eq!(v[2], u64::MAX);
        assert_eq!(v[3].as_f64(), Some(-9999.0));
        assert_eq!(v[4].as_f64(), Some(-1.25e-7));
        assert!(String::from_utf8(j.buf).unwrap().contains("-9999.0"));
    }
}
