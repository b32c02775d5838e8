"""ScaleFoldPass: fold a per-channel Mul/Add/Sub/Div by a constant into the Conv/Gemm/MatMul weights before it,
or into the scale and bias of an inference BatchNormalization before it.

Also holds what BatchNormFoldPass shares with it: both see "a per-output-channel affine map y*scale + shift
right after an op with constant weights" and rewrite the weights (`channel_count`, `apply_affine`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY
from ge_core.passes.infra.base import PassResult
from ge_core.passes.infra.rewrite import bypass, control_pinned, drop_unused_constants, is_onnx, single_reader

FLOAT_TYPES = ("float16", "float32", "float64")


@dataclass(frozen=True)
class Affine:
    """y -> y * scale + shift, one float64 entry per output channel."""

    scale: np.ndarray
    shift: np.ndarray


# ---- the ops whose weights absorb an affine map --------------------------------------------------------
# Conv [Cout, Cin/g, k...], ConvTranspose [Cin, Cout/g, k...], Gemm and MatMul each rewrite their own weight
# layout: the op names below are this rewrite's own cases, not a set of ops with a shared fact. Which output
# axis their channels lie on is such a fact: the registry's (OpDef.channel_axis).

def channel_count(graph: Graph, producer: Node) -> int | None:
    """Output channels of a Conv/ConvTranspose/Gemm/MatMul whose weights (and bias) are float constants
    that a per-channel affine map can be folded into; None when it cannot."""
    op, w_name = producer.op_type, producer.input(1)
    w = graph.constants.get(w_name)
    if w is None or w.dtype.name not in FLOAT_TYPES or len(producer.outputs) != 1 or not is_onnx(producer):
        return None
    bias = producer.input(2)
    if bias and not graph.is_constant(bias):
        return None
    if op == "Conv":
        return int(w.shape[0])
    if op == "ConvTranspose":
        return int(w.shape[1]) * int(producer.attr("group", 1))
    if op == "Gemm" and w.ndim == 2:
        return int(w.shape[0] if producer.attr("transB", 0) else w.shape[1])
    if op == "MatMul" and w.ndim == 2 and not bias:
        return int(w.shape[1])
    if op == "BatchNormalization" and w.ndim == 1 and bias and _inference_bn(producer):
        return int(w.shape[0])  # W is BN's scale, the bias its B
    return None


def _inference_bn(bn: Node) -> bool:
    """An inference BN normalising per channel: y = x * k + shift, k and shift one value per channel."""
    training = bn.opset >= 14 and int(bn.attr("training_mode", 0)) == 1
    per_activation = bn.opset < 9 and int(bn.attr("spatial", 1)) == 0
    return len(bn.inputs) == 5 and not training and not per_activation


def takes_shift(producer: Node) -> bool:
    """MatMul has no bias input, so only a pure scale folds into it."""
    return producer.op_type != "MatMul"


def apply_affine(graph: Graph, producer: Node, affine: Affine) -> None:
    """Rewrite the producer's weights (new constants, float64 math) so it computes y * scale + shift."""
    if producer.op_type in ("Conv", "ConvTranspose"):
        _fold_conv(graph, producer, affine)
    elif producer.op_type == "BatchNormalization":  # (x * k + shift) * s + t: scale * s, B * s + t
        scale = graph.constants[producer.input(1)]
        if np.any(affine.scale != 1):
            _replace_const(graph, producer, 1, scale.astype(np.float64) * affine.scale, "scale")
        _fold_bias(graph, producer, 2, affine, scale.dtype, beta=1.0)
    elif producer.op_type == "Gemm":
        _fold_gemm(graph, producer, affine)
    else:
        w = graph.constants[producer.input(1)]  # MatMul's [K, N]: scale its columns
        _replace_const(graph, producer, 1, w.astype(np.float64) * affine.scale, "weight")


