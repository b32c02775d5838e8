"""msprof's op_summary CSV in both layouts, read into a simulator-shaped profile and set beside the simulation;
calibration on it lowers the per-kernel error. The fixtures: tests/sim/fixtures/make_op_summary.py."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import ge_core
from ge_core.cli.main import main
from ge_core.samples.registry import sample_bytes
from ge_core.sim import SimResult, simulate
from ge_core.sim.calibrate import calibrate, kernel_parts, latency, write_profile
from ge_core.sim.op_summary import OpSummaryError, measured_result, read_op_summary
from ge_core.sim.real_compare import match_tasks, per_op, per_op_error, per_type, totals
from ge_core.sim.tables import op_table, unit_timeline

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CURRENT = FIXTURES / "op_summary_squeezenet_current.csv"
OLDER = FIXTURES / "op_summary_squeezenet_older.csv"


@pytest.fixture(scope="module")
def squeezenet() -> tuple[ge_core.CompiledModel, SimResult]:
    compiled = ge_core.compile(sample_bytes("squeezenet"), opt_level="O3", hardware="ascend310p")
    return compiled, simulate(compiled, run=False)


@pytest.mark.parametrize(("path", "layout"), [(CURRENT, "current"), (OLDER, "older")])
def test_both_layouts_read_to_the_same_tasks(path: Path, layout: str) -> None:
    summary = read_op_summary(path)
    assert summary.layout == layout and len(summary.tasks) == 38
    assert summary.tasks["start_us"].iloc[0] == 0 and summary.tasks["start_us"].is_monotonic_increasing
    assert summary.tasks["block"].iloc[1] == 8 and summary.tasks["stream"].eq(5).all()
    assert summary.tasks["cube_us"].notna().all() and summary.tasks["mte2_us"].gt(0).any()
    assert summary.total_us == pytest.approx(read_op_summary(OLDER).total_us)


def test_the_last_inference_is_read_unless_one_is_asked_for() -> None:
    summary = read_op_summary(CURRENT)
    assert (summary.infer_ids, summary.infer_id) == ((1, 2), 2)
    first = read_op_summary(CURRENT, infer_id=1)
    assert first.total_us > summary.total_us  # the first run warms up
    with pytest.raises(OpSummaryError, match=r"no Infer ID 7.*Its Infer IDs: 1, 2"):
        read_op_summary(CURRENT, infer_id=7)


@pytest.mark.parametrize(("text", "message"), [
    ("Op Name,OP Type\nconv,Conv2D\n", "no column 'Task Duration\\(us\\)'"),
    ("Op Name,Task Duration(us)\nconv,12.5\nrelu,fast\n", "line 3, column 'Task Duration\\(us\\)': 'fast' is not a"),
    ("Op Name,Task Duration(us)\nconv,-1\n", "line 2, column 'Task Duration\\(us\\)': a negative duration"),
    ("", "is empty"),
    ("Op Name,Task Duration(us)\n", "has no task rows"),
])
def test_a_bad_file_is_refused_naming_file_line_and_column(text: str, message: str) -> None:
    with pytest.raises(OpSummaryError, match=f"op_summary 'bad.csv'.*{message}"):
        read_op_summary(text.encode(), "bad.csv")


def test_na_and_trailing_tabs_and_missing_times() -> None:
    text = "Op Name,OP Type,Task Duration(us),Block Dim,mac_time(us)\nconv,Conv2D,10.0\t,N/A,N/A\nrelu,Relu,2.0,8,\n"
    summary = read_op_summary(text.encode(), "t.csv")
    assert list(summary.tasks["start_us"]) == [0.0, 10.0]  # no start times: back to back
    assert math.isnan(summary.tasks["block"].iloc[0]) and summary.tasks["block"].iloc[1] == 8
    assert summary.layout == "older"


def test_the_measured_profile_has_the_simulators_shape(squeezenet: tuple[ge_core.CompiledModel, SimResult]) -> None:
    compiled, sim = squeezenet
    summary = read_op_summary(CURRENT)
    matched = match_tasks(summary, sim, compiled.graph)
    real = measured_result(summary, sim.profile, matched)
    assert real.measured and real.total_us == pytest.approx(summary.total_us)
    assert len(op_table(real)) == 38 and not unit_timeline(real).empty
    report = real.report()
    assert report["measured_from"] == CURRENT.name and len(report["ops"]) == 38
    assert {r.node for r in real.ops} >= {r.node for r in sim.ops}  # matched tasks carry our names


def test_tasks_match_our_kernels_by_name_then_type(squeezenet: tuple[ge_core.CompiledModel, SimResult]) -> None:
    compiled, sim = squeezenet
    summary = read_op_summary(OLDER)
    matched = match_tasks(summary, sim, compiled.graph)
    assert sorted(matched.values()) == sorted(r.node for r in sim.ops)  # every kernel once
    assert 0 not in matched  # GE's input Cast: no kernel of ours
    by_name = [i for i, n in matched.items() if summary.tasks["name"].iloc[i] == n]
    assert 0 < len(by_name) < len(matched)  # the rest by GE type (Conv2D is a FusedConv around a Conv) and order
    ops = per_op(summary, sim, matched)
    types = per_type(ops)
    assert types.iloc[0]["op_type"] == "FusedConv" and types["kernels"].sum() == len(sim.ops)
    t = totals(summary, sim, ops)
    assert t["matched_tasks"] == len(sim.ops) and t["ratio"] < 1  # the fixture is slower than the simulation


def test_the_fit_reproduces_every_simulated_kernel_at_the_profiles_parameters() -> None:
    compiled = ge_core.compile(sample_bytes("resnet50"), opt_level="O3", hardware="ascend310p")
    sim = simulate(compiled, run=False)
    p = sim.profile
    start = [0.0, 0.0, 0.0, p.overheads.kernel_launch_us]
    for row in sim.ops:
        units, tiles, ddr, setup = kernel_parts(row, p)
        assert latency(units, tiles, ddr, setup, start) == pytest.approx(row.latency_us, rel=1e-9), row.node


@pytest.mark.parametrize("path", [CURRENT, OLDER])
def test_calibration_lowers_the_per_kernel_error(path: Path, tmp_path: Path,
                                                 squeezenet: tuple[ge_core.CompiledModel, SimResult]) -> None:
    compiled, sim = squeezenet
    summary = read_op_summary(path)
    fit = calibrate(compiled, "ascend310p", summary, model="sample:squeezenet")
    assert fit.error_after < fit.error_before / 3
    assert fit.parameters()["overheads.kernel_launch_us"] == pytest.approx(3.5, abs=0.5)  # the fixture's truth
    written = write_profile(fit, tmp_path / "calibrated.json")
    data = json.loads(written.read_text())
    assert data["extends"] == "ascend310p" and data["calibration"]["fitted_on"] == path.name
    assert len(data["calibration"]["residuals"]) == len(fit.kernels)
    again = simulate(compiled, str(written), run=False)  # a calibrated profile is a profile like any other
    before = per_op_error(per_op(summary, sim, match_tasks(summary, sim, compiled.graph)))
    after = per_op_error(per_op(summary, again, match_tasks(summary, again, compiled.graph)))
    assert after == pytest.approx(fit.error_after, rel=1e-3) and after < before / 3
    assert again.profile.calibration["error_after"] == pytest.approx(fit.error_after, rel=1e-3)


def test_cli_profile_real_and_calibrate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mine.json"
    assert main(["profile", "sample:squeezenet", "--hardware", "ascend310p", "--real", str(OLDER),
                 "--calibrate", str(out), "--top", "3"]) == 0
    text = capsys.readouterr().out
    assert "measured: op_summary_squeezenet_older.csv (older layout)" in text
    assert "per op type" in text and "most wrong" in text and "trans_Cast_0" in text
    assert "calibrated on 37 kernels" in text and out.is_file()
    assert main(["profile", "sample:squeezenet", "--hardware", str(out), "--top", "1"]) == 0
    assert main(["profile", "sample:squeezenet", "--calibrate", str(out)]) == 2
    assert "--calibrate needs --real" in capsys.readouterr().err
