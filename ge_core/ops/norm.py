"""Normalisations: BatchNormalization (inference), InstanceNormalization, LayerNormalization,
GroupNormalization and LRN.

Statistics are computed in float32 (float64 for float64 inputs; LayerNormalization follows stash_type)
and the result is cast back to X's dtype. Categories: BatchNormalization at inference is a per-channel
affine map, so BROADCAST; Instance/Layer/Group normalisation reduce over axes and then broadcast the
statistics back, so REDUCE; LRN sums squares over a sliding window of channels, which is neither an
axis reduction nor elementwise, so OPAQUE.
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    dtype_from_onnx,
    elementwise_cost,
    like,
    make_desc,
    normalize_axis,
    operand,
    optional,
    positive_int_attr,
    require_inputs,
    shape_error,
)
from ge_core.ops.kernel_memo import memoized
from ge_core.ops.registry import Category, NpuLayout, OpDef, Operand, VectorClass
from ge_core.ops.spatial import operands_of

FLOAT_TYPES = ("float16", "float32", "float64", "bfloat16")


def _float_input(node: Node, operands: list[Operand | None], min_rank: int) -> TensorDesc:
    x = operand(node, operands, 0).desc
    if x.dtype not in FLOAT_TYPES:
        raise shape_error(node, operands, f"{node.op_type} supports {', '.join(FLOAT_TYPES)}, got {x.dtype}")
    if x.rank < min_rank:
        raise shape_error(node, operands, f"X must have rank >= {min_rank}, got rank {x.rank}")
    return x


def _check_param(node: Node, operands: list[Operand | None], index: int, name: str,
                 want: tuple[int, ...]) -> None:
    """Input `index` must have shape `want` (unknown dims on either side are accepted)."""
    op = optional(operands, index)
    if op is None:
        return
    have = op.desc.shape
    if len(have) != len(want) or any(h != w for h, w in zip(have, want, strict=True) if h >= 0 and w >= 0):
        raise shape_error(node, operands, f"{name} must have shape {list(want)}, got {list(have)}")


def _stat_dtype(x: np.ndarray) -> np.dtype:
    return np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(np.float32)


def _per_channel(a: np.ndarray, dtype: np.dtype, rank: int) -> np.ndarray:
    """A (C,) parameter shaped to broadcast over N x C x D1 ... Dn."""
    return a.astype(dtype, copy=False).reshape((-1,) + (1,) * (rank - 2))


# ---- BatchNormalization ------------------------------------------------------------------------------

def _infer_batch_norm(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 5, 5)
    _refuse_training(node, operands)
    x = _float_input(node, operands, 2)
    want = tuple(x.shape[1:]) if _per_activation(node) else (x.shape[1],)
    for index, name in enumerate(("scale", "B", "mean", "var"), start=1):
        _check_param(node, operands, index, name, want)
    return [like(x)]


def _per_activation(node: Node) -> bool:
    """Before opset 9, spatial=0 meant statistics per activation (shape C x D1 ... Dn), not per channel."""
    return node.opset < 9 and int(node.attr("spatial", 1)) == 0


def _refuse_training(node: Node, operands: list[Operand | None]) -> None:
    training = node.opset >= 14 and int(node.attr("training_mode", 0)) == 1
    # Before opset 14 the extra outputs (running/saved mean and variance) exist only for training.
    if training or len([t for t in node.outputs if t]) > 1:
        raise shape_error(node, operands, "training mode (batch statistics, running mean/var outputs) is "
                                          "unsupported; GE Workbench runs BatchNormalization for inference "
                                          "only: set training_mode=0 and keep only the Y output")


def _batch_norm(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    k, shift = batch_norm_affine(node, inputs)
    y = x.astype(k.dtype, copy=False) * k
    y += shift
    return [y.astype(x.dtype, copy=False)]


def batch_norm_affine(node: Node, inputs: list[np.ndarray | None]) -> tuple[np.ndarray, np.ndarray]:
    """An inference BatchNormalization as one multiply-add per element, y = x * k + shift, with
    k = scale / sqrt(var + eps) and shift = B - mean * k in the statistics dtype, shaped to broadcast
    over x (per channel, or per activation before opset 9 with spatial=0)."""
    x, scale, bias, mean, var = inputs
    assert x is not None and scale is not None and bias is not None and mean is not None and var is not None
    dt = _stat_dtype(x)
    if _per_activation(node):
        def shaped(a: np.ndarray) -> np.ndarray:
            return a.astype(dt, copy=False)
    else:
        def shaped(a: np.ndarray) -> np.ndarray:
            return _per_channel(a, dt, x.ndim)
    k = shaped(scale) / np.sqrt(shaped(var) + dt.type(node.attr("epsilon", 1e-5)))
    return k, shaped(bias) - shaped(mean) * k


def batch_norm_is_per_channel(node: Node) -> bool:
    """Its statistics are one value per channel (not per activation: opset < 9 with spatial=0)."""
    return not _per_activation(node)


# ---- InstanceNormalization ---------------------------------------------------------------------------

def _infer_instance_norm(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 3, 3)
    x = _float_input(node, operands, 3)
    _check_param(node, operands, 1, "scale", (x.shape[1],))
    _check_param(node, operands, 2, "B", (x.shape[1],))
    return [like(x)]


def _instance_norm(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, scale, bias = inputs
    assert x is not None and scale is not None and bias is not None
    dt = _stat_dtype(x)
    axes = tuple(range(2, x.ndim))
    y = _standardize(x.astype(dt, copy=False), axes, float(node.attr("epsilon", 1e-5)))[0]
    y *= _per_channel(scale, dt, x.ndim)
    y += _per_channel(bias, dt, x.ndim)
    return [y.astype(x.dtype, copy=False)]


def _instance_norm_span(node: Node, shape: tuple[int, ...]) -> int:
    return math.prod(shape[2:])  # one (n, c): the spatial axes


def _standardize(x: np.ndarray, axes: tuple[int, ...], epsilon: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x - mean) / sqrt(var + eps) over `axes`, with the mean and 1/std (keepdims)."""
    mean = x.mean(axis=axes, keepdims=True)
    centered = x - mean
    var = np.mean(np.square(centered), axis=axes, keepdims=True)
    inv_std = 1.0 / np.sqrt(var + x.dtype.type(epsilon))
    centered *= inv_std
    return centered, mean, inv_std


