//! Derender over JSON (REFERENCE sections 4 and 5): generate output in, OpenAI responses out.
//!
//! [`Derenderer::handle_json`] is the whole HTTP contract of the two derender endpoints: it takes
//! a path and a body and gives a status and a JSON body, for whole responses and for stateless
//! streaming (one generate chunk per call, the state carried by the client). The Python face
//! (pydantic models in, pydantic models out) calls it too, so there is one implementation.
//!
//! Every failure is an answer, never a panic: 400 with an OpenAI-style error object for anything
//! wrong with the body, 404 for an unknown path or model.
//!
//! A request goes down the modules in this order, each using only the ones after it:
//! [`whole`] or [`chunk`] (the two paths, each shared by plain and parsed chat), then
//! `output` (the answers' JSON), `choice` (one choice's text, stop and logprobs), `logprobs`,
//! `checks` (limits, state), `request` (what the request asks), `config`, `input` (the body's
//! types and its parse), `error` and `json` (the writer).

mod checks;
mod choice;
mod chunk;
mod config;
mod error;
mod fields;
mod finish;
mod input;
mod json;
mod logprobs;
mod output;
mod quick;
mod read;
mod request;
mod whole;

use std::sync::Arc;

use crate::detokenizer::Detokenizer;
use crate::parse::{ChatParser, Parsers};
use config::Config;
use output::Answer;

pub use checks::{MAX_CHOICES, MAX_TOP_LOGPROBS};
pub use error::{WireError, error_body, error_type};
pub use finish::FinishReason;
pub use json::LOGPROB_FLOOR;

/// The chat derender endpoint.
pub const CHAT_PATH: &str = "/v1/chat/completions/derender";
/// The completions derender endpoint.
pub const COMPLETION_PATH: &str = "/v1/completions/derender";

/// A derender endpoint: where a body is posted, and which kind of response it becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// [`CHAT_PATH`]: chat completion responses.
    Chat,
    /// [`COMPLETION_PATH`]: completion responses.
    Completion,
}

impl Endpoint {
    /// The endpoint at `path`, if one is.
    pub fn from_path(path: &str) -> Option<Endpoint> {
        match path {
            CHAT_PATH => Some(Endpoint::Chat),
            COMPLETION_PATH => Some(Endpoint::Completion),
            _ => None,
        }
    }

    /// Its path.
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::Chat => CHAT_PATH,
            Endpoint::Completion => COMPLETION_PATH,
        }
    }
}

/// The stream state's keys, in the order the wire writes them: vLLM's
/// ([`VLLM_STATE_KEY_COUNT`] of them), then tokstream's own (vLLM ignores them; `parser` is
/// written only while a built-in parser runs). Read from the state's one declaration.
pub fn state_keys() -> &'static [&'static str] {
    fields::of::<input::State>()
}

/// How many of [`state_keys`] are vLLM's own (the rest are tokstream's).
pub const VLLM_STATE_KEY_COUNT: usize = input::VLLM_STATE_FIELDS;

/// Measurement hooks for `examples/json_readers.rs`, not part of the API: a derender body read
/// into its types by the hand reader, or by serde_json alone (borrowed), as `read::parse`
/// reads it (UTF-8 checked first); whether the reader took it.
#[doc(hidden)]
pub mod readers {
    use super::input::Body;

    /// The hand reader (`wire/quick/`) alone.
    pub fn by_hand(body: &[u8]) -> bool {
        let Ok(text) = std::str::from_utf8(body) else {
            return false;
        };
        let mut out = Body::default();
        super::quick::body(text, &mut out).is_some()
    }

    /// serde_json alone, into the same types.
    pub fn by_serde(body: &[u8]) -> bool {
        std::str::from_utf8(body)
            .ok()
            .and_then(|text| serde_json::from_str::<Body<'_>>(text).ok())
            .is_some()
    }
}

/// How streams carry a parser's state, by name: its small state, or vLLM's replay buffer.
pub const PARSER_STATES: [&str; 2] = ["resumable", "replay"];

/// Whether a parser-state mode (one of [`PARSER_STATES`]) replays.
pub fn replays_by_name(mode: &str) -> Result<bool, String> {
    match PARSER_STATES.iter().position(|&m| m == mode) {
        Some(at) => Ok(at == 1),
        None => Err(format!(
            "parser_state must be {:?} or {:?}, got {mode:?}",
            PARSER_STATES[0], PARSER_STATES[1]
        )),
    }
}

/// Turns generate output into OpenAI chat and completion responses, for one served model.
#[derive(Debug, Clone)]
pub struct Derenderer {
    config: Config,
}

/// A status and a JSON body, with figures for metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The HTTP status: 200, or the error's.
    pub status: u16,
    /// The JSON body: the response, or an error object.
    pub body: Vec<u8>,
    /// Output token ids derendered (0 for errors).
    pub tokens: u64,
    /// Bytes of the returned `stream_state` (0 for whole responses and errors).
    pub state_bytes: u64,
}

