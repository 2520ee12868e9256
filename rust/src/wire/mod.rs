//! Derender over JSON (REFERENCE sections 4 and 5): generate output in, OpenAI responses out.
//!
//! [`Derenderer::handle_json`] is the whole HTTP contract of the two derender endpoints: it takes
//! a path and a body and gives a status and a JSON body, for whole responses and for stateless
//! streaming (one generate chunk per call, the state carried by the client). The Python face
//! (pydantic models in, pydantic models out) calls it too, so there is one implementation.
//!
//! Every failure is an answer, never a panic: 400 with an OpenAI-style error object for anything
//! wrong with the body, 404 for an unknown path or model.

mod derender;
mod input;
mod json;

use std::sync::Arc;

use crate::Detokenizer;

pub use derender::{MAX_CHOICES, MAX_TOP_LOGPROBS};

/// The value that stands for `-inf` (and NaN) in logprobs on the wire.
pub const LOGPROB_FLOOR: f64 = -9999.0;

/// The chat derender endpoint.
pub const CHAT_PATH: &str = "/v1/chat/completions/derender";
/// The completions derender endpoint.
pub const COMPLETION_PATH: &str = "/v1/completions/derender";

/// Turns generate output into OpenAI chat and completion responses, for one served model.
#[derive(Debug, Clone)]
pub struct Derenderer {
    det: Arc<Detokenizer>,
    served_model_name: String,
    eos_token_ids: Vec<u32>,
    max_model_len: Option<usize>,
}

/// A status and a JSON body, with figures for metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
    /// Output token ids derendered (0 for errors).
    pub tokens: u64,
    /// Bytes of the returned `stream_state` (0 for whole responses and errors).
    pub state_bytes: u64,
}

/// Why a body was refused; it becomes the error object of the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    pub status: u16,
    pub message: String,
    pub param: Option<String>,
}

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

    /// The OpenAI error type name of the status.
    pub fn error_type(&self) -> &'static str {
        match self.status {
            400 => "BadRequestError",
            404 => "NotFoundError",
            _ => "InternalServerError",
        }
    }

    fn reply(&self) -> Reply {
        let mut j = json::Json::with_capacity(128 + self.message.len());
        j.raw("{\"error\":{\"message\":");
        j.str(&self.message);
        j.raw(",\"type\":");
        j.str(self.error_type());
        j.raw(",\"param\":");
        j.opt_str(self.param.as_deref());
        j.raw(",\"code\":");
        j.u64(u64::from(self.status));
        j.raw("}}");
        Reply {
            status: self.status,
            body: j.buf,
            tokens: 0,
            state_bytes: 0,
        }
    }
}

impl Derenderer {
    /// A derenderer for `served_model_name`. `eos_token_ids` are the ids whose ending of a
    /// choice (`finish_reason == "stop"`) is not detokenized; `max_model_len` bounds the token
    /// lists a body may carry (none when `None`).
    pub fn new(
        det: Arc<Detokenizer>,
        served_model_name: impl Into<String>,
        eos_token_ids: Vec<u32>,
        max_model_len: Option<usize>,
    ) -> Derenderer {
        Derenderer {
            det,
            served_model_name: served_model_name.into(),
            eos_token_ids,
            max_model_len,
        }
    }

    /// The detokenizer.
    pub fn detokenizer(&self) -> &Arc<Detokenizer> {
        &self.det
    }

    /// The model name responses carry when a request names none.
    pub fn served_model_name(&self) -> &str {
        &self.served_model_name
    }

    /// The end-of-sequence ids.
    pub fn eos_token_ids(&self) -> &[u32] {
        &self.eos_token_ids
    }

    /// The token-count bound, if any.
    pub fn max_model_len(&self) -> Option<usize> {
        self.max_model_len
    }

    /// Answers one `POST` to a derender endpoint: 200 with the response, 400 or 404 with an
    /// error object. Never panics.
    pub fn handle_json(&self, path: &str, body: &[u8]) -> Reply {
        let run = std::panic::AssertUnwindSafe(|| self.route(path, body));
        match std::panic::catch_unwind(run) {
            Ok(Ok(a)) => Reply {
                status: 200,
                body: a.body,
                tokens: a.tokens,
                state_bytes: a.state_bytes,
            },
            Ok(Err(e)) => e.reply(),
            Err(_) => WireError {
                status: 500,
                message: "internal error while derendering".to_owned(),
                param: None,
            }
            .reply(),
        }
    }

    fn route(&self, path: &str, body: &[u8]) -> Result<derender::Answer, WireError> {
        let chat = match path {
            CHAT_PATH => true,
            COMPLETION_PATH => false,
            _ => {
                return Err(WireError::not_found(format!(
                    "no endpoint at {}",
                    clip(path)
                )));
            }
        };
        let parsed = derender::parse(body)?;
        self.derender(chat, parsed)
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