# ---- LayerNormalization ------------------------------------------------------------------------------

def _layer_norm_geometry(node: Node, operands: list[Operand | None]) -> tuple[int, str]:
    require_inputs(node, operands, 2, 3)
    x = _float_input(node, operands, 1)
    axis = normalize_axis(node, operands, int(node.attr("axis", -1)), x.rank)
    stash = dtype_from_onnx(node, int(node.attr("stash_type", 1)))
    if stash not in ("float32", "float64", "float16"):
        raise shape_error(node, operands, f"stash_type {stash} is unsupported (use float32 or float64)")
    normalized = x.shape[axis:]
    for index, name in ((1, "Scale"), (2, "B")):
        op = optional(operands, index)
        if op is not None and not _broadcasts_to(op.desc.shape, normalized):
            raise shape_error(node, operands, f"{name} {list(op.desc.shape)} does not broadcast to the "
                                              f"normalized shape {list(normalized)} (axis={axis})")
    return axis, stash


def _broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Unidirectional broadcasting: `shape` stretches to `target`, never the other way."""
    if len(shape) > len(target):
        return False
    tail = target[len(target) - len(shape):]
    return all(s in (1, t) or s < 0 or t < 0 for s, t in zip(shape, tail, strict=True))


def _infer_layer_norm(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    axis, stash = _layer_norm_geometry(node, operands)
    x = operand(node, operands, 0).desc
    stats = (*x.shape[:axis], *(1,) * (x.rank - axis))
    return [like(x), make_desc(stats, stash), make_desc(stats, stash)]


def layer_norm_geometry(node: Node, inputs: list[np.ndarray | None]) -> tuple[int, str]:
    """A LayerNormalization's first normalised axis (non-negative) and its stash dtype, for concrete inputs
    (memoized; the fast path in ge_core/kernels asks too)."""
    return memoized(node, inputs, lambda: _layer_norm_geometry(node, operands_of(inputs)))


def _layer_norm(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, scale = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    assert x is not None and scale is not None
    axis, stash = layer_norm_geometry(node, inputs)
    # stash_type sets the statistics' precision and dtype; float64 inputs keep float64 precision.
    dt = np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(stash)
    epsilon = float(node.attr("epsilon", 1e-5))
    axes = tuple(range(axis, x.ndim))
    y, mean, inv_std = _standardize(x.astype(dt, copy=False), axes, epsilon)
    y *= scale.astype(dt, copy=False)
    if bias is not None:
        y += bias.astype(dt, copy=False)
    return [y.astype(x.dtype, copy=False), mean.astype(stash, copy=False), inv_std.astype(stash, copy=False)]


def _layer_norm_span(node: Node, shape: tuple[int, ...]) -> int:
    return math.prod(shape[int(node.attr("axis", -1)) % len(shape):])  # the axes [axis, rank)


# ---- GroupNormalization ------------------------------------------------------------------------------

def _infer_group_norm(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 3, 3)
    x = _float_input(node, operands, 2)
    groups = positive_int_attr(node, operands, "num_groups")
    channels = x.shape[1]
    if channels >= 0 and channels % groups:
        raise shape_error(node, operands, f"num_groups={groups} does not divide the channels ({channels})")
    # Opset 18 had one scale/bias per group; opset 21 moved to one per channel.
    want = (channels,) if node.opset >= 21 else (groups,)
    _check_param(node, operands, 1, "scale", want)
    _check_param(node, operands, 2, "bias", want)
    return [like(x)]


def _group_norm(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, scale, bias = inputs
    assert x is not None and scale is not None and bias is not None
    groups = int(node.attr("num_groups"))
    dt = _stat_dtype(x)
    grouped = x.astype(dt, copy=False).reshape(x.shape[0], groups, -1)
    y = _standardize(grouped, (2,), float(node.attr("epsilon", 1e-5)))[0].reshape(x.shape)
    if node.opset < 21:  # one parameter per group: repeat it over the group's channels
        scale, bias = (np.repeat(a, x.shape[1] // groups) for a in (scale, bias))
    y *= _per_channel(scale, dt, x.ndim)
    y += _per_channel(bias, dt, x.ndim)
    return [y.astype(x.dtype, copy=False)]


def _group_norm_span(node: Node, shape: tuple[int, ...]) -> int:
    return math.prod(shape) // max(shape[0] * int(node.attr("num_groups", 1)), 1)  # one (n, group)


# ---- LRN ---------------------------------------------------------------------------------------------

def _infer_lrn(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    x = _float_input(node, operands, 3)
    positive_int_attr(node, operands, "size")
    return [like(x)]


def _lrn(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """y = x / (bias + alpha / size * square_sum)^beta, where square_sum adds x^2 over the channels
    [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to the valid range."""
    (x,) = inputs
    assert x is not None
    size = int(node.attr("size"))
    alpha, beta, bias = (float(node.attr(k, d)) for k, d in (("alpha", 1e-4), ("beta", 0.75), ("bias", 1.0)))
    dt = _stat_dtype(x)
    sq = np.square(x.astype(dt, copy=False))
    # Windowed channel sums as differences of a zero-led cumulative sum.
    cum = np.concatenate([np.zeros_like(sq[:, :1]), np.cumsum(sq, axis=1)], axis=1)
    c = np.arange(x.shape[1])
    lo = np.clip(c - (size - 1) // 2, 0, x.shape[1])
    hi = np.clip(c + (size - 1) - (size - 1) // 2 + 1, 0, x.shape[1])
    window = cum[:, hi] - cum[:, lo]
    y = x.astype(dt, copy=False) / np.power(dt.type(bias) + dt.type(alpha / size) * window, dt.type(beta))
    return [y.astype(x.dtype, copy=False)]


OPS: list[OpDef] = [
    # inference: y = scale * (x - mean) / sqrt(var + epsilon) + B, per channel
    OpDef("BatchNormalization", Category.BROADCAST, _infer_batch_norm, _batch_norm, elementwise_cost(2),
          npu_layout=NpuLayout.CHANNEL_NORM, channel_axis=1, ge_types=("BNInfer", "BatchNorm")),
    # per (n, c): standardize over the spatial axes, then per-channel scale and B
    OpDef("InstanceNormalization", Category.REDUCE, _infer_instance_norm, _instance_norm,
          elementwise_cost(8), npu_layout=NpuLayout.CHANNEL_NORM, reduce_span=_instance_norm_span, channel_axis=1),
    # standardize over axes [axis, rank), then Scale and B; optional Mean and InvStdDev outputs
    OpDef("LayerNormalization", Category.REDUCE, _infer_layer_norm, _layer_norm, elementwise_cost(8),
          reduce_span=_layer_norm_span, ge_types=("LayerNorm", "LayerNormV3")),
    # standardize over each group of channels (and the spatial axes), then per-channel scale and bias
    OpDef("GroupNormalization", Category.REDUCE, _infer_group_norm, _group_norm, elementwise_cost(8),
          reduce_span=_group_norm_span, channel_axis=1),
    # local response normalization across a window of `size` neighbouring channels
    OpDef("LRN", Category.OPAQUE, _infer_lrn, _lrn, elementwise_cost(6),
          vector_class=VectorClass.TRANSCENDENTAL, npu_layout=NpuLayout.CHANNEL_NORM),
]