def _fold_conv(graph: Graph, conv: Node, affine: Affine) -> None:
    w = graph.constants[conv.input(1)]
    if conv.op_type == "Conv":  # W is [Cout, Cin/group, k...]
        factor = affine.scale.reshape(-1, *(1,) * (w.ndim - 1))
    else:  # W is [Cin, Cout/group, k...]: output channel g*Cout/group + j sits at [input of group g, j]
        group, cin, per_group = int(conv.attr("group", 1)), w.shape[0], w.shape[1]
        rows = np.repeat(affine.scale.reshape(group, per_group), cin // group, axis=0)
        factor = rows.reshape(cin, per_group, *(1,) * (w.ndim - 2))
    if np.any(affine.scale != 1):
        _replace_const(graph, conv, 1, w.astype(np.float64) * factor, "weight")
    _fold_bias(graph, conv, 2, affine, w.dtype, beta=1.0)


def _fold_gemm(graph: Graph, gemm: Node, affine: Affine) -> None:
    b = graph.constants[gemm.input(1)]
    if np.any(affine.scale != 1):
        scaled = (b.T if gemm.attr("transB", 0) else b).astype(np.float64) * affine.scale
        _replace_const(graph, gemm, 1, scaled.T if gemm.attr("transB", 0) else scaled, "weight")
    if _fold_bias(graph, gemm, 2, affine, b.dtype, beta=float(gemm.attr("beta", 1.0))):
        gemm.attrs.pop("beta", None)  # beta now lives in C


def _fold_bias(graph: Graph, node: Node, index: int, affine: Affine, dtype: np.dtype, beta: float) -> bool:
    """bias' = beta * bias * scale + shift (bias absent or ignored counts as 0). True if it changed."""
    name = node.input(index)
    old = graph.constants[name].astype(np.float64) * beta if name and beta != 0.0 else None
    if old is None and not np.any(affine.shift):
        return False
    if old is not None and beta == 1.0 and not np.any(affine.scale != 1) and not np.any(affine.shift):
        return False
    new = (old if old is not None else np.zeros(())) * affine.scale + affine.shift  # broadcasts over channels
    _replace_const(graph, node, index, new.astype(dtype), "bias")
    return True


def _replace_const(graph: Graph, node: Node, index: int, value: np.ndarray, role: str) -> None:
    """Point input `index` at a new constant (never mutate the old array: snapshots share it)."""
    old = node.input(index)
    dtype = graph.constants[old].dtype if old else value.dtype
    if old and graph.num_uses(old) == 1:  # only this node reads it: free its name, so repeated folds keep one
        graph.set_input(node, index, "")
        graph.remove_constant(old)
    name = graph.unique_tensor_name(f"{node.name}.{role}")
    graph.add_constant(name, np.ascontiguousarray(value.astype(dtype)))
    graph.set_input(node, index, name)
    drop_unused_constants(graph, [old])


# ---- ScaleFoldPass ------------------------------------------------------------------------------------

def _unit(v: np.ndarray) -> np.ndarray:
    return np.ones_like(v)


# op -> (constant c per channel, index of the weighted operand) -> the affine map it applies, or None
RULES: dict[str, Callable[[np.ndarray, int], Affine | None]] = {
    "Mul": lambda c, i: Affine(c, 0 * c),                                    # p * c, c * p
    "Add": lambda c, i: Affine(_unit(c), c),                                 # p + c, c + p
    "Sub": lambda c, i: Affine(_unit(c), -c) if i == 0 else Affine(-_unit(c), c),  # p - c, c - p
    "Div": lambda c, i: Affine(1 / c, 0 * c) if i == 0 and np.all(c != 0) else None,  # p / c only
}


def per_channel(c: np.ndarray, out: TensorDesc, axis: int, channels: int) -> np.ndarray | None:
    """c as one float64 value per output channel, when it broadcasts along that axis only (so the op's
    output keeps the producer's shape); None when it varies along any other axis or adds dims."""
    if c.ndim > out.rank or out.shape[axis] != channels:
        return None
    shape = (1,) * (out.rank - c.ndim) + tuple(c.shape)
    if any(d != 1 for i, d in enumerate(shape) if i != axis) or shape[axis] not in (1, channels):
        return None
    vec = np.broadcast_to(c.astype(np.float64).reshape(-1), (channels,))
    return vec if np.all(np.isfinite(vec)) else None  # inf/nan would not distribute over the sum


@dataclass(frozen=True)
class ScaleFoldPass:
    """Fold a Mul/Add/Sub/Div by a per-channel constant into the Conv, Gemm or MatMul right before it.

    (x * W + b) * s + t equals x * (W * s) + (b * s + t) when s and t are one value per output channel,
    so the elementwise op disappears and its work is done by the weights, once, at compile time. Graph
    compilers do this to remove memory-bound passes over whole activations (GE's ConvScaleFusionPass).
    An inference BatchNormalization is such an op too, its scale and B the weights (DenseNet's exported
    BN -> Mul -> Add -> Relu after each Concat becomes BN -> Relu: two passes fewer over the activation).
    """

    name: ClassVar[str] = "ScaleFoldPass"

    def run(self, graph: Graph) -> PassResult:
        pinned = control_pinned(graph)
        folds: Counter[str] = Counter()
        for node in graph.nodes:  # topological: a chain Conv -> Mul -> Add folds link by link
            if node.op_type in RULES and graph.has_node(node.name):
                target = fold_into_producer(graph, node, pinned)
                if target:
                    folds[f"{node.op_type} into {target}"] += 1
        if not folds:
            return PassResult(False)
        detail = ", ".join(f"{n} {k}" for k, n in sorted(folds.items()))
        return PassResult(True, (f"folded {sum(folds.values())} constant scale/shift op(s) into the weights "
                                 f"before them ({detail})",))


def fold_into_producer(graph: Graph, node: Node, pinned: set[str]) -> str | None:
    """Fold `node` (p op c) into p's weights and remove it; the producer's op type, or None if not safe."""
    if len(node.inputs) != 2 or len(node.outputs) != 1 or node.input(0) == node.input(1) or not is_onnx(node):
        return None
    if node.name in pinned:
        return None
    out = graph.desc(node.outputs[0])
    for i in (0, 1):
        producer, c_name = graph.producer(node.input(i)), node.input(1 - i)
        if producer is None or not graph.is_constant(c_name) or single_reader(graph, node.input(i)) is not node:
            continue
        channels = channel_count(graph, producer)
        p_out = graph.desc(node.input(i))
        c = graph.constants[c_name]
        if channels is None or out.shape != p_out.shape or not out.dtype == p_out.dtype == c.dtype.name:
            continue
        axis = REGISTRY.channel_axis(producer, p_out.rank)
        vec = per_channel(c, p_out, axis, channels) if axis is not None else None
        affine = RULES[node.op_type](vec, i) if vec is not None else None
        if affine is None or (np.any(affine.shift) and not takes_shift(producer)):
            continue
        apply_affine(graph, producer, affine)
        bypass(graph, node, node.input(i))  # the producer's output is intermediate: bypass cannot refuse
        drop_unused_constants(graph, [c_name])
        return producer.op_type
    return None
