"""View ops (OpDef.view) whose output shape is fixed at planning run as a reshape of their input, without
their kernel: the same values as the kernel, planned only where every operand after the data is a constant
and the dims are known; an interpreter that overrides call_kernel still sees them as kernel calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from onnx import TensorProto

from ge_core.ir import Graph
from ge_core.ir.node import Node
from ge_core.ops.registry import OpDef
from ge_core.runtime.executor import Executor
from ge_core.runtime.interpreter import Interpreter, plan_steps
from tests.passes.fusion_cases import build, node

SHAPE = np.array([4, -1], np.int64)
AXES = np.array([0], np.int64)


def _graph(shape_computed: bool = False) -> Graph:
    inputs = {"x": [1, 2, 3, 4]}
    nodes = [node("Shape", ["x"], "s")] if shape_computed else []  # a value computed at run time
    nodes += [node("Reshape", ["x", "s" if shape_computed else "shape"], "r"),
             node("Unsqueeze", ["r", "axes"], "u"), node("Squeeze", ["u", "axes"], "q"),
             node("Flatten", ["q"], "f", axis=0), node("Identity", ["f"], "y")]
    inits = {"axes": AXES} if shape_computed else {"shape": SHAPE, "axes": AXES}
    return build(nodes, inputs, ["y"], inits)


def test_planned_view_steps_reshape_without_their_kernels() -> None:
    graph = _graph()
    steps = plan_steps(graph)
    assert [s.view_shape for s in steps] == [(4, 6), (1, 4, 6), (4, 6), (1, 24), (1, 24)]
    x = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    seen: list[str] = []

    class Counting(Interpreter):
        def call_kernel(self, node: Node, op: OpDef, args: list[np.ndarray | None]) -> Sequence[np.ndarray]:
            seen.append(node.op_type)
            return super().call_kernel(node, op, args)

    fast = Executor(graph).run({"x": x}).outputs["y"]
    by_kernels = Executor(graph, interpreter=Counting).run({"x": x}).outputs["y"]
    assert seen == ["Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity"]  # an override sees every node
    np.testing.assert_array_equal(fast, by_kernels)
    np.testing.assert_array_equal(fast, x.reshape(1, 24))
    fast[0, 0] = -1.0
    assert x[0, 0, 0, 0] == 0.0  # the output is the caller's own, never a view of the feed


def test_a_shape_computed_at_run_time_keeps_the_kernel() -> None:
    graph = _graph(shape_computed=True)
    steps = plan_steps(graph)
    assert steps[1].node.op_type == "Reshape" and steps[1].view_shape is None  # its shape is not a constant
    x = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    out = Executor(graph).run({"x": x}).outputs["y"]
    np.testing.assert_array_equal(out, x.reshape(1, 24))


def test_unknown_dims_keep_the_kernel() -> None:
    dims: list[Any] = ["n", 6]  # a symbolic batch dim
    graph = build([node("Reshape", ["x", "shape"], "y")], {"x": dims}, ["y"], {"shape": np.array([-1, 3])},
                  dtype=TensorProto.FLOAT)
    assert plan_steps(graph)[0].view_shape is None
    out = Executor(graph).run({"x": np.ones((2, 6), np.float32)}).outputs["y"]
    assert out.shape == (4, 3)
