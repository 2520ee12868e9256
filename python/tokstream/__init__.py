"""tokstream: incremental detokenization for LLM serving.

Feed token ids, get text deltas, never split a character; the deltas of a stream add up to the
tokenizer's one-shot ``decode``.

>>> from tokstream import Detokenizer
>>> d = Detokenizer.from_file("tokenizer.json")  # doctest: +SKIP
>>> s = d.stream(prompt_ids=[9707, 11])  # doctest: +SKIP
>>> s.step(1879) + s.finish()  # doctest: +SKIP
' world'
"""

from __future__ import annotations

from ._core import Detokenizer as Detokenizer
from ._core import DetokStream as DetokStream
from ._core import StreamSet as StreamSet
from ._core import __version__ as __version__
from .derender import Derenderer as Derenderer
from .errors import BadRequestError as BadRequestError
from .errors import DecodeError as DecodeError
from .errors import DerenderError as DerenderError
from .errors import InvalidTokenIdError as InvalidTokenIdError
from .errors import InvalidWindowError as InvalidWindowError
from .errors import NotFoundError as NotFoundError
from .errors import ParserError as ParserError
from .errors import StreamFinishedError as StreamFinishedError
from .errors import TokenizerLoadError as TokenizerLoadError
from .errors import TokstreamError as TokstreamError

__all__ = [
    "BadRequestError",
    "DecodeError",
    "DerenderError",
    "Derenderer",
    "DetokStream",
    "Detokenizer",
    "InvalidTokenIdError",
    "InvalidWindowError",
    "NotFoundError",
    "ParserError",
    "StreamFinishedError",
    "StreamSet",
    "TokenizerLoadError",
    "TokstreamError",
    "__version__",
]
