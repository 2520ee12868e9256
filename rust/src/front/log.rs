//! The front's log lines, written to standard error as text or JSON, one line each:
//!
//! - every refused or failed request at `WARNING` (`ERROR` for a 5xx): its status, the reason
//!   it is counted under in `/metrics`, the method and path, its request id and the message its
//!   answer carries; and every connection closed for a reason of its own (a head over the limit
//!   or not HTTP, a head or an answer that took too long). These lines are rate-limited (a burst
//!   of [`BURST`], then [`PER_SECOND`] a second), and the next line written after some were
//!   dropped says how many, so an abusive client cannot flood the log;
//! - with `access` on, every request at `INFO`: status, method, path, time taken, bytes in and
//!   out, request id. These lines are buffered and written at least every [`FLUSH_EVERY`] (or
//!   once [`BUFFERED`] bytes wait), so that a chunk costs no write of its own; a refusal's line
//!   writes what waits first, so lines keep their order.
//!
//! A request's id is its `x-request-id` header, else the `request_id` of the derender body's
//! generate output (read only for the lines written). Lines below the level are not written.
//! The text form is `TIME LEVEL tokstream.front: WHAT key=value ...`, the JSON form an object
//! of the same fields, each with `time` (UTC, milliseconds), `level` and `logger`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::lock;

/// Refusal lines written at once before the rate applies.
pub const BURST: f64 = 20.0;
/// Refusal lines a second once the burst is spent.
pub const PER_SECOND: f64 = 10.0;
/// The longest an access line waits to be written.
pub const FLUSH_EVERY: std::time::Duration = std::time::Duration::from_millis(100);
/// Access lines written at once when this many bytes of them wait.
pub const BUFFERED: usize = 64 * 1024;

/// A line's severity, as Python's `logging` numbers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// `debug`.
    Debug = 10,
    /// `info`: startup, shutdown and access lines.
    Info = 20,
    /// `warning`: refused and failed requests.
    Warning = 30,
    /// `error`.
    Error = 40,
    /// `critical`.
    Critical = 50,
}

impl Level {
    /// The level of a name (`"warning"`, case-insensitive), as `--log-level` takes it.
    pub fn of(name: &str) -> Option<Level> {
        Some(match name.to_ascii_lowercase().as_str() {
            "debug" => Level::Debug,
            "info" => Level::Info,
            "warning" => Level::Warning,
            "error" => Level::Error,
            "critical" => Level::Critical,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Level::Debug => "DEBUG",
            Level::Info => "INFO",
            Level::Warning => "WARNING",
            Level::Error => "ERROR",
            Level::Critical => "CRITICAL",
        }
    }
}

/// How lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One line of text each.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// What the front logs.
#[derive(Debug, Clone, Copy)]
pub struct LogOptions {
    /// The least severity written.
    pub level: Level,
    /// How lines are written.
    pub format: Format,
    /// A line for every request.
    pub access: bool,
}

impl Default for LogOptions {
    fn default() -> LogOptions {
        LogOptions {
            level: Level::Info,
            format: Format::Text,
            access: false,
        }
    }
}

/// One request, as its line tells it.
pub(super) struct Request<'a> {
    pub(super) status: u16,
    pub(super) reason: Option<&'static str>,
    pub(super) method: &'a str,
    pub(super) path: &'a str,
    pub(super) request_id: Option<&'a str>,
    pub(super) message: Option<&'a str>,
    pub(super) seconds: f64,
    pub(super) bytes_in: usize,
    pub(super) bytes_out: usize,
}

struct Bucket {
    tokens: f64,
    at: Instant,
    dropped: u64,
}

/// The front's log.
pub(super) struct Log {
    pub(super) opts: LogOptions,
    bucket: Mutex<Bucket>,
    /// Access lines not yet written.
    waiting: Mutex<Vec<u8>>,
}

impl Log {
    pub(super) fn new(opts: LogOptions) -> Log {
        Log {
            opts,
            bucket: Mutex::new(Bucket {
                tokens: BURST,
                at: Instant::now(),
                dropped: 0,
            }),
            waiting: Mutex::new(Vec::new()),
        }
    }

    /// Writes the access lines that wait.
    pub(super) fn flush(&self) {
        let mut waiting = lock(&self.waiting);
        if !waiting.is_empty() {
            let _ = std::io::stderr().lock().write_all(&waiting);
            waiting.clear();
        }
    }

