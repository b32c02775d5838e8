"""The structured fuzzer: seeded mutants of real sample models through inspect, run and compile O3 --dump-dir
(tests/fuzz/runner.py says what each outcome must be). Split into shards so pytest-xdist runs them side by
side; `--fuzz-cases N` and `--fuzz-seed S` size it (thousands locally: `python -m tests.fuzz.runner`)."""

from __future__ import annotations

import pytest

from tests.fuzz.runner import run_cases, summary

SHARDS = 4


@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_mutant_ends_cleanly(shard: int, request: pytest.FixtureRequest) -> None:
    cases, first = int(request.config.getoption("--fuzz-cases")), int(request.config.getoption("--fuzz-seed"))
    seeds = range(first + shard, first + cases, SHARDS)
    outcomes = run_cases(seeds)
    findings = [f"seed {o.seed} ({o.mutation}): {f}" for o in outcomes for f in o.findings]
    print(summary(outcomes))
    assert findings == [], "\n".join(findings)
