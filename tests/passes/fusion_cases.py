"""Shared helpers of the ONNX-built pass tests (tests/passes/test_fusion_*.py, test_ub_fusion.py, test_fold_*.py):
build small ONNX graphs, run a pass with every contract check (verify, interface, numerics, honest `changed`,
decision log)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ge_core
from ge_core.ir import Graph
from ge_core.ops import REGISTRY
from ge_core.passes.infra.base import FusionDecision, GraphPass, PassResult
from ge_core.passes.infra.instruments import relative_error

RNG = np.random.default_rng(0)
TOLERANCE = 1e-4
Outputs = dict[str, np.ndarray]


def node(op: str, inputs: list[str], output: str, **attrs: Any) -> onnx.NodeProto:
    """A one-output node named after its output."""
    return helper.make_node(op, inputs, [output], name=output, **attrs)


def rand(*shape: int, scale: float = 1.0, dtype: str = "float32") -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def scalar(value: float, dtype: str = "float32") -> np.ndarray:
    return np.array(value, dtype)


def build(nodes: list[onnx.NodeProto], inputs: Mapping[str, list[int]], outputs: list[str],
          inits: Mapping[str, np.ndarray], *, opset: int = 17, dtype: int = TensorProto.FLOAT) -> Graph:
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(k, dtype, v) for k, v in inputs.items()],
                              [helper.make_tensor_value_info(o, dtype, None) for o in outputs],
                              initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return ge_core.load_onnx(model.SerializeToString())


def conv_then(ops: list[onnx.NodeProto], consts: Mapping[str, np.ndarray], bias: bool = True,
              outputs: tuple[str, ...] = ("y",)) -> Graph:
    """x -> Conv(w[, b]) named 'conv' (4 output channels, 5x5) -> ops."""
    inits = {"w": rand(4, 3, 3, 3), **({"b": rand(4)} if bias else {}), **consts}
    return build([node("Conv", ["x", "w", "b"] if bias else ["x", "w"], "conv", pads=[1, 1, 1, 1]), *ops],
                 {"x": [1, 3, 5, 5]}, list(outputs), inits)


# What the folds (BatchNormalization, Mul/Add) leave of conv_then(<scale and shift>, Relu): one Conv and the Relu.
FOLDED_CONV_RELU = (
    "graph g (%x: f32[1,3,5,5]) {\n"
    "  const %conv.weight: f32[4,3,3,3]\n"
    "  const %conv.bias: f32[4]\n"
    "  %conv = Conv(%x, %conv.weight, %conv.bias) {pads=[1, 1, 1, 1]} : f32[1,4,5,5]\n"
    "  %y = Relu(%conv) : f32[1,4,5,5]\n"
    "  return %y\n"
    "}")


def run_observed(pass_: GraphPass, graph: Graph) -> tuple[PassResult, str, Outputs, Outputs]:
    """Run the pass on `graph` (in place) on seed-0 random feeds; check verify() and that the interface stays.
    Returns the result, the graph's text from before, and the outputs from before and after."""
    text, inputs, outputs = graph.to_text(), list(graph.inputs), list(graph.outputs)
    feeds = ge_core.random_feeds(graph, seed=0)
    want = ge_core.execute(graph, feeds)
    result = pass_.run(graph)
    graph.verify(REGISTRY)
    assert (graph.inputs, graph.outputs) == (inputs, outputs)
    got = ge_core.execute(graph, feeds)
    return result, text, want, got


def run_checked(pass_: GraphPass, graph: Graph, tol: float = TOLERANCE) -> PassResult:
    """Run the pass; check verify(), the interface, numerics within `tol`, that changed=False means the text
    is untouched, and that accepted decisions name a fused node present in the graph."""
    result, text, want, got = run_observed(pass_, graph)
    errors = {t: relative_error(got[t], want[t]) for t in want}
    assert max(errors.values()) <= tol, errors
    assert (graph.to_text() != text) == result.changed
    assert result.changed == any(d.accepted for d in result.decisions)
    for d in result.decisions:
        assert d.pass_name == pass_.name and d.nodes
        assert (d.fused_node is not None) == d.accepted
        if d.accepted:  # in the graph, or inside a node a later round of the same pass fused further
            assert d.fused_node in fused_names(graph), d
    return result


def run_fold_checked(pass_: GraphPass, graph: Graph, tol: float = 1e-5) -> PassResult:
    """Run a fold (no decisions); check verify(), the interface, numerics within `tol`, and that changed=False
    means untouched: the same text and the very same numbers (inf and nan included)."""
    result, text, want, got = run_observed(pass_, graph)
    if result.changed:
        errors = {t: relative_error(got[t], want[t]) for t in want}
        assert max(errors.values()) <= tol, errors
        assert graph.to_text() != text
    else:
        assert graph.to_text() == text and all(np.array_equal(got[t], want[t], equal_nan=True) for t in want)
    return result


def fused_names(graph: Graph) -> set[str]:
    """Names of the nodes with a body, at any depth."""
    names = set()
    for n in graph.nodes:
        if n.body is not None:
            names |= {n.name, *fused_names(n.body)}
    return names


def only(result: PassResult) -> FusionDecision:
    """The one decision of a pass run."""
    assert len(result.decisions) == 1, result.decisions
    return result.decisions[0]