impl Reply {
    fn error(e: &WireError) -> Reply {
        Reply {
            status: e.status,
            body: e.body(),
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
            config: Config {
                det,
                served_model_name: served_model_name.into(),
                eos_token_ids,
                max_model_len,
                parser: None,
                replay: false,
            },
        }
    }

    /// The same derenderer with the built-in reasoning and tool parsers for chat. With
    /// `replay`, streams carry vLLM's replay buffer (every output id) and each chunk replays it;
    /// otherwise they carry the parsers' small state.
    pub fn with_parsers(self, parsers: Option<Parsers>, replay: bool) -> Derenderer {
        let parser = parsers.map(|p| Arc::new(p) as Arc<dyn ChatParser>);
        self.with_parser(parser, replay)
    }

    /// The same derenderer with any chat parser (a user's, say); one whose state cannot travel
    /// always replays.
    pub fn with_parser(mut self, parser: Option<Arc<dyn ChatParser>>, replay: bool) -> Derenderer {
        self.config.parser = parser;
        self.config.replay = replay;
        self
    }

    /// The chat parser, if any.
    pub fn parser(&self) -> Option<&dyn ChatParser> {
        self.config.parser.as_deref()
    }

    /// Whether streams replay their history every chunk: as configured, and always with a
    /// parser whose state cannot travel (a user's).
    pub fn replays(&self) -> bool {
        match self.config.parser.as_deref() {
            Some(parser) => self.config.replays(parser),
            None => self.config.replay,
        }
    }

    /// The detokenizer.
    pub fn detokenizer(&self) -> &Arc<Detokenizer> {
        &self.config.det
    }

    /// The model name responses carry when a request names none.
    pub fn served_model_name(&self) -> &str {
        &self.config.served_model_name
    }

    /// The end-of-sequence ids.
    pub fn eos_token_ids(&self) -> &[u32] {
        &self.config.eos_token_ids
    }

    /// The token-count bound, if any.
    pub fn max_model_len(&self) -> Option<usize> {
        self.config.max_model_len
    }

    /// Answers one `POST` to the derender endpoint at `path`: as [`Derenderer::handle`] does,
    /// or 404 with an error object where no endpoint is.
    pub fn handle_json(&self, path: &str, body: &[u8]) -> Reply {
        match Endpoint::from_path(path) {
            Some(endpoint) => self.handle(endpoint, body),
            None => Reply::error(&WireError::not_found(format!(
                "no endpoint at {}",
                error::clip(path)
            ))),
        }
    }

    /// Answers one `POST` to `endpoint`: 200 with the response, 400 or 404 with an error object
    /// (500 if a parser fails). Never panics.
    pub fn handle(&self, endpoint: Endpoint, body: &[u8]) -> Reply {
        let run = std::panic::AssertUnwindSafe(|| self.route(endpoint, body));
        match std::panic::catch_unwind(run) {
            Ok(Ok(a)) => Reply {
                status: 200,
                body: a.body,
                tokens: a.tokens,
                state_bytes: a.state_bytes,
            },
            Ok(Err(e)) => Reply::error(&e),
            Err(_) => Reply::error(&WireError::internal("internal error while derendering")),
        }
    }

    fn route(&self, endpoint: Endpoint, body: &[u8]) -> Result<Answer, WireError> {
        let chat = endpoint == Endpoint::Chat;
        let mut parsed = input::Body::default();
        match read::parse(body, &mut parsed) {
            Ok(()) => self.derender(chat, &mut parsed),
            // Python's `json` writes -inf and NaN logprobs as `-Infinity` and `NaN`: read them as
            // the floor they stand for (only after a failed parse, so valid JSON pays nothing).
            Err(e) => match read::replace_non_finite(body) {
                Some(fixed) => {
                    let mut parsed = input::Body::default();
                    read::parse(&fixed, &mut parsed)?;
                    self.derender(chat, &mut parsed)
                }
                None => Err(e),
            },
        }
    }

