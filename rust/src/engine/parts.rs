//! What the engines share, below them: where a window starts, scratch buffers, and per-id
//! text tables.

use crate::table::Table;
use crate::vocab::Vocab;

/// What precedes a window's first entry, for engines whose text depends on it (a SentencePiece
/// byte run can begin before the window).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// The window starts the text, or starts on a character boundary of valid text.
    Exact,
    /// The window was cut out of a longer sequence at an arbitrary entry (a prompt tail, a
    /// resumed window): leading bytes may continue a character begun before it.
    Cut,
    /// The window starts inside a byte run that is already invalid: its bytes are U+FFFD each.
    InvalidRun,
}

/// Per-id strings (the crate's one per-id table).
pub(crate) type Texts = Table<String>;

/// Fills one string per id with `f`; `None` when `f` fails on any id.
pub(crate) fn texts(
    vocab: &Vocab,
    mut f: impl FnMut(u32, &str) -> Option<String>,
) -> Option<Texts> {
    Table::build(vocab.len(), |id, buf: &mut String| {
        if let Some(token) = vocab.token(id) {
            buf.push_str(&f(id, token)?);
        }
        Some(())
    })
}

/// Reusable buffers, so a step allocates nothing once warm.
#[derive(Debug, Default, Clone)]
pub(crate) struct Scratch {
    pub(crate) bytes: Vec<u8>,
}
