//! Logprob token strings as vLLM reports them (REFERENCE section 4): each id (sampled or a top-k
//! alternative) decoded alone, with two corrections.
//!
//! - SentencePiece and Metaspace decoders strip a token's leading spaces when it stands first;
//!   the spaces its `▁` stand for are put back.
//! - A string that ends in U+FFFD is part of a character split over several ids. It is decoded
//!   again after up to [`CONTEXT`] preceding *sampled* ids; at the first decode that ends clean,
//!   the text of the context's leading clean tokens is cut off, and what remains is the string
//!   (so the context tokens that were parts of the character report `""`, and the id that
//!   completes it reports the whole character). With no clean decode the string is `""`.

use crate::detokenizer::Detokenizer;
use crate::error::Result;

/// Sampled ids of context a correction may use (vLLM's `logprob_context_token_ids` holds 4).
pub const CONTEXT: usize = 4;

impl Detokenizer {
    /// The logprob string of `id`, given the sampled ids before it (only the last [`CONTEXT`]
    /// are read). Its `bytes` on the wire are the UTF-8 of this string.
    pub fn logprob_token(&self, id: u32, context: &[u32]) -> Result<String> {
        let alone = self.decode(&[id], false)?;
        if !alone.ends_with(char::REPLACEMENT_CHARACTER) {
            return Ok(self.restore_leading_spaces(id, alone));
        }
        let context = &context[context.len().saturating_sub(CONTEXT)..];
        let mut ids = Vec::with_capacity(CONTEXT + 1);
        for n in 1..=context.len() {
            let part = &context[context.len() - n..];
            ids.clear();
            ids.extend_from_slice(part);
            ids.push(id);
            let full = self.decode(&ids, false)?;
            if full.ends_with(char::REPLACEMENT_CHARACTER) {
                continue;
            }
            let mut clean = 0;
            for &c in part {
                if self
                    .decode(&[c], false)?
                    .ends_with(char::REPLACEMENT_CHARACTER)
                {
                    break;
                }
                clean += 1;
            }
            let head = self.decode(&part[..clean], false)?;
            return Ok(full.chars().skip(head.chars().count()).collect());
        }
        Ok(String::new())
    }

    /// Puts back the leading spaces a first-token strip took from `id`'s decode.
    fn restore_leading_spaces(&self, id: u32, text: String) -> String {
        if !self.text_engine().strips_first_spaces() {
            return text;
        }
        let marks = self
            .vocab()
            .token(id)
            .map_or(0, |t| t.chars().take_while(|&c| c == '\u{2581}').count());
        let spaces = text.chars().take_while(|&c| c == ' ').count();
        if marks <= spaces {
            return text;
        }
        let mut out = " ".repeat(marks - spaces);
        out.push_str(&text);
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::Detokenizer;

    #[test]
    fn split_character_reports_empty_empty_char() {
        // Ids 3, 4, 5 are the bytes E4 B8 AD of "中" in the byte-level alphabet.
        let det = Detokenizer::from_json(&crate::doc_tokenizer_json()).unwrap();
        assert_eq!(det.logprob_token(3, &[0]).unwrap(), "");
        assert_eq!(det.logprob_token(4, &[0, 3]).unwrap(), "");
        assert_eq!(det.logprob_token(5, &[0, 3, 4]).unwrap(), "中");
        assert_eq!(det.logprob_token(5, &[]).unwrap(), "");
        assert_eq!(det.logprob_token(0, &[]).unwrap(), "H");
        assert_eq!(det.logprob_token(999, &[]).unwrap(), "");
    }
}