    fn derender(&self, chat: bool, body: &mut input::Body<'_>) -> Result<Answer, WireError> {
        let c = &self.config;
        if let Some(model) = body.model.as_deref() {
            if model != c.served_model_name {
                return Err(WireError::not_found(format!(
                    "The model `{}` does not exist.",
                    error::clip(model)
                )));
            }
        }
        match (body.stream.unwrap_or(false), chat) {
            (true, _) => chunk::chunk(c, chat, body),
            (false, true) => whole::chat(c, body),
            (false, false) => whole::completion(c, body),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    // The doc tokenizer: H=0, i=1, space=2, and "中" as bytes E4 B8 AD = ids 3, 4, 5.
    fn derenderer() -> Derenderer {
        let det = Arc::new(Detokenizer::from_json(&crate::doc_tokenizer_json()).unwrap());
        Derenderer::new(det, "m", vec![], Some(64))
    }

    fn post(r: &Derenderer, path: &str, body: &Value) -> (u16, Value) {
        let reply = r.handle_json(path, body.to_string().as_bytes());
        (reply.status, serde_json::from_slice(&reply.body).unwrap())
    }

    #[test]
    fn an_endpoint_is_its_path_and_only_its_path() {
        for e in [Endpoint::Chat, Endpoint::Completion] {
            assert_eq!(Endpoint::from_path(e.path()), Some(e));
        }
        assert_eq!(Endpoint::from_path("/v1/chat/completions"), None);
        let r = derenderer();
        let body = json!({"generate_response": {"choices": []}});
        let by_path = r.handle_json(CHAT_PATH, body.to_string().as_bytes());
        let by_endpoint = r.handle(Endpoint::Chat, body.to_string().as_bytes());
        let without_id = |reply: Reply| {
            let mut v: Value = serde_json::from_slice(&reply.body).unwrap();
            v["id"] = Value::Null;
            (reply.status, v)
        };
        assert_eq!(without_id(by_path), without_id(by_endpoint));
        let (status, answer) = post(&r, "/nope", &body);
        assert_eq!((status, answer["error"]["code"].as_u64()), (404, Some(404)));
    }

    #[test]
    fn streamed_chunks_add_up_to_the_whole_text() {
        let r = derenderer();
        let ids = [0, 1, 2, 3, 4, 5, 2, 0];
        let whole = json!({"generate_response": {"choices": [{"index": 0, "token_ids": ids}]}});
        let (status, answer) = post(&r, CHAT_PATH, &whole);
        assert_eq!(status, 200);
        assert_eq!(answer["choices"][0]["message"]["content"], "Hi 中 H");
        let mut state = Value::Null;
        let mut text = String::new();
        for (i, id) in ids.iter().enumerate() {
            let finish = if i + 1 == ids.len() {
                json!("length")
            } else {
                Value::Null
            };
            let chunk = json!({"stream": true, "stream_state": state, "generate_chunk": {
                "choices": [{"index": 0, "token_ids": [id], "finish_reason": finish}]}});
            let (status, answer) = post(&r, COMPLETION_PATH, &chunk);
            assert_eq!(status, 200, "{answer}");
            text.push_str(answer["chunk"]["choices"][0]["text"].as_str().unwrap());
            state = answer["stream_state"].clone();
        }
        assert_eq!(text, "Hi 中 H");
    }

    #[test]
    fn logprob_strings_of_a_split_character() {
        let r = derenderer();
        let entry = |id: u32| json!({"token_id": id, "logprob": -1.0, "top_logprobs": []});
        let body = json!({"generate_response": {"choices": [{"index": 0, "token_ids": [3, 4, 5],
            "logprobs": {"content": [entry(3), entry(4), entry(5)]}}]}});
        let (status, answer) = post(&r, CHAT_PATH, &body);
        assert_eq!(status, 200);
        let content = &answer["choices"][0]["logprobs"]["content"];
        let tokens: Vec<&str> = (0..3)
            .map(|i| content[i]["token"].as_str().unwrap())
            .collect();
        assert_eq!(tokens, ["", "", "中"]);
        assert_eq!(content[2]["bytes"], json!([0xE4, 0xB8, 0xAD]));
    }

    #[test]
    fn bad_bodies_get_400_and_unknown_things_404() {
        let r = derenderer();
        for body in [&b"{"[..], b"[]", b"{\"generate_response\": 3}", b"\xff"] {
            assert_eq!(r.handle_json(CHAT_PATH, body).status, 400);
        }
        let too_long = json!({"generate_response": {"choices": [{"index": 0,
            "token_ids": vec![0; 65]}]}});
        assert_eq!(post(&r, CHAT_PATH, &too_long).0, 400);
        let two = json!({"stream": true, "generate_chunk": {"choices": [
            {"index": 0, "token_ids": [0]}, {"index": 1, "token_ids": [0]}]}});
        assert_eq!(post(&r, CHAT_PATH, &two).0, 400);
        let hostile = json!({"stream": true, "stream_state": {"prev_tokens": ["H"],
            "prefix_offset": 1, "read_offset": 0}, "generate_chunk": {"choices": []}});
        assert_eq!(post(&r, CHAT_PATH, &hostile).0, 400);
        let model = json!({"model": "other", "generate_response": {"choices": []}});
        assert_eq!(post(&r, CHAT_PATH, &model).0, 404);
        assert_eq!(r.handle_json("/v1/other", b"{}").status, 404);
    }

    #[test]
    fn python_non_finite_logprobs_read_as_the_floor() {
        let r = derenderer();
        let body = br#"{"generate_response": {"choices": [{"index": 0, "token_ids": [0, 1],
            "logprobs": {"content": [{"token_id": 0, "logprob": -Infinity},
            {"token": "NaN text", "logprob": NaN, "bytes": [1, 2]}]}}]}}"#;
        let reply = r.handle_json(CHAT_PATH, body);
        assert_eq!(reply.status, 200);
        let answer: Value = serde_json::from_slice(&reply.body).unwrap();
        let content = &answer["choices"][0]["logprobs"]["content"];
        assert_eq!(content[0]["logprob"].as_f64(), Some(LOGPROB_FLOOR));
        assert_eq!(content[1]["logprob"].as_f64(), Some(LOGPROB_FLOOR));
        // A literal token keeps its text and the bytes it was sent with.
        assert_eq!(content[1]["token"], "NaN text");
        assert_eq!(content[1]["bytes"], json!([1, 2]));
        let overflow = json!({"generate_response": {"choices": [{"index": 0, "token_ids": [0],
            "logprobs": {"content": [{"token": "token_id:4294967296", "logprob": -1.0}]}}]}});
        assert_eq!(post(&r, CHAT_PATH, &overflow).0, 400);
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_get_an_answer(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            let status = derenderer().handle_json(CHAT_PATH, &bytes).status;
            proptest::prop_assert!(matches!(status, 200 | 400 | 404));
        }

        #[test]
        fn mutated_parser_bodies_get_an_answer(at in 0usize..500, byte in proptest::num::u8::ANY) {
            let plain = derenderer();
            let det = Arc::clone(plain.detokenizer());
            let parsers = Parsers::new(&det, Some(crate::Reasoning::DeepSeekR1), true);
            for replay in [false, true] {
                let r = derenderer().with_parsers(parsers.clone(), replay);
                let body = json!({"stream": true, "prompt_token_ids": [0, 1],
                    "stream_state": {"prev_tokens": ["H"], "read_offset": 1,
                        "output_token_ids": [0], "output_chunk_lens": [1],
                        "parser": {"r": true, "t": {"n": 1, "i": true, "a": "O", "d": 2,
                            "q": true, "k": "arguments", "r": "a", "s": true}}},
                    "generate_chunk": {"request_id": "r", "choices": [{"index": 0,
                        "token_ids": [3, 4, 5, 2, 0], "finish_reason": "stop"}]},
                    "chat_request": {"tools": [{}], "tool_choice": "auto"}});
                let mut bytes = body.to_string().into_bytes();
                let at = at % bytes.len();
                bytes[at] = byte;
                let status = r.handle_json(CHAT_PATH, &bytes).status;
                proptest::prop_assert!(matches!(status, 200 | 400 | 404));
            }
        }

        #[test]
        fn mutated_bodies_get_an_answer(at in 0usize..400, byte in proptest::num::u8::ANY) {
            let body = json!({"stream": true, "stream_state": {"prev_tokens": ["H", "i"],
                "read_offset": 2, "held_text": "", "generated_tokens": 2},
                "generate_chunk": {"request_id": "r", "choices": [{"index": 0,
                "token_ids": [3, 4, 5], "finish_reason": "stop", "stop_reason": 5, "logprobs":
                {"content": [{"token": "token_id:3", "logprob": -0.5, "top_logprobs": []}]}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 3}},
                "completion_request": {"stop": ["中"], "logprobs": 1, "min_tokens": 1}});
            let mut bytes = body.to_string().into_bytes();
            let at = at % bytes.len();
            bytes[at] = byte;
            for path in [CHAT_PATH, COMPLETION_PATH] {
                let status = derenderer().handle_json(path, &bytes).status;
                proptest::prop_assert!(matches!(status, 200 | 400 | 404));
            }
        }
    }
}
