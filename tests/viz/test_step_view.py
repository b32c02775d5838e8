"""The Graph page's data for one pass: stepper, before/after drawings within the budget, picker, inspector."""

from __future__ import annotations

import functools
import re

import pytest

import ge_core
from ge_core.compiler import CompiledModel
from ge_core.samples.registry import DEFAULT_SAMPLE, sample_bytes
from ge_core.viz.node_index import SEP
from ge_core.viz.node_picker import REMOVED_TAG, inspect_node, node_choices
from ge_core.viz.pass_steps import graphs_around, pass_steps
from ge_core.viz.step_view import FOCUS_AROUND, FOCUS_CHANGES, ViewOptions, step_data
from tests.viz.graphs import light_densenet

DOT_NODE = re.compile(r"^\s+(?:op|in|out|box)_[0-9a-f]{12}(?:_\d+)? \[", re.MULTILINE)


@functools.cache
def compiled(name: str = DEFAULT_SAMPLE) -> CompiledModel:
    return ge_core.compile(sample_bytes(name), opt_level="O3")


def record_index(c: CompiledModel, name: str) -> int:
    return next(i for i, r in enumerate(c.records) if r.name == name)


def test_steps_hide_unchanged_passes_and_label_them() -> None:
    c = compiled()
    steps = pass_steps(c.records)
    changed = pass_steps(c.records, changed_only=True)
    assert len(steps) == len(c.records) and 0 < len(changed) < len(steps)
    assert all(s.changed for s in changed) and [s.index for s in steps] == list(range(len(c.records)))
    fold = changed[0]
    assert fold.label == f"{fold.index + 1} · {fold.name}: {fold.nodes_before} → {fold.nodes_after} nodes"
    assert steps[0].label.endswith("unchanged") or steps[0].changed


def test_graphs_around_a_pass_are_the_snapshots_on_either_side() -> None:
    c = compiled()
    before, after = graphs_around(c.input_graph, c.records, 0)
    assert before is c.input_graph and after is c.records[0].snapshot
    i = record_index(c, "BatchNormFoldPass")
    before, after = graphs_around(c.input_graph, c.records, i)
    assert before is c.records[i - 1].snapshot and len(before) - len(after) == 2


def test_a_changed_pass_gets_two_drawings_sharing_the_budget() -> None:
    c = compiled()
    i = record_index(c, "BatchNormFoldPass")
    data = step_data(*graphs_around(c.input_graph, c.records, i), ViewOptions(), pass_name="BatchNormFoldPass")
    assert data.before is not None and data.before.title == "Before BatchNormFoldPass"
    assert set(data.diff.removed) == {"bn1", "bn2"} and data.status["bn1"] == "removed"
    assert '"#f8c1c1"' in data.before.dot and '"#f8c1c1"' not in data.after.dot  # removed: red, before only
    assert data.after.fused == () and data.seconds > 0
    unchanged = step_data(c.input_graph, c.input_graph.copy(), ViewOptions())
    assert unchanged.before is None and unchanged.diff.empty and '"#f6b26b"' in unchanged.after.dot  # categories


def test_focus_on_changes_and_around_the_selection() -> None:
    c = compiled("transformer_encoder")
    i = record_index(c, "GeluFusionPass")
    before, after = graphs_around(c.input_graph, c.records, i)
    data = step_data(before, after, ViewOptions(focus=FOCUS_CHANGES, depth=1))
    assert data.after.nodes < data.after.total and "changed nodes" in data.after.focus_note
    name = after.nodes[2].name
    around = step_data(before, after, ViewOptions(focus=FOCUS_AROUND, depth=1, selected=name))
    assert around.after.nodes <= 4 and name in around.after.focus_note
    unpicked = step_data(before, after, ViewOptions(focus=FOCUS_AROUND))
    assert unpicked.after.nodes == unpicked.after.total and "Pick a node" in unpicked.after.focus_note


def test_clickable_renderer_gives_an_echarts_option_per_side() -> None:
    c = compiled()
    i = record_index(c, "ConvActivationFusionPass")
    data = step_data(*graphs_around(c.input_graph, c.records, i), ViewOptions(renderer="echarts", expand_all=True))
    assert data.before is not None and data.after.chart is not None and data.after.dot == ""
    series = data.after.chart["series"][0]
    assert [d["name"] for d in series["data"]] == list(data.after.items) and data.after.height >= 320
    assert f"relu1{SEP}conv1" in data.after.items and "relu1" in data.after.fused


def test_picker_and_inspector_span_both_sides_of_the_pass() -> None:
    c = compiled()
    i = record_index(c, "ConvActivationFusionPass")
    before, after = graphs_around(c.input_graph, c.records, i)
    choices = node_choices(after, before)
    assert choices["relu1"] == "FusedConv · relu1" and choices[f"relu1{SEP}conv1"] == f"Conv · relu1{SEP}conv1"
    assert choices["conv1"] == f"Conv · conv1 ({REMOVED_TAG})"
    assert list(node_choices(after, before, "fusedconv")) == ["relu1", "relu2"]
    data = step_data(before, after, ViewOptions())
    fused = inspect_node(before, after, "relu1", data.diff)
    assert fused is not None and fused.side == "after" and fused.status == "changed" and fused.details.fused
    assert {ch.kind for ch in fused.changes} >= {"op", "body"}
    gone = inspect_node(before, after, "conv1", data.diff)
    assert gone is not None and gone.side == "before" and gone.status == "removed"
    assert inspect_node(before, after, "no such node") is None


@pytest.mark.parametrize("renderer", ["dot", "echarts"])
def test_densenet121_never_sends_more_than_the_budget(renderer: str) -> None:
    g = light_densenet()
    c = ge_core.compile(g, opt_level="O1")  # constant folding: 1,746 -> 668 nodes
    before, after = graphs_around(c.input_graph, c.records, record_index(c, "ConstantFoldingPass"))
    data = step_data(before, after, ViewOptions(renderer=renderer))
    assert data.before is not None and data.before.total == 1746
    assert data.before.shown + data.after.shown <= 1500
    assert "ConstantOfShape" in data.before.note
    if renderer == "dot":
        assert len(DOT_NODE.findall(data.before.dot)) == data.before.shown
    else:
        assert data.before.chart is not None and len(data.before.chart["series"][0]["data"]) <= 750
