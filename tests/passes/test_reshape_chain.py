"""ReshapeChainPass: chains of reshape-like views collapse into one node, or vanish when they change nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import ge_core
from ge_core.ir import Graph
from ge_core.ops import REGISTRY
from ge_core.passes.cleanup.constant_folding import ConstantFoldingPass
from ge_core.passes.cleanup.dead_code import PrunePass
from ge_core.passes.cleanup.reshape_chain import ReshapeChainPass, inserted_ones
from ge_core.passes.infra.base import PassResult
from ge_core.passes.infra.instruments import relative_error
from ge_core.samples.registry import get_sample, sample_bytes


def node(op: str, inputs: list[str], output: str, **attrs: Any) -> onnx.NodeProto:
    return helper.make_node(op, inputs, [output], name=output, **attrs)


def ints(**values: list[int]) -> list[onnx.TensorProto]:
    return [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in values.items()]


def build(nodes: list[onnx.NodeProto], shape: list[int | str], outputs: list[str],
          inits: Sequence[onnx.TensorProto] = (), opset: int = 17) -> Graph:
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                              initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return ge_core.load_onnx(model.SerializeToString())


def run_checked(graph: Graph, feeds: dict[str, np.ndarray] | None = None) -> PassResult:
    """Run the pass; check verify(), the interface, numerics, and that changed=False means untouched."""
    text, inputs, outputs = graph.to_text(), list(graph.inputs), list(graph.outputs)
    feeds = feeds or ge_core.random_feeds(graph, seed=0)
    want = ge_core.execute(graph, feeds)
    result = ReshapeChainPass().run(graph)
    graph.verify(REGISTRY)
    assert (graph.inputs, graph.outputs) == (inputs, outputs)
    got = ge_core.execute(graph, feeds)
    assert all(got[t].shape == want[t].shape and relative_error(got[t], want[t]) == 0.0 for t in want)
    assert (graph.to_text() != text) == result.changed
    return result


def test_chain_becomes_its_last_reshape() -> None:
    g = build([node("Relu", ["x"], "r"), node("Reshape", ["r", "s1"], "a"), node("Unsqueeze", ["a", "ax"], "b"),
               node("Reshape", ["b", "s2"], "c"), node("Sigmoid", ["c"], "y")],
              [2, 3, 4], ["y"], ints(s1=[6, -1], ax=[0], s2=[4, 6]))
    result = run_checked(g)
    assert g.to_text() == (
        "graph g (%x: f32[2,3,4]) {\n"
        "  const %s2: i64[2]\n"
        "  %r = Relu(%x) : f32[2,3,4]\n"
        "  %c = Reshape(%r, %s2) : f32[4,6]\n"
        "  %y = Sigmoid(%c) : f32[4,6]\n"
        "  return %y\n"
        "}")
    assert result.notes == ("collapsed 1 chain(s) of reshape-like ops, removing 2 node(s); 0 chain(s) ended at "
                            "their input's shape and are gone",)


def test_chain_back_to_the_input_shape_disappears() -> None:
    g = build([node("Relu", ["x"], "r"), node("Unsqueeze", ["r", "ax"], "u"), node("Flatten", ["u"], "f", axis=2),
               node("Reshape", ["f", "s"], "back"), node("Sigmoid", ["back"], "y")],
              [2, 3, 4], ["y"], ints(ax=[0], s=[2, 3, 4]))
    result = run_checked(g)
    assert g.to_text() == (
        "graph g (%x: f32[2,3,4]) {\n"
        "  %r = Relu(%x) : f32[2,3,4]\n"
        "  %y = Sigmoid(%r) : f32[2,3,4]\n"
        "  return %y\n"
        "}")
    assert "1 chain(s) ended at their input's shape" in result.notes[0]


def test_unsqueeze_chain_becomes_one_unsqueeze() -> None:
    g = build([node("Relu", ["x"], "r"), node("Unsqueeze", ["r", "a0"], "u0"), node("Unsqueeze", ["u0", "a1"], "y")],
              [2, 3], ["y"], ints(a0=[0], a1=[1]))
    run_checked(g)
    assert g.to_text() == (
        "graph g (%x: f32[2,3]) {\n"
        "  const %y.axes: i64[2]\n"
        "  %r = Relu(%x) : f32[2,3]\n"
        "  %y = Unsqueeze(%r, %y.axes) : f32[1,1,2,3]\n"
        "  return %y\n"
        "}")
    assert g.constants["y.axes"].tolist() == [0, 1]


def test_squeeze_chain_uses_the_axes_attribute_before_opset_13() -> None:
    g = build([node("Relu", ["x"], "r"), node("Squeeze", ["r"], "s0", axes=[0]),
               node("Squeeze", ["s0"], "y", axes=[1])], [1, 3, 1, 2], ["y"], opset=11)
    run_checked(g)
    (squeeze,) = [n for n in g.nodes if n.op_type == "Squeeze"]
    assert squeeze.inputs == ("r",) and squeeze.attrs["axes"] == [0, 2]


def test_chain_without_a_reshape_gets_one() -> None:
    g = build([node("Relu", ["x"], "r"), node("Flatten", ["r"], "f", axis=2), node("Unsqueeze", ["f", "ax"], "y")],
              [2, 3, 4], ["y"], ints(ax=[0]))
    run_checked(g)
    assert g.to_text() == (
        "graph g (%x: f32[2,3,4]) {\n"
        "  const %y.shape: i64[3]\n"
        "  %r = Relu(%x) : f32[2,3,4]\n"
        "  %y = Reshape(%r, %y.shape) : f32[1,6,4]  # y.reshape\n"
        "  return %y\n"
        "}")


def test_reshape_inside_the_chain_hosts_it_and_the_output_name_survives() -> None:
    g = build([node("Relu", ["x"], "r"), node("Flatten", ["r"], "f"), node("Reshape", ["f", "s"], "m"),
               node("Identity", ["m"], "y")], [2, 3, 4], ["y"], ints(s=[4, 6]))
    run_checked(g)
    assert g.to_text() == (
        "graph g (%x: f32[2,3,4]) {\n"
        "  const %s: i64[2]\n"
        "  %r = Relu(%x) : f32[2,3,4]\n"
        "  %y = Reshape(%r, %s) : f32[4,6]  # m\n"
        "  return %y\n"
        "}")


def test_dynamic_reshape_pair_reads_the_first_input() -> None:
    g = build([node("Relu", ["x"], "r"), node("Reshape", ["r", "s1"], "a"), node("Reshape", ["a", "s2"], "y")],
              ["N", 3, 4], ["y"], ints(s1=[0, 12], s2=[-1, 2, 6]))
    feeds = {"x": np.random.default_rng(0).standard_normal((5, 3, 4)).astype(np.float32)}
    run_checked(g, feeds)
    assert g.to_text() == (
        "graph g (%x: f32[?,3,4]) {\n"
        "  const %s2: i64[3]\n"
        "  %r = Relu(%x) : f32[?,3,4]\n"
        "  %y = Reshape(%r, %s2) : f32[?,2,6]\n"
        "  return %y\n"
        "}")


def test_dynamic_pair_whose_zero_copies_a_changed_dim_is_left_alone() -> None:
    g = build([node("Relu", ["x"], "r"), node("Reshape", ["r", "s1"], "a"), node("Reshape", ["a", "s2"], "y")],
              ["N", 3, 4], ["y"], ints(s1=[0, 12], s2=[-1, 0]))  # the 0 copies a's 12, x has 3 there
    assert not run_checked(g, {"x": np.ones((2, 3, 4), np.float32)}).changed


def test_dynamic_pair_with_computed_target_is_left_alone() -> None:
    g = build([node("Relu", ["x"], "r"), node("Reshape", ["r", "s1"], "a"), node("Shape", ["r"], "sh"),
               node("Reshape", ["a", "sh"], "y")], ["N", 3, 4], ["y"], ints(s1=[-1]))
    assert not run_checked(g, {"x": np.ones((2, 3, 4), np.float32)}).changed


@pytest.mark.parametrize("outputs", [["y", "a"], ["y"]])
def test_intermediate_read_elsewhere_is_left_alone(outputs: list[str]) -> None:
    extra = [node("Relu", ["a"], "side")] if outputs == ["y"] else []
    g = build([node("Relu", ["x"], "r"), node("Reshape", ["r", "s1"], "a"), node("Reshape", ["a", "s2"], "y"),
               *extra], [2, 3, 4], outputs + (["side"] if extra else []), ints(s1=[6, 4], s2=[24]))
    assert not run_checked(g).changed


def test_view_feeding_a_shape_input_is_not_part_of_a_chain() -> None:
    g = build([node("Relu", ["x"], "r"), node("Unsqueeze", ["n", "ax"], "target"),
               node("Reshape", ["r", "target"], "y")], [2, 3], ["y"], [*ints(ax=[0]), *ints(n=6)])
    assert not run_checked(g).changed


def test_single_view_op_is_left_alone() -> None:
    g = build([node("Reshape", ["x", "s"], "y")], [2, 3], ["y"], ints(s=[3, 2]))
    assert not run_checked(g).changed


def test_identity_chain_between_graph_input_and_output_keeps_one_node() -> None:
    g = build([node("Unsqueeze", ["x", "ax"], "u"), node("Squeeze", ["u", "ax"], "y")], [2, 3], ["y"], ints(ax=[0]))
    assert run_checked(g).changed
    assert [n.op_type for n in g.nodes] == ["Reshape"] and g.nodes[0].inputs[0] == "x"


SHAPES_OF_24 = ([24], [4, 6], [2, 12], [2, 3, 4], [1, 24], [3, 8], [2, 2, 6])


def random_chain(steps: list[tuple[int, int]]) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
    """A chain of view ops on a [2, 3, 4] tensor, one per (op choice, argument) step."""
    nodes, inits, shape, prev = [node("Relu", ["x"], "v0")], [], [2, 3, 4], "v0"
    for i, (choice, arg) in enumerate(steps, start=1):
        out = f"v{i}"
        if choice == 0:
            target = SHAPES_OF_24[arg % len(SHAPES_OF_24)]
            nodes.append(node("Reshape", [prev, f"s{i}"], out))
            inits += ints(**{f"s{i}": target})
            shape = list(target)
        elif choice == 1:
            axis = arg % (len(shape) + 1)
            nodes.append(node("Unsqueeze", [prev, f"s{i}"], out))
            inits += ints(**{f"s{i}": [axis]})
            shape.insert(axis, 1)
        elif choice == 2 and 1 in shape:
            nodes.append(node("Squeeze", [prev, f"s{i}"], out))
            inits += ints(**{f"s{i}": [shape.index(1)]})
            shape.remove(1)
        elif choice == 3:
            axis = arg % (len(shape) + 1)
            nodes.append(node("Flatten", [prev], out, axis=axis))
            shape = [int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))]
        else:
            nodes.append(node("Identity", [prev], out))
        prev = out
    return [*nodes, node("Sigmoid", [prev], "y")], inits


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 10)), min_size=1, max_size=6))
def test_any_chain_collapses_to_at_most_one_node(steps: list[tuple[int, int]]) -> None:
    nodes, inits = random_chain(steps)
    g = build(nodes, [2, 3, 4], ["y"], inits)
    run_checked(g)
    assert len(g) <= 3  # Relu, at most one view op, Sigmoid


def test_control_edge_source_splits_the_chain() -> None:
    g = build([node("Relu", ["x"], "r"), node("Reshape", ["r", "s1"], "a"), node("Reshape", ["a", "s2"], "b"),
               node("Reshape", ["b", "s3"], "y")], [2, 3, 4], ["y"], ints(s1=[24], s2=[6, 4], s3=[4, 6]))
    g.add_node("Identity", ["x"], ["pinned"], name="pinned", descs=[g.desc("x")], control_inputs=["a"])
    g.set_outputs(["y", "pinned"])
    run_checked(g)
    assert [n.name for n in g.nodes if n.op_type == "Reshape"] == ["a", "y"] and g.node("y").inputs[0] == "a"


def test_inserted_ones() -> None:
    assert inserted_ones((2, 3), (1, 2, 1, 3)) == [0, 2]
    assert inserted_ones((1, 3), (1, 1, 3)) == [1]
    assert inserted_ones((2, 3), (2, 3)) is None
    assert inserted_ones((2, 3), (3, 2, 1)) is None


def o1(graph: Graph) -> Graph:
    for p in (ConstantFoldingPass(), PrunePass()):
        p.run(graph)
    return graph


def test_dead_branches_sample_flatten_pair_collapses() -> None:
    g = o1(ge_core.load_onnx(sample_bytes("dead_branches_consts")))
    assert run_checked(g).changed
    assert [n.name for n in g.nodes if n.op_type == "Reshape"] == ["flat2", "y"]
    assert g.node("flat2").inputs[0] == "add_folded_bias"


def test_bert_sample_collapses_its_mask_unsqueezes() -> None:
    name = "bert_encoder_torch"
    g = o1(ge_core.load_onnx(sample_bytes(name), get_sample(name).input_shapes))
    before = len(g)
    assert run_checked(g).changed and len(g) == before - 1


def test_shufflenet_channel_shuffle_is_untouched() -> None:
    g = ge_core.load_onnx(sample_bytes("shufflenet"))
    text = g.to_text()
    assert not ReshapeChainPass().run(g).changed  # Reshape -> Transpose -> Reshape: no view chain
    assert g.to_text() == text
