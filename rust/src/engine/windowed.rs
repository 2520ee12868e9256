//! The windowed engine: the `tokenizers` crate's own decoder over the window's token strings,
//! for every pipeline the byte engines do not reproduce exactly (WordPiece, Metaspace, Unigram,
//! multi-character `Replace`, CTC, anything unknown).

use tokenizers::decoders::DecoderWrapper;
use tokenizers::{Decoder, Tokenizer};

use crate::error::{Error, Result};
use crate::vocab::{EMPTY, Vocab};

#[derive(Debug)]
pub(crate) struct Windowed {
    decoder: Option<DecoderWrapper>,
    /// The decoder can leave a partial character at the end of a window, rendered as U+FFFD.
    may_split: bool,
}

impl Windowed {
    pub(crate) fn new(tok: &Tokenizer, may_split: bool) -> Windowed {
        Windowed {
            decoder: tok.get_decoder().cloned(),
            may_split,
        }
    }

    pub(crate) fn decode_into(&self, vocab: &Vocab, ids: &[u32], out: &mut String) -> Result<()> {
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
