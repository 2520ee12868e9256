//! How the text of a window of ids is assembled, chosen per tokenizer at load.
//!
//! Two byte engines precompute every id's contribution once and assemble text by appending
//! bytes: [`bytes::ByteLevel`] for GPT-2-style byte-level decoders and [`bytes::Pieces`] for the
//! SentencePiece byte-fallback pipeline `Replace(▁→␠) → ByteFallback → Fuse → Strip`. Everything
//! else goes through [`windowed::Windowed`], which calls the `tokenizers` crate's decoder. A byte
//! engine is only used after it reproduced the crate's `decode` on sample ids ([`verify`]).

pub(crate) mod bytes;
mod parts;
pub(crate) mod windowed;

pub(crate) use parts::{Scratch, Start};

use serde_json::Value;
use tokenizers::Tokenizer;

use crate::error::Result;
use crate::vocab::Vocab;

/// Which engine a [`crate::Detokenizer`] chose for its tokenizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// Per-id bytes through the byte-level alphabet, lossy UTF-8 over the whole text.
    ByteLevel,
    /// Per-id pieces and `<0xNN>` bytes, byte runs resolved as `ByteFallback` does.
    SentencePiece,
    /// The `tokenizers` crate's decoder over token strings.
    Windowed,
}

impl EngineKind {
    /// The name users see: `"bytelevel"`, `"sentencepiece"` or `"windowed"`.
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::ByteLevel => "bytelevel",
            EngineKind::SentencePiece => "sentencepiece",
            EngineKind::Windowed => "windowed",
        }
    }
}

#[derive(Debug)]
pub(crate) enum Engine {
    ByteLevel(bytes::ByteLevel),
    Pieces(bytes::Pieces),
    Windowed(windowed::Windowed),
}

impl Engine {
    /// Picks the engine for `tok`'s decoder, verified against `tok.decode` on sample ids.
    pub(crate) fn choose(tok: &Tokenizer, vocab: &Vocab) -> Result<Engine> {
        let decoder: Option<Value> = tok.get_decoder().and_then(|d| serde_json::to_value(d).ok());
        let candidate = match decoder.as_ref() {
            Some(d) if is_byte_level(d) => Some(Engine::ByteLevel(bytes::ByteLevel::new(vocab))),
            Some(d) => {
                sentencepiece_strip(d).map(|strip| Engine::Pieces(bytes::Pieces::new(vocab, strip)))
            }
            None => None,
        };
        if let Some(engine) = candidate {
            if verify(&engine, tok, vocab) {
                return Ok(engine);
            }
        }
        if let Some(d) = decoder.as_ref() {
            windowed::check_last_token_rule(tok, vocab, d)?;
        }
        let memo = Engine::Windowed(windowed::Windowed::new(tok, vocab, decoder.as_ref(), true));
        if let Engine::Windowed(w) = &memo {
            if !w.has_rest() || verify(&memo, tok, vocab) {
                return Ok(memo);
            }
        }
        Ok(Engine::Windowed(windowed::Windowed::new(
            tok,
            vocab,
            decoder.as_ref(),
            false,
        )))
    }

    pub(crate) fn kind(&self) -> EngineKind {
        match self {
            Engine::ByteLevel(_) => EngineKind::ByteLevel,
            Engine::Pieces(_) => EngineKind::SentencePiece,
            Engine::Windowed(_) => EngineKind::Windowed,
        }
    }

    /// Appends the text of window entries `ids` to `out`, exactly as the tokenizer's decoder
    /// renders those token strings, given what preceded them (`start`).
    #[inline]
    pub(crate) fn decode_into(
        &self,
        vocab: &Vocab,
        ids: &[u32],
        start: Start,
        out: &mut String,
        scratch: &mut Scratch,
    ) -> Result<()> {
        match self {
            Engine::ByteLevel(e) => {
                e.decode_into(ids, out, scratch);
                Ok(())
            }
            Engine::Pieces(e) => {
                e.decode_into(ids, start, out, scratch);
                Ok(())
            }
            Engine::Windowed(e) => e.decode_into(vocab, ids, out),
        }
    }

