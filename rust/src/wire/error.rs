//! Why a body was refused, and the OpenAI error object that says so: the one place the error
//! shape (`{"error": {"message", "type", "param", "code"}}`) is written.

use super::json::Json;
use super::json::key;

/// Why a body was refused; it becomes the error object of the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    /// The HTTP status (400, 404, 413, 500, ...).
    pub status: u16,
    /// The error object's `message`.
    pub message: String,
    /// The error object's `param`: the request field at fault, if one is.
    pub param: Option<String>,
}

pub(crate) type Res<T> = Result<T, WireError>;

impl WireError {
    /// A 400: the body is wrong.
    pub(crate) fn bad(message: impl Into<String>) -> WireError {
        WireError {
            status: 400,
            message: message.into(),
            param: None,
        }
    }

    /// A 400 about one field.
    pub(crate) fn bad_param(message: impl Into<String>, param: impl Into<String>) -> WireError {
        WireError {
            status: 400,
            message: message.into(),
            param: Some(param.into()),
        }
    }

    /// A 404: no such path or model.
    pub(crate) fn not_found(message: impl Into<String>) -> WireError {
        WireError {
            status: 404,
            message: message.into(),
            param: None,
        }
    }

    /// A 500: derender itself failed.
    pub(crate) fn internal(message: impl Into<String>) -> WireError {
        WireError {
            status: 500,
            message: message.into(),
            param: None,
        }
    }

    /// The OpenAI error type name of the status.
    pub fn error_type(&self) -> &'static str {
        error_type(self.status)
    }

    /// The error object's JSON.
    pub fn body(&self) -> Vec<u8> {
        error_body(self.status, &self.message, self.param.as_deref())
    }
}

/// The OpenAI error type name of an HTTP status.
pub fn error_type(status: u16) -> &'static str {
    match status {
        400 => "BadRequestError",
        404 => "NotFoundError",
        405 => "MethodNotAllowedError",
        408 => "RequestTimeoutError",
        413 => "PayloadTooLargeError",
        415 => "UnsupportedMediaTypeError",
        431 => "RequestHeaderFieldsTooLargeError",
        501 => "NotImplementedError",
        503 => "ServiceUnavailableError",
        _ => "InternalServerError",
    }
}

/// The error object of a status: `{"error": {"message", "type", "param", "code"}}`.
pub fn error_body(status: u16, message: &str, param: Option<&str>) -> Vec<u8> {
    let mut j = Json::with_capacity(128 + message.len());
    j.obj();
    key!(j, "error");
    j.obj();
    key!(j, "message");
    j.str(message);
    key!(j, "type");
    j.str(error_type(status));
    key!(j, "param");
    j.opt_str(param);
    key!(j, "code");
    j.u64(u64::from(status));
    j.end_obj();
    j.end_obj();
    j.into_bytes()
}

/// A JSON reader's error, in the project's words: what was expected said as a JSON type (not a
/// Rust one), and where as a line and column.
pub(crate) fn json_words(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let (what, place) = match text.rsplit_once(" at line ") {
        Some((what, place)) => (what, Some(place)),
        None => (text.as_str(), None),
    };
    let mut what = what.to_owned();
    for (rust, ours) in [
        ("expected u32", "expected an integer from 0 to 4294967295"),
        ("expected u64", "expected an integer of 0 or more"),
        ("expected usize", "expected an integer of 0 or more"),
        ("expected u8", "expected an integer from 0 to 255"),
        ("expected u16", "expected an integer from 0 to 65535"),
        ("expected i64", "expected an integer"),
        ("expected i32", "expected an integer"),
        ("expected f64", "expected a number"),
        ("expected f32", "expected a number"),
        ("expected a sequence", "expected a list"),
        ("expected a map", "expected an object"),
        ("expected a borrowed string", "expected a string"),
        ("floating point `", "number `"),
        ("invalid type: map", "invalid type: object"),
        ("invalid type: sequence", "invalid type: list"),
    ] {
        what = what.replace(rust, ours);
    }
    if let Some(rest) = what.strip_prefix("expected struct ") {
        what = format!("expected an object ({rest})");
    }
    match place.and_then(|p| p.split_once(" column ")) {
        Some((line, column)) => clip(&format!("{what} (line {line}, column {column})")),
        None => clip(&what),
    }
}

/// At most 200 chars of a user-given string, for messages.
pub(crate) fn clip(s: &str) -> String {
    const MAX: usize = 200;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", s.get(..i).unwrap_or_default()),
        None => s.to_owned(),
    }
}
