"""One chunk late in a tool call, one family of each format group, against generation length.

The generations, the measured chunk and the checks are ``families.py``'s (which also times vLLM
0.33.0's derender on the same chunk, in its own virtualenv): before timing, each family's stream
of one id a chunk must give its whole answer's call, holding the generation's argument text.
Only tokstream is timed here (``handle_json`` of the measured chunk, its resumable state
carried); groups are ``families-<family>``. With ``--benchmark-disable`` only 64 and 512 ids
run.
"""

from __future__ import annotations

from typing import Any

import families
import pytest

LENGTHS = (64, 4096)
QUICK = (64, 512)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    quick = metafunc.config.getoption("benchmark_disable")
    metafunc.parametrize("length", QUICK if quick else LENGTHS)


@pytest.mark.parametrize("family", list(families.FAMILIES))
def test_family_chunk(benchmark: Any, family: str, length: int) -> None:
    benchmark.group = f"families-{family}"
    g = families.generation(family, length)
    post, info = families.tokstream_chunk(family, g)
    # The state after the generation holds no call text.
    assert info["state_after"] < 2048, info
    status, _ = benchmark(post)
    assert status == 200
