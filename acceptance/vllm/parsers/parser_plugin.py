"""pytest plugin of the parser-test step: stand-ins, our parser classes, then the verdict.

Loaded with ``-p parser_plugin`` before vLLM's test modules are imported. It installs the
stand-ins for torch and the GPU-only packages, puts the classes of ``tokstream_parsers`` in place
of vLLM's parsers, deselects the tests ``parser_expectations.NOT_APPLICABLE`` lists (naming
each), runs the rest, and compares each outcome with ``parser_expectations``. The session fails
on: an unexpected failure; a listed failure that passes; any skip; a test that ran without a
single answer from tokstream, or that built one of vLLM's own parser objects; a test file of the
staged directories neither run nor listed in ``NOT_APPLICABLE_FILES``; an entry that matches no
test. The verdict is printed as counts per file.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import tokstream_standins

tokstream_standins.install()

import tokstream_parsers  # noqa: E402
from parser_expectations import (  # noqa: E402
    CHECKED_THEN_INTERNAL,
    EXPECTED_FAILURES,
    NOT_APPLICABLE,
    NOT_APPLICABLE_FILES,
)

tokstream_parsers.install(
    {k: Path(v) for k, v in json.loads(Path("fallbacks.json").read_text()).items()}
)
# Loading a 150k-entry tokenizer takes about a second on the shared machine, and many tests
# load theirs in a function-scoped fixture: each name (and arguments) is loaded once. The
# tests read their tokenizer, none changes it (patch.object restores what it replaces).
tokstream_parsers.share_tokenizers()

#: The staged directories whose every test file is run or listed.
DIRECTORIES = ("tests/tool_parsers", "tests/reasoning")


def _base(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _match(nodeid: str, table: dict[str, str]) -> str | None:
    """The entry of ``table`` for ``nodeid``: its exact id, else its test or class or file."""
    if nodeid in table:
        return nodeid
    base = _base(nodeid)
    for key in table:
        if base == key or base.startswith(key + "::") or _file(nodeid) == key:
            return key
    return None


class Verdict:
    def __init__(self) -> None:
        self.outcomes: dict[str, str] = {}
        self.deselected: dict[str, str] = {}
        self.problems: list[str] = []
        self.collected: list[str] = []
        self.internal: dict[str, str] = {}
        self.messages: dict[str, str] = {}

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        keep, drop = [], []
        self.collected = [item.nodeid for item in items]
        for item in items:
            key = _match(item.nodeid, NOT_APPLICABLE)
            if key is not None:
                drop.append(item)
                self.deselected[item.nodeid] = NOT_APPLICABLE[key]
            else:
                keep.append(item)
        tables = (
            (NOT_APPLICABLE, "NOT_APPLICABLE"),
            (EXPECTED_FAILURES, "EXPECTED_FAILURES"),
            (CHECKED_THEN_INTERNAL, "CHECKED_THEN_INTERNAL"),
        )
        for table, label in tables:
            for key in table:
                if not any(_match(n, {key: ""}) for n in self.collected):
                    self.problems.append(f"{label} entry matches no test: {key}")
        run_files = {_file(n) for n in self.collected}
        for directory in DIRECTORIES:
            for path in sorted(Path(directory).glob("test_*.py")):
                name = str(path)
                if name in NOT_APPLICABLE_FILES and name in run_files:
                    self.problems.append(f"listed in NOT_APPLICABLE_FILES but run: {name}")
                elif name not in NOT_APPLICABLE_FILES and name not in run_files:
                    self.problems.append(f"neither run nor in NOT_APPLICABLE_FILES: {name}")
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep
        tokstream_standins.seal()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: Any) -> Any:
        calls, vllm = tokstream_parsers.CALLS, tokstream_parsers.VLLM_PARSERS
        yield
        outcome = self.outcomes.get(item.nodeid)
        if tokstream_parsers.CALLS == calls and outcome in ("passed", "internal"):
            self.problems.append(f"{outcome} without asking tokstream anything: {item.nodeid}")
        if tokstream_parsers.VLLM_PARSERS != vllm:
            self.problems.append(f"built one of vLLM's own parsers: {item.nodeid}")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if tokstream_parsers.PROBE_FINISH and report.failed and tokstream_parsers.PENDING:
            with open("pending.jsonl", "a") as f:
                f.write(json.dumps([report.nodeid, *tokstream_parsers.PENDING]) + "\n")
        if report.when == "setup":
            tokstream_parsers.PENDING.clear()
        previous = self.outcomes.get(report.nodeid)
        if report.failed:
            crash = getattr(report.longrepr, "reprcrash", None)
            message = str(getattr(crash, "message", report.longrepr))
            self.messages[report.nodeid] = message
            if previous is None and "NotServedError: " in message:
                # vLLM's internals asked for, after whatever the test checked before.
                self.outcomes[report.nodeid] = "internal"
                self.internal[report.nodeid] = message.split("NotServedError: ", 1)[1]
            else:
                self.outcomes[report.nodeid] = "failed"
        elif report.skipped and previous != "failed":
            self.outcomes[report.nodeid] = "skipped"
        elif report.when == "call" and previous is None:
            self.outcomes[report.nodeid] = "passed"

    def _verdict(self) -> tuple[dict[str, Counter[str]], list[str]]:
        per_file: dict[str, Counter[str]] = {}
        problems = list(self.problems)
        for nodeid, outcome in self.outcomes.items():
            counts = per_file.setdefault(_file(nodeid), Counter())
            failure = _match(nodeid, EXPECTED_FAILURES)
            internal = _match(nodeid, CHECKED_THEN_INTERNAL)
            if outcome == "passed" and failure is None and internal is None:
                counts["passed"] += 1
            elif outcome == "failed" and failure is not None:
                counts["expected failures"] += 1
            elif outcome == "internal" and internal is not None and failure is None:
                member = CHECKED_THEN_INTERNAL[internal].split(":", 1)[0]
                if f".{member} " in self.internal[nodeid]:
                    counts["checked, then internals"] += 1
                else:
                    problems.append(
                        f"asked for another internal than {member}: {nodeid}: "
                        f"{self.internal[nodeid][:120]}"
                    )
            elif outcome == "passed":
                problems.append(f"unexpected pass (remove its entry): {nodeid}")
            elif outcome == "internal":
                problems.append(
                    f"asked for vLLM's internals ({self.internal[nodeid][:100]}): {nodeid}"
                )
            elif outcome == "failed":
                message = " ".join(self.messages.get(nodeid, "").split())[:400]
                problems.append(f"unexpected failure: {nodeid}: {message}")
            else:
                problems.append(f"skipped (the step allows no skips): {nodeid}")
        for nodeid in self.deselected:
            per_file.setdefault(_file(nodeid), Counter())["not applicable"] += 1
        return per_file, problems

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        dump = os.environ.get("TOKSTREAM_PARSERS_OUTCOMES")
        if dump:  # for writing the expectations: every outcome, with its failure's message
            rows = [[n, o, self.messages.get(n, "")] for n, o in self.outcomes.items()]
            rows += [[n, "not applicable", r] for n, r in self.deselected.items()]
            Path(dump).write_text(json.dumps(rows, indent=0, ensure_ascii=False))
        problems = self._verdict()[1]
        ok = not problems and exitstatus in (0, 1) and self.outcomes
        session.exitstatus = 0 if ok else 1

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        tr = terminalreporter
        per_file, problems = self._verdict()
        tr.section("vLLM 0.33.0 parser tests on tokstream")
        tr.write_line(f"{'file':58} {'pass':>5} {'part':>5} {'xfail':>5} {'n/a':>5}")
        total: Counter[str] = Counter()
        for name in sorted(per_file):
            c = per_file[name]
            total += c
            tr.write_line(
                f"{name:58} {c['passed']:5d} {c['checked, then internals']:5d} "
                f"{c['expected failures']:5d} {c['not applicable']:5d}"
            )
        tr.write_line(
            f"{'total':58} {total['passed']:5d} {total['checked, then internals']:5d} "
            f"{total['expected failures']:5d} {total['not applicable']:5d}"
        )
        tr.write_line(f"files not applicable: {len(NOT_APPLICABLE_FILES)}")
        for name, reason in sorted(NOT_APPLICABLE_FILES.items()):
            tr.write_line(f"  {name}: {reason}")
        for problem in problems:
            tr.write_line(f"PROBLEM: {problem}", red=True, bold=True)
        verdict = "FAILED" if problems or not self.outcomes else "OK"
        tr.write_line(
            f"parser tests {verdict}: {len(self.outcomes)} run, {total['passed']} passed, "
            f"{total['checked, then internals']} passed until they asked for vLLM's internals, "
            f"{total['expected failures']} failed as expected, {len(self.deselected)} not "
            f"applicable, {len(NOT_APPLICABLE_FILES)} files not applicable, "
            f"{len(problems)} problems",
            bold=True,
        )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The files of ``NOT_APPLICABLE_FILES`` are not collected (some do not even import here)."""
    try:
        name = str(collection_path.relative_to(config.rootpath))
    except ValueError:
        return None
    return True if name in NOT_APPLICABLE_FILES else None


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(Verdict(), "tokstream-parser-verdict")
