//! `tokenizer.json` -> per-id tables: the token string of every id (what vLLM carries on the wire),
//! which ids are special, and the reverse map used to resume a window of token strings.
//!
//! Token strings come from the `tokenizers` crate's own `id_to_token`, the same path its `decode`
//! takes, so added tokens with a normalized form read exactly as `decode` sees them.

use std::collections::HashMap;

use tokenizers::Tokenizer;

use crate::error::{Error, Result};
use crate::table::Table;

/// Window entry of an empty token string in a resumed window (vLLM windows `""` for an id outside
/// the vocabulary); it contributes no text.
pub(crate) const EMPTY: u32 = u32::MAX;

/// Most window entries a resumed state may carry (REFERENCE section 5).
pub const MAX_WINDOW: usize = 1024;

/// Id slots allowed beyond twice the number of tokens: the tables hold an entry per slot, so a
/// vocabulary whose ids are far sparser than that would cost memory out of proportion to its file.
pub const SPARSE_SLACK: usize = 65_536;

const PRESENT: u8 = 1;
const SPECIAL: u8 = 2;

/// Per-id token strings (one contiguous table) and flags.
#[derive(Debug)]
pub(crate) struct Vocab {
    tokens: Table<String>,
    flags: Vec<u8>,
    ids: HashMap<Box<str>, u32>,
}

impl Vocab {
    /// Reads the tables out of a loaded tokenizer. Refuses ids sparser than `2 * tokens +`
    /// [`SPARSE_SLACK`] slots.
    pub(crate) fn from_tokenizer(tok: &Tokenizer) -> Result<Self> {
        let added = tok.get_added_vocabulary();
        let vocab = tok.get_vocab(true);
        let slots = vocab.values().copied().max().map_or(0, |m| m as usize + 1);
        let limit = vocab.len().saturating_mul(2).saturating_add(SPARSE_SLACK);
        if slots > limit {
            return Err(Error::Load {
                reason: format!(
                    "its ids are too sparse: the largest is {} for {} tokens, and at most \
                     {limit} id slots (twice the tokens plus {SPARSE_SLACK}) are supported",
                    slots - 1,
                    vocab.len()
                ),
            });
        }
        drop(vocab);
        let mut flags = vec![0u8; slots];
        let mut ids = HashMap::with_capacity(slots);
        let tokens = Table::build(slots, |id, text: &mut String| {
            if let Some(token) = tok.id_to_token(id) {
                let flag = flags.get_mut(id as usize)?;
                *flag = PRESENT;
                if added.is_special_token(&token) {
                    *flag |= SPECIAL;
                }
                text.push_str(&token);
                // The first id wins when two ids share a string; both decode alike.
                ids.entry(token.into_boxed_str()).or_insert(id);
            }
            Some(())
        });
        Ok(Vocab {
            tokens: tokens.unwrap_or_default(),
            flags,
            ids,
        })
    }

    /// Number of id slots: the largest id plus one.
    pub(crate) fn len(&self) -> usize {
        self.flags.len()
    }

    /// The token string of `id`, or `None` outside the vocabulary.
    #[inline]
    pub(crate) fn token(&self, id: u32) -> Option<&str> {
        let i = id as usize;
        if self.flags.get(i).copied().unwrap_or(0) & PRESENT == 0 {
            return None;
        }
        self.tokens.get(id)
    }

    /// Whether `id` is a special token (skipped when `skip_special_tokens` is set).
    #[inline]
    pub(crate) fn is_special(&self, id: u32) -> bool {
        self.flags.get(id as usize).copied().unwrap_or(0) & SPECIAL != 0
    }

    /// The id of a token string.
    pub(crate) fn id_of(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }

    /// What `id` puts in a window: `None` when it is a skipped special token or outside the
    /// vocabulary (it contributes nothing, as in `decode`; vLLM would window an empty string,
    /// which can only cost context), else the id itself.
    #[inline]
    pub(crate) fn window_entry(&self, id: u32, skip_special: bool) -> Option<u32> {
        match self.flags.get(id as usize).copied().unwrap_or(0) {
            0 => None,
            f if skip_special && f & SPECIAL != 0 => None,
            _ => Some(id),
        }
    }
}
