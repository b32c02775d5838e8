"""diff_graphs: what a pass added, removed and changed, matched by node name."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ge_core.viz.graph_diff import ADDED, CHANGED, REMOVED, NodeChange, diff_graphs, same_value
from tests.viz.graphs import conv_net, f32, fused_net


def kinds(changes: tuple[NodeChange, ...]) -> set[str]:
    return {c.kind for c in changes}


def test_identical_graphs_have_an_empty_diff() -> None:
    g = conv_net()
    diff = diff_graphs(g, g.copy())
    assert diff.empty and diff.rows() == [] and diff.summary().startswith("0 added, 0 removed, 0 changed")


def test_added_removed_and_changed_nodes_with_what_changed() -> None:
    before = conv_net()
    after = before.copy()
    after.node("conv1").attrs["pads"] = [0, 0, 0, 0]  # attribute
    after.set_desc("c", f32(1, 4, 6, 6))  # output shape
    after.replace_all_uses("n", "c")  # relu1 rewired around bn1
    after.erase(after.node("bn1"))
    after.add_node("Tanh", ["r"], ["t"], name="tanh", descs=[f32(1, 4, 8, 8)])
    after.set_outputs(["y", "z", "t"])
    diff = diff_graphs(before, after)
    assert diff.added == ("tanh",) and diff.removed == ("bn1",)
    assert set(diff.changed) == {"conv1", "relu1"}
    assert kinds(diff.changed["conv1"]) == {"attr", "shape"}
    attr = next(c for c in diff.changed["conv1"] if c.kind == "attr")
    assert (attr.what, attr.before, attr.after) == ("pads", "[1, 1, 1, 1]", "[0, 0, 0, 0]")
    shape = next(c for c in diff.changed["conv1"] if c.kind == "shape")
    assert (shape.what, shape.before, shape.after) == ("output 0 'c'", "[1,4,8,8]", "[1,4,6,6]")
    assert [(c.kind, c.before, c.after) for c in diff.changed["relu1"]] == [("inputs", "n", "c")]
    assert [diff.status(n) for n in ("tanh", "bn1", "conv1", "pool")] == [ADDED, REMOVED, CHANGED, ""]
    rows = diff.rows()
    assert {"node": "tanh", "change": "added", "what": "", "before": "",
            "after": "%t = Tanh(%r) : f32[1,4,8,8]  # tanh"} in rows
    assert len(rows) == 5 and "graph outputs renamed" in diff.summary()


def test_dtype_format_and_constant_values_are_changes() -> None:
    before = conv_net()
    after = before.copy()
    after.set_desc("z", after.desc("z").with_dtype("float16"))
    after.set_desc("y", replace(after.desc("y"), format="NC1HWC0"))
    after.constants["W"] = np.full((4, 3, 3, 3), 2.0, np.float32)  # folded weights, same name
    diff = diff_graphs(before, after)
    assert kinds(diff.changed["sig"]) == {"dtype"}
    assert [(c.kind, c.before, c.after) for c in diff.changed["pool"]] == [("format", "ND", "NC1HWC0")]
    values = diff.changed["conv1"]
    assert [(c.kind, c.what) for c in values] == [("values", "input 1 'W'")] and "new values" in values[0].after


def test_equal_constant_values_under_a_new_array_are_no_change() -> None:
    before = conv_net()
    after = before.copy()
    after.constants["W"] = before.constants["W"].copy()
    assert diff_graphs(before, after).empty


def test_fusion_shows_op_attrs_inputs_and_body() -> None:
    before = conv_net()
    before.replace_all_uses("n", "c")
    before.erase(before.node("bn1"))
    diff = diff_graphs(before, fused_net())
    assert diff.removed == ("conv1",) and diff.added == ()
    assert kinds(diff.changed["relu1"]) == {"op", "attr", "inputs", "body"}
    body = next(c for c in diff.changed["relu1"] if c.kind == "body")
    assert body.after == "Conv conv1 → Relu relu1"


def test_same_value_copes_with_arrays_lists_and_types() -> None:
    a = np.arange(4)
    assert same_value(a, a.copy()) and not same_value(a, a.astype(np.float32))
    assert same_value([1, [2, a]], [1, [2, a.copy()]]) and not same_value([1, 2], [1, 2, 3])
    assert not same_value(1, 1.0) and not same_value("a", b"a") and same_value(None, None)
