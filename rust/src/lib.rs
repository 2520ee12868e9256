//! tokstream: incremental detokenization for LLM serving. Token ids in, text deltas out; never
//! a partial character, and the deltas of a stream add up to the tokenizer's one-shot `decode`.
//!
//! A [`Detokenizer`] is built once per `tokenizer.json`, is immutable, and is shared across
//! threads behind an `Arc`. Each sequence gets its own [`Stream`], which carries vLLM's window
//! `(prev_tokens, prefix_offset, read_offset)` so a stateless server can hand it to clients.
//!
//! ```
//! # fn main() -> Result<(), tokstream::Error> {
//! # let json = tokstream::doc_tokenizer_json();
//! use std::sync::Arc;
//! let det = Arc::new(tokstream::Detokenizer::from_json(&json)?);
//! let mut stream = tokstream::Stream::new(&det, &[], false);
//! let mut text = String::new();
//! for id in [0, 1, 2] {
//!     text.push_str(stream.step(&[id])?);
//! }
//! text.push_str(stream.finish()?);
//! assert_eq!(text, det.decode(&[0, 1, 2], false)?);
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

mod detokenizer;
mod engine;
mod error;
mod escape;
mod hint;
mod holdback;
pub mod limits;
mod logprobs;
mod parse;
mod stop;
mod stream;
mod streamset;
mod table;
mod vocab;
mod wire;

#[cfg(feature = "front")]
pub mod front;
#[cfg(feature = "python")]
mod py;

pub use detokenizer::{Detokenizer, doc_tokenizer_json};
pub use engine::EngineKind;
pub use error::{Error, Result};
pub use logprobs::CONTEXT as LOGPROB_CONTEXT;
pub use parse::{
    ALIASES as PARSER_ALIASES, AUTO, CallDelta, ChatParser, Context, Delta, Kind as ParserKind,
    ParseError, ParseState, Parsers, REASONING_PARSERS, REFUSED as REFUSED_PARSERS, Reasoning,
    Session, TEMPLATE_NAME, TEMPLATES, TOOL_PARSERS, Template, TemplateParser, TemplateState,
    ToolRules, accepted_names, auto_names, builtin_json, parser_refusal, select_parser,
};
pub use stop::{MAX_STOP_BYTES, StopStep, StopStrings};
pub use stream::{MAX_HELD, PREFIX_OFFSET, SEED_IDS, Stream, step_batch};
pub use streamset::{Plan, SetError, StreamSet};
pub use vocab::MAX_WINDOW;
#[doc(hidden)]
pub use wire::readers as __readers;
pub use wire::{
    CHAT_PATH, COMPLETION_PATH, Derenderer, Endpoint, FinishReason, LOGPROB_FLOOR, MAX_CHOICES,
    MAX_TOP_LOGPROBS, PARSER_STATES, Reply, VLLM_STATE_KEY_COUNT, WireError, error_body,
    error_type, replays_by_name, state_keys,
};
