"""ir.fusion: a group becomes one node that keeps it as its body, runs like it, and never makes a cycle."""

from __future__ import annotations

import numpy as np
import pytest

import ge_core
from ge_core.errors import GraphEditError
from ge_core.ir import Graph
from ge_core.ir.fusion import cycle_through, external_inputs, external_outputs, fuse
from ge_core.ops import REGISTRY
from tests.ir.graphs import diamond, f32


def feeds() -> dict[str, np.ndarray]:
    return {"x": np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)}


def test_fused_node_keeps_the_group_as_its_body_and_runs_the_same() -> None:
    g = diamond()
    want = ge_core.execute(g, feeds())["y"]
    nodes = [g.node(n) for n in ("sig", "tanh", "add", "mul")]
    fused = fuse(g, nodes, "UbFused", name="group1")
    g.verify(REGISTRY)
    assert fused.inputs == ("a", "k") and fused.outputs == ("e",)
    assert fused.body is not None and [n.name for n in fused.body.nodes] == ["sig", "tanh", "add", "mul"]
    np.testing.assert_allclose(ge_core.execute(g, feeds())["y"], want, rtol=1e-6)
    assert "  %e = ge.UbFused(%a, %k) : f32[2,4]  # group1 {\n      %b = Sigmoid(%a) : f32[2,4]  # sig" in g.to_text()
    assert g.to_json()["nodes"][1]["body"]["nodes"][0]["name"] == "sig"


def test_a_group_whose_path_leaves_and_reenters_is_refused_naming_the_node() -> None:
    g = diamond()
    group = [g.node("relu"), g.node("add")]  # relu -> sig -> add: sig is outside
    assert cycle_through(g, group) is g.node("sig") or cycle_through(g, group) is g.node("tanh")
    with pytest.raises(GraphEditError, match="would depend on itself"):
        fuse(g, group, "Bad")


def test_external_inputs_and_outputs() -> None:
    g = diamond()
    group = [g.node("relu"), g.node("sig")]
    assert external_inputs(g, group) == ["x"]
    assert external_outputs(g, group) == ["a", "b"]  # a is also read by tanh outside


def test_a_fused_op_with_its_own_kernel_takes_its_operands_in_order_and_embeds_other_constants() -> None:
    g = Graph("g")
    g.add_input("x", f32(2, 4))
    g.add_constant("two", np.array(2.0, np.float32))
    g.add_node("Mul", ["x", "two"], ["m"], name="mul", descs=[f32(2, 4)])
    g.add_node("Relu", ["m"], ["y"], name="relu", descs=[f32(2, 4)])
    g.set_outputs(["y"])
    want = ge_core.execute(g, feeds())["y"]
    node = fuse(g, [g.node("mul"), g.node("relu")], "Relu", domain="", inputs=["x"], name="not_really_relu")
    assert node.inputs == ("x",) and node.body is not None and "two" in node.body.constants
    # A registered op runs its own kernel (here plain Relu, so the result differs: the body is inspection only)
    np.testing.assert_allclose(ge_core.execute(g, feeds())["y"], np.maximum(feeds()["x"], 0))
    assert not np.allclose(want, np.maximum(feeds()["x"], 0))


def test_fusing_repairs_the_order_when_a_reader_came_before_the_groups_last_node() -> None:
    g = Graph("g")
    g.add_input("x", f32(3))
    g.add_node("Relu", ["x"], ["a"], name="a", descs=[f32(3)])
    g.add_node("Neg", ["a"], ["r"], name="reader", descs=[f32(3)])  # reads a, placed before b
    g.add_node("Sigmoid", ["x"], ["b"], name="b", descs=[f32(3)])
    g.add_node("Add", ["r", "b"], ["y"], name="out", descs=[f32(3)])
    g.set_outputs(["y"])
    want = ge_core.execute(g, feeds_for_3())["y"]
    fuse(g, [g.node("a"), g.node("b")], "Pair", name="pair")  # placed at b's slot, after `reader`
    g.verify(REGISTRY)
    assert [n.name for n in g.nodes] == ["pair", "reader", "out"]
    np.testing.assert_allclose(ge_core.execute(g, feeds_for_3())["y"], want)


def feeds_for_3() -> dict[str, np.ndarray]:
    return {"x": np.array([-1.0, 0.5, 2.0], np.float32)}


def test_fused_bodies_survive_copy_and_compile() -> None:
    g = diamond()
    fuse(g, [g.node("sig"), g.node("tanh"), g.node("add")], "UbFused", name="grp")
    c = g.copy()
    assert c.node("grp").body is g.node("grp").body  # bodies are shared, never edited
    compiled = ge_core.compile(g, opt_level="O1", verify=True)
    np.testing.assert_allclose(compiled.run(feeds())["y"], ge_core.execute(diamond(), feeds())["y"], rtol=1e-6)
