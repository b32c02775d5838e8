"""Suite-wide setup: the fuzzer's size (`--fuzz-cases N`, `--fuzz-seed S`), and a compile cache of the
suite's own (the CLI caches compiles by default; tests never write into the user's cache folder) that keeps
every compile: whether an entry pays is judged on timings, and what tests check of hits must not hang on
them (tests/offline/test_cache.py judges with keep_all=False)."""

from __future__ import annotations

import os
import tempfile

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fuzz", "the structured fuzzer (tests/fuzz)")
    group.addoption("--fuzz-cases", type=int, default=240, help="mutants per run (default 240; thousands locally)")
    group.addoption("--fuzz-seed", type=int, default=0, help="first mutant's seed (default 0)")


def pytest_configure(config: pytest.Config) -> None:
    if "GE_CACHE_DIR" not in os.environ:  # each xdist worker gets a folder of its own, gone with the run
        os.environ["GE_CACHE_DIR"] = tempfile.mkdtemp(prefix="ge_test_cache_")
    os.environ.setdefault("GE_CACHE_KEEP", "all")
