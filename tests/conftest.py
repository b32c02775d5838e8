"""Suite-wide options: the fuzzer's size (`--fuzz-cases N`, `--fuzz-seed S`)."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fuzz", "the structured fuzzer (tests/fuzz)")
    group.addoption("--fuzz-cases", type=int, default=240, help="mutants per run (default 240; thousands locally)")
    group.addoption("--fuzz-seed", type=int, default=0, help="first mutant's seed (default 0)")
