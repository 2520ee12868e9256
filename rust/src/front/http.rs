//! HTTP/1.1 framing: a request's head read into what the front needs, chunked bodies decoded as
//! they arrive, and the responses written out. Nothing here blocks or allocates per byte.

use crate::wire::error_body;

/// Most header lines a request may carry (a request with more gets 431).
pub(crate) const MAX_HEADERS: usize = 100;

/// A request head, as far as the front cares.
#[derive(Debug)]
pub(crate) struct Head {
    pub method: Method,
    /// The path without its query string.
    pub path: String,
    pub keep_alive: bool,
    pub body: Framing,
    pub expect_continue: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Head,
    Post,
    Other,
}

/// How the body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    Length(u64),
    Chunked,
}

/// What reading a head gave.
#[derive(Debug)]
pub(crate) enum Parsed {
    /// A whole head of this many bytes.
    Done(Head, usize),
    /// Not all there yet.
    Partial,
    /// Over the header limit: 431.
    TooLarge,
    /// Not valid HTTP/1.1 (or a bad `Content-Length`): 400.
    Invalid,
}

/// Reads a request head from the start of `buf`, with at most `limit` bytes of it.
pub(crate) fn parse_head(buf: &[u8], limit: usize) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let len = match req.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => {
            return if buf.len() > limit {
                Parsed::TooLarge
            } else {
                Parsed::Partial
            };
        }
        Err(httparse::Error::TooManyHeaders) => return Parsed::TooLarge,
        Err(_) => {
            return if buf.len() > limit {
                Parsed::TooLarge
            } else {
                Parsed::Invalid
            };
        }
    };
    if len > limit {
        return Parsed::TooLarge;
    }
    let method = match req.method {
        Some("GET") => Method::Get,
        Some("HEAD") => Method::Head,
        Some("POST") => Method::Post,
        _ => Method::Other,
    };
    let target = req.path.unwrap_or("/");
    let path = target.split(['?', '#']).next().unwrap_or(target).to_owned();
    let mut keep_alive = req.version == Some(1);
    let mut length: Option<u64> = None;
    let mut chunked = false;
    let mut expect_continue = false;
    for h in req.headers.iter() {
        let name = h.name;
        if name.eq_ignore_ascii_case("content-length") {
            let Some(value) = parse_length(h.value) else {
                return Parsed::Invalid;
            };
            if length.is_some_and(|l| l != value) {
                return Parsed::Invalid;
            }
            length = Some(value);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            // Only `chunked` (last) frames a body; anything else cannot be read.
            let value = String::from_utf8_lossy(h.value);
            let last = value.rsplit(',').next().unwrap_or("").trim();
            if !last.eq_ignore_ascii_case("chunked") || chunked {
                return Parsed::Invalid;
            }
            chunked = true;
        } else if name.eq_ignore_ascii_case("connection") {
            for token in String::from_utf8_lossy(h.value).split(',') {
                let token = token.trim();
                if token.eq_ignore_ascii_case("close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case("keep-alive") {
                    keep_alive = true;
                }
            }
        } else if name.eq_ignore_ascii_case("expect") {
            expect_continue = h.value.eq_ignore_ascii_case(b"100-continue");
        }
    }
    let body = match (chunked, length) {
        (true, Some(_)) => return Parsed::Invalid,
        (true, None) => Framing::Chunked,
        (false, l) => Framing::Length(l.unwrap_or(0)),
    };
    let head = Head {
        method,
        path,
        keep_alive,
        body,
        expect_continue,
    };
    Parsed::Done(head, len)
}

fn parse_length(value: &[u8]) -> Option<u64> {
    let value = value.trim_ascii();
    if value.is_empty() || value.len() > 19 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(value).ok()?.parse().ok()
}

/// A chunked body being decoded: what has arrived is taken from the front of the buffer.
#[derive(Debug, Default)]
pub(crate) struct Chunked {
    /// Bytes of the current chunk's data still to come (then its CRLF).
    left: u64,
    in_data: bool,
    /// After the last chunk: reading trailers up to the empty line.
    trailers: bool,
    pub body: Vec<u8>,
}

/// What decoding more of a chunked body gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Decoded {
    /// The whole body, having used this many bytes of the buffer.
    Done(usize),
    /// More is needed; this many bytes of the buffer were used.
    More(usize),
    TooLarge,
    Invalid,
}

