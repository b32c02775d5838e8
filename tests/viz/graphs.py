"""Small hand-built graphs for the Graph page's ge_core.viz tests."""

from __future__ import annotations

import functools

import numpy as np

import ge_core
from ge_core.ir import Graph, TensorDesc
from ge_core.ir.fusion import fuse
from ge_core.samples.registry import LIGHT_DIR


def f32(*shape: int) -> TensorDesc:
    return TensorDesc(shape, "float32")


def conv_net() -> Graph:
    """x -> conv1 (W, B) -> bn1 -> relu1 -> pool -> y, plus a side branch relu1 -> sig -> z."""
    g = Graph("net")
    g.add_input("x", f32(1, 3, 8, 8))
    g.add_constant("W", np.ones((4, 3, 3, 3), np.float32))
    g.add_constant("B", np.zeros((4,), np.float32))
    for name in ("scale", "bias", "mean", "var"):
        g.add_constant(name, np.ones((4,), np.float32))
    g.add_node("Conv", ["x", "W", "B"], ["c"], {"pads": [1, 1, 1, 1]}, name="conv1", descs=[f32(1, 4, 8, 8)])
    g.add_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["n"], name="bn1",
               descs=[f32(1, 4, 8, 8)])
    g.add_node("Relu", ["n"], ["r"], name="relu1", descs=[f32(1, 4, 8, 8)])
    g.add_node("GlobalAveragePool", ["r"], ["y"], name="pool", descs=[f32(1, 4, 1, 1)])
    g.add_node("Sigmoid", ["r"], ["z"], name="sig", descs=[f32(1, 4, 8, 8)])
    g.set_outputs(["y", "z"])
    return g


def fused_net() -> Graph:
    """conv_net without bn1, then conv1 + relu1 fused into FusedConv 'relu1' (a body node shares its name)."""
    g = conv_net()
    g.replace_all_uses("n", "c")
    g.erase(g.node("bn1"))
    fuse(g, [g.node("conv1"), g.node("relu1")], "FusedConv", name="relu1", attrs={"activation": "Relu"})
    return g


def chain(n: int, name: str = "relu{}") -> Graph:
    g = Graph("chain")
    g.add_input("t0", f32(1, 4))
    for i in range(n):
        g.add_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=name.format(i), descs=[f32(1, 4)])
    g.set_outputs([f"t{n}"])
    return g


def scoped(blocks: int = 3, per_block: int = 4) -> Graph:
    """/enc/layer.K/op_i chains, one scope per layer, as PyTorch exports name nodes."""
    g = Graph("scoped")
    g.add_input("t", f32(1, 4))
    previous = "t"
    for b in range(blocks):
        for i in range(per_block):
            out = f"/enc/layer.{b}/Relu_{i}_out"
            g.add_node("Relu", [previous], [out], name=f"/enc/layer.{b}/Relu_{i}", descs=[f32(1, 4)])
            previous = out
    g.set_outputs([previous])
    return g


def residual(blocks: int) -> Graph:
    """Flat names (n0, n1...): blocks of x -> relu -> sigmoid -> add(x, .) joined by the adds."""
    g = Graph("residual")
    g.add_input("x", f32(1, 4))
    previous, k = "x", 0
    for _ in range(blocks):
        a, s, o = f"n{k}", f"n{k + 1}", f"n{k + 2}"
        g.add_node("Relu", [previous], [a], name=a, descs=[f32(1, 4)])
        g.add_node("Sigmoid", [a], [s], name=s, descs=[f32(1, 4)])
        g.add_node("Add", [previous, s], [o], name=o, descs=[f32(1, 4)])
        previous, k = o, k + 3
    g.set_outputs([previous])
    return g


@functools.cache
def light_densenet() -> Graph:
    """onnx's light densenet121 as an upload imports it: 1,746 nodes, ConstantOfShape weights, names n0..."""
    return ge_core.load_onnx(LIGHT_DIR / "light_densenet121.onnx")
