"""pytest-benchmark configuration: collect ``bench_*.py``, share tokenizers, print memory figures.

Run from the repository root (the project's pytest settings in ``pyproject.toml`` apply)::

    python -m pytest benches --benchmark-only            # timed
    python -m pytest benches --benchmark-disable         # every bench once, as CI does

``testpaths`` names only ``tests``, so a plain ``pytest`` never reaches this folder, and the
collection hook below adds ``bench_*.py`` for files under ``benches/`` only.

The real tokenizers come from the project's compressed fixtures (``fixtures/``); nothing skips.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Any

import pytest
from support import load_detokenizer, load_tokenizer

#: Where the memory bench leaves its rows for the terminal summary.
MEMORY_KEY = pytest.StashKey[list[dict[str, Any]]]()
#: The load average when the session started (other work on a shared machine skews timings).
LOAD_KEY = pytest.StashKey[tuple[float, float, float]]()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    """Collects ``bench_*.py`` under this folder, unless ``python_files`` already matches them."""
    if file_path.suffix != ".py" or not file_path.name.startswith("bench_"):
        return None
    patterns = parent.config.getini("python_files")
    if any(fnmatch.fnmatch(file_path.name, p) for p in patterns):
        return None
    if parent.session.isinitpath(file_path):
        return None  # named on the command line: pytest collects it itself
    return pytest.Module.from_parent(parent, path=file_path)


#: Run order of the bench modules: the memory bench leaves a fragmented heap behind, and the
#: batch bench many freed streams, both of which slowed later stream creation when run first.
ORDER = (
    "bench_step",
    "bench_prompt",
    "bench_derender",
    "bench_parsers",
    "bench_load",
    "bench_batch",
    "bench_streamset",
    "bench_memory",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Puts the benches in ``ORDER`` (stable; items outside this folder keep their places)."""
    here = Path(__file__).resolve().parent

    def rank(item: pytest.Item) -> int:
        path = Path(str(item.path)).resolve()
        if here not in path.parents or path.stem not in ORDER:
            return -1
        return ORDER.index(path.stem)

    ranked = [i for i in items if rank(i) >= 0]
    if ranked:
        slots = [k for k, i in enumerate(items) if rank(i) >= 0]
        for k, item in zip(slots, sorted(ranked, key=rank), strict=True):
            items[k] = item


def pytest_configure(config: pytest.Config) -> None:
    """Creates the list the memory bench appends to and notes the load average."""
    config.stash[MEMORY_KEY] = []
    config.stash[LOAD_KEY] = os.getloadavg()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Prints the resident memory of 10,000 live streams, per implementation."""
    rows = config.stash.get(MEMORY_KEY, [])
    if not rows:
        return
    terminalreporter.write_sep("-", "memory of live streams (RSS growth of the holding process)")
    for row in rows:
        terminalreporter.write_line(
            f"{row['impl']:<13} {row['streams']} streams ({row['tokenizer']}): "
            f"{row['rss_delta'] / 2**20:6.2f} MiB, {row['rss_per_stream']:5.0f} B/stream in a "
            f"fresh interpreter; {row['rss_per_stream_in_session']:5.0f} B/stream in this session"
        )


def pytest_benchmark_update_machine_info(
    config: pytest.Config, machine_info: dict[str, Any]
) -> None:
    """Records what the figures depend on: versions, CPU model, cores and the load at start."""
    import tokenizers

    try:
        import tokstream

        machine_info["tokstream_version"] = tokstream.__version__
    except ImportError:
        machine_info["tokstream_version"] = None
    machine_info["tokenizers_version"] = tokenizers.__version__
    machine_info["nproc"] = os.cpu_count()
    machine_info["cpu_model"] = cpu_model()
    machine_info["loadavg_start"] = config.stash.get(LOAD_KEY, None)


def pytest_benchmark_update_json(
    config: pytest.Config, benchmarks: Any, output_json: dict[str, Any]
) -> None:
    """Records the load average at the end: other work on a shared machine skews timings."""
    output_json["machine_info"]["loadavg_end"] = os.getloadavg()


def cpu_model() -> str | None:
    """The ``model name`` line of ``/proc/cpuinfo``, if there is one."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


@pytest.fixture(scope="session")
def memory_rows(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    """The rows printed in the terminal summary by ``pytest_terminal_summary``."""
    return request.config.stash[MEMORY_KEY]


@pytest.fixture(scope="session")
def get_tok() -> Any:
    """Loader of a real ``tokenizers.Tokenizer`` by folder name (cached for the session)."""
    return load_tokenizer


@pytest.fixture(scope="session")
def get_detok() -> Any:
    """Loader of a ``tokstream.Detokenizer`` by folder name (cached for the session)."""
    return load_detokenizer
