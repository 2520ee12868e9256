//! The one error type of the core. Every variant is a sentence a user can act on; the data that
//! explains it travels in fields, so bindings can map variants to exception types exhaustively.

use std::fmt;

/// Errors raised by the core.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A token id was negative (ids above the vocabulary are not errors: they contribute nothing).
    NegativeTokenId {
        /// The id given.
        id: i64,
    },
    /// The stream was finished; it takes no more ids.
    Finished,
    /// A `(prev_tokens, prefix_offset, read_offset)` window that cannot be resumed.
    InvalidWindow {
        /// What is wrong with it.
        reason: String,
    },
    /// The tokenizer could not be loaded or is not supported.
    Load {
        /// Why, in the tokenizer library's words where it gave them.
        reason: String,
    },
    /// The tokenizer's decoder failed on a window (only the windowed engine calls one).
    Decode {
        /// The decoder's message.
        reason: String,
    },
}

/// `Result` with the core's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NegativeTokenId { id } => write!(f, "token ids must be non-negative, got {id}"),
            Error::Finished => f.write_str("the stream is finished; start a new one"),
            Error::InvalidWindow { reason } => write!(f, "invalid stream window: {reason}"),
            Error::Load { reason } => write!(f, "cannot load tokenizer: {reason}"),
            Error::Decode { reason } => write!(f, "the tokenizer's decoder failed: {reason}"),
        }
    }
}

impl std::error::Error for Error {}
