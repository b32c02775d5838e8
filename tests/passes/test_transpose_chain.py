"""TransposeChainPass: Transpose pairs merge into one (or none); shared intermediates and outputs are kept."""

from __future__ import annotations

from typing import Any

import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

import ge_core
from ge_core.ir import Graph
from ge_core.ops import REGISTRY
from ge_core.passes.cleanup.transpose_chain import TransposeChainPass
from ge_core.passes.infra.base import PassResult
from ge_core.passes.infra.instruments import relative_error
from ge_core.samples.registry import get_sample, sample_bytes


def node(op: str, inputs: list[str], output: str, **attrs: Any) -> onnx.NodeProto:
    return helper.make_node(op, inputs, [output], name=output, **attrs)


def build(nodes: list[onnx.NodeProto], shape: list[int], outputs: list[str]) -> Graph:
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return ge_core.load_onnx(model.SerializeToString())


def run_checked(graph: Graph) -> PassResult:
    """Run the pass; check verify(), the interface, numerics, and that changed=False means untouched."""
    text, inputs, outputs = graph.to_text(), list(graph.inputs), list(graph.outputs)
    feeds = ge_core.random_feeds(graph, seed=0)
    want = ge_core.execute(graph, feeds)
    result = TransposeChainPass().run(graph)
    graph.verify(REGISTRY)
    assert (graph.inputs, graph.outputs) == (inputs, outputs)
    got = ge_core.execute(graph, feeds)
    assert all(relative_error(got[t], want[t]) == 0.0 for t in want)  # pure data movement: exact
    assert (graph.to_text() != text) == result.changed
    return result


def test_round_trip_disappears() -> None:
    g = build([node("Relu", ["x"], "r"),
               node("Transpose", ["r"], "nhwc", perm=[0, 2, 3, 1]),
               node("Transpose", ["nhwc"], "nchw", perm=[0, 3, 1, 2]),
               node("Sigmoid", ["nchw"], "y")], [1, 2, 3, 4], ["y"])
    result = run_checked(g)
    assert g.to_text() == (
        "graph g (%x: f32[1,2,3,4]) {\n"
        "  %r = Relu(%x) : f32[1,2,3,4]\n"
        "  %y = Sigmoid(%r) : f32[1,2,3,4]\n"
        "  return %y\n"
        "}")
    assert result.notes == ("merged 1 Transpose pair(s) into one; 1 composition(s) were the identity and were "
                            "removed",)


def test_pair_becomes_one_transpose_with_composed_perm() -> None:
    g = build([node("Transpose", ["x"], "a", perm=[0, 2, 3, 1]),
               node("Transpose", ["a"], "y", perm=[1, 0, 2, 3])], [1, 2, 3, 4], ["y"])
    run_checked(g)
    assert g.to_text() == (
        "graph g (%x: f32[1,2,3,4]) {\n"
        "  %y = Transpose(%x) {perm=[2, 0, 3, 1]} : f32[3,1,4,2]\n"
        "  return %y\n"
        "}")


def test_default_perms_reverse_twice_to_identity() -> None:
    g = build([node("Relu", ["x"], "r"), node("Transpose", ["r"], "a"), node("Transpose", ["a"], "y")],
              [2, 3, 4], ["y"])
    run_checked(g)
    # y is a graph output: bypass keeps its name by renaming the Relu's output
    assert g.to_text() == (
        "graph g (%x: f32[2,3,4]) {\n"
        "  %y = Relu(%x) : f32[2,3,4]  # r\n"
        "  return %y\n"
        "}")


def test_identity_between_graph_input_and_output_stays_as_one_transpose() -> None:
    g = build([node("Transpose", ["x"], "a", perm=[1, 0]), node("Transpose", ["a"], "y", perm=[1, 0])],
              [2, 3], ["y"])
    result = run_checked(g)
    assert result.changed and [n.op_type for n in g.nodes] == ["Transpose"]
    assert g.nodes[0].inputs == ("x",) and g.nodes[0].attrs["perm"] == [0, 1]


