//! `tokenizer.json` -> per-id tables: the token string of every id (what vLLM carries on the wire),
//! which ids are special, and the reverse map used to resume a window of token strings.
//!
//! Token strings come from the `tokenizers` crate's own `id_to_token`, the same path its `decode`
//! takes, so added tokens with a normalized form read exactly as `decode` sees them.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

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
    ids: Ids,
}

/// The reverse map, token string to id: a string's 64-bit hash to its id, confirmed against the
/// token table. A lookup touches no key strings of its own (the table's entry it confirms is the
/// one a stream's step reads next); with a map keyed by the strings, the lookups were the Rust
/// front's costliest function outside the kernel (6.3% of its CPU under `perf` at 256 streams).
/// The rare strings whose hashes collide go to a second map by string.
#[derive(Debug)]
struct Ids {
    hasher: ahash::RandomState,
    by_hash: HashMap<u64, u32, BuildHasherDefault<Identity>>,
    /// Strings that share a hash with another string (the `by_hash` entry is [`COLLIDED`]).
    collided: HashMap<Box<str>, u32, ahash::RandomState>,
}

/// `by_hash` value of a hash shared by two strings.
const COLLIDED: u32 = u32::MAX;

/// The hasher of keys that are hashes already.
#[derive(Default)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

impl Ids {
    fn build(tokens: &Table<String>, flags: &[u8]) -> Ids {
        let hasher = ahash::RandomState::new();
        Ids::build_by(tokens, flags, hasher, |h, t| h.hash_one(t))
    }

    /// [`Ids::build`] with the hash function given (a test makes every hash collide).
    fn build_by(
        tokens: &Table<String>,
        flags: &[u8],
        hasher: ahash::RandomState,
        hash: impl Fn(&ahash::RandomState, &str) -> u64,
    ) -> Ids {
        let mut by_hash = HashMap::with_capacity_and_hasher(flags.len(), Default::default());
        let mut collided = HashMap::with_hasher(ahash::RandomState::new());
        for (i, &flag) in flags.iter().enumerate() {
            let (Ok(id), true) = (u32::try_from(i), flag & PRESENT != 0) else {
                continue;
            };
            let Some(token) = tokens.get(id) else {
                continue;
            };
            let h = hash(&hasher, token);
            match by_hash.get(&h).copied() {
                None => {
                    by_hash.insert(h, id);
                }
                // The first id wins when two ids share a string; both decode alike.
                Some(first) if first != COLLIDED && tokens.get(first) == Some(token) => {}
                Some(other) => {
                    if other != COLLIDED {
                        if let Some(t) = tokens.get(other) {
                            collided.insert(Box::from(t), other);
                        }
                        by_hash.insert(h, COLLIDED);
                    }
                    collided.entry(Box::from(token)).or_insert(id);
                }
            }
        }
        Ids {
            hasher,
            by_hash,
            collided,
        }
    }

    fn get(&self, tokens: &Table<String>, token: &str) -> Option<u32> {
        self.get_by(tokens, token, self.hasher.hash_one(token))
    }

    fn get_by(&self, tokens: &Table<String>, token: &str, hash: u64) -> Option<u32> {
        match self.by_hash.get(&hash).copied()? {
            COLLIDED => self.collided.get(token).copied(),
            id => (tokens.get(id) == Some(token)).then_some(id),
        }
    }
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
        let tokens = Table::build(slots, |id, text: &mut String| {
            if let Some(token) = tok.id_to_token(id) {
                let flag = flags.get_mut(id as usize)?;
                *flag = PRESENT;
                if added.is_special_token(&token) {
                    *flag |= SPECIAL;
                }
                text.push_str(&token);
            }
            Some(())
        });
        let tokens = tokens.unwrap_or_default();
        let ids = Ids::build(&tokens, &flags);
        Ok(Vocab { tokens, flags, ids })
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
        self.ids.get(&self.tokens, token)
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_reverse_map_survives_colliding_hashes() {
        // Hash = length: "a" and "b" collide, "cd" is alone; "a" twice keeps its first id.
        let words = ["a", "b", "cd", "a", "", "ef"];
        let tokens = Table::build(words.len(), |id, text: &mut String| {
            text.push_str(words[id as usize]);
            Some(())
        })
        .unwrap();
        let mut flags = vec![PRESENT; words.len()];
        flags[5] = 0; // an id outside the vocabulary
        let by_len = |_: &ahash::RandomState, t: &str| t.len() as u64;
        let ids = Ids::build_by(&tokens, &flags, ahash::RandomState::new(), by_len);
        let get = |t: &str| ids.get_by(&tokens, t, t.len() as u64);
        assert_eq!(get("a"), Some(0));
        assert_eq!(get("b"), Some(1));
        assert_eq!(get("cd"), Some(2));
        assert_eq!(get(""), Some(4));
        assert_eq!(get("zz"), None);
        assert_eq!(get("ef"), None);
        assert_eq!(get("c"), None);
        assert_eq!(ids.by_hash.get(&1), Some(&COLLIDED));
    }
}
