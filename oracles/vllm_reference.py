"""A plain-Python reference of vLLM's windowed incremental detokenization.

Written from REFERENCE.md section 2 (not copied from vLLM). It is deliberately naive, two decoder
runs per token over a window of token strings, so that it is obviously faithful to the algorithm
that tokstream's deltas (C4) and wire windows (C3) are compared against. Its one addition,
``flush``, is not part of vLLM: tests need it to compute the total text vLLM would produce.

Tests and benchmarks import it from ``oracles`` (the repository root is on ``sys.path``):

>>> ref = VllmReference(tok, skip_special_tokens=False)  # doctest: +SKIP
>>> state = ref.seed(prompt_ids)  # doctest: +SKIP
>>> delta, state = ref.step(state, token_id)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tokenizers import Tokenizer

#: vLLM's INITIAL_INCREMENTAL_DETOKENIZATION_OFFSET: how far prefix_offset trails read_offset.
OFFSET = 5
#: Seeding looks at this many trailing prompt ids (the offset plus two, as vLLM does).
SEED_IDS = OFFSET + 2
REPLACEMENT = "\ufffd"


@dataclass(frozen=True)
class State:
    """One sequence's window, in vLLM's wire shape.

    Attributes:
        tokens: Token strings (``prev_tokens``), as ``convert_ids_to_tokens`` gives them.
        prefix_offset: Start of the text already emitted that serves as left context.
        read_offset: End of the text already emitted.
    """

    tokens: tuple[str, ...] = ()
    prefix_offset: int = 0
    read_offset: int = 0

    @property
    def window(self) -> tuple[list[str], int, int]:
        """The triple in the shape ``DetokStream.window`` and ``Detokenizer.resume`` use."""
        return list(self.tokens), self.prefix_offset, self.read_offset

    @classmethod
    def from_window(cls, window: tuple[Sequence[str], int, int]) -> State:
        """Builds a state from a ``(prev_tokens, prefix_offset, read_offset)`` triple."""
        tokens, prefix, read = window
        return cls(tuple(tokens), prefix, read)


def _rebased(tokens: Sequence[str], prefix: int, read: int) -> State:
    # The wire state is trimmed after every token so that it stays a handful of entries long (C3).
    return State(tuple(tokens[prefix:]), 0, read - prefix)


class VllmReference:
    """vLLM's algorithm over a ``tokenizers.Tokenizer``; states are immutable values.

    Args:
        tok: The tokenizer whose decoder pipeline renders token strings.
        skip_special_tokens: Drop added tokens marked ``special`` (they append nothing).
    """

    def __init__(self, tok: Tokenizer, skip_special_tokens: bool = False) -> None:
        self.tok = tok
        self.skip_special_tokens = skip_special_tokens
        self.special_ids = frozenset(
            i for i, added in tok.get_added_tokens_decoder().items() if added.special
        )

    def piece(self, token_id: int) -> str | None:
        """Returns the token string vLLM appends for ``token_id``, or None when it is skipped.

        Unknown ids become ``""``, as vLLM's ``_replace_none_with_empty`` does.
        """
        if self.skip_special_tokens and token_id in self.special_ids:
            return None
        token = self.tok.id_to_token(token_id)
        return "" if token is None else token

    def text(self, tokens: Iterable[str]) -> str:
        """``convert_tokens_to_string``: the tokenizer's decoder pipeline over token strings."""
        return self.tok.decoder.decode(list(tokens))

    def seed(self, prompt_ids: Sequence[int] | None = None) -> State:
        """Returns the state seeded from the last seven prompt ids (empty without a prompt)."""
        pieces = [p for p in map(self.piece, list(prompt_ids or ())[-SEED_IDS:]) if p is not None]
        read = len(pieces)
        return _rebased(pieces, max(read - OFFSET, 0), read)

    def step(self, state: State, token_id: int) -> tuple[str, State]:
        """Appends one id; returns the delta (``""`` while held back) and the rebased state."""
        piece = self.piece(token_id)
        tokens = state.tokens if piece is None else (*state.tokens, piece)
        prefix_text = self.text(tokens[state.prefix_offset : state.read_offset])
        new_text = self.text(tokens[state.prefix_offset :])
        # vLLM's hold rule, verbatim: it cannot tell an incomplete character from a decided U+FFFD.
        if len(new_text) <= len(prefix_text) or new_text.endswith(REPLACEMENT):
            return "", _rebased(tokens, state.prefix_offset, state.read_offset)
        return new_text[len(prefix_text) :], _rebased(tokens, state.read_offset, len(tokens))

    def flush(self, state: State) -> str:
        """Returns the text held back in ``state`` (vLLM has no such call; tests need its total)."""
        prefix_text = self.text(state.tokens[state.prefix_offset : state.read_offset])
        new_text = self.text(state.tokens[state.prefix_offset :])
        return new_text[len(prefix_text) :]

    def run(self, ids: Iterable[int], state: State | None = None) -> tuple[list[str], list[State]]:
        """Steps every id from ``state`` (default: no prompt).

        Returns:
            The per-id deltas and the state after each id (same length).
        """
        state = State() if state is None else state
        deltas: list[str] = []
        states: list[State] = []
        for token_id in ids:
            delta, state = self.step(state, token_id)
            deltas.append(delta)
            states.append(state)
        return deltas, states


class RefStream:
    """A stateful wrapper mirroring ``DetokStream``: ``step(id) -> str``, ``window``, ``flush()``.

    Args:
        tok: The tokenizer.
        prompt_ids: Prompt ids to seed from, or None.
        skip_special_tokens: As for ``VllmReference``.
        window: Start from this ``(prev_tokens, prefix_offset, read_offset)`` instead of a prompt.
    """

    def __init__(
        self,
        tok: Tokenizer,
        prompt_ids: Sequence[int] | None = None,
        skip_special_tokens: bool = False,
        window: tuple[Sequence[str], int, int] | None = None,
    ) -> None:
        self.ref = VllmReference(tok, skip_special_tokens)
        self.state = self.ref.seed(prompt_ids) if window is None else State.from_window(window)

    def step(self, token_id: int) -> str:
        """Appends one id and returns its delta."""
        delta, self.state = self.ref.step(self.state, token_id)
        return delta

    @property
    def window(self) -> tuple[list[str], int, int]:
        """The current wire window, rebased so that ``prefix_offset`` is 0."""
        return self.state.window

    def flush(self) -> str:
        """Returns what is held back (the stream stays usable)."""
        return self.ref.flush(self.state)