def test_long_chain_collapses_in_one_run() -> None:
    perms = [[1, 2, 0], [1, 2, 0], [0, 2, 1], [1, 0, 2]]  # no prefix composes to the identity
    nodes = [node("Transpose", ["x" if i == 0 else f"t{i - 1}"], f"t{i}", perm=p) for i, p in enumerate(perms)]
    g = build([*nodes, node("Relu", ["t3"], "y")], [2, 3, 4], ["y"])
    result = run_checked(g)
    assert [n.op_type for n in g.nodes] == ["Transpose", "Relu"]
    assert result.notes[0].startswith("merged 3 Transpose pair(s)")


def test_shared_intermediate_is_left_alone() -> None:
    g = build([node("Transpose", ["x"], "a", perm=[1, 0]), node("Transpose", ["a"], "b", perm=[1, 0]),
               node("Relu", ["a"], "side"), node("Add", ["b", "x"], "y")], [3, 3], ["y", "side"])
    assert not run_checked(g).changed


def test_intermediate_graph_output_is_left_alone() -> None:
    g = build([node("Transpose", ["x"], "a", perm=[1, 0]), node("Transpose", ["a"], "y", perm=[1, 0])],
              [2, 3], ["y", "a"])
    assert not run_checked(g).changed


def test_lone_transpose_is_left_alone() -> None:
    g = build([node("Transpose", ["x"], "a", perm=[1, 0]), node("Relu", ["a"], "y")], [2, 3], ["y"])
    assert not run_checked(g).changed


def pin(graph: Graph, node_name: str) -> None:
    """Make `node_name` the source of a control edge (to a new Identity output)."""
    x = graph.inputs[0]
    graph.add_node("Identity", [x], ["pinned"], name="pinned", descs=[graph.desc(x)], control_inputs=[node_name])
    graph.set_outputs([*graph.outputs, "pinned"])


def test_control_edges_pin_both_their_ends() -> None:
    g = build([node("Transpose", ["x"], "a", perm=[1, 0]), node("Transpose", ["a"], "b", perm=[1, 0]),
               node("Transpose", ["b"], "c", perm=[1, 0]), node("Transpose", ["c"], "y", perm=[1, 0])],
              [2, 3], ["y"])
    pin(g, "a")  # a is a control source: it may not be merged away, so b stays reading it
    g.node("y").control_inputs = ("b",)  # y carries a control edge: merged into, but never bypassed
    result = run_checked(g)
    assert [n.name for n in g.nodes if n.op_type == "Transpose"] == ["a", "b", "y"]
    assert g.node("y").inputs == ("b",) and g.node("y").attrs["perm"] == [0, 1]
    assert result.notes[0].startswith("merged 1 Transpose pair(s)")
    assert not run_checked(g).changed  # nothing left for a second run


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 4).flatmap(lambda rank: st.lists(st.permutations(list(range(rank))), min_size=1, max_size=5)))
def test_any_chain_matches_numerically(perms: list[list[int]]) -> None:
    rank = len(perms[0])
    chain = [node("Transpose", [f"t{i - 1}" if i else "r"], f"t{i}", perm=p) for i, p in enumerate(perms)]
    g = build([node("Relu", ["x"], "r"), *chain, node("Relu", [f"t{len(perms) - 1}"], "y")], [2, 3, 4, 5][:rank],
              ["y"])
    run_checked(g)
    assert len([n for n in g.nodes if n.op_type == "Transpose"]) <= 1


def test_dead_branches_sample_round_trip_is_removed() -> None:
    g = ge_core.load_onnx(sample_bytes("dead_branches_consts"))
    before = len(g)
    result = run_checked(g)
    assert result.changed and len(g) == before - 2
    assert not [n for n in g.nodes if n.op_type == "Transpose"]


@pytest.mark.parametrize("name", ["shufflenet", "transformer_encoder", "bert_encoder_torch_dynamo"])
def test_samples_without_transpose_pairs_are_untouched(name: str) -> None:
    g = ge_core.load_onnx(sample_bytes(name), get_sample(name).input_shapes)
    text = g.to_text()
    assert not TransposeChainPass().run(g).changed  # shufflenet's Reshape-Transpose-Reshape shuffle stays
    assert g.to_text() == text
