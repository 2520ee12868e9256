//! JSON strings' text: where the next byte a JSON string cannot hold as it is lies, eight bytes
//! at a time, and a string written with its escapes. One home for the body's reader
//! (`wire::quick`), the answers' writer (`wire::json`) and the parsers' carried states
//! (`parse::carry`), which write a held call's text, up to a MiB, every chunk.

/// Where, from `at` on, the first quote, backslash or control character is (or the end): eight
/// bytes at a time, each word tested for the three at once.
pub(crate) fn special(bytes: &[u8], mut at: usize) -> usize {
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

/// A buffer JSON text is appended to: bytes ([`crate::wire`]'s writer) or a `String`.
pub(crate) trait Out {
    fn put(&mut self, s: &str);
}

impl Out for Vec<u8> {
    #[inline]
    fn put(&mut self, s: &str) {
        self.extend_from_slice(s.as_bytes());
    }
}

impl Out for String {
    #[inline]
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

/// Appends `s` as a JSON string, quotes included: escaped as JSON requires, non-ASCII as UTF-8
/// (what serde_json writes), runs without escapes found by [`special`] and copied whole (they
/// end at ASCII bytes, so at char boundaries).
pub(crate) fn write_str(buf: &mut impl Out, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    buf.put("\"");
    let mut run = 0;
    loop {
        let at = special(s.as_bytes(), run);
        buf.put(s.get(run..at).unwrap_or_default());
        let Some(&b) = s.as_bytes().get(at) else {
            break;
        };
        match b {
            b'"' => buf.put("\\\""),
            b'\\' => buf.put("\\\\"),
            b'\n' => buf.put("\\n"),
            b'\r' => buf.put("\\r"),
            b'\t' => buf.put("\\t"),
            0x08 => buf.put("\\b"),
            0x0c => buf.put("\\f"),
            _ => {
                let hex = [HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]];
                buf.put("\\u00");
                buf.put(std::str::from_utf8(&hex).unwrap_or_default());
            }
        }
        run = at + 1;
    }
    buf.put("\"");
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Strings with every kind of byte a JSON string escapes, at every offset of the eight-byte
    /// scan, and non-ASCII text.
    fn samples() -> Vec<String> {
        let mut all: Vec<String> = ["", "a", "plain text", "é → 😀", "\u{7f}\u{80}\u{2028}"]
            .map(str::to_owned)
            .to_vec();
        for special in [
            "\"", "\\", "\n", "\r", "\t", "\u{8}", "\u{c}", "\u{0}", "\u{1f}",
        ] {
            for lead in 0..17 {
                all.push(format!(
                    "{}{special}{}",
                    "x".repeat(lead),
                    "yé".repeat(lead % 5)
                ));
            }
        }
        all.push("a\"b\\c\u{1}d".repeat(300));
        all
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        for s in samples() {
            let expected = serde_json::to_string(&s).unwrap();
            let mut bytes = Vec::new();
            write_str(&mut bytes, &s);
            assert_eq!(String::from_utf8(bytes).unwrap(), expected);
            let mut text = String::from("[");
            write_str(&mut text, &s);
            assert_eq!(text.get(1..).unwrap(), expected);
        }
    }

    #[test]
    fn the_scan_stops_at_the_first_escaped_byte() {
        for s in samples() {
            let bytes = s.as_bytes();
            for from in 0..=bytes.len() {
                let naive = (from..bytes.len())
                    .find(|&i| bytes[i] == b'"' || bytes[i] == b'\\' || bytes[i] < 0x20)
                    .unwrap_or(bytes.len());
                assert_eq!(special(bytes, from), naive, "{s:?} from {from}");
            }
        }
    }
}
