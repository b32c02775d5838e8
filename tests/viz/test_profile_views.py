"""The Profile page's tables on real samples: they agree with the SimResult (and its report) they come from."""

from __future__ import annotations

import json

import pytest

from ge_core.hardware import ProfileError, build_profile
from ge_core.hardware.loader import PROFILE_DIR
from ge_core.sim import UNITS, SimResult
from ge_core.viz import (
    cpu_reference,
    latency_by_node,
    output_comparison,
    profile_problems,
    profile_summary,
    profile_table,
    roofline_lines,
    roofline_points,
    top_ops,
    unit_order,
    unit_timeline,
    unit_totals,
)
from tests.viz.compiled import compiled, simulated

SAMPLES = ["densenet121", "resnet50", "bert_encoder_torch", "residual_block"]


@pytest.fixture(scope="module", params=SAMPLES)
def result(request: pytest.FixtureRequest) -> SimResult:
    return simulated(request.param)


def test_per_op_table_shares_and_the_report(result: SimResult) -> None:
    frame = profile_table(result)
    report = result.report()
    assert list(frame["node"]) == [op["node"] for op in report["ops"]]
    assert frame["share"].sum() == pytest.approx(1.0)
    assert frame["latency_us"].sum() == pytest.approx(result.total_us)
    with_bytes = frame[frame["bytes"] > 0]
    assert (with_bytes["intensity"] == with_bytes["flops"] / with_bytes["bytes"]).all()


def test_summary_top_operators_and_heat(result: SimResult) -> None:
    summary = profile_summary(result)
    assert summary["total_us"] == result.total_us and summary["kernels"] == len(result.ops)
    totals = unit_totals(result)
    assert summary["utilisation"] == pytest.approx(dict(zip(totals["unit"], totals["share"], strict=True)))
    top = top_ops(result, 5)
    assert len(top) == min(5, len(result.ops)) and list(top["rank"]) == list(range(1, len(top) + 1))
    assert list(top["latency_us"]) == sorted(top["latency_us"], reverse=True)
    assert top.iloc[0]["node"] == summary["slowest"]["node"] and top["cumulative_share"].iloc[-1] <= 1 + 1e-9
    heat = latency_by_node(result)
    assert sum(heat.values()) == pytest.approx(result.total_us) and set(heat) == {r.node for r in result.ops}


def test_gantt_rows_and_roofline(result: SimResult) -> None:
    gantt = unit_timeline(result)
    assert set(gantt["unit"]) <= set(unit_order()) == set(UNITS)
    assert (gantt["end_us"] >= gantt["start_us"]).all() and gantt["end_us"].max() <= result.total_us + 1e-9
    points, roof = roofline_points(result), roofline_lines(result)
    assert (points["attained_flops"] <= result.profile.peak_flops * (1 + 1e-9)).all()
    assert roof["attainable_flops"].max() == pytest.approx(result.profile.peak_flops)


def test_npu_against_cpu_in_fp16_mode() -> None:
    result = simulated("residual_block", "ascend910", "allow_fp32_to_fp16")
    assert result.precision_errors
    frame = output_comparison(result, cpu_reference(compiled("residual_block", "O3", "ascend910")))
    assert list(frame["output"]) == list(result.outputs)
    assert dict(zip(frame["output"], frame["rel_error"], strict=True)) == pytest.approx(result.precision_errors)
    assert frame["cpu_mean"].notna().all() and (frame["rel_error"] > 0).any()
    alone = output_comparison(result)  # no reference: the simulator's own errors, CPU columns empty
    assert list(alone["rel_error"]) == list(frame["rel_error"]) and alone["cpu_mean"].isna().all()


def test_exact_mode_compares_equal() -> None:
    frame = output_comparison(simulated("residual_block", precision="force_fp32"))
    assert (frame["rel_error"] == 0).all() and (frame["cpu_mean"] == frame["npu_mean"]).all()


def test_trace_opens_in_perfetto() -> None:
    trace = simulated("residual_block").trace()
    assert json.loads(json.dumps(trace))["traceEvents"]


def test_profile_problems_lists_every_bad_field_at_once() -> None:
    good = json.loads((PROFILE_DIR / "ascend910.json").read_text())
    assert profile_problems(good) == [] and profile_problems({"extends": "ascend310"}) == []
    bad = {**good, "cores": {**good["cores"], "ai_cores": 0, "clock_ghz": "fast", "turbo": True},
           "buffers_bytes": {**good["buffers_bytes"], "l0a": -1}}
    problems = profile_problems(bad, "mine.json")
    assert len(problems) == 4
    for field in ("cores.turbo", "cores.ai_cores", "cores.clock_ghz", "buffers_bytes.l0a"):
        assert sum(f"'{field}'" in p for p in problems) == 1
    with pytest.raises(ProfileError) as info:  # build_profile refuses with the first of them
        build_profile(bad, "mine.json")
    assert str(info.value).startswith(problems[0].split(" Known fields")[0])
    small = {**good, "buffers_bytes": {**good["buffers_bytes"], "l0a": 16}}
    assert any("double-buffered" in p for p in profile_problems(small))
    assert "must name a built-in profile" in profile_problems({"extends": "nope"})[0]
