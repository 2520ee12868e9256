//! What one served model's derenderer is configured with; every path reads it, none changes it.

use std::sync::Arc;

use crate::detokenizer::Detokenizer;
use crate::parse::ChatParser;

/// A derenderer's settings (see `Derenderer::new`).
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub det: Arc<Detokenizer>,
    pub served_model_name: String,
    pub eos_token_ids: Vec<u32>,
    pub max_model_len: Option<usize>,
    /// The chat parser, built in or a user's.
    pub parser: Option<Arc<dyn ChatParser>>,
    /// Streams carry vLLM's replay buffer and replay it every chunk.
    pub replay: bool,
}

impl Config {
    /// The model name of a response: the request's, else the served one.
    pub fn model_name<'b>(&'b self, requested: Option<&'b str>) -> &'b str {
        requested.unwrap_or(&self.served_model_name)
    }

    /// Whether a stream must replay its history: always for a parser whose state cannot travel,
    /// and in replay mode.
    pub fn replays(&self, parser: &dyn ChatParser) -> bool {
        self.replay || !parser.resumable()
    }
}
