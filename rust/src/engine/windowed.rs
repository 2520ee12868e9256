//! The windowed engine: the `tokenizers` crate's own decoder over the window's token strings,
//! for every pipeline the byte engines do not reproduce exactly (WordPiece, Metaspace, Unigram,
//! multi-character `Replace`, CTC, anything unknown).
//!
//! Performance notes: calling the decoder costs an allocation per token string and more inside
//! it (WordPiece's clean-up rewrites each token about ten times), about 0.9 µs for a window of
//! two BERT tokens. Two memos remove most calls, both filled by the decoder itself at load:
//! - `first`: `decode([id])` of every id. vLLM's algorithm decodes the prefix region after every
//!   emission, and with one id per step that region is a single token.
//! - `rest`: for decoders that treat each token on its own, knowing only whether it comes first
//!   (WordPiece, Metaspace, `Replace`, `Strip` and sequences of them), the text of `id` in any
//!   later position. A window's text is then `first[w0] + rest[w1] + ...` with no decoder call.
//!   The choice is checked against the crate's `decode` on sample ids before it is used.

use serde_json::Value;
use tokenizers::decoders::DecoderWrapper;
use tokenizers::{Decoder, Tokenizer};

use super::parts::{Texts, texts};
use crate::error::{Error, Result};
use crate::vocab::{EMPTY, Vocab};

#[derive(Debug)]
pub(crate) struct Windowed {
    decoder: Option<DecoderWrapper>,
    first: Option<Texts>,
    rest: Option<Texts>,
    /// The decoder can leave a partial character at the end of a window, rendered as U+FFFD.
    may_split: bool,
    /// The decoder includes `Metaspace`, which drops a first token's `▁`.
    metaspace: bool,
}

/// Decoders whose output for a token depends only on the token and on whether it is first.
fn token_local(d: &Value) -> bool {
    match d.get("type").and_then(Value::as_str) {
        Some("WordPiece" | "Metaspace" | "Replace" | "Strip") => true,
        Some("Sequence") => d
            .get("decoders")
            .and_then(Value::as_array)
            .is_some_and(|l| l.iter().all(token_local)),
        _ => false,
    }
}

impl Windowed {
    /// Builds the engine; `with_rest` asks for the per-position memo (see the module notes).
    pub(crate) fn new(
        tok: &Tokenizer,
        vocab: &Vocab,
        decoder: Option<&Value>,
        with_rest: bool,
    ) -> Windowed {
        let may_split = decoder.is_some_and(splits_characters);
        let dec = tok.get_decoder().cloned();
        let chain = |tokens: Vec<String>| -> Option<Vec<String>> {
            match &dec {
                Some(d) => guarded(|| d.decode_chain(tokens).ok()).flatten(),
                None => Some(tokens),
            }
        };
        let first = texts(vocab, |_, t| Some(chain(vec![t.to_owned()])?.concat()));
        let rest = if with_rest && decoder.is_some_and(token_local) {
            texts(vocab, |_, t| {
                chain(vec![t.to_owned(), t.to_owned()])?.into_iter().nth(1)
            })
        } else {
            None
        };
        Windowed {
            decoder: dec,
            first,
            rest,
            may_split,
            metaspace: decoder.is_some_and(has_metaspace),
        }
    }

    /// With the per-position memo, the text `id` adds after a non-empty window: `rest[id]`.
    #[inline]
    pub(crate) fn fast_text(&self, id: u32) -> Option<&str> {
        self.rest.as_ref()?.get(id).filter(|t| !t.is_empty())
    }

    /// With the per-position memo, a window that has a first token is final: a later token's
    /// text does not depend on what follows it.
    pub(crate) fn final_after(&self, ids: &[u32]) -> bool {
        self.rest.is_some() && ids.iter().any(|&id| id != EMPTY)
    }

    /// Whether the decoder includes `Metaspace`.
    pub(crate) fn metaspace(&self) -> bool {
        self.metaspace
    }

    /// Whether the per-position memo is in use.
    pub(crate) fn has_rest(&self) -> bool {
        self.rest.is_some()
    }