impl Chunked {
    /// Decodes what it can of `buf`, keeping the body under `limit` bytes.
    pub(crate) fn feed(&mut self, buf: &[u8], limit: usize) -> Decoded {
        let mut at = 0;
        loop {
            if self.in_data {
                if self.left > 0 {
                    let take = usize::try_from(self.left)
                        .unwrap_or(usize::MAX)
                        .min(buf.len() - at);
                    if take == 0 {
                        return Decoded::More(at);
                    }
                    self.body.extend_from_slice(&buf[at..at + take]);
                    at += take;
                    self.left -= take as u64;
                    if self.left > 0 {
                        return Decoded::More(at);
                    }
                }
                // The CRLF after a chunk's data.
                if buf.len() - at < 2 {
                    return Decoded::More(at);
                }
                if &buf[at..at + 2] != b"\r\n" {
                    return Decoded::Invalid;
                }
                at += 2;
                self.in_data = false;
                continue;
            }
            let Some(end) = find_crlf(&buf[at..]) else {
                // A size line or trailer has no business being long.
                return if buf.len() - at > 4096 {
                    Decoded::Invalid
                } else {
                    Decoded::More(at)
                };
            };
            let line = &buf[at..at + end];
            at += end + 2;
            if self.trailers {
                if line.is_empty() {
                    return Decoded::Done(at);
                }
                continue;
            }
            let size = line
                .split(|&b| b == b';')
                .next()
                .unwrap_or(line)
                .trim_ascii();
            if size.is_empty() || size.len() > 15 || !size.iter().all(u8::is_ascii_hexdigit) {
                return Decoded::Invalid;
            }
            let Some(size) = std::str::from_utf8(size)
                .ok()
                .and_then(|s| u64::from_str_radix(s, 16).ok())
            else {
                return Decoded::Invalid;
            };
            if size == 0 {
                self.trailers = true;
                continue;
            }
            if self.body.len() as u64 + size > limit as u64 {
                return Decoded::TooLarge;
            }
            self.left = size;
            self.in_data = true;
        }
    }
}

fn find_crlf(buf: &[u8]) -> Option<usize> {
    buf.windows(2).position(|w| w == b"\r\n")
}

/// Content types of the answers.
pub(crate) const JSON: &str = "application/json";
pub(crate) const PLAIN: &str = "text/plain; charset=utf-8";
pub(crate) const PROMETHEUS: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The reason phrase of the statuses the front answers.
pub(crate) fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}

/// Appends a whole response to `out` (no body when `head_only`, as for `HEAD`).
pub(crate) fn respond(
    out: &mut Vec<u8>,
    status: u16,
    content_type: &str,
    body: &[u8],
    close: bool,
    head_only: bool,
) {
    out.reserve(160 + body.len());
    out.extend_from_slice(b"HTTP/1.1 ");
    push_int(out, u64::from(status));
    out.push(b' ');
    out.extend_from_slice(reason(status).as_bytes());
    out.extend_from_slice(b"\r\ncontent-type: ");
    out.extend_from_slice(content_type.as_bytes());
    out.extend_from_slice(b"\r\ncontent-length: ");
    push_int(out, body.len() as u64);
    if close {
        out.extend_from_slice(b"\r\nconnection: close");
    }
    out.extend_from_slice(b"\r\n\r\n");
    if !head_only {
        out.extend_from_slice(body);
    }
}

/// Appends the JSON error answer of `status`.
pub(crate) fn refuse(out: &mut Vec<u8>, status: u16, message: &str, close: bool) {
    respond(
        out,
        status,
        JSON,
        &error_body(status, message, None),
        close,
        false,
    );
}

fn push_int(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn head(raw: &[u8]) -> Head {
        match parse_head(raw, 1024) {
            Parsed::Done(h, n) => {
                assert_eq!(n, raw.len());
                h
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn heads_are_read_with_their_framing() {
        let h = head(b"POST /a?x=1 HTTP/1.1\r\nContent-Length: 12\r\nExpect: 100-continue\r\n\r\n");
        assert_eq!((h.method, h.path.as_str()), (Method::Post, "/a"));
        assert_eq!(h.body, Framing::Length(12));
        assert!(h.keep_alive && h.expect_continue);
        let h = head(b"GET / HTTP/1.0\r\n\r\n");
        assert!(!h.keep_alive);
        let h = head(b"GET / HTTP/1.1\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n");
        assert!(!h.keep_alive);
        assert_eq!(h.body, Framing::Chunked);
    }

    #[test]
    fn bad_lengths_and_big_heads_are_refused() {
        for bad in [
            &b"POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n"[..],
            b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
            b"\x00\x01 nonsense\r\n\r\n",
        ] {
            assert!(matches!(parse_head(bad, 1024), Parsed::Invalid), "{bad:?}");
        }
        let big = [&b"GET / HTTP/1.1\r\nX: "[..], &[b'a'; 2000]].concat();
        assert!(matches!(parse_head(&big, 1024), Parsed::TooLarge));
        assert!(matches!(parse_head(&big[..500], 1024), Parsed::Partial));
    }

    #[test]
    fn chunked_bodies_decode_in_any_pieces() {
        let raw = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\nNEXT";
        for cut in 0..raw.len() {
            let mut c = Chunked::default();
            let mut buf = raw[..cut].to_vec();
            let Decoded::More(used) = c.feed(&buf, 100) else {
                continue;
            };
            buf.drain(..used);
            buf.extend_from_slice(&raw[cut..]);
            let done = c.feed(&buf, 100);
            assert_eq!(done, Decoded::Done(buf.len() - 4), "cut {cut}");
            assert_eq!(c.body, b"hello world");
        }
        assert_eq!(Chunked::default().feed(b"zz\r\n", 100), Decoded::Invalid);
        assert_eq!(Chunked::default().feed(b"ff\r\n", 100), Decoded::TooLarge);
    }

    #[test]
    fn responses_carry_their_length() {
        let mut out = Vec::new();
        respond(&mut out, 200, PLAIN, b"", false, false);
        respond(&mut out, 404, JSON, b"{}", true, false);
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("HTTP/1.1 200 OK\r\ncontent-type: text/plain"));
        assert!(text.ends_with("content-length: 2\r\nconnection: close\r\n\r\n{}"));
    }
}
