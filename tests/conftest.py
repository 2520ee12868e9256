"""Shared fixtures: the real tokenizer files, the oracle, tokstream itself, hypothesis profiles.

The real tokenizers come from the project's compressed fixtures (``fixtures/``, decompressed once
under ``target/fixtures``), so every test runs on a fresh clone. Nothing skips: a missing build or
dependency is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import TOKENIZER_NAMES, VLLM_WRONG, import_tokstream, load_detokenizer
from hypothesis import HealthCheck, settings
from tokenizers import Tokenizer

# deadline=None: a sweep's first example also pays for loading a tokenizer, and 2 shared cores
# make timings noisy; max_examples is the knob that trades depth for time. "fast" (the default,
# and CI's) is derandomized so that a run is reproducible; "slow" explores afresh every time.
settings.register_profile(
    "fast",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "slow", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


def pytest_configure(config: pytest.Config) -> None:
    """Tolerates one third-party warning that would otherwise crash failure reports.

    The project turns warnings into errors; when a hypothesis test fails, hypothesis imports
    libcst, whose import warns about mypy_extensions.TypedDict, and pytest dies with INTERNALERROR.
    """
    config.addinivalue_line(
        "filterwarnings", "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning"
    )


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Reports how many swept cases vLLM's algorithm gets wrong (tokstream was asserted right)."""
    if VLLM_WRONG:
        terminalreporter.write_sep("-", "cases where vLLM's algorithm misses C1 (tokstream right)")
        for key, count in sorted(VLLM_WRONG.items()):
            terminalreporter.write_line(f"{key}: {count}")


@pytest.fixture(scope="session", params=TOKENIZER_NAMES)
def name(request: pytest.FixtureRequest) -> str:
    """Every real tokenizer's folder name."""
    return request.param


@pytest.fixture(scope="session")
def tok(name: str) -> Tokenizer:
    """The oracle tokenizer for ``name``."""
    return load_tokenizer(name)


@pytest.fixture(scope="session")
def detok(name: str) -> Any:
    """The tokstream ``Detokenizer`` for ``name`` (skips when tokstream is not built)."""
    return load_detokenizer(name)


@pytest.fixture(scope="session")
def tokstream() -> ModuleType:
    """The ``tokstream`` package (skips when it is not built)."""
    return import_tokstream()


@pytest.fixture(scope="session")
def get_tok() -> Callable[[str], Tokenizer]:
    """Loader for tests that pick one named tokenizer rather than sweeping all ten."""
    return load_tokenizer


@pytest.fixture(scope="session")
def get_detok() -> Callable[[str], Any]:
    """Loader for tests that pick one named Detokenizer rather than sweeping all ten."""
    return load_detokenizer
