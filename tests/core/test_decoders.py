"""Every decoder ``tokenizers`` can load either streams exactly or is refused at load.

A small BPE trained in the test gets each decoder in turn (alone and in the sequences real
pipelines use); random id sequences (hypothesis) are streamed one id, three ids and sixteen ids a
call, and the text must equal ``decode`` (no prompt, so contract C1 is plain equality). A decoder
the engines cannot stream exactly must raise ``TokenizerLoadError`` when the tokenizer loads.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from helpers.stream_util import chunked, run_stream
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

TRAINING = [
    "hello world, hello there; the world says hello (again) and again.",
    "The quick brown fox jumps over the lazy dog. It's a dog, isn't it? Yes!",
    "lol, all the well-spelled lilies fell. 中文 你好",
] * 10

#: name -> the decoder's JSON, as tokenizer.json spells it.
DECODERS: dict[str, dict[str, Any]] = {
    "none": {},
    "bytelevel": {
        "type": "ByteLevel",
        "add_prefix_space": True,
        "trim_offsets": True,
        "use_regex": True,
    },
    "wordpiece": {"type": "WordPiece", "prefix": "##", "cleanup": True},
    "wordpiece-l": {"type": "WordPiece", "prefix": "l", "cleanup": False},
    "metaspace": {
        "type": "Metaspace",
        "replacement": "\u2581",
        "prepend_scheme": "always",
        "split": True,
    },
    "replace": {"type": "Replace", "pattern": {"String": "l"}, "content": "L"},
    "replace-drop": {"type": "Replace", "pattern": {"String": "e"}, "content": ""},
    "strip": {"type": "Strip", "content": "h", "start": 1, "stop": 1},
    "fuse": {"type": "Fuse"},
    "bytefallback": {"type": "ByteFallback"},
    "bpe-w": {"type": "BPEDecoder", "suffix": "</w>"},
    "bpe-l": {"type": "BPEDecoder", "suffix": "l"},
    "ctc": {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True},
    "ctc-raw": {"type": "CTC", "pad_token": "l", "word_delimiter_token": "o", "cleanup": False},
    "sequence-sp": {
        "type": "Sequence",
        "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0},
        ],
    },
    "sequence-bpe": {
        "type": "Sequence",
        "decoders": [
            {"type": "BPEDecoder", "suffix": "o"},
            {"type": "Strip", "content": " ", "start": 0, "stop": 1},
        ],
    },
}


@functools.cache
def base() -> dict[str, Any]:
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(
        vocab_size=160, special_tokens=["<unk>", "<pad>", "|"], show_progress=False
    )
    tok.train_from_iterator(TRAINING, trainer)
    return json.loads(tok.to_str())


def with_decoder(name: str) -> str:
    data = dict(base())
    data["decoder"] = DECODERS[name] or None
    return json.dumps(data)


#: Decoders the engines cannot stream exactly on this vocabulary: a ``BPEDecoder`` suffix that
#: occurs inside tokens ("l" in "hello") renders a token differently when it is the last one.
REFUSED = frozenset({"bpe-l", "sequence-bpe"})


@pytest.mark.parametrize("name", list(DECODERS))
def test_decoder_loads_or_is_refused_clearly(tokstream: Any, name: str) -> None:
    """Refused decoders raise ``TokenizerLoadError`` naming the decoder; the rest load."""
    if name in REFUSED:
        with pytest.raises(tokstream.TokenizerLoadError, match="BPEDecoder"):
            tokstream.Detokenizer.from_str(with_decoder(name))
    else:
        tokstream.Detokenizer.from_str(with_decoder(name))


@pytest.mark.parametrize("name", sorted(set(DECODERS) - REFUSED))
@given(ids=st.lists(st.integers(0, 159), max_size=24))
def test_decoder_streams_exactly(tokstream: Any, name: str, ids: list[int]) -> None:
    """Streams equal ``decode`` at 1, 3 and 16 ids a call; where the ``tokenizers`` decoder
    itself fails (``Strip`` on a token shorter than what it strips), tokstream raises
    ``DecodeError`` instead, from ``decode`` and from the stream alike."""
    text = with_decoder(name)
    tok, detok = Tokenizer.from_str(text), tokstream.Detokenizer.from_str(text)
    try:
        want = tok.decode(ids, skip_special_tokens=False)
    except BaseException as err:  # the oracle's PanicException derives from BaseException
        assert type(err).__name__ == "PanicException", err
        with pytest.raises(tokstream.DecodeError):
            detok.decode(ids)
        with pytest.raises(tokstream.DecodeError):
            run_stream(detok, None, ids, False)
        return
    assert detok.decode(ids) == want
    for size in (1, 3, 16):
        got = "".join(run_stream(detok, None, chunked(ids, size) if size > 1 else ids, False))
        assert got == want, (name, size, ids, detok.engine)
