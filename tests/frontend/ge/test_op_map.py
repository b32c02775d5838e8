"""GE op types map to our registry's for costs: a GE-typed graph (Conv2D, MaxPool, FullyConnection, SoftmaxV2)
becomes our ops under the same names, and each op's dumped descs are what our inference gives."""

from __future__ import annotations

import numpy as np

from ge_core.frontend.ge.op_map import registry_graph
from ge_core.ir.graph import Graph
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY


def _ge_graph() -> Graph:
    g = Graph("ge", {"": 21, "ge": 1})
    g.add_input("x", TensorDesc((1, 3, 8, 8), "float32", "NCHW"))
    g.add_constant("w", np.zeros((4, 3, 3, 3), np.float32))
    g.add_constant("b", np.zeros((4,), np.float32))
    g.add_constant("fw", np.zeros((10, 64), np.float32))
    g.add_constant("shape", np.array([1, 64], np.int64))
    g.add_node("Conv2D", ["x", "w", "b"], ["conv:0"], {"strides": [1, 1, 2, 2], "pads": [1, 1, 1, 1],
               "dilations": [1, 1, 1, 1], "groups": 1, "data_format": "NCHW"}, name="conv", domain="ge",
               descs=[TensorDesc((1, 4, 4, 4), "float32", "NCHW")])
    g.add_node("MaxPool", ["conv:0"], ["pool:0"], {"ksize": [1, 1, 2, 2], "strides": [1, 1, 1, 1],
               "padding": "SAME", "data_format": "NCHW"}, name="pool", domain="ge",
               descs=[TensorDesc((1, 4, 4, 4), "float32", "NCHW")])
    g.add_node("Reshape", ["pool:0", "shape"], ["flat:0"], name="flat", descs=[TensorDesc((1, 64), "float32")])
    g.add_node("FullyConnection", ["flat:0", "fw"], ["fc:0"], {"num_output": 10}, name="fc", domain="ge",
               descs=[TensorDesc((1, 10), "float32")])
    g.add_node("SoftmaxV2", ["fc:0"], ["prob:0"], {"axes": [-1]}, name="prob", domain="ge",
               descs=[TensorDesc((1, 10), "float32")])
    g.set_outputs(["prob:0"])
    return g


def test_mapped_ops_are_ours_and_agree_with_the_dumped_descs() -> None:
    ours = registry_graph(_ge_graph())
    assert [(n.name, n.op_type, n.domain) for n in ours.nodes] == [
        ("conv", "Conv", ""), ("pool", "MaxPool", ""), ("flat", "Reshape", ""), ("fc", "Gemm", ""),
        ("prob", "Softmax", "")]
    assert ours.node("conv").attrs == {"strides": [2, 2], "dilations": [1, 1], "pads": [1, 1, 1, 1], "group": 1}
    ours.verify(REGISTRY)  # every dumped desc is what our op infers


def test_unmapped_types_stay_as_they_are() -> None:
    g = _ge_graph()
    g.add_node("MysteryOp", ["prob:0"], ["m:0"], {"k": 1}, name="m", domain="ge",
               descs=[TensorDesc((1, 10), "float32")])
    assert registry_graph(g).node("m").op_type == "MysteryOp"