    /// Appends the text a stream shows for window entries `ids`: [`Engine::decode_into`]'s,
    /// except for a SentencePiece byte run that is not valid UTF-8, which keeps its complete
    /// characters before the first bad or missing byte (see `Pieces::stream_text_into`).
    #[inline]
    pub(crate) fn stream_text_into(
        &self,
        vocab: &Vocab,
        ids: &[u32],
        start: Start,
        out: &mut String,
        scratch: &mut Scratch,
    ) -> Result<()> {
        match self {
            Engine::Pieces(e) => {
                e.stream_text_into(ids, start, out, scratch);
                Ok(())
            }
            _ => self.decode_into(vocab, ids, start, out, scratch),
        }
    }

    /// Whether the text of `ids` (already rendered as `text`) ends inside a character that more
    /// ids could still complete.
    #[inline]
    pub(crate) fn ends_incomplete(
        &self,
        ids: &[u32],
        start: Start,
        text: &str,
        scratch: &mut Scratch,
    ) -> bool {
        match self {
            Engine::ByteLevel(e) => e.ends_incomplete(ids),
            Engine::Pieces(e) => e.ends_incomplete(ids, start, scratch),
            Engine::Windowed(e) => e.ends_incomplete(text),
        }
    }
}

impl Engine {
    /// The fast path of a step: when the window holds nothing back and its text is final (see
    /// [`Engine::final_after`]), the delta of `id` is its standalone text, if this returns one.
    #[inline]
    pub(crate) fn fast_text(&self, id: u32) -> Option<&str> {
        match self {
            Engine::ByteLevel(e) => e.fast_text(id),
            Engine::Pieces(e) => e.fast_text(id),
            Engine::Windowed(e) => e.fast_text(id),
        }
    }

    /// Whether the decoder strips the leading spaces of a text's first token (SentencePiece's
    /// `Strip`, Metaspace's prepend scheme), which logprob strings put back.
    pub(crate) fn strips_first_spaces(&self) -> bool {
        match self {
            Engine::ByteLevel(_) => false,
            Engine::Pieces(e) => e.strips(),
            Engine::Windowed(e) => e.metaspace(),
        }
    }

