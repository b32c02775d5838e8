"""PrunePass: nodes that reach no graph output and constants nobody reads go; graph inputs stay."""

from __future__ import annotations

import numpy as np
import pytest

from ge_core.ir import Graph, TensorDesc
from ge_core.passes.cleanup.constant_folding import ConstantFoldingPass
from ge_core.passes.cleanup.dead_code import PrunePass
from ge_core.passes.infra.base import PassResult
from tests.passes.pass_helpers import F32, build, load, run_and_compare


def run_pass(g: Graph) -> PassResult:
    return run_and_compare(PrunePass(), g, interface=False)[1]


def with_dead_branch() -> Graph:
    return build(
        {"x": F32, "unused": F32},
        {"w": np.ones((4, 3), np.float32), "dead.k": np.array(2.0, np.float32), "spare": np.zeros(3, np.float32)},
        [("MatMul", ["x", "w"], ["h"], {}),
         ("Sigmoid", ["h"], ["dead.sig"], {}),
         ("Mul", ["dead.sig", "dead.k"], ["dead.mul"], {}),
         ("ReduceSum", ["dead.mul"], ["dead.sum"], {"keepdims": 0}),
         ("Relu", ["h"], ["y"], {})],
        ["y"])


def test_a_dead_branch_and_unread_constants_are_removed() -> None:
    g = with_dead_branch()
    result = run_pass(g)
    assert result.notes == ("removed 3 dead node(s) and 2 unused constant(s) (16 B)",)
    assert g.to_text() == (
        "graph g (%x: f32[2,4], %unused: f32[2,4]) {\n"  # an unused input is still the interface
        "  const %w: f32[4,3]\n"
        "  %h = MatMul(%x, %w) : f32[2,3]\n"
        "  %y = Relu(%h) : f32[2,3]\n"
        "  return %y\n"
        "}")
    assert not PrunePass().run(g).changed


def test_a_live_graph_reports_unchanged() -> None:
    g = build({"x": F32}, {"w": np.ones((4, 3), np.float32)},
              [("MatMul", ["x", "w"], ["h"], {}), ("Relu", ["h"], ["y"], {})], ["y", "w"])
    result = run_pass(g)
    assert not result.changed and result.notes == ()  # w is read, and also returned


def test_a_returned_constant_and_every_output_of_a_live_node_stay() -> None:
    g = build({"x": TensorDesc((2, 4), "float32")}, {"c": np.ones(2, np.float32)},
              [("Split", ["x"], ["a", "b"], {"axis": 1, "num_outputs": 2}), ("Relu", ["a"], ["y"], {})],
              ["y", "c"])
    assert not run_pass(g).changed  # b is unread, but its node computes y's a


def test_a_control_edge_keeps_its_source_and_the_source_inputs_alive() -> None:
    g = build({"x": F32}, {},
              [("Neg", ["x"], ["n"], {}), ("Exp", ["n"], ["side"], {}), ("Relu", ["x"], ["y"], {}),
               ("Tanh", ["n"], ["gone"], {})],
              ["y"], y={"control_inputs": ["side"]})
    result = run_pass(g)
    assert result.notes == ("removed 1 dead node(s) and 0 unused constant(s) (0 B)",)
    assert [n.name for n in g.nodes] == ["n", "side", "y"]


def test_an_everything_dead_graph_keeps_only_its_interface() -> None:
    g = build({"x": F32}, {"k": np.ones(4, np.float32)},
              [("Add", ["x", "k"], ["a"], {}), ("Neg", ["a"], ["b"], {})], ["x"])
    run_pass(g)
    assert g.to_text() == "graph g (%x: f32[2,4]) {\n  return %x\n}"


def test_a_dead_node_with_an_omitted_optional_input_goes() -> None:
    g = build({"x": F32}, {"hi": np.array(1.0, np.float32)},
              [("Clip", ["x", "", "hi"], ["clipped"], {}), ("Relu", ["x"], ["y"], {})], ["y"])
    run_pass(g)
    assert [n.name for n in g.nodes] == ["y"] and not g.constants


# ---- real models -------------------------------------------------------------------------------
def test_dead_branches_consts_loses_its_dead_branch() -> None:
    g = load("dead_branches_consts")
    result = run_pass(g)
    assert result.notes == ("removed 3 dead node(s) and 1 unused constant(s) (4 B)",)
    assert not any(n.name.startswith("dead.") for n in g.nodes) and "dead.k" not in g.constants


def test_after_folding_the_folded_chains_inputs_go() -> None:
    g = load("dead_branches_consts")
    ConstantFoldingPass().run(g)
    consts = len(g.constants)
    run_pass(g)
    assert len(g) == 16 and consts - len(g.constants) == 9  # k1, k2, k.half, k.add, k.mul, ... dead.k


@pytest.mark.parametrize("name", ["transformer_encoder", "conv_bn_relu", "resnet50"])
def test_real_models_keep_every_live_node(name: str) -> None:
    g = load(name)
    count = len(g)
    run_pass(g)
    assert len(g) == count  # nothing dead in these exports (resnet50 has one unread constant)
