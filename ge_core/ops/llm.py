"""The small ops LLM exporters emit around attention (opsets 23-28): RMSNormalization, RotaryEmbedding,
SwiGLU and TensorScatter (the KV-cache write).

Categories: RMSNormalization reduces over axes [axis, rank) and broadcasts the statistic back, so REDUCE,
as LayerNormalization; SwiGLU is elementwise over two same-shape inputs (a transcendental, exp); a
rotary embedding mixes each element with its partner half a head away, by a cos/sin row gathered per
position: neither elementwise nor a plain gather, so OPAQUE (as Ascend's own RotaryMul kernel stands
alone); TensorScatter copies the cache with a window of it replaced, each output element one input
element, so INJECTIVE and DMA only (MTE).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ge_core.errors import ExecutionError
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    dtype_from_onnx,
    elementwise_cost,
    io_bytes,
    like,
    normalize_axis,
    operand,
    optional,
    require_inputs,
    shape_error,
    zero_flop_cost,
)
from ge_core.ops.registry import Category, Cost, InferFn, OpDef, Operand, Unit, VectorClass
from ge_core.ops.spatial import operands_of

FLOATS = ("float16", "float32", "float64", "bfloat16")


def _float(node: Node, operands: list[Operand | None], index: int, name: str) -> TensorDesc:
    d = operand(node, operands, index).desc
    if d.dtype not in FLOATS:
        raise shape_error(node, operands, f"{name} must be one of {', '.join(FLOATS)}, got {d.dtype}")
    return d


def _like_input_0(check: Callable[[Node, list[Operand | None]], object]) -> InferFn:
    """The inference of an op whose output has its first input's shape and dtype, once `check` passes."""

    def infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
        check(node, operands)
        return [like(operand(node, operands, 0).desc)]

    return infer


# ---- RMSNormalization ----------------------------------------------------------------------------------

def _rms_axis(node: Node, operands: list[Operand | None]) -> int:
    require_inputs(node, operands, 2, 2)
    x = _float(node, operands, 0, "X")
    axis = normalize_axis(node, operands, int(node.attr("axis", -1)), x.rank)
    stash = dtype_from_onnx(node, int(node.attr("stash_type", 1)))
    if stash not in ("float32", "float64"):
        raise shape_error(node, operands, f"stash_type {stash} is unsupported (use 1, float32, or 11, float64)")
    scale, normalized = operand(node, operands, 1).desc, x.shape[axis:]
    tail = normalized[len(normalized) - scale.rank:] if scale.rank <= len(normalized) else None
    if tail is None or any(s not in (1, t) and s >= 0 and t >= 0 for s, t in zip(scale.shape, tail, strict=True)):
        raise shape_error(node, operands, f"scale {list(scale.shape)} does not broadcast to the normalized shape "
                                          f"{list(normalized)} (axis={axis})")
    return axis


