"""Synthetic tokenizers trained in the test, one per engine, with C1 and C4 checked on each.

They need no tokenizer files at all (trained in the test): a
ByteLevel BPE ("bytelevel"), a SentencePiece-style byte-fallback BPE ("sentencepiece"), WordPiece
and Unigram with Metaspace (both "windowed"). Small vocabularies force byte tokens and unknowns.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.stream_util import c1_target, chunked, run_stream, vllm_is_right
from tokenizers import (
    AddedToken,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    trainers,
)

from oracles.vllm_reference import VllmReference

TRAINING = [
    "The quick brown fox jumps over the lazy dog. It's a dog, isn't it? Yes!",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "hello world, hello there; the world says hello (again) and again.",
    "Numbers 12, 345 and 6789; symbols: @#$%^&*[]{}<>/\\|~`+=_-\"'",
    "中文 测试 你好 안녕 세계",
] * 10
TEXTS = [
    "The lazy dog says hello, world!",
    "  def again(n):\n      return n  ",
    "中文测试 你好世界 삥뽕빵 안녕",
    "emoji 👨‍👩‍👧‍👦 and 🇯🇵 flags",
    "mixed 中 fox ü 🤖 end",
]
ENGINES = ("bytelevel", "sentencepiece", "wordpiece", "unigram")


def train(kind: str) -> Tokenizer:
    """Trains the ``kind`` tokenizer on ``TRAINING`` and adds a special and a non-special token."""
    quiet = {"show_progress": False}
    if kind == "bytelevel":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        alphabet = pre_tokenizers.ByteLevel.alphabet()
        tok.train_from_iterator(
            TRAINING, trainers.BpeTrainer(vocab_size=400, initial_alphabet=alphabet, **quiet)
        )
    elif kind == "sentencepiece":
        tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
        steps = [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
        tok.decoder = decoders.Sequence([*steps, decoders.Strip(" ", 1, 0)])
        trainer = trainers.BpeTrainer(vocab_size=300, limit_alphabet=70, **quiet)
        tok.train_from_iterator(TRAINING, trainer)
        tok = with_byte_fallback(tok)
    elif kind == "wordpiece":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        trainer = trainers.WordPieceTrainer(vocab_size=300, special_tokens=["[UNK]"], **quiet)
        tok.train_from_iterator(TRAINING, trainer)
    else:
        tok = Tokenizer(models.Unigram())
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
        trainer = trainers.UnigramTrainer(
            vocab_size=200, special_tokens=["<unk>"], unk_token="<unk>", **quiet
        )
        tok.train_from_iterator(TRAINING, trainer)
    tok.add_special_tokens([AddedToken("<|end|>", normalized=False)])
    tok.add_tokens([AddedToken("<think>", normalized=False)])
    return tok


def with_byte_fallback(tok: Tokenizer) -> Tokenizer:
    """Adds the 256 ``<0xNN>`` tokens to a trained BPE and turns byte fallback on.

    The trainer knows nothing of byte fallback; SentencePiece exports carry these tokens as
    ordinary vocabulary entries (not added tokens), so that is where they go.
    """
    data = json.loads(tok.to_str())
    vocab = data["model"]["vocab"]
    for byte in range(256):
        vocab.setdefault(f"<0x{byte:02X}>", len(vocab))
    data["model"]["byte_fallback"] = True
    return Tokenizer.from_str(json.dumps(data))


@pytest.fixture(scope="module", params=ENGINES)
def synthetic(request: pytest.FixtureRequest, tokstream: Any) -> tuple[str, Tokenizer, Any]:
    """(kind, trained tokenizer, tokstream Detokenizer built from its JSON)."""
    tok = train(request.param)
    return request.param, tok, tokstream.Detokenizer.from_str(tok.to_str())


def sample_ids(tok: Tokenizer) -> list[list[int]]:
    """Every text encoded, plus one with the special and the added token spliced in."""

    def enc(text: str) -> list[int]:
        return tok.encode(text, add_special_tokens=False).ids

    # Spliced from whole pieces: cutting ids could leave a byte run unfinished before a special,
    # which is C1's documented byte-fallback exception (test_regressions covers that).
    end, think = tok.token_to_id("<|end|>"), tok.token_to_id("<think>")
    spliced = [think, *enc("中文 你好"), end, end, *enc(" The dog"), think, *enc("🇯🇵 ok")]
    return [*map(enc, TEXTS), spliced]


def test_engine_choice_and_loaders_agree(tokstream: Any, synthetic: Any) -> None:
    """Each pipeline gets its engine, from JSON text and from a ``tokenizers.Tokenizer`` alike."""
    kind, tok, detok = synthetic
    expected = {"bytelevel": "bytelevel", "sentencepiece": "sentencepiece"}.get(kind, "windowed")
    assert detok.engine == expected
    assert tokstream.Detokenizer.from_tokenizer(tok).engine == expected
    assert detok.vocab_size == tok.get_vocab_size(with_added_tokens=True)
    if kind == "sentencepiece":  # the point of this tokenizer: unseen text falls back to bytes
        assert "<0xF0>" in tok.encode("🤖", add_special_tokens=False).tokens


@pytest.mark.parametrize("skip", [False, True])
def test_synthetic_c1_and_c4(synthetic: Any, skip: bool) -> None:
    """C1 at every prompt cut (single ids, then chunks of 3 and 16); C4 where vLLM is right."""
    kind, tok, detok = synthetic
    ref = VllmReference(tok, skip)
    for ids in sample_ids(tok):
        assert detok.decode(ids, skip_special_tokens=skip) == tok.decode(
            ids, skip_special_tokens=skip
        )
        for k in range(len(ids) + 1):
            prompt, gen = ids[:k], ids[k:]
            target = c1_target(tok, prompt, gen, skip)
            ours = run_stream(detok, prompt, gen, skip)
            at = f"{kind} skip={skip} prompt={prompt} gen={gen}"
            assert "".join(ours) == target, at
            for size in (3, 16):
                assert "".join(run_stream(detok, prompt, chunked(gen, size), skip)) == target, at
            seed_state = ref.seed(prompt)
            deltas, states = ref.run(gen, seed_state)
            if vllm_is_right(ref, deltas, states[-1] if states else seed_state, target):
                assert ours[:-1] == deltas, at