    pub(crate) fn decode_into(&self, vocab: &Vocab, ids: &[u32], out: &mut String) -> Result<()> {
        let mut entries = ids
            .iter()
            .copied()
            .filter(|&id| id != EMPTY && vocab.token(id).is_some());
        if let (Some(first), Some(rest)) = (&self.first, &self.rest) {
            if let Some(w0) = entries.next() {
                out.push_str(first.get(w0).unwrap_or_default());
                for w in entries {
                    out.push_str(rest.get(w).unwrap_or_default());
                }
            }
            return Ok(());
        }
        if let ([id], Some(first)) = (ids, &self.first) {
            out.push_str(first.get(*id).unwrap_or_default());
            return Ok(());
        }
        let tokens: Vec<String> = entries
            .filter_map(|id| vocab.token(id).map(str::to_owned))
            .collect();
        if tokens.is_empty() {
            return Ok(());
        }
        match &self.decoder {
            Some(d) => {
                let text = guarded(|| d.decode(tokens))
                    .ok_or_else(|| Error::Decode {
                        reason: "the decoder panicked".to_owned(),
                    })?
                    .map_err(|e| Error::Decode {
                        reason: e.to_string(),
                    })?;
                out.push_str(&text);
            }
            // No decoder: `tokenizers` joins token strings with spaces.
            None => out.push_str(&tokens.join(" ")),
        }
        Ok(())
    }

    /// Without byte knowledge, a trailing U+FFFD of a decoder that can split characters may be
    /// an unfinished one; vLLM's algorithm holds it back, and so does this engine.
    pub(crate) fn ends_incomplete(&self, text: &str) -> bool {
        self.may_split && text.ends_with(char::REPLACEMENT_CHARACTER)
    }
}

/// Runs third-party decoder code so that a panic in it becomes `None` instead of reaching
/// Python (a decoder configured oddly, e.g. `Strip` asked to cut more than a token has, indexes
/// out of bounds inside the crate).
fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).ok()
}

/// Refuses a decoder that renders some token differently when it is a sequence's last, unless
/// that rendering is a prefix of the one it gets when more follow (then a window's text only
/// grows, as vLLM's algorithm needs). Only `BPEDecoder` has such a rule: it turns its suffix into
/// a space, or into nothing in the last token, everywhere in the token; with a suffix that ends
/// tokens ("</w>") that drops a trailing space, with one inside tokens ("l" in "hello") it
/// rewrites text a stream already sent, which no stream can do.
pub(crate) fn check_last_token_rule(tok: &Tokenizer, vocab: &Vocab, decoder: &Value) -> Result<()> {
    let Some(dec) = tok
        .get_decoder()
        .filter(|_| has_type(decoder, "BPEDecoder"))
    else {
        return Ok(());
    };
    let chain = |tokens: Vec<String>| guarded(|| dec.decode_chain(tokens).ok()).flatten();
    for id in 0..vocab.len() as u32 {
        let Some(token) = vocab.token(id) else {
            continue;
        };
        let last = chain(vec![token.to_owned()]).map(|t| t.concat());
        let inner =
            chain(vec![token.to_owned(), token.to_owned()]).and_then(|t| t.into_iter().next());
        let (Some(last), Some(inner)) = (last, inner) else {
            continue; // the decoder fails on this token: decode reports it, and so do streams
        };
        if !inner.starts_with(&last) {
            return Err(Error::Load {
                reason: format!(
                    "its BPEDecoder renders token {token:?} (id {id}) as {last:?} when it is \
                     last and as {inner:?} otherwise, so a stream cannot send it until the \
                     sequence ends; such a decoder is not supported"
                ),
            });
        }
    }
    Ok(())
}

fn has_type(d: &Value, name: &str) -> bool {
    match d.get("type").and_then(Value::as_str) {
        Some(t) if t == name => true,
        Some("Sequence") => d
            .get("decoders")
            .and_then(Value::as_array)
            .is_some_and(|l| l.iter().any(|d| has_type(d, name))),
        _ => false,
    }
}

fn has_metaspace(d: &Value) -> bool {
    has_type(d, "Metaspace")
}

/// Whether a decoder can leave a partial character at the end of a window (and so render it as
/// a U+FFFD that a later id may still replace).
fn splits_characters(d: &Value) -> bool {
    match d.get("type").and_then(Value::as_str) {
        Some("ByteLevel") | Some("ByteFallback") => true,
        Some("Sequence") => d
            .get("decoders")
            .and_then(Value::as_array)
            .is_some_and(|l| l.iter().any(splits_characters)),
        _ => false,
    }
}