    /// Writes `line` now, after the access lines that wait; or, `buffered`, adds it to them.
    fn emit(&self, line: Line, buffered: bool) {
        let line = line.finish();
        let mut waiting = lock(&self.waiting);
        if buffered {
            waiting.extend_from_slice(line.as_bytes());
            if waiting.len() < BUFFERED {
                return;
            }
        } else {
            waiting.extend_from_slice(line.as_bytes());
        }
        // One write, so threads' lines never interleave.
        let _ = std::io::stderr().lock().write_all(&waiting);
        waiting.clear();
    }

    /// Whether a request's line is written: refused or failed, or every one with `access`.
    pub(super) fn wants(&self, status: u16) -> bool {
        let level = if status >= 400 {
            Self::refusal_level(status)
        } else {
            Level::Info
        };
        level >= self.opts.level && (status >= 400 || self.opts.access)
    }

    fn refusal_level(status: u16) -> Level {
        if status >= 500 && status != 503 {
            Level::Error
        } else {
            Level::Warning
        }
    }

    /// A request's line (call when [`Log::wants`] its status).
    pub(super) fn request(&self, r: &Request<'_>) {
        let refused = r.status >= 400;
        let level = if refused {
            Self::refusal_level(r.status)
        } else {
            Level::Info
        };
        let mut line = Line::new(self.opts.format, level);
        if refused {
            if !self.admitted() {
                return;
            }
            line.what("refused");
        } else {
            line.what("request");
        }
        line.num("status", f64::from(r.status));
        if let Some(reason) = r.reason {
            line.text("reason", reason);
        }
        line.text("method", r.method);
        line.text("path", r.path);
        if let Some(id) = r.request_id {
            line.text("request_id", id);
        }
        line.num("ms", (r.seconds * 1e6).round() / 1e3);
        line.num("bytes_in", r.bytes_in as f64);
        line.num("bytes_out", r.bytes_out as f64);
        if let Some(message) = r.message {
            line.text("message", message);
        }
        self.emit(line, !refused);
    }

    /// A connection closed for a reason of the front's own, with no answer of its own.
    pub(super) fn closed(&self, reason: &'static str, message: &str) {
        if Level::Warning < self.opts.level {
            return;
        }
        if !self.admitted() {
            return;
        }
        let mut line = Line::new(self.opts.format, Level::Warning);
        line.what("closed");
        line.text("reason", reason);
        line.text("message", message);
        self.emit(line, false);
    }

    /// Whether a refusal line may be written now; when some were dropped before it, a line
    /// saying how many is written first.
    fn admitted(&self) -> bool {
        let Some(dropped) = self.admit() else {
            return false;
        };
        if dropped > 0 {
            let mut note = Line::new(self.opts.format, Level::Warning);
            note.what("dropped");
            note.num("lines", dropped as f64);
            note.text("message", "refusal lines dropped by the rate limit");
            self.emit(note, false);
        }
        true
    }

    /// Whether a refusal line may be written now, and how many were dropped before it.
    fn admit(&self) -> Option<u64> {
        let mut b = lock(&self.bucket);
        let now = Instant::now();
        let refill = now.duration_since(b.at).as_secs_f64() * PER_SECOND;
        b.tokens = (b.tokens + refill).min(BURST);
        b.at = now;
        if b.tokens < 1.0 {
            b.dropped += 1;
            return None;
        }
        b.tokens -= 1.0;
        Some(std::mem::take(&mut b.dropped))
    }
}

/// One line being written.
struct Line {
    format: Format,
    out: String,
}

impl Line {
    fn new(format: Format, level: Level) -> Line {
        let mut out = String::with_capacity(256);
        let time = utc_now();
        match format {
            Format::Text => {
                let _ = write!(out, "{time} {} tokstream.front:", level.name());
            }
            Format::Json => {
                let _ = write!(
                    out,
                    "{{\"time\":\"{time}\",\"level\":\"{}\",\"logger\":\"tokstream.front\"",
                    level.name()
                );
            }
        }
        Line { format, out }
    }

    /// What the line is about: the text form's first word, the JSON form's `event`.
    fn what(&mut self, event: &str) {
        match self.format {
            Format::Text => {
                self.out.push(' ');
                self.out.push_str(event);
            }
            Format::Json => self.text("event", event),
        }
    }

