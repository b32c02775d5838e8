"""The Memory page's tables on real samples: they agree with the MemoryPlan (and the report) they come from."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

import ge_core
from ge_core.compiler import CompiledModel, plan_for
from ge_core.config import MemoryConfig
from ge_core.memory import plan_memory
from ge_core.samples import sample_bytes
from ge_core.viz import (
    allocation_table,
    device_totals,
    memory_switch_plans,
    memory_timeline,
    peak_of,
    peak_table,
    reference_lines,
    step_index,
    strategy_arenas,
    strategy_timelines,
)
from ge_core.viz.memory_views import RECTANGLE_COLUMNS, TIMELINE_COLUMNS
from tests.viz.compiled import compiled, config

CASES = [("densenet121", "ascend910"), ("resnet50", None), ("bert_encoder_torch", None), ("residual_block", None)]


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def model(request: pytest.FixtureRequest) -> CompiledModel:
    return compiled(request.param[0], "O3", request.param[1])


def test_timeline_peak_is_the_plans_lower_bound_and_tops_reach_the_arena(model: CompiledModel) -> None:
    plan = model.memory
    assert plan is not None
    frame = memory_timeline(plan)
    assert list(frame.columns) == TIMELINE_COLUMNS and len(frame) == len(plan.steps)
    assert frame["live_bytes"].max() == peak_of(plan)["live_bytes"] == plan.theory_min_bytes
    assert model.report["memory"]["theory_min_bytes"] == plan.theory_min_bytes
    assert frame["top_bytes"].max() == plan.arena_bytes and (frame["top_bytes"] >= frame["live_bytes"]).all()
    assert frame["is_peak"].sum() == 1 and frame.loc[frame["is_peak"], "step"].item() == peak_of(plan)["step"]
    lines = dict(zip(reference_lines(plan)["line"], reference_lines(plan)["bytes"], strict=True))
    assert (lines["peak"], lines["lower bound"], lines["arena"], lines["no reuse"]) == (
        plan.theory_min_bytes, plan.theory_min_bytes, plan.arena_bytes, plan.no_reuse_bytes)


def test_rectangles_cover_every_allocation_with_its_hover_data(model: CompiledModel) -> None:
    plan = model.memory
    assert plan is not None
    frame = allocation_table(plan)
    assert list(frame.columns) == RECTANGLE_COLUMNS
    assert sorted(frame["tensor"]) == sorted(plan.allocations)  # owners, concat parts and views, once each
    rows = {r.tensor: r for r in frame.itertuples()}
    for r in frame.itertuples():
        assert (r.offset, r.size) == (plan.allocations[r.tensor].offset, plan.allocations[r.tensor].size)
        assert r.producer == model.graph.producer(r.tensor).name
        assert set(filter(None, r.consumers.split(", "))) == {u.name for u in model.graph.users(r.tensor)}
        assert r.logical_bytes == model.graph.desc(r.tensor).nbytes <= r.size
        if r.kind == "view":
            assert plan.aliases[r.tensor] == r.inside
        if r.inside:  # drawn inside the rectangle of what holds it
            outer = rows[r.inside]
            assert outer.offset <= r.offset and r.end <= outer.end
            assert outer.first_step <= r.first_step and r.last_step <= outer.last_step
    kinds = set(frame["kind"])
    assert ("view" in kinds) == bool(plan.aliases) and ("concat part" in kinds) == bool(plan.no_copy_concats)


def test_the_tensors_alive_at_the_peak_make_the_peak(model: CompiledModel) -> None:
    plan = model.memory
    assert plan is not None
    frame = peak_table(plan)
    assert frame["size"].sum() == plan.theory_min_bytes and frame["share"].sum() == pytest.approx(1.0)
    assert list(frame["size"]) == sorted(frame["size"], reverse=True)
    step = peak_of(plan)["step"]
    assert ((frame["first_step"] <= step) & (step <= frame["last_step"])).all()


def test_a_step_selects_its_node_and_back(model: CompiledModel) -> None:
    plan = model.memory
    assert plan is not None
    index = step_index(plan)
    assert list(index.nodes) == [n.name for n in model.graph.nodes]
    assert all(index.step_of[node] == i for i, node in enumerate(index.nodes))
    node = model.graph.nodes[len(model.graph.nodes) // 2]
    assert set(node.outputs) <= set(index.tensors_of(node.name))
    assert all(index.producer[t] == node.name for t in node.outputs)


def test_device_bytes_show_the_padding_of_hardware_formats() -> None:
    model = compiled("densenet121", "O3", "ascend910")
    plan = model.memory
    assert plan is not None
    totals = device_totals(plan, model.graph)
    assert totals["device_bytes"] > totals["logical_bytes"] and totals["padding_bytes"] > 0  # NC1HWC0 pads C
    frame = allocation_table(plan, model.graph)
    assert "NC1HWC0" in set(frame["format"]) and (frame["device_bytes"] >= frame["logical_bytes"]).all()
    owners = frame[frame["kind"] != "view"]
    assert owners["device_bytes"].sum() == totals["device_bytes"]
    assert owners["logical_bytes"].sum() == totals["logical_bytes"]
    assert "device_bytes" in peak_table(plan, model.graph).columns


def test_each_strategys_arena_and_series() -> None:
    model = compiled("densenet121", "O3", "ascend910")
    plan = model.memory
    assert plan is not None
    arenas = strategy_arenas(plan)
    assert dict(zip(arenas["key"], arenas["arena_bytes"], strict=True)) == plan.strategies
    assert list(arenas.loc[arenas["chosen"], "key"]) == [plan.strategy]
    keys = ["best_fit", "greedy_by_size, no-copy concat", plan.strategy]
    series = strategy_timelines(model, keys)
    for key, rows in series.groupby("strategy"):
        assert rows["top_bytes"].max() == plan.strategies[str(key)]
        assert (rows["live_bytes"] <= rows["top_bytes"]).all()
    assert set(series["strategy"]) == set(keys)


def test_plan_for_replans_without_touching_the_compiled_model() -> None:
    model = compiled("densenet121", "O3", "ascend910")
    plan = model.memory
    assert plan is not None
    base = model.config.memory
    assert plan_for(model, base) is plan
    order = [n.name for n in model.graph.nodes]
    assert plan_for(model, replace(base, reuse=False)).arena_bytes == plan.no_reuse_bytes
    best_fit = plan_for(model, replace(base, strategy="best_fit", alignment=32))
    assert best_fit.arena_bytes == plan_memory(model.graph, strategy="best_fit", alignment=32).arena_bytes
    plan_for(model, replace(base, order="memory_aware"))
    assert [n.name for n in model.graph.nodes] == order and model.memory is plan


def test_plan_for_a_memory_aware_compile_replans_in_the_passes_order() -> None:
    aware = ge_core.compile(sample_bytes("shufflenet"), config("shufflenet", memory_order="memory_aware"))
    graph_order = ge_core.compile(sample_bytes("shufflenet"), config("shufflenet"))
    assert aware.memory is not None and graph_order.memory is not None
    assert aware.memory.theory_min_bytes < graph_order.memory.theory_min_bytes  # the order helps here
    again = plan_for(aware, MemoryConfig())
    assert (again.arena_bytes, again.theory_min_bytes) == (graph_order.memory.arena_bytes,
                                                           graph_order.memory.theory_min_bytes)
    assert [s.node for s in again.steps] == [n.name for n in graph_order.graph.nodes]


def test_switch_table_rows_are_the_plans_of_each_switch() -> None:
    model = compiled("residual_block", "O3", None)
    plan = model.memory
    assert plan is not None
    frame = memory_switch_plans(model)
    current = frame.iloc[0]
    assert (current["switch"], current["arena_bytes"], current["delta_bytes"]) == ("current", plan.arena_bytes, 0)
    reuse = frame[frame["switch"] == "reuse"].iloc[0]
    assert reuse["arena_bytes"] == plan.no_reuse_bytes
    assert set(frame["switch"]) == {"current", "strategy", "reuse", "no_copy_concat", "order", "alignment"}
    assert (frame["delta_bytes"] == frame["arena_bytes"] - plan.arena_bytes).all()
    row = frame[frame["switch"] == "alignment"].iloc[0]
    again = plan_for(model, MemoryConfig.from_json(json.loads(row["config"])))
    assert again.arena_bytes == row["arena_bytes"]
