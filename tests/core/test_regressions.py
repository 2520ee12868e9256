"""REFERENCE.md section 7: every regression from the public record, as a named test on real files.

Where tokstream deliberately differs from vLLM (a decided U+FFFD at once, a flush on ``finish``,
prompts ending inside a character), the test asserts both behaviours so the difference is on record.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from helpers.stream_util import (
    BYTE_LEVEL,
    SENTENCEPIECE,
    TOKENIZER_NAMES,
    c1_target,
    decode,
    run_stream,
)
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer

from oracles.corpus import byte_ids, encode_text, samples
from oracles.vllm_reference import RefStream

BYTE_FAMILIES = BYTE_LEVEL + SENTENCEPIECE
ZHONG = "中".encode()  # E4 B8 AD


def reference(tok: Tokenizer, prompt: list[int], gen: list[int], skip: bool = False) -> list[str]:
    """vLLM's deltas for ``gen``, then what it holds back (which vLLM itself never sends)."""
    ref = RefStream(tok, prompt, skip)
    return [*(ref.step(i) for i in gen), ref.flush()]


def steps(detok: Any, prompt: list[int] | None, gen: list[int], skip: bool = False) -> list[str]:
    """tokstream's deltas for ``gen`` one id at a time, then ``finish()``."""
    return run_stream(detok, prompt, gen, skip)


@pytest.mark.parametrize("name", SENTENCEPIECE, indirect=True)
def test_sentencepiece_byte_run_invalid_after_valid_char_vllm_17448(
    name: str, tok: Tokenizer, detok: Any
) -> None:
    """C1's exception: the emitted character stands, then one U+FFFD per byte token left.

    vLLM's algorithm slices ``decode``'s U+FFFDs by the characters it sent, and so sends three
    U+FFFD for the one lone E1 (docs/differences.md).
    """
    world = tok.token_to_id("▁world")
    gen = [*byte_ids(tok, b"\xec\x84\xac\xe1"), world]  # 섬 then a lone E1
    assert decode(tok, gen, False) == "\ufffd" * 4 + " world"  # decode rewrites the run afterwards
    assert steps(detok, None, gen) == ["", "", "섬", "", "\ufffd world", ""]
    assert reference(tok, [], gen) == ["", "", "섬", "", "\ufffd" * 3 + " world", ""]
    for chunk in (2, 3, 5):  # the same text however the ids come
        parts = [gen[i : i + chunk] for i in range(0, len(gen), chunk)]
        assert "".join(run_stream(detok, None, parts, False)) == "섬\ufffd world"
    gen = byte_ids(tok, b"\x41\xc3")  # "A" as a byte token, then a lone C3
    assert decode(tok, gen, False) == "\ufffd\ufffd"
    assert steps(detok, None, gen) == reference(tok, [], gen) == ["A", "", "\ufffd"]


@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("text", ["A B C D E F G H I J", "삥뽕빵", "삥뽕빵 삥뽕빵삥"])
def test_llama3_letters_and_korean_split_tokens_tokenizers_1705(
    tok: Tokenizer, detok: Any, text: str, skip: bool
) -> None:
    """Letters and Korean split across tokens: same deltas as vLLM, same text as decode."""
    gen = encode_text(tok, text)
    ours = steps(detok, None, gen, skip)
    assert "".join(ours) == decode(tok, gen, skip)
    assert ours == reference(tok, [], gen, skip)


@pytest.mark.parametrize("held", [1, 2])
@pytest.mark.parametrize("name", BYTE_FAMILIES, indirect=True)
def test_prompt_ending_inside_multibyte_char_vllm_48853(
    name: str, tok: Tokenizer, detok: Any, held: int
) -> None:
    """The completed character is emitted and no prompt text is; vLLM loses the character."""
    prompt = encode_text(tok, "Hello") + byte_ids(tok, ZHONG[:held])
    gen = byte_ids(tok, ZHONG[held:]) + encode_text(tok, " world")[-1:]
    target = c1_target(tok, prompt, gen, False)
    assert target == "中 world"
    assert "".join(steps(detok, prompt, gen)) == target
    assert "".join(reference(tok, prompt, gen)) in (" world", "world")  # vLLM's loss, on record


