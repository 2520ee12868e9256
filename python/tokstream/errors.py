"""The exceptions tokstream raises.

Every error derives from :class:`TokstreamError`, and also from the built-in exception a caller
would already catch (``ValueError`` for bad input, ``RuntimeError`` for misuse of a stream).
"""

from __future__ import annotations

from . import _core

__all__ = [
    "BadRequestError",
    "DecodeError",
    "DerenderError",
    "InvalidTokenIdError",
    "InvalidWindowError",
    "NotFoundError",
    "ParserError",
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


class DerenderError(TokstreamError, ValueError):
    """A derender request was refused; it maps to an HTTP error answer.

    Attributes:
        status_code: The HTTP status (400, 404, or 500 for a user parser's failure).
        error_type: The OpenAI error type name (``"BadRequestError"``, ``"NotFoundError"``).
        param: The request field at fault, when one is known (``"generate_chunk.choices"``).
    """

    status_code: int = 400
    error_type: str = _core.error_type(status_code)

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


class BadRequestError(DerenderError):
    """400: the body is malformed, breaks a limit, or carries a stream state that cannot be used."""


class NotFoundError(DerenderError):
    """404: the request names a model this derenderer does not serve, or an unknown path."""

    status_code = 404
    error_type = _core.error_type(status_code)


class ParserError(DerenderError):
    """500: a user parser raised while derendering (the message names the exception)."""

    status_code = 500
    error_type = _core.error_type(status_code)
