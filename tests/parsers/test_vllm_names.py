"""Every parser name vLLM 0.33.0 registers is served or refused with the reason.

The names are those of ``acceptance/vllm/parser_names.json`` (the acceptance stage checks that
they are the wheel's registries' names). A name is served when it is one of the names of its
kind (``_core.TOOL_NAMES``, ``_core.REASONING_NAMES``) and a ``Derenderer`` takes it; otherwise
``Derenderer`` refuses it with a ``ValueError`` that says the format has no built-in template
yet and how to serve it with the checkpoint's own template.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.parsers_util import derenderer_class
from helpers.stream_util import import_tokstream, load_detokenizer

NAMES = json.loads(
    (Path(__file__).resolve().parents[2] / "acceptance" / "vllm" / "parser_names.json").read_text(
        encoding="utf-8"
    )
)
PAIRS = [(kind, name) for kind in ("tool", "reasoning") for name in NAMES[kind]]
#: Names that need a response template the fixture does not carry (``hf`` and ``beam`` are
#: ``auto``).
NEEDS_TEMPLATE = {"hf", "beam"}


def _accepted(kind: str) -> tuple[str, ...]:
    core = import_tokstream()._core
    return tuple(core.TOOL_NAMES if kind == "tool" else core.REASONING_NAMES)


@pytest.mark.parametrize(("kind", "name"), PAIRS, ids=[f"{k}-{n}" for k, n in PAIRS])
def test_each_vllm_name_is_served_or_refused_with_its_reason(kind: str, name: str) -> None:
    option = {"tool_parser" if kind == "tool" else "reasoning_parser": name}
    make = lambda: derenderer_class()(load_detokenizer("qwen3"), **option)  # noqa: E731
    if name in _accepted(kind):
        if name in NEEDS_TEMPLATE:
            with pytest.raises(ValueError, match="response_template"):
                make()
        else:
            assert make() is not None
        return
    with pytest.raises(ValueError) as e:
        make()
    message = str(e.value)
    assert f'the {kind} parser "{name}" (vLLM\'s) is not served yet: ' in message, message
    assert "--response-template" in message


def test_the_recorded_names_are_vllm_0_33s_100() -> None:
    assert NAMES["vllm"] == "0.33.0"
    assert (len(NAMES["tool"]), len(NAMES["reasoning"])) == (58, 42)


def test_every_vllm_name_is_served() -> None:
    core = import_tokstream()._core
    for kind, name in PAIRS:
        assert core.parser_refusal(kind, name) is None, (kind, name)
        assert name in _accepted(kind), (kind, name)
    assert core.parser_refusal("tool", "nonsense_xyz") is None
    with pytest.raises(ValueError, match='kind must be "tool" or "reasoning"'):
        core.parser_refusal("both", "hermes")