@pytest.mark.parametrize("skip", [False, True])
def test_finish_without_generated_tokens_returns_empty_vllm_47707(
    name: str, tok: Tokenizer, detok: Any, skip: bool
) -> None:
    """``finish()`` right after creation returns "" with no prompt, a prompt, or a split prompt."""
    assert detok.stream(skip_special_tokens=skip).finish() == ""
    prompts = [
        encode_text(tok, "Hello there"),
        [*encode_text(tok, "Hi"), *encode_text(tok, "中")[:1]],
    ]
    try:
        prompts.append([*encode_text(tok, "Hi"), *byte_ids(tok, ZHONG[:2])])
    except ValueError:
        pass  # no single-byte tokens (WordPiece, Unigram)
    for prompt in prompts:
        assert detok.stream(prompt_ids=prompt, skip_special_tokens=skip).finish() == ""


def test_negative_and_out_of_vocab_ids_vllm_21951_44682(
    tokstream: Any, tok: Tokenizer, detok: Any
) -> None:
    """A negative id is a ValueError; ids past the vocabulary add nothing; the stream goes on."""
    ids = encode_text(tok, "Hello world, 中文")
    stream = detok.stream()
    with pytest.raises(tokstream.InvalidTokenIdError) as info:
        stream.step(-1)
    assert isinstance(info.value, ValueError)
    out = [stream.step([detok.vocab_size, detok.vocab_size + 7]), *(stream.step(i) for i in ids)]
    assert "".join([*out, stream.finish()]) == decode(tok, [detok.vocab_size, *ids], False)


@pytest.mark.parametrize("name", BYTE_FAMILIES, indirect=True)
def test_window_on_continuation_bytes_and_split_characters_vllm_44620(
    name: str, tok: Tokenizer, detok: Any
) -> None:
    """Windows that begin on continuation bytes, and prompts sliced inside characters."""
    tail = byte_ids(tok, ZHONG[1:])
    hi, world = encode_text(tok, "Hi")[-1:], encode_text(tok, " world")[-1:]
    # A wire window starting on continuation bytes (as vLLM may send): they are context only.
    window = ([tok.id_to_token(i) for i in [*tail, *hi]], 0, 3)
    resumed = detok.resume(*window)
    assert resumed.step(world) + resumed.finish() == " world"
    # A prompt whose seed (its last 7 ids; the window from offset 2) starts mid-character.
    prompt = [*hi, *hi, *byte_ids(tok, ZHONG), *byte_ids(tok, b"abc")]
    assert detok.stream(prompt_ids=prompt).window[0][0] == tok.id_to_token(tail[0])
    for cut in range(len(prompt) + 1):
        gen = [*prompt[cut:], *world]
        target = c1_target(tok, prompt[:cut], gen, False)
        assert "".join(steps(detok, prompt[:cut], gen)) == target, cut


