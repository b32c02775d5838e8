"""Tiny graphs for tiling and cost tests: one op each, shapes as the worked examples of docs/simulator.md."""

from __future__ import annotations

from typing import Any

import numpy as np

from ge_core.ir import Graph, TensorDesc
from ge_core.ops import REGISTRY, infer_graph


def one_op(op_type: str, x: tuple[int, ...], consts: dict[str, np.ndarray], attrs: dict[str, Any] | None = None,
           dtype: str = "float16", extra_inputs: tuple[str, ...] = ()) -> Graph:
    """A graph of `op_type` on input `x` (dtype) and the given constants; the node is named 'op'."""
    g = Graph(op_type.lower())
    g.add_input("x", TensorDesc(x, dtype))
    for name, value in consts.items():
        g.add_constant(name, value)
    g.add_node(op_type, ["x", *consts, *extra_inputs], ["y"], attrs or {}, name="op")
    g.set_outputs(["y"])
    result = infer_graph(g, REGISTRY)
    assert not result.problems, result.problems
    return g


def matmul_example() -> Graph:
    """docs/simulator.md, example 1: an fp16 MatMul [256, 1024] @ [1024, 512]."""
    return one_op("MatMul", (256, 1024), {"b": np.ones((1024, 512), np.float16)})


def conv_example() -> Graph:
    """docs/simulator.md, example 2: an fp16 3x3 Conv, 64 -> 64 channels on 56x56, pads 1."""
    return one_op("Conv", (1, 64, 56, 56), {"w": np.ones((64, 64, 3, 3), np.float16)},
                  {"pads": [1, 1, 1, 1], "kernel_shape": [3, 3]})
