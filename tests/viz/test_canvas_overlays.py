"""Overlays: per-node values from what ge_core computes, on node ids that exist, in the side panel too."""

from __future__ import annotations

import pytest

import ge_core
from ge_core.ir import Graph
from ge_core.samples.registry import sample_bytes
from ge_core.viz import (
    Overlay,
    canvas_graph,
    canvas_graphs,
    category_overlay,
    change_overlay,
    diff_graphs,
    fusion_group_overlay,
    graphs_around,
    latency_overlay,
    memory_overlay,
    node_data,
)
from ge_core.viz.diff_style import CATEGORY_COLOURS, DIFF_FILL
from ge_core.viz.memory import tensor_lives
from ge_core.viz.tables import format_bytes


@pytest.fixture(scope="module")
def compiled() -> ge_core.CompiledModel:
    return ge_core.compile(sample_bytes("residual_block"), opt_level="O3")


def every_name(graph: Graph) -> set[str]:
    """Top-level and body node names."""
    names = set()
    for node in graph.nodes:
        names.add(node.name)
        if node.body is not None:
            names |= every_name(node.body)
    return names


def attr(graph_json: dict, node: str, key: str) -> str | None:  # type: ignore[type-arg]
    item = next(n for n in graph_json["nodes"] if n["id"] == node)
    return next((a["value"] for a in item["attrs"] if a["key"] == key), None)


def test_category_colours_every_node_by_its_fusion_category(compiled: ge_core.CompiledModel) -> None:
    for graph in (compiled.input_graph, compiled.graph):
        overlay = category_overlay(graph)
        assert set(overlay.values) == {n.name for n in graph.nodes}
        data = node_data(overlay)
        conv = next(n.name for n in graph.nodes if n.op_type in ("Conv", "FusedConv"))
        assert data["results"][conv] == {"value": "cube", "bgColor": CATEGORY_COLOURS[ge_core.ops.Category.CUBE],
                                         "textColor": "#000000"}  # labels always black: legible on any fill
        assert "gradient" not in data and "thresholds" not in data


def test_change_marks_the_nodes_of_its_side(compiled: ge_core.CompiledModel) -> None:
    for i, record in enumerate(compiled.records):
        if not record.changed:
            continue
        before, after = graphs_around(compiled.input_graph, compiled.records, i)
        diff = diff_graphs(before, after)
        old, new = change_overlay(diff, "before"), change_overlay(diff, "after")
        assert set(old.values) <= {n.name for n in before.nodes}
        assert set(new.values) <= {n.name for n in after.nodes}
        assert set(old.values) == {*diff.removed, *diff.changed} and set(new.values) == {*diff.added, *diff.changed}
        assert all(node_data(new)["results"][n]["bgColor"] == DIFF_FILL[diff.status(n)] for n in new.values)


def test_fusion_groups_name_the_fused_node_each_original_ended_in(compiled: ge_core.CompiledModel) -> None:
    decisions = [d for r in compiled.records for d in r.decisions]
    overlay = fusion_group_overlay(compiled.graph, decisions)
    assert set(overlay.values) <= every_name(compiled.graph) | {n.name for n in compiled.input_graph.nodes}
    fused = [n for n in compiled.graph.nodes if n.body is not None]
    assert fused
    for node in fused:
        assert overlay.values[node.name] == node.name
        assert all(overlay.values[b] == node.name for b in every_name(node.body))  # type: ignore[arg-type]
    for d in decisions:
        if d.accepted:
            assert all(n in overlay.values for n in d.nodes)
    groups = set(overlay.values.values())
    assert groups <= {n.name for n in compiled.graph.nodes}
    assert len({overlay.colours[g] for g in groups}) == min(len(groups), 12)  # neighbours differ in colour
    unfused = {n.name for n in compiled.graph.nodes if n.body is None} - {
        n for d in decisions if d.accepted for n in d.nodes}
    assert not unfused & set(overlay.values)  # unfused ops keep the canvas's own colour


def test_memory_counts_the_arena_bytes_of_each_nodes_outputs(compiled: ge_core.CompiledModel) -> None:
    plan = compiled.memory
    assert plan is not None
    by_bytes, by_steps = memory_overlay(compiled.graph, plan), memory_overlay(compiled.graph, plan, "steps")
    assert set(by_bytes.values) == set(by_steps.values) and set(by_bytes.values) <= {n.name for n in compiled.graph}
    lives = {life.tensor: life for life in tensor_lives(plan)}
    for node in compiled.graph.nodes:
        mine = [lives[t] for t in node.outputs if t in lives]
        if mine:
            assert by_bytes.values[node.name] == sum(life.size for life in mine)
            assert by_steps.values[node.name] == max(life.last_step - life.first_step + 1 for life in mine)
        else:
            assert node.name not in by_bytes.values  # a view owns no bytes
    data = node_data(by_bytes)
    assert data["gradient"][0]["stop"] == 0 and data["gradient"][-1]["stop"] == 1


def test_latency_is_the_simulated_microseconds_per_kernel(compiled: ge_core.CompiledModel) -> None:
    sim = ge_core.simulate(compiled)
    overlay = latency_overlay(sim)
    assert overlay.values == {row.node: row.latency_us for row in sim.ops}
    assert set(overlay.values) <= {n.name for n in compiled.graph.nodes}
    assert overlay.unit == "µs"


def test_overlays_show_in_the_side_panel_as_text(compiled: ge_core.CompiledModel) -> None:
    assert compiled.memory is not None
    memory = memory_overlay(compiled.graph, compiled.memory)
    latency = latency_overlay(ge_core.simulate(compiled))
    data = canvas_graph(compiled.graph, "g", overlays={"memory": memory, "latency": latency})
    node, size = next(iter(memory.values.items()))
    assert attr(data, node, "memory (bytes)") == format_bytes(int(size))
    kernel, us = next(iter(latency.values.items()))
    assert attr(data, kernel, "simulated latency (µs)") == f"{us:.4g} µs"
    for graph in canvas_graphs(compiled.graph, "g", overlays={"memory": memory}):
        ids = {n["id"] for n in graph["nodes"]}
        assert all(attr(graph, n, "memory (bytes)") is None for n in ids - set(memory.values))


def test_thresholds_replace_the_gradient_when_given() -> None:
    overlay = Overlay("size", {"a": 1, "b": 50}, "bytes", thresholds=((10, "#00ff00"), (100, "#ff0000")))
    data = node_data(overlay)
    assert data["thresholds"] == [{"value": 10, "bgColor": "#00ff00", "textColor": "#000000"},
                                  {"value": 100, "bgColor": "#ff0000", "textColor": "#000000"}]
    assert "gradient" not in data
    assert overlay.text("a") == "1 B" and overlay.text("zz") is None
    assert Overlay("steps", {"a": 3}, "steps").text("a") == "3 steps"
