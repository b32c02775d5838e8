"""Report how many of the listed conformance cases (tests/ops/conformance_passing.txt) ran and passed."""

from __future__ import annotations

from pathlib import Path

import pytest

CONFORMANCE = "tests/ops/test_conformance.py::test_supported_case["
PASSING_LIST = Path(__file__).with_name("conformance_passing.txt")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    ran = {r.nodeid[len(CONFORMANCE):-1]: r.outcome for key in ("passed", "failed")
           for r in terminalreporter.stats.get(key, []) if r.nodeid.startswith(CONFORMANCE) and r.when == "call"}
    if not ran:
        return
    listed = {line.split("#", 1)[0].strip() for line in PASSING_LIST.read_text().splitlines()} - {""}
    passed = sum(ran.get(name) == "passed" for name in listed)
    terminalreporter.write_line(f"conformance: {passed} of the {len(listed)} must-pass cases in {PASSING_LIST.name} "
                                f"passed ({sum(name in ran for name in listed)} ran)")