    fn text(&mut self, key: &str, value: &str) {
        match self.format {
            Format::Text => {
                let _ = write!(self.out, " {key}=");
                let bare = !value.is_empty()
                    && value
                        .bytes()
                        .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\');
                if bare {
                    self.out.push_str(value);
                } else {
                    quote(&mut self.out, value);
                }
            }
            Format::Json => {
                let _ = write!(self.out, ",\"{key}\":");
                quote(&mut self.out, value);
            }
        }
    }

    fn num(&mut self, key: &str, value: f64) {
        match self.format {
            Format::Text => {
                let _ = write!(self.out, " {key}={value}");
            }
            Format::Json => {
                let _ = write!(self.out, ",\"{key}\":{value}");
            }
        }
    }

    /// The whole line, with its end.
    fn finish(mut self) -> String {
        if self.format == Format::Json {
            self.out.push('}');
        }
        self.out.push('\n');
        self.out
    }
}

/// `value` as a JSON string (control characters escaped, so a line stays one line).
fn quote(out: &mut String, value: &str) {
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Now in UTC, as `2026-12-02T19:05:01.123Z`.
fn utc_now() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil(i64::try_from(days).unwrap_or(0));
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// The proleptic Gregorian date of a day count from 1970-01-01.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        u32::try_from(m).unwrap_or(1),
        u32::try_from(d).unwrap_or(1),
    )
}

/// The `request_id` of a derender body's generate output, if it has one near its start, found
/// without parsing the body (it is read only for a line being written).
pub(super) fn body_request_id(body: &[u8]) -> Option<&str> {
    let key = b"\"request_id\"";
    let at = memchr::memmem::find(body, key)? + key.len();
    let rest = body.get(at..)?;
    let colon = rest.iter().position(|&b| !b.is_ascii_whitespace())?;
    if rest.get(colon) != Some(&b':') {
        return None;
    }
    let rest = rest.get(colon + 1..)?;
    let open = rest.iter().position(|&b| !b.is_ascii_whitespace())?;
    if rest.get(open) != Some(&b'"') {
        return None;
    }
    let value = rest.get(open + 1..)?;
    let end = value
        .iter()
        .take(256)
        .position(|&b| b == b'"' || b == b'\\')?;
    if value.get(end) != Some(&b'"') {
        return None;
    }
    std::str::from_utf8(value.get(..end)?).ok()
}

/// The `message` of a JSON error body (`{"error": {"message": ...}}`).
pub(super) fn error_message(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    v.get("error")?.get("message")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_civil_dates() {
        assert_eq!(civil(0), (1970, 1, 1));
        assert_eq!(civil(59), (1970, 3, 1));
        assert_eq!(civil(11_016), (2000, 2, 29));
        assert_eq!(civil(20_789), (2026, 12, 2));
    }

    #[test]
    fn a_body_request_id_is_found_or_not() {
        let body =
            br#"{"stream": true, "generate_chunk": {"request_id" : "gen-7", "choices": []}}"#;
        assert_eq!(body_request_id(body), Some("gen-7"));
        assert_eq!(body_request_id(br#"{"request_id": 7}"#), None);
        assert_eq!(body_request_id(br#"{"request_id": "a\"b"}"#), None);
        assert_eq!(body_request_id(b"{}"), None);
    }

    #[test]
    fn the_rate_limit_admits_a_burst_then_counts_what_it_drops() {
        let log = Log::new(LogOptions::default());
        for _ in 0..20 {
            assert_eq!(log.admit(), Some(0));
        }
        assert_eq!(log.admit(), None);
        assert_eq!(log.admit(), None);
        lock(&log.bucket).at -= std::time::Duration::from_millis(200);
        assert_eq!(
            log.admit(),
            Some(2),
            "two lines a 0.2 s: the first says two were dropped"
        );
    }

    #[test]
    fn text_values_are_bare_or_quoted() {
        let mut line = Line::new(Format::Text, Level::Warning);
        line.text("path", "/v1/x");
        line.text("message", "two words\n");
        assert!(
            line.out.ends_with(" path=/v1/x message=\"two words\\n\""),
            "{}",
            line.out
        );
        let mut json = Line::new(Format::Json, Level::Info);
        json.num("status", 200.0);
        json.out.push('}');
        let v: serde_json::Value = serde_json::from_str(&json.out).unwrap_or_default();
        assert_eq!(v["status"], 200.0);
        assert_eq!(v["level"], "INFO");
    }
}
