"""A small multilingual corpus, turned into id sequences for any tokenizer.

Each sample is a list of pieces: plain text, encoded without special tokens, or a ``Marker``
naming a role (end of turn, ``<think>``, a tool-call tag...) that is replaced by the real id of an
added token of that tokenizer. Splicing ids, rather than encoding marker text, guarantees that the
sequences hold special and non-special added tokens where a model would emit them, on every
tokenizer.

Samples are kept to 20-80 ids so that sweeps over every prompt cut stay fast.
"""

# ruff: noqa: RUF001
# (Full-width bars and colons are the real spelling of DeepSeek markers and CJK punctuation.)
from __future__ import annotations

from dataclasses import dataclass

from tokenizers import Tokenizer

MAX_IDS = 80


@dataclass(frozen=True)
class Marker:
    """An added token, chosen per tokenizer by role (see ``ROLES``)."""

    role: str


END = Marker("end")
START = Marker("start")
THINK = Marker("think")
UNTHINK = Marker("unthink")
TOOL = Marker("tool")
ADDED = Marker("added")

# Candidates by role, first present wins. "added" prefers a non-special added token (Qwen3's and
# DeepSeek-R1's <think>, Phi-3's </s>): those survive skip_special_tokens, unlike specials.
ROLES: dict[str, tuple[str, ...]] = {
    "end": ("<|im_end|>", "<|eot_id|>", "<|end|>", "<｜end▁of▁sentence｜>", "</s>", "[SEP]"),
    "start": ("<|im_start|>", "<|begin_of_text|>", "<｜begin▁of▁sentence｜>", "<s>", "[CLS]"),
    "think": ("<think>",),
    "unthink": ("</think>",),
    "tool": ("<tool_call>", "[TOOL_CALLS]", "<｜tool▁call▁begin｜>", "<extra_id_0>", "[MASK]"),
}

SAMPLES: dict[str, tuple[str | Marker, ...]] = {
    "prose": ("The quick brown fox jumps over the lazy dog. It's 3:45 p.m., isn't it? Yes.",),
    "code": ("def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",),
    "spaces": ("  two leading,   three inner    four\n\n\ttab  end  ",),
    "cjk": ("中文测试：这是一个句子。日本語のテキストです。",),
    "korean": ("삥뽕빵 안녕하세요, 세계! 삥뽕빵",),
    "thai": ("ภาษาไทยเป็นภาษาที่สวยงาม",),
    "burmese": ("မြန်မာဘာသာစကား",),
    "devanagari": ("नमस्ते दुनिया, हिन्दी भाषा",),
    "arabic": ("مرحبا بالعالم، اللغة العربية",),
    "emoji": ("Family 👨‍👩‍👧‍👦, flags 🇯🇵🇫🇷 robot 🤖!",),
    "letters": ("A B C D E F G H I J", END, " A B C D E F G H I J"),
    "think": (START, "Hi", THINK, "\nLet me think: 中文 ok.\n", UNTHINK, "\n\nAnswer: 42.", END),
    "tool": ("Calling ", TOOL, '{"name": "f", "city": "東京"}', END, END, " after 🇯🇵"),
    "mixed": ("Start", END, "삥뽕빵 ", ADDED, " ไทย", START, START, "  x = 1", END),
}
SAMPLE_NAMES: tuple[str, ...] = tuple(SAMPLES)


def marker_ids(tok: Tokenizer) -> dict[str, int | None]:
    """Maps every role to the id of this tokenizer's added token for it (None: it has none)."""
    added = {t.content: (i, t.special) for i, t in tok.get_added_tokens_decoder().items()}
    found: dict[str, int | None] = {}
    for role, names in ROLES.items():
        found[role] = next((added[n][0] for n in names if n in added), None)
    non_special = sorted(i for i, special in added.values() if not special)
    found["added"] = non_special[0] if non_special else found["end"]
    return found


def encode_text(tok: Tokenizer, text: str) -> list[int]:
    """Encodes plain text without special tokens (BERT's file pads to 128 unless told not to)."""
    if tok.padding is not None or tok.truncation is not None:
        raise ValueError("call no_padding() and no_truncation() on the tokenizer first")
    return tok.encode(text, add_special_tokens=False).ids


def build(tok: Tokenizer, pieces: tuple[str | Marker, ...]) -> list[int]:
    """Encodes text pieces and splices in marker ids; a role the tokenizer lacks falls back to text.

    The fallback encodes the marker's canonical text (``<think>`` on GPT-2 is plain text), so the
    sample keeps its shape on every tokenizer.
    """
    markers = marker_ids(tok)
    ids: list[int] = []
    for piece in pieces:
        if isinstance(piece, str):
            ids.extend(encode_text(tok, piece))
        elif markers[piece.role] is not None:
            ids.append(markers[piece.role])  # type: ignore[arg-type]
        else:
            ids.extend(encode_text(tok, ROLES.get(piece.role, ("<x>",))[0]))
    return ids[:MAX_IDS]


def samples(tok: Tokenizer) -> list[tuple[str, list[int]]]:
    """Returns ``(name, ids)`` for every sample, in ``SAMPLE_NAMES`` order.

    >>> [name for name, _ in samples(tok)][:2]  # doctest: +SKIP
    ['prose', 'code']
    """
    return [(name, build(tok, pieces)) for name, pieces in SAMPLES.items()]


def _byte_level_alphabet() -> dict[int, str]:
    # GPT-2's printable stand-ins for bytes: printable Latin-1 maps to itself, the rest to U+0100+.
    kept = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    moved = [b for b in range(256) if b not in kept]
    return {**{b: chr(b) for b in kept}, **{b: chr(0x100 + n) for n, b in enumerate(moved)}}


BYTE_LEVEL_ALPHABET = _byte_level_alphabet()


def is_byte_fallback(tok: Tokenizer) -> bool:
    """Whether the tokenizer has SentencePiece byte tokens ``<0x00>``..``<0xFF>``."""
    return tok.token_to_id("<0x41>") is not None


def byte_ids(tok: Tokenizer, data: bytes) -> list[int]:
    """One single-byte token per byte: ``<0xNN>`` with byte fallback, else the byte-level char.

    Raises:
        ValueError: The tokenizer has no single-byte tokens (WordPiece, Unigram).
    """
    if is_byte_fallback(tok):
        ids = [tok.token_to_id(f"<0x{b:02X}>") for b in data]
    else:
        ids = [tok.token_to_id(BYTE_LEVEL_ALPHABET[b]) for b in data]
    if None in ids:
        raise ValueError("this tokenizer has no single-byte tokens")
    return ids  # type: ignore[return-value]


def long_generation(tok: Tokenizer, length: int = 10_000) -> list[int]:
    """Returns ``length`` ids made by repeating every sample (a long, varied generation)."""
    cycle = [i for _, ids in samples(tok) for i in ids]
    return (cycle * (length // len(cycle) + 1))[:length]
