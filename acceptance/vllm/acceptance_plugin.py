"""pytest plugin of the acceptance stage: stand-ins first, then the expectations, then the verdict.

Loaded with ``-p plugin`` before vLLM's test modules are imported. It installs the stand-ins for
torch and the GPU-only packages, deselects the tests of ``expectations.NOT_APPLICABLE`` (naming
each), runs the rest, and at the end compares each outcome with ``expectations``: an unexpected
failure, an unexpected pass, any skip, an HTTP-less test that is not listed, or a stale entry
makes the session fail. The verdict is printed as counts.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import tokstream_standins

tokstream_standins.install()

from expectations import EXPECTED_FAILURES, NOT_APPLICABLE  # noqa: E402

#: The fixtures of vLLM's test files that start a server: a test using one talks HTTP.
SERVER_FIXTURES = frozenset({"server", "parser_server", "harmony_server", "harmony_default_server"})


def _base(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


def _not_applicable(nodeid: str) -> str | None:
    base = _base(nodeid)
    for key, reason in NOT_APPLICABLE.items():
        if base == key or base.startswith(key + "::"):
            return reason
    return None


class Verdict:
    def __init__(self) -> None:
        self.outcomes: dict[str, str] = {}
        self.deselected: dict[str, str] = {}
        self.problems: list[str] = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        keep, drop = [], []
        for item in items:
            reason = _not_applicable(item.nodeid)
            http = bool(SERVER_FIXTURES & set(item.fixturenames))
            if reason is not None:
                drop.append(item)
                self.deselected[item.nodeid] = reason
            elif http:
                keep.append(item)
            else:
                self.problems.append(f"not HTTP and not in NOT_APPLICABLE: {item.nodeid}")
        names = {item.nodeid for item in items}
        bases = {_base(n) for n in names}
        for key in NOT_APPLICABLE:
            if key not in bases and not any(b.startswith(key + "::") for b in bases):
                self.problems.append(f"NOT_APPLICABLE entry matches no test: {key}")
        for key in EXPECTED_FAILURES:
            if key not in names:
                self.problems.append(f"EXPECTED_FAILURES entry matches no test: {key}")
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep
        # Everything vLLM needs is imported now: a placeholder called from here on is a bug.
        tokstream_standins.seal()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        previous = self.outcomes.get(report.nodeid)
        if report.failed:
            self.outcomes[report.nodeid] = "failed"
        elif report.skipped and previous != "failed":
            self.outcomes[report.nodeid] = "skipped"
        elif report.when == "call" and previous is None:
            self.outcomes[report.nodeid] = "passed"

    def _verdict(self) -> tuple[Counter[str], list[str]]:
        counts: Counter[str] = Counter()
        problems = list(self.problems)
        for nodeid, outcome in self.outcomes.items():
            expected = EXPECTED_FAILURES.get(nodeid)
            if outcome == "passed" and expected is None:
                counts["passed"] += 1
            elif outcome == "failed" and expected is not None:
                counts["expected failures"] += 1
            elif outcome == "passed":
                problems.append(f"unexpected pass (remove it from EXPECTED_FAILURES): {nodeid}")
            elif outcome == "failed":
                problems.append(f"unexpected failure: {nodeid}")
            else:
                problems.append(f"skipped (the stage allows no skips): {nodeid}")
        counts["not applicable"] = len(self.deselected)
        return counts, problems

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        problems = self._verdict()[1]
        if problems or exitstatus not in (0, 1):
            session.exitstatus = 1
        elif not self.outcomes:
            session.exitstatus = 1
        else:
            # Failures that were all expected are a pass of the stage.
            session.exitstatus = 0

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        tr = terminalreporter
        counts, problems = self._verdict()
        tr.section("vLLM 0.33.0 derender tests on tokstream")
        by_reason = Counter(self.deselected.values())
        tr.write_line(f"not applicable, deselected: {len(self.deselected)}")
        for reason, n in by_reason.most_common():
            tr.write_line(f"  {n:3d}  {reason}")
        failures = Counter(
            EXPECTED_FAILURES[n] for n, o in self.outcomes.items() if n in EXPECTED_FAILURES
        )
        tr.write_line(f"expected failures: {counts['expected failures']}")
        for reason, n in failures.most_common():
            tr.write_line(f"  {n:3d}  {reason}")
        for problem in problems:
            tr.write_line(f"PROBLEM: {problem}", red=True, bold=True)
        verdict = "FAILED" if problems or not self.outcomes else "OK"
        tr.write_line(
            f"acceptance {verdict}: {len(self.outcomes)} HTTP tests run, {counts['passed']} "
            f"passed, {counts['expected failures']} failed as expected, "
            f"{len(self.deselected)} not applicable, {len(problems)} problems",
            bold=True,
        )


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(Verdict(), "tokstream-acceptance-verdict")
