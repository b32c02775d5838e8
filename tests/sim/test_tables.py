"""Chart data for the UI: per-op table, per-unit timeline, roofline points and the roof."""

from __future__ import annotations

import pytest

import ge_core
from ge_core.samples.registry import sample_bytes
from ge_core.sim import UNITS, SimResult, simulate
from ge_core.sim.tables import OP_COLUMNS, op_table, roofline_lines, roofline_points, unit_timeline, unit_totals


@pytest.fixture(scope="module")
def result() -> SimResult:
    return simulate(ge_core.compile(sample_bytes("residual_block"), opt_level="O3"), "ascend910b", run=False)


def test_op_table_has_a_row_per_kernel(result: SimResult) -> None:
    table = op_table(result)
    assert list(table.columns) == OP_COLUMNS and len(table) == len(result.ops)
    assert (table["latency_us"] >= table["floor_us"]).all()
    assert table["end_us"].max() == pytest.approx(result.total_us)


def test_unit_timeline_rows_lie_inside_their_kernel(result: SimResult) -> None:
    timeline = unit_timeline(result)
    assert set(timeline["unit"]) <= set(UNITS) and "cube" in set(timeline["unit"])
    ends = {r.node: r.end_us for r in result.ops}
    assert all(row.end_us <= ends[row.node] + 1e-9 for row in timeline.itertuples())


def test_roofline_points_sit_under_the_roof(result: SimResult) -> None:
    points = roofline_points(result)
    p = result.profile
    assert len(points) > 0
    for row in points.itertuples():
        assert row.attained_flops <= min(p.peak_flops, row.intensity * p.memory_bandwidth) * (1 + 1e-9)
    roof = roofline_lines(result)
    assert roof["attainable_flops"].max() == pytest.approx(p.peak_flops)
    assert roof["intensity"].is_monotonic_increasing


def test_unit_totals(result: SimResult) -> None:
    totals = unit_totals(result)
    assert list(totals["unit"]) == list(UNITS)
    assert (totals["share"] <= 1.0 + 1e-9).all()
