"""Seeded synthetic ONNX models of N nodes for the compile-scaling benchmark and its tests.

A model is a chain of residual blocks over a small NCHW tensor ([1, 8, 4, 4]: cheap to run, so tests can
compare outputs). Every block gives every O3 pass work, in the shapes exporters write:

    Conv+BN+Relu            -> BatchNormFoldPass
    Conv 1x1, Mul/Add by per-channel constants -> ScaleFoldPass
    Identity, Dropout       -> NoOpEliminationPass
    Transpose pair (NCHW->NHWC->NCHW)  -> TransposeChainPass
    Reshape chain, MatMul+Add (a linear layer over the spatial dims)  -> ReshapeChainPass
    Add/Mul/Sigmoid of constants (a gate)  -> ConstantFoldingPass
    Shape-Gather-Unsqueeze-Concat building a Reshape target, as torch.onnx writes it -> ConstantFoldingPass
    Tanh(g) computed twice  -> CsePass
    a residual Add, and a dead Neg->Exp branch nobody reads  -> PrunePass
    then a transformer-style tail over the last axis (W):
    LayerNorm in primitives (ReduceMean, Sub, Pow, ReduceMean, Add eps, Sqrt, Div, Mul, Add) -> LayerNormFusionPass
    Q, K, V projections, Softmax(Q K^T * s) V  -> AttentionFusionPass
    GELU in Erf form, x * Clip(x + 3, 0, 6) / 6 (HardSwish)  -> GeluFusionPass, HardActivationFusionPass
    Conv + Relu (once BatchNormFoldPass is done), MatMul + Add  -> ConvActivationFusionPass, MatMulAddFusionPass

`synthetic_model(n, seed)` returns a model of exactly n nodes (BLOCK_NODES per block, a Relu tail for the
remainder); `write_synthetic(path, n, seed)` saves it. `relu_chain(n)` is the plainest big graph: n Relu nodes
in a row on a [1, 16] tensor (the executor's per-node overhead, the dump writers' scaling).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CHANNELS, HEIGHT, WIDTH = 8, 4, 4
SPATIAL = HEIGHT * WIDTH
OPSET = 17
BLOCK_NODES = 56
INPUT = "x"


class _Builder:
    """Collects nodes and initializers; every name gets the block's prefix."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[TensorProto] = []

    def node(self, op: str, inputs: list[str], output: str, **attrs: Any) -> str:
        self.nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    def const(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def normal(self, name: str, shape: tuple[int, ...], std: float) -> str:
        return self.const(name, (self.rng.standard_normal(shape) * std).astype(np.float32))

    def uniform(self, name: str, shape: tuple[int, ...], low: float, high: float) -> str:
        return self.const(name, self.rng.uniform(low, high, shape).astype(np.float32))


def _shared_constants(b: _Builder) -> None:
    """Reshape targets and indices every block reads (exporters share them too)."""
    b.const("shape_c_hw", np.array([1, CHANNELS, SPATIAL], np.int64))
    b.const("shape_2d", np.array([CHANNELS, SPATIAL], np.int64))
    b.const("index_0", np.array(0, np.int64))
    b.const("axes_0", np.array([0], np.int64))
    b.const("dims_chw", np.array([CHANNELS, HEIGHT, WIDTH], np.int64))
    for name, value in (("two", 2.0), ("ln_eps", 1e-5), ("attn_scale", 1 / np.sqrt(WIDTH)), ("sqrt2", np.sqrt(2.0)),
                        ("one", 1.0), ("half", 0.5), ("three", 3.0), ("zero", 0.0), ("six", 6.0)):
        b.const(name, np.array(value, np.float32))


def _conv_bn_relu(b: _Builder, p: str, h: str) -> str:
    c = b.node("Conv", [h, b.normal(f"{p}w", (CHANNELS, CHANNELS, 3, 3), 0.15), b.normal(f"{p}b", (CHANNELS,), 0.05)],
               f"{p}conv", pads=[1, 1, 1, 1])
    bn_inputs = [c, b.uniform(f"{p}bn_s", (CHANNELS,), 0.5, 1.5), b.normal(f"{p}bn_b", (CHANNELS,), 0.1),
                 b.normal(f"{p}bn_m", (CHANNELS,), 0.1), b.uniform(f"{p}bn_v", (CHANNELS,), 0.5, 1.5)]
    bn = b.node("BatchNormalization", bn_inputs, f"{p}bn", epsilon=1e-5)
    return b.node("Relu", [bn], f"{p}relu")


def _scaled_conv(b: _Builder, p: str, h: str) -> str:
    c = b.node("Conv", [h, b.normal(f"{p}w2", (CHANNELS, CHANNELS, 1, 1), 0.3)], f"{p}conv2")
    scaled = b.node("Mul", [c, b.uniform(f"{p}scale", (1, CHANNELS, 1, 1), 0.5, 1.5)], f"{p}scaled")
    return b.node("Add", [scaled, b.normal(f"{p}shift", (1, CHANNELS, 1, 1), 0.1)], f"{p}shifted")


def _noops_and_layout(b: _Builder, p: str, h: str) -> str:
    i = b.node("Identity", [h], f"{p}identity")
    d = b.node("Dropout", [i], f"{p}dropout")
    nhwc = b.node("Transpose", [d], f"{p}to_nhwc", perm=[0, 2, 3, 1])
    return b.node("Transpose", [nhwc], f"{p}to_nchw", perm=[0, 3, 1, 2])


def _linear_with_gate(b: _Builder, p: str, h: str) -> str:
    r1 = b.node("Reshape", [h, "shape_c_hw"], f"{p}flat3")
    r2 = b.node("Reshape", [r1, "shape_2d"], f"{p}flat2")
    mm = b.node("MatMul", [r2, b.normal(f"{p}wm", (SPATIAL, SPATIAL), 0.25)], f"{p}matmul")
    lin = b.node("Add", [mm, b.normal(f"{p}bm", (SPATIAL,), 0.05)], f"{p}linear")
    k1 = b.node("Add", [b.normal(f"{p}ka", (SPATIAL,), 0.5), b.normal(f"{p}kb", (SPATIAL,), 0.5)], f"{p}gate_sum")
    k2 = b.node("Mul", [k1, b.uniform(f"{p}kc", (SPATIAL,), 0.5, 1.5)], f"{p}gate_scaled")
    gate = b.node("Sigmoid", [k2], f"{p}gate")
    return b.node("Mul", [lin, gate], f"{p}gated")


def _duplicates_and_unflatten(b: _Builder, p: str, g: str, h: str) -> str:
    e1 = b.node("Tanh", [g], f"{p}tanh_a")
    e2 = b.node("Tanh", [g], f"{p}tanh_b")
    e = b.node("Add", [e1, e2], f"{p}tanh_sum")
    shape = b.node("Shape", [h], f"{p}shape")
    batch = b.node("Gather", [shape, "index_0"], f"{p}batch", axis=0)
    batch1 = b.node("Unsqueeze", [batch, "axes_0"], f"{p}batch1")
    target = b.node("Concat", [batch1, "dims_chw"], f"{p}target", axis=0)
    return b.node("Reshape", [e, target], f"{p}unflat")


def _layer_norm(b: _Builder, p: str, h: str) -> str:
    """LayerNorm over the last axis as TorchScript exports it (ReduceMean axes as an attribute: opset 17)."""
    mean = b.node("ReduceMean", [h], f"{p}ln_mean", axes=[-1])
    d = b.node("Sub", [h, mean], f"{p}ln_sub")
    sq = b.node("Pow", [d, "two"], f"{p}ln_pow")
    var = b.node("ReduceMean", [sq], f"{p}ln_var", axes=[-1])
    std = b.node("Sqrt", [b.node("Add", [var, "ln_eps"], f"{p}ln_add_eps")], f"{p}ln_std")
    norm = b.node("Div", [d, std], f"{p}ln_div")
    scaled = b.node("Mul", [norm, b.uniform(f"{p}ln_gamma", (WIDTH,), 0.5, 1.5)], f"{p}ln_scale")
    return b.node("Add", [scaled, b.normal(f"{p}ln_beta", (WIDTH,), 0.1)], f"{p}ln_shift")


def _attention(b: _Builder, p: str, h: str) -> str:
    """Every channel a head, H the sequence, W the features: Softmax(Q K^T / sqrt(W)) V."""
    q, k, v = (b.node("MatMul", [h, b.normal(f"{p}w{n}", (WIDTH, WIDTH), 0.5)], f"{p}{n}") for n in "qkv")
    kt = b.node("Transpose", [k], f"{p}kt", perm=[0, 1, 3, 2])
    scores = b.node("Mul", [b.node("MatMul", [q, kt], f"{p}qk"), "attn_scale"], f"{p}scores")
    probs = b.node("Softmax", [scores], f"{p}probs", axis=-1)
    return b.node("MatMul", [probs, v], f"{p}attn")


def _gelu_hardswish(b: _Builder, p: str, h: str) -> str:
    """GELU in Erf form, x * 0.5 * (1 + Erf(x / sqrt 2)), then HardSwish as x * Clip(x + 3, 0, 6) / 6."""
    erf = b.node("Erf", [b.node("Div", [h, "sqrt2"], f"{p}gelu_div")], f"{p}gelu_erf")
    xf = b.node("Mul", [h, b.node("Add", [erf, "one"], f"{p}gelu_add")], f"{p}gelu_mul")
    g = b.node("Mul", [xf, "half"], f"{p}gelu")
    clip = b.node("Clip", [b.node("Add", [g, "three"], f"{p}hs_add"), "zero", "six"], f"{p}hs_clip")
    return b.node("Div", [b.node("Mul", [g, clip], f"{p}hs_mul"), "six"], f"{p}hswish")


def _transformer(b: _Builder, p: str, h: str) -> str:
    """Pre-norm attention and an activation, added back to h: 27 nodes."""
    y = _layer_norm(b, p, h)
    y = _attention(b, p, y)
    y = _gelu_hardswish(b, p, y)
    return b.node("Add", [h, y], f"{p}tf_out")


def _block(b: _Builder, index: int, h: str) -> str:
    """One residual block of BLOCK_NODES nodes; returns its output."""
    p = f"b{index}_"
    y = _conv_bn_relu(b, p, h)
    y = _scaled_conv(b, p, y)
    y = _noops_and_layout(b, p, y)
    g = _linear_with_gate(b, p, y)
    y = _duplicates_and_unflatten(b, p, g, h)
    out = b.node("Add", [h, y], f"{p}out")
    dead = b.node("Neg", [out], f"{p}dead")
    b.node("Exp", [dead], f"{p}dead_exp")
    return _transformer(b, p, out)


def synthetic_model(num_nodes: int, seed: int = 0) -> onnx.ModelProto:
    """A model of exactly `num_nodes` nodes: residual blocks, then a Relu tail for the remainder."""
    if num_nodes < 1:
        raise ValueError("a synthetic model needs at least one node")
    b = _Builder(seed)
    _shared_constants(b)
    h = INPUT
    for index in range(num_nodes // BLOCK_NODES):
        h = _block(b, index, h)
    for index in range(num_nodes - len(b.nodes)):
        h = b.node("Relu", [h], f"tail_relu{index}")
    x = helper.make_tensor_value_info(INPUT, TensorProto.FLOAT, [1, CHANNELS, HEIGHT, WIDTH])
    y = helper.make_tensor_value_info(h, TensorProto.FLOAT, [1, CHANNELS, HEIGHT, WIDTH])
    graph = helper.make_graph(b.nodes, f"synthetic_{num_nodes}", [x], [y], b.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8,
                             producer_name="bench/synthetic.py")


def write_synthetic(path: str | Path, num_nodes: int, seed: int = 0) -> Path:
    path = Path(path)
    onnx.save(synthetic_model(num_nodes, seed), str(path))
    return path


def relu_chain(nodes: int) -> bytes:
    """A chain of `nodes` Relu nodes on a [1, 16] float tensor, serialized."""
    names = ["x"] + [f"t{i}" for i in range(nodes - 1)] + ["y"]
    chain = [helper.make_node("Relu", [a], [b], name=f"relu{i}") for i, (a, b) in enumerate(itertools.pairwise(names))]
    graph = helper.make_graph(chain, "relu_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
