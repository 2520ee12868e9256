//! The per-tokenizer tables and engine, built once from a `tokenizer.json`, immutable, and
//! shared across threads behind an `Arc`. Streams ([`crate::Stream`]) are built on it.

use tokenizers::Tokenizer;

use crate::engine::{Engine, EngineKind, Scratch, Start};
use crate::error::{Error, Result};
use crate::vocab::Vocab;

/// The per-tokenizer tables and engine. Immutable once built; share it with [`std::sync::Arc`].
#[derive(Debug)]
pub struct Detokenizer {
    vocab: Vocab,
    engine: Engine,
    /// Per id, what a step needs first, in one 8-byte record (see [`Quick`]).
    quick: Vec<Quick>,
    /// The fast-path texts the records point into.
    fast: String,
}

/// What a step looks up for an id: whether it has a token, whether it is special, and its
/// fast-path text ([`Detokenizer::fast_text`]) as a span of `Detokenizer::fast`. One record per id
/// keeps a step to one cache line of tables instead of three.
#[derive(Debug, Clone, Copy, Default)]
struct Quick {
    start: u32,
    len: u16,
    present: bool,
    special: bool,
}

impl Detokenizer {
    /// Loads a `tokenizer.json` document.
    pub fn from_json(json: &str) -> Result<Detokenizer> {
        // The `tokenizers` crate is third-party code: a panic while it parses a hostile file
        // becomes a load error, never a crash.
        let parsed =
            std::panic::catch_unwind(|| json.parse::<Tokenizer>()).map_err(|_| Error::Load {
                reason: "the tokenizer definition could not be parsed".to_owned(),
            })?;
        let tok = parsed.map_err(|e| Error::Load {
            reason: format!("{e}"),
        })?;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Detokenizer::from_tokenizer(&tok)
        }))
        .map_err(|_| Error::Load {
            reason: "the tokenizer's tables could not be built".to_owned(),
        })?
    }

    /// Builds the tables of a loaded `tokenizers` tokenizer.
    pub fn from_tokenizer(tok: &Tokenizer) -> Result<Detokenizer> {
        let vocab = Vocab::from_tokenizer(tok)?;
        if vocab.len() == 0 {
            return Err(Error::Load {
                reason: "the vocabulary is empty".to_owned(),
            });
        }
        let engine = Engine::choose(tok, &vocab)?;
        let mut fast = String::new();
        let quick = (0..vocab.len() as u32)
            .map(|id| {
                let text = engine.fast_text(id).unwrap_or_default();
                let (start, len) = match u16::try_from(text.len()) {
                    Ok(len) if fast.len() < u32::MAX as usize - text.len() => {
                        fast.push_str(text);
                        ((fast.len() - text.len()) as u32, len)
                    }
                    _ => (0, 0),
                };
                Quick {
                    start,
                    len,
                    present: vocab.token(id).is_some(),
                    special: vocab.is_special(id),
                }
            })
            .collect();
        Ok(Detokenizer {
            vocab,
            engine,
            quick,
            fast,
        })
    }

    /// Number of id slots (largest id + 1); ids at or above it contribute nothing.
    pub fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    /// The engine chosen at load.
    pub fn engine(&self) -> EngineKind {
        self.engine.kind()
    }

    /// The whole text of `ids`, equal to `tokenizers`' `decode` with the same flag.
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String> {
        let entries: Vec<u32> = ids
            .iter()
            .filter_map(|&id| self.vocab.window_entry(id, skip_special_tokens))
            .collect();
        let mut out = String::new();
        self.engine.decode_into(
            &self.vocab,
            &entries,
            Start::Exact,
            &mut out,
            &mut Scratch::default(),
        )?;
        Ok(out)
    }

    /// Token strings as vLLM carries them (`Ġworld`, `▁world`, `<0xE4>`); skipped special tokens
    /// are left out and ids without a token give `""`.
    pub fn convert_ids_to_tokens(&self, ids: &[u32], skip_special_tokens: bool) -> Vec<&str> {
        ids.iter()
            .filter(|&&id| !(skip_special_tokens && self.vocab.is_special(id)))
            .map(|&id| self.vocab.token(id).unwrap_or(""))
            .collect()
    }

    /// The text `id` adds after a window whose text is final, when it can be known without the
    /// window (the step fast path); the same string every time, so bindings may cache it.
    #[inline]
    pub fn fast_text(&self, id: u32) -> Option<&str> {
        let q = self.quick.get(id as usize)?;
        let start = q.start as usize;
        self.fast
            .get(start..start + q.len as usize)
            .filter(|t| !t.is_empty())
    }

    /// Brings `id`'s entry of the table a step reads first into cache, for a loop that knows
    /// its next ids (see [`crate::streamset::AHEAD`]).
    #[inline(always)]
    pub(crate) fn prefetch(&self, id: u32) {
        if let Some(q) = self.quick.get(id as usize) {
            crate::hint::prefetch(q);
        }
    }

    /// What a step does with `id`: `None` when it contributes nothing and is not windowed (a
    /// skipped special token, an id outside the vocabulary); else its window entry and whether
    /// it has a fast-path text ([`Detokenizer::fast_text`]). The text itself is not read: a
    /// step that only notes the entry (a call's one token) never touches it.
    #[inline]
    pub(crate) fn lookup(&self, id: u32, skip_special: bool) -> Option<(u32, bool)> {
        let q = self.quick.get(id as usize)?;
        if !q.present || (skip_special && q.special) {
            return None;
        }
        Some((id, q.len != 0))
    }

    /// The token string of one id.
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.vocab.token(id)
    }

    /// The id of a token string.
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.vocab.id_of(token)
    }

    /// Whether `id` is a special token.
    pub fn is_special(&self, id: u32) -> bool {
        self.vocab.is_special(id)
    }

    /// The per-id tables: token strings and flags.
    #[inline]
    pub(crate) fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// The engine that assembles text.
    #[inline]
    pub(crate) fn text_engine(&self) -> &Engine {
        &self.engine
    }
}

/// A tiny byte-level `tokenizer.json` for documentation examples.
#[doc(hidden)]
pub fn doc_tokenizer_json() -> String {
    r#"{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],
        "normalizer":null,"pre_tokenizer":null,"post_processor":null,
        "decoder":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":false,"use_regex":false},
        "model":{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":null,
        "end_of_word_suffix":null,"fuse_unk":false,"byte_fallback":false,"ignore_merges":false,
        "vocab":{"H":0,"i":1,"Ġ":2,"ä":3,"¸":4,"Ń":5},"merges":[]}}"#
        .to_owned()
}
