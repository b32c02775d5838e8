"""Hand-made graphs for the memory tests. f32 rows: (1,128) is 512 bytes, (1,256) 1024, (1,512) 2048."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ge_core.ir import Graph, TensorDesc
from ge_core.ops import REGISTRY, infer_graph

Spec = tuple[str, Sequence[str], str]  # op, inputs, output (also the node's name)


def weights(rows: int, cols: int) -> np.ndarray:
    return np.random.default_rng(rows * cols).standard_normal((rows, cols)).astype(np.float32)


def build(nodes: Sequence[Spec], outputs: Sequence[str], consts: dict[str, np.ndarray] | None = None,
          x_shape: tuple[int, ...] = (1, 128), attrs: dict[str, dict[str, Any]] | None = None) -> Graph:
    g = Graph("g")
    g.add_input("x", TensorDesc(x_shape, "float32"))
    for name, array in (consts or {}).items():
        g.add_constant(name, array)
    for op, ins, out in nodes:
        g.add_node(op, ins, [out], (attrs or {}).get(out), name=out)
    g.set_outputs(outputs)
    result = infer_graph(g, REGISTRY)
    assert not result.problems, result.problems
    return g


def chain() -> Graph:
    """x -> a (1024) -> b = Relu(a) -> c = Relu(b)."""
    return build([("MatMul", ["x", "w1"], "a"), ("Relu", ["a"], "b"), ("Relu", ["b"], "c")], ["c"],
                 {"w1": weights(128, 256)})


def diamond() -> Graph:
    """a feeds b = Relu(a) and c = Sigmoid(a); d = b + c. All 1024 bytes."""
    return build([("MatMul", ["x", "w1"], "a"), ("Relu", ["a"], "b"), ("Sigmoid", ["a"], "c"),
                  ("Add", ["b", "c"], "d")], ["d"], {"w1": weights(128, 256)})


def residual() -> Graph:
    """a (1024) -> b (2048) -> c (1024); d = a + c: a lives across b and c."""
    return build([("MatMul", ["x", "w1"], "a"), ("MatMul", ["a", "w2"], "b"), ("MatMul", ["b", "w3"], "c"),
                  ("Add", ["a", "c"], "d")], ["d"],
                 {"w1": weights(128, 256), "w2": weights(256, 512), "w3": weights(512, 256)})


def views() -> Graph:
    """v = Reshape(a), v2 = Reshape(v) (a view of a view); d = v2 + c keeps a alive to the last step."""
    consts = {"w1": weights(128, 256), "s1": np.array([2, 128], np.int64), "s2": np.array([1, 256], np.int64)}
    return build([("MatMul", ["x", "w1"], "a"), ("Reshape", ["a", "s1"], "v"), ("MatMul", ["x", "w1"], "c"),
                  ("Reshape", ["v", "s2"], "v2"), ("Add", ["v2", "c"], "d")], ["d"], consts)


def output_mid_graph() -> Graph:
    """a is a graph output read in the middle: it lives to the end and is never overwritten in place."""
    return build([("MatMul", ["x", "w1"], "a"), ("Relu", ["a"], "b"), ("Relu", ["b"], "c")], ["a", "c"],
                 {"w1": weights(128, 256)})


def relu_chain() -> Graph:
    """a -> r1 -> r2 -> r3, every Relu can write over its input."""
    return build([("MatMul", ["x", "w1"], "a"), ("Relu", ["a"], "r1"), ("Relu", ["r1"], "r2"),
                  ("Relu", ["r2"], "r3")], ["r3"], {"w1": weights(128, 256)})


def view_of_input() -> Graph:
    """A view of a graph input has no arena block to alias: it gets bytes of its own."""
    return build([("Reshape", ["x", "s"], "v"), ("Relu", ["v"], "r")], ["r"], {"s": np.array([2, 64], np.int64)})


def dynamic() -> Graph:
    return build([("Relu", ["x"], "r")], ["r"], x_shape=(-1, 128))
