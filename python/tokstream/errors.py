"""The exceptions tokstream raises.

Every error derives from :class:`TokstreamError`, and also from the built-in exception a caller
would already catch (``ValueError`` for bad input, ``RuntimeError`` for misuse of a stream).
"""

from __future__ import annotations

__all__ = [
    "DecodeError",
    "InvalidTokenIdError",
    "InvalidWindowError",
    "StreamFinishedError",
    "TokenizerLoadError",
    "TokstreamError",
]


class TokstreamError(Exception):
    """Base class of every error tokstream raises."""


class InvalidTokenIdError(TokstreamError, ValueError):
    """A token id was negative. The stream is left as it was before the call.

    Ids at or above the vocabulary size are not errors: they contribute nothing, as
    ``tokenizers``' ``decode`` does.
    """


class InvalidWindowError(TokstreamError, ValueError):
    """A ``(prev_tokens, prefix_offset, read_offset)`` window cannot be resumed.

    Raised for offsets out of order or out of range, more than 1024 entries, entries that are
    not strings, and token strings that are not in the vocabulary.
    """


class StreamFinishedError(TokstreamError, RuntimeError):
    """``step()`` or ``finish()`` was called on a stream that was already finished."""


class TokenizerLoadError(TokstreamError, ValueError):
    """A ``tokenizer.json`` could not be read or loaded."""


class DecodeError(TokstreamError, ValueError):
    """The tokenizer's own decoder failed on a window (windowed engine only)."""