    /// The byte-level engine, whose text is local: after a final prefix, held entries render alone.
    #[inline]
    pub(crate) fn byte_level(&self) -> Option<&bytes::ByteLevel> {
        match self {
            Engine::ByteLevel(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the text of a window that emitted everything (`ids`, none held back, no
    /// unfinished character) is final: no id appended later can change it, and a text piece
    /// appended later adds exactly its own text.
    pub(crate) fn final_after(&self, ids: &[u32]) -> bool {
        match self {
            Engine::ByteLevel(_) => true,
            Engine::Pieces(e) => e.has_text(ids),
            Engine::Windowed(e) => e.final_after(ids),
        }
    }

    /// The text of a prompt tail as the common-prefix rule also compares it, where it differs
    /// from the decode: for SentencePiece, an unfinished trailing byte run keeps its complete
    /// characters (see `Pieces::prompt_text_into`). Returns `false` (writing nothing) for
    /// engines where the two renderings agree.
    pub(crate) fn prompt_text_into(
        &self,
        ids: &[u32],
        start: Start,
        out: &mut String,
        scratch: &mut Scratch,
    ) -> bool {
        match self {
            Engine::Pieces(e) => {
                e.prompt_text_into(ids, start, out, scratch);
                true
            }
            _ => false,
        }
    }

    /// Whether a byte-fallback prompt tail ends on a character boundary of its run, so that its
    /// text is prompt text as it stands (no unfinished character for the output to complete).
    pub(crate) fn complete_run_rewritten(
        &self,
        prefix: &[u32],
        start: Start,
        scratch: &mut Scratch,
    ) -> bool {
        match self {
            Engine::Pieces(e) => !e.ends_incomplete(prefix, start, scratch),
            Engine::ByteLevel(_) | Engine::Windowed(_) => false,
        }
    }

    /// See [`bytes::Pieces::needs_poison`]; only byte fallback has runs that span windows.
    pub(crate) fn needs_poison(&self, window: &[u32], start: Start) -> bool {
        match self {
            Engine::Pieces(e) => e.needs_poison(window, start),
            Engine::ByteLevel(_) | Engine::Windowed(_) => false,
        }
    }

    /// The start state of the window that begins right after `dropped`, which began in `start`.
    pub(crate) fn start_after(
        &self,
        dropped: &[u32],
        start: Start,
        scratch: &mut Scratch,
    ) -> Start {
        match self {
            Engine::Pieces(e) => e.start_after(dropped, start, scratch),
            Engine::ByteLevel(_) | Engine::Windowed(_) => Start::Exact,
        }
    }
}

fn decoder_type(d: &Value) -> Option<&str> {
    d.get("type").and_then(Value::as_str)
}

/// A `ByteLevel` decoder, alone or as the only member of a `Sequence`.
fn is_byte_level(d: &Value) -> bool {
    match decoder_type(d) {
        Some("ByteLevel") => true,
        Some("Sequence") => match d.get("decoders").and_then(Value::as_array) {
            Some(list) => list.len() == 1 && list.first().is_some_and(is_byte_level),
            None => false,
        },
        _ => false,
    }
}

/// `Sequence[Replace(▁→␠), ByteFallback, Fuse, Strip(␠, n, 0)?]`: returns the leading spaces
/// stripped (0 without `Strip`), or `None` for any other pipeline.
fn sentencepiece_strip(d: &Value) -> Option<usize> {
    if decoder_type(d) != Some("Sequence") {
        return None;
    }
    let list = d.get("decoders")?.as_array()?;
    let replace = list.first()?;
    let ok_replace = decoder_type(replace) == Some("Replace")
        && replace.pointer("/pattern/String").and_then(Value::as_str) == Some("\u{2581}")
        && replace.get("content").and_then(Value::as_str) == Some(" ");
    if !ok_replace
        || list.get(1).and_then(decoder_type) != Some("ByteFallback")
        || list.get(2).and_then(decoder_type) != Some("Fuse")
    {
        return None;
    }
    match list.get(3) {
        None => Some(0),
        Some(strip) if list.len() == 4 && decoder_type(strip) == Some("Strip") => {
            let content = strip.get("content").and_then(Value::as_str);
            let stop = strip.get("stop").and_then(Value::as_u64);
            let start = strip.get("start").and_then(Value::as_u64)?;
            (content == Some(" ") && stop == Some(0)).then_some(start as usize)
        }
        Some(_) => None,
    }
}

/// Checks an engine against the crate's `decode` on sample ids: every added token, a spread
/// of single ids, and short pseudo-random sequences (which mix byte tokens and text).
fn verify(engine: &Engine, tok: &Tokenizer, vocab: &Vocab) -> bool {
    let n = vocab.len() as u64;
    if n == 0 {
        return false;
    }
    let mut samples: Vec<Vec<u32>> = Vec::new();
    let added: Vec<u32> = tok.get_added_tokens_decoder().keys().copied().collect();
    for &id in &added {
        samples.push(vec![id]);
        samples.push(vec![id, (id + 1) % n as u32]);
    }
    let stride = (n / 2000).max(1);
    samples.extend((0..n).step_by(stride as usize).map(|id| vec![id as u32]));
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for len in (2..8).cycle().take(600) {
        let seq = (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((state >> 33) % n) as u32
            })
            .collect();
        samples.push(seq);
    }
    let mut scratch = Scratch::default();
    let mut ours = String::new();
    samples.iter().all(|ids| {
        let entries: Vec<u32> = ids
            .iter()
            .filter_map(|&id| vocab.window_entry(id, false))
            .collect();
        ours.clear();
        let decoded = engine.decode_into(vocab, &entries, Start::Exact, &mut ours, &mut scratch);
        decoded.is_ok() && tok.decode(ids, false).is_ok_and(|theirs| theirs == ours)
    })
}
