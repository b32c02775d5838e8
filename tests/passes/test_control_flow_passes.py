"""The passes keep control flow sound: dead code keeps the producers of captured tensors, CSE and no-op
removal rename inside subgraphs when they redirect a captured tensor, constant folding inlines the branch an
If on a constant condition takes; the whole O3 pipeline (with the NPU lowering too) keeps the numbers."""

from __future__ import annotations

import numpy as np
import pytest

import ge_core
from ge_core.ir.graph import Graph
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY, infer_graph
from ge_core.passes.cleanup.constant_folding import ConstantFoldingPass
from ge_core.passes.cleanup.cse import CsePass
from ge_core.passes.cleanup.dead_code import PrunePass
from ge_core.passes.cleanup.noop_elimination import NoOpEliminationPass
from ge_core.runtime import execute
from tests.control_models import feeds_for, loop_rnn, scan_rnn, vad_if
from tests.ir.test_subgraphs import B, F, branch, if_graph

X = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)


def _run(graph: Graph, cond: bool) -> np.ndarray:
    return execute(graph, {"x": X, "c": np.array(cond)})["z"]


def test_dead_code_keeps_what_only_a_subgraph_reads() -> None:
    graph = if_graph()  # Relu(x) is read by the then_branch only
    assert not PrunePass().run(graph).changed
    assert graph.has_node("relu")
    graph.verify(REGISTRY)


def test_cse_merging_a_captured_tensor_renames_it_inside() -> None:
    graph = Graph("main")
    graph.add_input("x", F)
    graph.add_input("c", B)
    graph.add_node("Relu", ["x"], ["r1"], name="r1", descs=[F])
    graph.add_node("Relu", ["x"], ["r2"], name="r2", descs=[F])
    graph.add_node("If", ["c"], ["y"], name="if1", descs=[F], captures=["r2", "r1"],
                   subgraphs={"then_branch": branch("then", "Neg", "r2", "t"),
                              "else_branch": branch("else", "Abs", "r1", "e")})
    graph.add_node("Sigmoid", ["y"], ["z"], name="sig", descs=[F])
    graph.set_outputs(["z"])
    before = {c: _run(graph, c) for c in (True, False)}
    assert CsePass().run(graph).changed
    graph.verify(REGISTRY)
    assert graph.node("if1").subgraphs["then_branch"].captures == ["r1"]
    for cond, value in before.items():
        np.testing.assert_array_equal(_run(graph, cond), value)


def test_noop_removal_before_a_capture_renames_inside() -> None:
    graph = if_graph()
    relu = graph.node("relu")
    graph.add_node("Identity", ["r"], ["r_id"], name="id", descs=[F], after=relu)
    graph.set_input(graph.node("if1"), 1, "r_id")  # the then_branch now reads r through an Identity
    assert graph.node("if1").subgraphs["then_branch"].captures == ["r_id"]
    before = _run(graph, True)
    assert NoOpEliminationPass().run(graph).changed
    graph.verify(REGISTRY)
    assert graph.node("if1").subgraphs["then_branch"].captures == ["r"]
    np.testing.assert_array_equal(_run(graph, True), before)


@pytest.mark.parametrize("cond", [True, False])
def test_an_if_on_a_constant_condition_becomes_its_branch(cond: bool) -> None:
    graph = Graph("main")
    graph.add_input("x", F)
    graph.add_constant("c", np.array(cond))
    graph.add_node("Relu", ["x"], ["r"], name="relu", descs=[F])
    then = branch("then", "Neg", "r", "t")
    then.add_constant("k", np.full((2, 3), 2, np.float32))
    then.add_node("Mul", ["t", "k"], ["tk"], name="tk", descs=[F])
    then.set_outputs(["tk"])
    graph.add_node("If", ["c"], ["y"], name="if1", descs=[F], captures=["r", "x"],
                   subgraphs={"then_branch": then, "else_branch": branch("else", "Abs", "x", "e")})
    graph.set_outputs(["y"])
    want = execute(graph, {"x": X})["y"]
    result = ConstantFoldingPass().run(graph)
    assert result.changed and "inlined the branch taken by 1 If" in result.notes[-1]
    graph.verify(REGISTRY)
    assert all(n.op_type != "If" for n in graph.nodes) and graph.outputs == ["y"]
    assert [n.op_type for n in graph.nodes] == (["Relu", "Neg", "Mul"] if cond else ["Relu", "Abs"])
    np.testing.assert_array_equal(execute(graph, {"x": X})["y"], want)
    assert not ConstantFoldingPass().run(graph).changed  # the inlined nodes were visited in the same run


@pytest.mark.parametrize("model", [vad_if, loop_rnn, scan_rnn], ids=lambda m: m.__name__)
@pytest.mark.parametrize("hardware", [None, "ascend910"])
def test_the_o3_pipeline_keeps_the_numbers(model: object, hardware: str | None) -> None:
    onnx_model = model()  # type: ignore[operator]
    graph = ge_core.load_onnx(onnx_model.SerializeToString())
    compiled = ge_core.compile(graph, opt_level="O3", hardware=hardware, verify=True)
    for seed, scale in ((0, 0.2), (1, 3.0)):
        feeds = feeds_for(onnx_model, seed, scale)
        want = execute(graph, feeds)
        got = compiled.run_on_arena(feeds)
        for name, value in want.items():
            np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6)


def test_a_graph_with_an_unknown_dim_runs_specialised_subgraphs_too() -> None:
    graph = if_graph()
    graph.set_desc("x", TensorDesc((2, -1), "float32"))
    infer_graph(graph, REGISTRY)
    assert graph.node("if1").subgraphs["then_branch"].desc("t").text() == "f32[2,?]"
    compiled = ge_core.compile(graph, opt_level="O3")
    np.testing.assert_allclose(compiled.run({"x": X, "c": np.array(False)})["z"], 1 / (1 + np.exp(-np.abs(X))),
                               rtol=1e-6)
    assert graph.node("if1").subgraphs["then_branch"].desc("t").text() == "f32[2,?]"  # specialised a copy