def _rms(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """x / sqrt(mean(x^2 over [axis, rank)) + epsilon) * scale, the statistics in the stash type."""
    x, scale = inputs
    assert x is not None and scale is not None
    axis = int(node.attr("axis", -1)) % x.ndim
    stash = np.dtype(dtype_from_onnx(node, int(node.attr("stash_type", 1))))
    dt = np.dtype(np.float64) if x.dtype == np.float64 else stash
    xs = x.astype(dt, copy=False)
    mean_square = np.mean(np.square(xs), axis=tuple(range(axis, x.ndim)), keepdims=True)
    y = xs * np.reciprocal(np.sqrt(mean_square + dt.type(node.attr("epsilon", 1e-5))))
    return [(y * scale.astype(dt, copy=False)).astype(x.dtype, copy=False)]


def _rms_span(node: Node, shape: tuple[int, ...]) -> int:
    return math.prod(shape[int(node.attr("axis", -1)) % len(shape):])  # the axes [axis, rank)


# ---- SwiGLU --------------------------------------------------------------------------------------------

def _infer_swiglu(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    a, b = _float(node, operands, 0, "A"), _float(node, operands, 1, "B")
    if a.dtype != b.dtype or a.rank != b.rank or any(x != y and x >= 0 and y >= 0
                                                     for x, y in zip(a.shape, b.shape, strict=True)):
        raise shape_error(node, operands, f"A and B must have one shape and dtype (no broadcasting), got "
                                          f"{a.text()} and {b.text()}")
    return [like(a)]


def _swiglu(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """a * sigmoid(alpha * a) * b in the inputs' dtype, step for step as onnx.reference."""
    a, b = inputs
    assert a is not None and b is not None
    alpha = float(node.attr("alpha", 1.0))
    swish = a * (1 / (1 + np.exp(-alpha * a))).astype(a.dtype)
    return [(swish * b).astype(a.dtype, copy=False)]


# ---- RotaryEmbedding -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rotary:
    heads: int
    head: int  # head size
    rotary_dim: int  # the leading part of each head that rotates (the rest is copied)


def rotary_geometry(node: Node, operands: list[Operand | None]) -> Rotary:
    """X is 4-D (batch, heads, seq, head) or 3-D (batch, seq, heads * head, with num_heads); the caches
    (positions, rotary_dim / 2) indexed by position_ids (batch, seq), or (batch, seq, rotary_dim / 2)."""
    require_inputs(node, operands, 3, 4)
    x = _float(node, operands, 0, "X")
    cos, sin = operand(node, operands, 1).desc, operand(node, operands, 2).desc
    if x.rank not in (3, 4):
        raise shape_error(node, operands, f"X must be 3-D or 4-D, got rank {x.rank}")
    if x.rank == 4:
        heads, head, batch, seq = x.shape[1], x.shape[3], x.shape[0], x.shape[2]
    else:
        heads = int(node.attr("num_heads", 0))
        if heads < 1:
            raise shape_error(node, operands, "3-D X needs the num_heads attribute (>= 1)")
        if x.shape[2] >= 0 and x.shape[2] % heads:
            raise shape_error(node, operands, f"X's hidden size {x.shape[2]} is not a multiple of {heads} heads")
        head, batch, seq = x.shape[2] // heads if x.shape[2] >= 0 else -1, x.shape[0], x.shape[1]
    rotary_dim = int(node.attr("rotary_embedding_dim", 0)) or head
    if head >= 0 and (rotary_dim % 2 or rotary_dim > head):
        raise shape_error(node, operands, f"the rotary dim {rotary_dim} must be even and at most the head size {head}")
    positions = optional(operands, 3)
    want = (-1, rotary_dim // 2) if positions is not None else (batch, seq, rotary_dim // 2)
    if positions is not None and (positions.desc.dtype != "int64" or not _fits(positions.desc.shape, (batch, seq))):
        raise shape_error(node, operands, f"position_ids must be int64 of shape [{batch}, {seq}], got "
                                          f"{positions.desc.text()}")
    for name, d in (("cos_cache", cos), ("sin_cache", sin)):
        if d.dtype != x.dtype or not _fits(d.shape, want):
            shown = "[positions, " + str(want[-1]) + "]" if positions is not None else str(list(want))
            raise shape_error(node, operands, f"{name} must be {x.dtype} of shape {shown}, got {d.text()}")
    return Rotary(heads, head, rotary_dim)


def _fits(shape: tuple[int, ...], want: tuple[int, ...]) -> bool:
    return len(shape) == len(want) and all(s == w or s < 0 or w < 0 for s, w in zip(shape, want, strict=True))


def rotary_kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """onnx.reference's arithmetic: per (batch, seq, head), real = cos x1 - sin x2, imag = sin x1 + cos x2,
    (x1, x2) the two halves of the rotated part, or its even and odd elements when interleaved."""
    x, cos, sin = inputs[0], inputs[1], inputs[2]
    positions = inputs[3] if len(inputs) > 3 else None
    assert x is not None and cos is not None and sin is not None
    g = rotary_geometry(node, operands_of(inputs))
    heads = x.transpose(0, 2, 1, 3) if x.ndim == 4 else x.reshape(*x.shape[:2], g.heads, g.head)
    if positions is not None:
        cos, sin = cos[positions], sin[positions]
    cos, sin = cos[:, :, None, :], sin[:, :, None, :]  # (batch, seq, 1, rotary_dim / 2)
    rotate = heads[..., :g.rotary_dim]
    interleaved = bool(node.attr("interleaved", 0))
    x1, x2 = (rotate[..., 0::2], rotate[..., 1::2]) if interleaved else np.split(rotate, 2, axis=-1)
    real, imag = cos * x1 - sin * x2, sin * x1 + cos * x2
    rotated = np.stack((real, imag), -1).reshape(rotate.shape) if interleaved else np.concatenate((real, imag), -1)
    out = np.concatenate((rotated, heads[..., g.rotary_dim:]), axis=-1).astype(x.dtype, copy=False)
    return [out.transpose(0, 2, 1, 3) if x.ndim == 4 else out.reshape(x.shape)]


def _rotary_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """3 FLOPs per rotated element (x1 * cos - x2 * sin); the rest is copied."""
    x = inputs[0]
    assert x is not None
    g = rotary_geometry(node, [None if d is None else Operand(d) for d in inputs])
    elements = (x.numel or 0) * g.rotary_dim // max(g.head, 1)
    return Cost(3 * elements, *io_bytes(inputs, outputs))


# ---- TensorScatter -------------------------------------------------------------------------------------

def _scatter_axis(node: Node, operands: list[Operand | None]) -> int:
    require_inputs(node, operands, 2, 3)
    cache, update = operand(node, operands, 0).desc, operand(node, operands, 1).desc
    mode = node.attr("mode", "linear")
    if mode not in ("linear", "circular"):
        raise shape_error(node, operands, f"mode must be 'linear' or 'circular', got '{mode}'")
    if cache.rank < 2:
        raise shape_error(node, operands, f"past_cache must have rank >= 2 (batch, ..., sequence, ...), got "
                                          f"{cache.rank}")
    axis = normalize_axis(node, operands, int(node.attr("axis", -2)), cache.rank)
    if axis == 0:
        raise shape_error(node, operands, "axis must not be 0, the batch axis")
    same = update.rank == cache.rank and all(
        u < 0 or c < 0 or (u <= c if i == axis else u == c)
        for i, (c, u) in enumerate(zip(cache.shape, update.shape, strict=True)))
    if update.dtype != cache.dtype or not same:
        raise shape_error(node, operands, f"update {update.text()} must match past_cache {cache.text()} but on "
                                          f"axis {axis}, where it may be shorter")
    indices = optional(operands, 2)
    if indices is not None and (indices.desc.dtype != "int64" or indices.desc.shape not in ((cache.shape[0],), (-1,))):
        raise shape_error(node, operands, f"write_indices must be int64 of shape [{cache.shape[0]}], got "
                                          f"{indices.desc.text()}")
    return axis


def _tensor_scatter(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """The cache with `update` written at write_indices[b] along the axis, per batch (wrapped if circular)."""
    cache, update = inputs[0], inputs[1]
    assert cache is not None and update is not None
    indices = inputs[2] if len(inputs) > 2 and inputs[2] is not None else np.zeros(cache.shape[0], np.int64)
    axis = int(node.attr("axis", -2)) % cache.ndim
    length, count = cache.shape[axis], update.shape[axis]
    circular = node.attr("mode", "linear") == "circular"
    out = cache.copy()
    for b in range(cache.shape[0]):
        positions = int(indices[b]) + np.arange(count)
        if circular:
            positions %= max(length, 1)
        elif count and not 0 <= positions[0] <= positions[-1] < length:
            raise ExecutionError(node.name, node.op_type, [list(cache.shape), list(update.shape)],
                                 f"batch {b} writes positions {positions[0]}..{positions[-1]} of a cache of "
                                 f"{length} (linear mode needs write_indices + update length <= {length})")
        np.moveaxis(out[b], axis - 1, 0)[positions] = np.moveaxis(update[b], axis - 1, 0)
    return [out]


OPS: list[OpDef] = [
    # x / sqrt(mean(x^2 over [axis, rank)) + epsilon) * scale
    OpDef("RMSNormalization", Category.REDUCE, _like_input_0(_rms_axis), _rms, elementwise_cost(4),
          reduce_span=_rms_span),
    # rotate (x1, x2) pairs of each head (halves, or interleaved) by the cos/sin of the token's position
    OpDef("RotaryEmbedding", Category.OPAQUE, _like_input_0(rotary_geometry), rotary_kernel, _rotary_cost,
          doc="rotary position embedding"),
    # a * sigmoid(alpha * a) * b: the gated linear unit of LLM MLPs
    OpDef("SwiGLU", Category.ELEMENTWISE, _infer_swiglu, _swiglu, elementwise_cost(5),
          vector_class=VectorClass.TRANSCENDENTAL),
    # the cache with the update written at each batch's write index along the sequence axis
    OpDef("TensorScatter", Category.INJECTIVE, _like_input_0(_scatter_axis), _tensor_scatter, zero_flop_cost,
          unit=Unit.MTE, doc="KV-cache update"),
]
