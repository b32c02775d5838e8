"""Small hand-built graphs shared by the IR and runtime tests."""

from __future__ import annotations

import numpy as np

from ge_core.ir import Graph, TensorDesc


def f32(*shape: int) -> TensorDesc:
    return TensorDesc(shape, "float32")


def diamond() -> Graph:
    """x -> a=Relu -> b=Sigmoid, c=Tanh -> d=Add(b, c) -> e=Mul(d, k=0.5) -> y=Exp(e): a group to fuse."""
    g = Graph("g")
    g.add_input("x", f32(2, 4))
    g.add_constant("k", np.full((4,), 0.5, np.float32))
    g.add_node("Relu", ["x"], ["a"], name="relu", descs=[f32(2, 4)])
    g.add_node("Sigmoid", ["a"], ["b"], name="sig", descs=[f32(2, 4)])
    g.add_node("Tanh", ["a"], ["c"], name="tanh", descs=[f32(2, 4)])
    g.add_node("Add", ["b", "c"], ["d"], name="add", descs=[f32(2, 4)])
    g.add_node("Mul", ["d", "k"], ["e"], name="mul", descs=[f32(2, 4)])
    g.add_node("Exp", ["e"], ["y"], name="exp", descs=[f32(2, 4)])
    g.set_outputs(["y"])
    return g
