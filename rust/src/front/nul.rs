//! Where an HTTP/1 request stream may not hold a NUL byte: in chunked framing.
//!
//! hyper refuses a NUL in a head (its parser takes none in a request line or a field), but
//! skips one inside a chunk extension, where a strict parser refuses the message: a front that
//! accepted it would frame differently from a strict peer. Body bytes are opaque (a body sent
//! with a `Content-Encoding` holds NUL bytes, and gets its 415 from the service). So the
//! connection's bytes are followed just far enough to know where the chunked framing is (the
//! chunk-size lines and the trailers): each head is read for its `Content-Length` and
//! `Transfer-Encoding`, a sized body is skipped, a chunked one is followed chunk by chunk. Where
//! the framing is not plain (a field too long to read, two lengths, a length that is not a
//! number, a coding other than `chunked` alone), every later byte is checked, as before.

/// The longest head line or chunk-size line read for its meaning; a longer one is passed over
/// with every byte checked, and the stream checked whole from there.
const LINE: usize = 8 * 1024;

/// Where in the request stream the next byte is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// In a head, before any line of it.
    Start,
    /// In a head, after its request line or a field.
    Head,
    /// In a body of this many bytes still to come.
    Sized(u64),
    /// In a chunk-size line.
    Size,
    /// In a chunk's data, this many bytes still to come, then its CRLF.
    Data(u64),
    /// In the CRLF after a chunk's data.
    DataEnd,
    /// In the trailer section.
    Trailers,
    /// The framing is not followed: every byte is checked.
    Lost,
}

/// What is known of the request whose head is being read.
#[derive(Debug, Default, Clone, Copy)]
struct Fields {
    length: Option<u64>,
    chunked: bool,
    /// Not plain: the stream is checked whole from its end.
    odd: bool,
}

/// The follower of one HTTP/1 connection's request bytes.
#[derive(Debug)]
pub(super) struct Framing {
    at: At,
    fields: Fields,
    line: Vec<u8>,
    /// The line being read is over [`LINE`] bytes.
    long: bool,
}

impl Framing {
    pub(super) fn new() -> Framing {
        Framing {
            at: At::Start,
            fields: Fields::default(),
            line: Vec::new(),
            long: false,
        }
    }

    /// Takes in bytes just read: `false` if they hold a NUL where none may be.
    pub(super) fn admits(&mut self, mut bytes: &[u8]) -> bool {
        while !bytes.is_empty() {
            match self.at {
                At::Lost => return memchr::memchr(0, bytes).is_none(),
                At::Sized(n) | At::Data(n) => {
                    let take = usize::try_from(n).unwrap_or(usize::MAX).min(bytes.len());
                    let left = n - take as u64;
                    bytes = bytes.get(take..).unwrap_or_default();
                    self.at = match (self.at, left) {
                        (At::Sized(_), 0) => At::Start,
                        (At::Sized(_), _) => At::Sized(left),
                        (_, 0) => At::DataEnd,
                        _ => At::Data(left),
                    };
                }
                At::Start | At::Head | At::Size | At::DataEnd | At::Trailers => {
                    let end = memchr::memchr(b'\n', bytes);
                    let part = bytes
                        .get(..end.map_or(bytes.len(), |e| e + 1))
                        .unwrap_or(bytes);
                    if memchr::memchr(0, part).is_some() {
                        return false;
                    }
                    if self.line.len() + part.len() > LINE {
                        self.long = true;
                    } else {
                        self.line.extend_from_slice(part);
                    }
                    bytes = bytes.get(part.len()..).unwrap_or_default();
                    if end.is_some() {
                        self.line_ends();
                    }
                }
            }
        }
        true
    }

    /// A line (its `\n` included) has been read whole.
    fn line_ends(&mut self) {
        let long = std::mem::take(&mut self.long);
        let line = std::mem::take(&mut self.line);
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if long {
            self.at = At::Lost;
            return;
        }
        self.at = match self.at {
            At::Start if text.is_empty() => At::Start,
            At::Start => At::Head,
            At::Head if text.is_empty() => self.head_ends(),
            At::Head => {
                self.field(text);
                At::Head
            }
            At::Size => match chunk_size(text) {
                Some(0) => At::Trailers,
                Some(n) => At::Data(n),
                None => At::Lost,
            },
            At::DataEnd if text.is_empty() => At::Size,
            At::Trailers if text.is_empty() => At::Start,
            At::Trailers => At::Trailers,
            _ => At::Lost,
        };
        self.line = line;
        self.line.clear();
    }

    fn field(&mut self, text: &[u8]) {
        let Some(colon) = memchr::memchr(b':', text) else {
            return;
        };
        let (name, value) = (&text[..colon], trim(&text[colon + 1..]));
        let f = &mut self.fields;
        if name.eq_ignore_ascii_case(b"content-length") {
            let n = std::str::from_utf8(value)
                .ok()
                .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|v| v.parse::<u64>().ok());
            f.odd |= n.is_none() || f.length.is_some();
            f.length = n;
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            f.odd |= f.chunked || !value.eq_ignore_ascii_case(b"chunked");
            f.chunked = true;
        }
    }

    fn head_ends(&mut self) -> At {
        let f = std::mem::take(&mut self.fields);
        match (f.odd, f.chunked, f.length) {
            (true, _, _) | (false, true, Some(_)) => At::Lost,
            (false, true, None) => At::Size,
            (false, false, Some(n)) if n > 0 => At::Sized(n),
            _ => At::Start,
        }
    }
}

fn trim(mut b: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = b {
        b = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = b {
        b = rest;
    }
    b
}

/// A chunk-size line's size (its extensions after `;` aside).
fn chunk_size(text: &[u8]) -> Option<u64> {
    let digits = text.split(|&b| b == b';').next().map(trim)?;
    if digits.is_empty() || digits.len() > 15 || !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `stream` passes, fed whole and in every two pieces.
    fn admits(stream: &[u8]) -> bool {
        let whole = Framing::new().admits(stream);
        for cut in 0..=stream.len() {
            let mut f = Framing::new();
            let (a, b) = stream.split_at(cut);
            let got = f.admits(a) && f.admits(b);
            assert_eq!(got, whole, "cut at {cut}");
        }
        whole
    }

    #[test]
    fn body_bytes_pass_and_chunked_framing_is_checked() {
        let sized = b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n\x1f\x8b\0\0\x01";
        assert!(admits(sized));
        // The next head after a sized body is followed again.
        let two = [&sized[..], b"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;e=\0\r\nabc\r\n0\r\n\r\n"].concat();
        assert!(!admits(&two));
        let data = b"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n\0\0\0\r\n0\r\n\r\n";
        assert!(admits(data));
        let trailer = b"POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nx: \0\r\n\r\n";
        assert!(!admits(trailer));
    }

    #[test]
    fn framing_that_is_not_plain_is_checked_whole() {
        for head in [
            &b"POST /a HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n\0\0"[..],
            b"POST /a HTTP/1.1\r\nContent-Length: +2\r\n\r\n\0\0",
            b"POST /a HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n\0",
            b"POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n\0",
            b"POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\0",
        ] {
            assert!(!admits(head), "{:?}", String::from_utf8_lossy(head));
        }
        let mut long = b"GET / HTTP/1.1\r\nx: ".to_vec();
        long.resize(LINE + 100, b'a');
        long.extend_from_slice(b"\r\nContent-Length: 1\r\n\r\n\0");
        assert!(!Framing::new().admits(&long));
    }
}
