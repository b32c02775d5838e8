"""The memory switches of `run` and `compile`: reuse off, strategy, alignment, copying Concats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import run_cli


def test_compile_prints_the_plan_and_the_switches_reach_it(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r.json"
    code, out, _ = run_cli(["compile", "sample:squeezenet", "--report", str(report)], capsys)
    assert code == 0
    assert "1.000x the lower bound" in out and "no-copy Concat(s)" in out
    assert json.loads(report.read_text())["memory"]["no_copy_concats"]
    code, out, _ = run_cli(["compile", "sample:squeezenet", "--disable-reuse-memory", "--report", str(report)],
                           capsys)
    assert code == 0 and "(no_reuse)" in out
    code, out, _ = run_cli(["compile", "sample:squeezenet", "--copy-concat", "--memory-strategy", "best_fit",
                            "--memory-alignment", "64", "--report", str(report)], capsys)
    memory = json.loads(report.read_text())["memory"]
    assert code == 0 and (memory["strategy"], memory["alignment"], memory["no_copy_concats"]) == ("best_fit", 64, [])


def test_run_on_a_plan_without_reuse(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["run", "sample:conv_bn_relu", "--opt-level", "O3", "--disable-reuse-memory"], capsys)
    assert code == 0 and "peak activations" in out


def test_unknown_strategy_exits_2_listing_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["compile", "sample:mlp", "--memory-strategy", "first_fit"], capsys)
    assert code == 2 and "perturbed_greedy" in err and "Traceback" not in err