@pytest.mark.parametrize("name", TOKENIZER_NAMES, indirect=True)
@given(data=st.data())
def test_korean_cjk_random_chunkings_dynamo_12630(tok: Tokenizer, detok: Any, data: Any) -> None:
    """Random chunkings of Korean/CJK text give decode's text and vLLM's concatenated deltas."""
    gen = encode_text(tok, "삥뽕빵 한국어 텍스트, 中文测试。日本語のテキスト")
    sizes = data.draw(st.lists(st.integers(1, 9), min_size=1, max_size=len(gen)))
    chunks, i = [], 0
    for size in sizes * (len(gen) // len(sizes) + 1):
        if i >= len(gen):
            break
        chunks.append(gen[i : i + size])
        i += size
    skip = data.draw(st.booleans())
    got = run_stream(detok, None, chunks, skip)
    assert "".join(got) == decode(tok, gen, skip)
    ref = reference(tok, [], gen, skip)
    bounds = [sum(map(len, chunks[:n])) for n in range(len(chunks) + 1)]
    assert got[:-1] == ["".join(ref[a:b]) for a, b in itertools.pairwise(bounds)]


@pytest.mark.parametrize("name", BYTE_FAMILIES, indirect=True)
def test_literal_replacement_char_tokens_keep_flowing_sglang_34740(
    name: str, tok: Tokenizer, detok: Any
) -> None:
    """A token whose text is U+FFFD is emitted at once, every time; vLLM stalls on the run."""
    fffd = tok.token_to_id("\ufffd" if name in SENTENCEPIECE else "ï¿½")  # EF BF BD mapped
    gen = [*encode_text(tok, "Hi"), *[fffd] * 200, *encode_text(tok, " world")]
    ours = steps(detok, None, gen)
    first = len(encode_text(tok, "Hi"))
    assert ours[first : first + 200] == ["\ufffd"] * 200
    assert "".join(ours) == decode(tok, gen, False)
    assert reference(tok, [], gen)[first : first + 200] == [""] * 200  # vLLM holds all of them


@pytest.mark.parametrize("skip", [False, True])
def test_empty_tokens_keep_cost_constant_sglang_13275(
    tok: Tokenizer, detok: Any, skip: bool
) -> None:
    """Long runs of tokens adding no text (skipped specials, ids past the vocabulary)."""
    special = next(i for i, t in tok.get_added_tokens_decoder().items() if t.special)
    empty = special if skip else detok.vocab_size + 3
    words = [encode_text(tok, w) for w in ("Hello", " big", " world", " 中文")]
    gen = [
        *words[0],
        *[empty] * 1000,
        *words[1],
        *[empty] * 40,
        *words[2],
        *[empty] * 20,
        *words[3],
    ]
    stream = detok.stream(skip_special_tokens=skip)
    out = []
    for token_id in gen:
        out.append(stream.step(token_id))
        assert len(stream.window[0]) <= 32
    assert "".join([*out, stream.finish()]) == decode(tok, gen, skip)


@pytest.mark.parametrize("name", BYTE_FAMILIES, indirect=True)
def test_generation_ending_on_incomplete_char_finish_shows_decode_tail(
    name: str, tok: Tokenizer, detok: Any
) -> None:
    """``finish()`` flushes what decode shows (U+FFFD); vLLM has no flush and loses it."""
    gen = [*encode_text(tok, "Hi"), *byte_ids(tok, ZHONG[:2])]
    ours, ref = steps(detok, None, gen), reference(tok, [], gen)
    tail = "\ufffd\ufffd" if name in SENTENCEPIECE else "\ufffd"  # one per byte token vs lossy
    assert ours[-1] == ref[-1] == tail
    assert "".join(ours) == decode(tok, gen, False) == "Hi" + tail
    assert "".join(ref[:-1]) == "Hi"  # everything vLLM ever sends


@pytest.mark.parametrize("name", BYTE_FAMILIES, indirect=True)
def test_decided_replacement_char_emitted_at_once_unlike_vllm(
    name: str, tok: Tokenizer, detok: Any
) -> None:
    """A byte that can start no character (FF) is U+FFFD at once; vLLM waits for the next text."""
    hi = encode_text(tok, "Hi")
    gen = [*hi, *byte_ids(tok, b"\xff"), *encode_text(tok, " world")[-1:]]
    ours, ref = steps(detok, None, gen), reference(tok, [], gen)
    assert ours[len(hi) :] == ["\ufffd", " world", ""]
    assert ref[len(hi) :] == ["", "\ufffd world", ""]
    assert "".join(ours) == "".join(ref) == decode(tok, gen, False)


@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("name", ["qwen3", "deepseek-r1", "phi-3-mini"], indirect=True)
def test_non_special_added_tokens_survive_skipping_tokenizers_1392(
    tok: Tokenizer, detok: Any, skip: bool
) -> None:
    """Non-special added tokens (<think>, </s> on Phi-3) stay; specials go only when skipping."""
    added = [i for i, t in tok.get_added_tokens_decoder().items() if not t.special][:6]
    special = next(i for i, t in tok.get_added_tokens_decoder().items() if t.special)
    gen = [*encode_text(tok, "a"), *added, special, *encode_text(tok, "中 b")]
    ours = "".join(steps(detok, None, gen, skip))
    assert ours == decode(tok, gen, skip)
    assert all(tok.id_to_token(i) in ours for i in added)


def test_added_token_through_bytelevel_decoder_tokenizers_1392(
    tokstream: Any, get_tok: Any
) -> None:
    """An added "ü" (normalized: false) on a ByteLevel decoder renders as ``tokenizers`` does."""
    from tokenizers import AddedToken

    tok = Tokenizer.from_str(get_tok("gpt2").to_str())
    tok.add_tokens([AddedToken("ü", normalized=False), AddedToken("日本", normalized=False)])
    detok = tokstream.Detokenizer.from_tokenizer(tok)
    for text in ["aü b", "x日本y", "ü", "日本"]:
        gen = tok.encode(text, add_special_tokens=False).ids
        assert detok.decode(gen) == tok.decode(gen, skip_special_tokens=False)
        assert "".join(steps(detok, None, gen)) == tok.decode(gen, skip_special_tokens=False)


@pytest.mark.parametrize("name", ["t5-small", *SENTENCEPIECE], indirect=True)
def test_metaspace_first_token_tokenizers_2212(tok: Tokenizer, detok: Any) -> None:
    """Leading ``▁`` tokens at the start of a generation, with and without a prompt."""
    bare, hello = tok.token_to_id("▁"), tok.token_to_id("▁Hello")
    for gen in ([bare, hello], [bare, bare, hello], [hello, bare, bare, hello]):
        assert "".join(steps(detok, None, gen)) == decode(tok, gen, False), gen
        prompt = encode_text(tok, "Q:")
        assert "".join(steps(detok, prompt, gen)) == c1_target(tok, prompt, gen, False), gen


@pytest.mark.parametrize("spaces", [1, 2, 3])
def test_outputs_starting_with_spaces_mlx_lm_1754(tok: Tokenizer, detok: Any, spaces: int) -> None:
    """Generations that start with 1-3 spaces, with no prompt and after a prompt."""
    gen = encode_text(tok, " " * spaces + "Hello  world")
    assert "".join(steps(detok, None, gen)) == decode(tok, gen, False)
    prompt = encode_text(tok, "Answer:")
    assert "".join(steps(detok, prompt, gen)) == c1_target(tok, prompt, gen, False)


@pytest.mark.parametrize("name", BYTE_FAMILIES, indirect=True)
def test_space_after_incomplete_cjk_mlx_vlm_1778(name: str, tok: Tokenizer, detok: Any) -> None:
    """A space token right after an unfinished CJK byte sequence ends it as decode does."""
    space = tok.token_to_id("▁") if name in SENTENCEPIECE else tok.token_to_id("Ġ")
    gen = [*byte_ids(tok, ZHONG[:2]), space, *encode_text(tok, " world")[-1:]]
    assert "".join(steps(detok, None, gen)) == decode(tok, gen, False)
    prompt = encode_text(tok, "Hi")
    assert "".join(steps(detok, prompt, gen)) == c1_target(tok, prompt, gen, False)


@pytest.mark.parametrize("skip", [False, True])
def test_streaming_equals_non_streaming_tgi_1024_vllm_14364(
    tok: Tokenizer, detok: Any, skip: bool
) -> None:
    """The streamed text equals ``Detokenizer.decode`` and ``tokenizers``' decode, per sample."""
    for sample, ids in samples(tok):
        streamed = "".join(steps(detok, None, ids, skip))
        assert streamed == detok.decode(ids, skip_special_tokens=skip) == decode(tok, ids, skip), (
            sample
        )


@pytest.mark.parametrize("name", SENTENCEPIECE, indirect=True)
@pytest.mark.parametrize(
    "parts",
    [("삥".encode(), "뽕".encode()[:2]), (b"\x95", "빵".encode())],
    ids=["char-then-bad-lead", "stray-continuation"],
)
def test_resumed_window_continues_a_byte_run_like_the_stream_did(
    name: str, tok: Tokenizer, detok: Any, parts: tuple[bytes, bytes]
) -> None:
    """A window carried over the wire and resumed at every id gives the stream's own deltas,
    and flushing from the carried window at any point gives what the stream would flush.

    Byte runs that turn invalid (a character, then bytes that cannot follow; or a run opened by a
    stray continuation byte) are where the window alone once lost what the stream knew.
    """
    gen = [*byte_ids(tok, parts[0]), *byte_ids(tok, parts[1]), tok.token_to_id("▁done")]
    one = detok.stream()
    expected = [one.step(i) for i in gen] + [one.finish()]
    got: list[str] = []
    window = None
    for k, token_id in enumerate(gen):
        s = detok.stream() if window is None else detok.resume(*window)
        got.append(s.step(token_id))
        window = s.window
        alone = detok.stream()
        for i in gen[: k + 1]:
            alone.step(i)
        assert detok.resume(*window).finish() == alone.finish(), (k, window)
    assert window is not None
    got.append(detok.resume(*window).finish())
    assert got == expected
