//! The windowed engine: the `tokenizers` crate's own decoder over the window's token strings,
//! for every pipeline the byte engines do not reproduce exactly (WordPiece, Metaspace, Unigram,
//! multi-character `Replace`, CTC, anything unknown).

use tokenizers::decoders::DecoderWrapper;
use tokenizers::{Decoder, Tokenizer};

use crate::error::{Error, Result};
use crate::vocab::{EMPTY, Vocab};

/// Performance notes: vLLM's algorithm decodes the prefix region after every emission, and with
/// one id per step that region is a single token. Its text is a pure function of the id, so it is
/// decoded once per id at load (`single`) and a step then runs the decoder once instead of twice.
#[derive(Debug)]
pub(crate) struct Windowed {
    decoder: Option<DecoderWrapper>,
    /// `decode([token])` of every id, contiguous; `None` when the decoder failed on one.
    single: Option<(String, Vec<u32>)>,
    /// The decoder can leave a partial character at the end of a window, rendered as U+FFFD.
    may_split: bool,
}

impl Windowed {
    pub(crate) fn new(tok: &Tokenizer, vocab: &Vocab, may_split: bool) -> Windowed {
        let mut w = Windowed {
            decoder: tok.get_decoder().cloned(),
            single: None,
            may_split,
        };
        let mut text = String::new();
        let mut offsets = Vec::with_capacity(vocab.len() + 1);
        offsets.push(0u32);
        for id in 0..vocab.len() as u32 {
            if w.decode_uncached(vocab, &[id], &mut text).is_err() {
                return w;
            }
            offsets.push(text.len() as u32);
        }
        w.single = Some((text, offsets));
        w
    }

    pub(crate) fn decode_into(&self, vocab: &Vocab, ids: &[u32], out: &mut String) -> Result<()> {
        if let ([id], Some((text, offsets))) = (ids, &self.single) {
            let i = *id as usize;
            if let (Some(&a), Some(&b)) = (offsets.get(i), offsets.get(i + 1)) {
                out.push_str(text.get(a as usize..b as usize).unwrap_or_default());
                return Ok(());
            }
        }
        self.decode_uncached(vocab, ids, out)
    }

    fn decode_uncached(&self, vocab: &Vocab, ids: &[u32], out: &mut String) -> Result<()> {
        let tokens: Vec<String> = ids
            .iter()
            .filter(|&&id| id != EMPTY)
            .filter_map(|&id| vocab.token(id).map(str::to_owned))
            .collect();
        if tokens.is_empty() {
            return Ok(());
        }
        match &self.decoder {
            Some(d) => {
                let text = d.decode(tokens).map_err(|e| Error::Decode {
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
