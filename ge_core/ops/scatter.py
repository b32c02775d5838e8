"""Index-driven data movement: ScatterElements (and its old name Scatter), ReverseSequence, OneHot and
CenterCropPad.

Indices may be negative (counted from the end); an out-of-range index is an ExecutionError naming the
node (a ShapeError when the indices are known at inference), never a bare IndexError.
"""

from __future__ import annotations

import numpy as np

from ge_core.errors import ExecutionError
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    UNK,
    elementwise_cost,
    known_ints,
    like,
    make_desc,
    normalize_axis,
    operand,
    require_inputs,
    same_dtype,
    shape_error,
    zero_flop_cost,
)
from ge_core.ops.indexing import SCATTER_REDUCTIONS
from ge_core.ops.math import NUMERIC, check_dtype
from ge_core.ops.registry import Category, OpDef, Operand, VectorClass

INDEX_DTYPES = ("int32", "int64")


def _arg_error(node: Node, inputs: list[np.ndarray | None], message: str) -> ExecutionError:
    return ExecutionError(node.name, node.op_type, [None if a is None else list(a.shape) for a in inputs], message)


# ---- ScatterElements / Scatter ------------------------------------------------------------------------
def _infer_scatter_elements(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 3, 3)
    data, indices, updates = (operand(node, operands, i).desc for i in range(3))
    if indices.dtype not in INDEX_DTYPES:
        raise shape_error(node, operands, f"indices must be int32 or int64, got {indices.dtype}")
    same_dtype(node, operands, [0, 2])
    if not data.rank or indices.rank != data.rank:
        raise shape_error(node, operands, f"indices must have data's rank {data.rank} (>= 1), got {indices.rank}")
    if indices.rank != updates.rank or any(a >= 0 and b >= 0 and a != b
                                           for a, b in zip(indices.shape, updates.shape, strict=True)):
        raise shape_error(node, operands, f"updates {list(updates.shape)} must have the indices' shape "
                                          f"{list(indices.shape)}")
    axis = normalize_axis(node, operands, int(node.attr("axis", 0)), data.rank)
    for i, (di, dd) in enumerate(zip(indices.shape, data.shape, strict=True)):
        if i != axis and di >= 0 and dd >= 0 and di > dd:
            raise shape_error(node, operands, f"indices dim {i} ({di}) exceeds the data's ({dd})")
    reduction = str(node.attr("reduction", "none"))
    if reduction != "none" and reduction not in SCATTER_REDUCTIONS:
        raise shape_error(node, operands, f"reduction {reduction!r} is not one of none/add/mul/max/min")
    return [like(data)]


def _scatter_elements(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """out = copy(data); out[..., indices[i], ...] (at axis) = updates[i] (or combined by reduction)."""
    data, indices, updates = inputs[0], inputs[1], inputs[2]
    assert data is not None and indices is not None and updates is not None
    axis = int(node.attr("axis", 0)) % data.ndim
    dim = data.shape[axis]
    idx = indices.astype(np.int64)
    if idx.size and (idx.min() < -dim or idx.max() >= dim):
        bad = int(idx.min()) if idx.min() < -dim else int(idx.max())
        raise _arg_error(node, inputs, f"index {bad} is out of range for axis {axis} of size {dim}.")
    index = list(np.ogrid[tuple(slice(n) for n in idx.shape)])
    index[axis] = np.where(idx < 0, idx + dim, idx)
    out = data.copy()  # never write into the input
    reduction = str(node.attr("reduction", "none"))
    if reduction == "none":
        out[tuple(index)] = updates  # repeated indices: the last update wins, as the spec's loop does
    else:  # ufunc.at applies repeated indices one after another
        full = tuple(np.broadcast_to(i, idx.shape) for i in index)
        SCATTER_REDUCTIONS[reduction].at(out, full, updates)
    return [out]


# ---- ReverseSequence ----------------------------------------------------------------------------------
def _rs_axes(node: Node, operands: list[Operand | None], rank: int) -> tuple[int, int]:
    time_axis, batch_axis = int(node.attr("time_axis", 0)), int(node.attr("batch_axis", 1))
    if {time_axis, batch_axis} != {0, 1}:
        raise shape_error(node, operands, f"time_axis={time_axis} and batch_axis={batch_axis} must be 0 and 1 "
                                          "(one each)")
    if rank < 2:
        raise shape_error(node, operands, f"input must have rank >= 2, got {rank}")
    return time_axis, batch_axis


def _infer_reverse_sequence(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    x, lens = operand(node, operands, 0).desc, operand(node, operands, 1).desc
    _, batch_axis = _rs_axes(node, operands, x.rank)
    if lens.dtype != "int64" or lens.rank != 1:
        raise shape_error(node, operands, f"sequence_lens must be a 1-D int64 tensor, got {lens.text()}")
    batch = x.shape[batch_axis]
    if batch >= 0 and lens.shape[0] >= 0 and batch != lens.shape[0]:
        raise shape_error(node, operands, f"sequence_lens has {lens.shape[0]} values for a batch of {batch}")
    return [like(x)]


def _reverse_sequence(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """Each batch entry's first sequence_lens[b] time steps reversed; the rest copied as they are."""
    x, lens = inputs[0], inputs[1]
    assert x is not None and lens is not None
    time_axis = int(node.attr("time_axis", 0))
    steps = x.shape[time_axis]
    if lens.size and (lens.min() < 0 or lens.max() > steps):
        raise _arg_error(node, inputs, f"sequence_lens must be in [0, {steps}], got {lens.tolist()}.")
    t = np.arange(steps)[:, None]
    src = np.where(t < lens[None, :], lens[None, :] - 1 - t, t)  # [time, batch]
    if time_axis == 1:
        src = src.T
    src = src.reshape(src.shape + (1,) * (x.ndim - 2))
    return [np.take_along_axis(x, np.broadcast_to(src, x.shape), axis=time_axis)]


# ---- OneHot -------------------------------------------------------------------------------------------
def _infer_one_hot(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 3, 3)
    indices, depth, values = (operand(node, operands, i) for i in range(3))
    for name, op in (("indices", indices), ("depth", depth)):
        check_dtype(node, operands, op.desc.dtype, NUMERIC, name)
    if depth.desc.rank > 1 or (depth.desc.rank == 1 and depth.desc.shape[0] not in (1, UNK)):
        raise shape_error(node, operands, f"depth must be a scalar, got shape {list(depth.desc.shape)}")
    if values.desc.rank != 1 or values.desc.shape[0] not in (2, UNK):
        raise shape_error(node, operands, f"values must be [off_value, on_value], got shape "
                                          f"{list(values.desc.shape)}")
    axis = normalize_axis(node, operands, int(node.attr("axis", -1)), indices.desc.rank, extra=1)
    known = known_ints(depth)
    n = UNK if known is None else known[0]
    if n != UNK and n < 1:
        raise shape_error(node, operands, f"depth must be >= 1, got {n}")
    shape = list(indices.desc.shape)
    shape.insert(axis, n)
    return [make_desc(shape, values.desc.dtype)]


def _one_hot(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """values[1] where the (wrapped) index equals the position along axis, values[0] elsewhere; an index
    outside [-depth, depth) matches nothing."""
    indices, depth_t, values = inputs[0], inputs[1], inputs[2]
    assert indices is not None and depth_t is not None and values is not None
    depth = int(np.asarray(depth_t).reshape(-1)[0])
    axis = int(node.attr("axis", -1)) % (indices.ndim + 1)
    idx = indices.astype(np.int64) if indices.dtype.kind != "f" else np.trunc(indices).astype(np.int64)
    idx = np.where(idx < 0, idx + depth, idx)
    positions = np.arange(depth).reshape((depth,) + (1,) * (indices.ndim - axis))
    hot = np.expand_dims(idx, axis) == positions
    return [np.where(hot, values[1], values[0]).astype(values.dtype)]


# ---- CenterCropPad ------------------------------------------------------------------------------------
def _ccp_axes(node: Node, operands: list[Operand | None], rank: int) -> list[int]:
    raw = node.attr("axes")
    axes = list(range(rank)) if raw is None else [normalize_axis(node, operands, int(a), rank, name="axes")
                                                  for a in raw]
    if len(set(axes)) != len(axes):
        raise shape_error(node, operands, f"axes {list(raw or [])} name the same axis twice")
    return axes


def _infer_center_crop_pad(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    x, shape = operand(node, operands, 0).desc, operand(node, operands, 1)
    if shape.desc.dtype not in INDEX_DTYPES or shape.desc.rank != 1:
        raise shape_error(node, operands, f"shape must be a 1-D int32/int64 tensor, got {shape.desc.text()}")
    axes = _ccp_axes(node, operands, x.rank)
    if shape.desc.shape[0] not in (len(axes), UNK):
        raise shape_error(node, operands, f"shape has {shape.desc.shape[0]} values for {len(axes)} axes")
    sizes = known_ints(shape)
    out = list(x.shape)
    for i, a in enumerate(axes):
        out[a] = UNK if sizes is None else sizes[i]
    if any(d < UNK for d in out):
        raise shape_error(node, operands, f"shape {sizes} must be non-negative")
    return [like(x, out)]


def _center_crop_pad(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """Per axis, the centred window of the target size: cropped from the input where it is larger, padded
    with zeros around it where smaller; an odd difference puts the extra element at the end."""
    x, shape_t = inputs[0], inputs[1]
    assert x is not None and shape_t is not None
    axes = [int(a) % x.ndim for a in node.attr("axes", range(x.ndim))]
    out_shape = list(x.shape)
    src: list[slice] = [slice(None)] * x.ndim
    dst: list[slice] = [slice(None)] * x.ndim
    for a, size in zip(axes, (int(v) for v in shape_t.reshape(-1)), strict=True):
        dim, out_shape[a] = x.shape[a], size
        keep = min(dim, size)
        src[a] = slice((dim - keep) // 2, (dim - keep) // 2 + keep)
        dst[a] = slice((size - keep) // 2, (size - keep) // 2 + keep)
    out = np.zeros(out_shape, dtype=x.dtype)
    out[tuple(dst)] = x[tuple(src)]
    return [out]


OPS: list[OpDef] = [
    # copy of data with elements at (indices along axis) replaced by, or combined with, updates;
    # which elements are written depends on data, so OPAQUE (as ScatterND)
    OpDef("ScatterElements", Category.OPAQUE, _infer_scatter_elements, _scatter_elements, elementwise_cost(1),
          doc="scatter along axis", vector_class=VectorClass.DATA_MOVE),
    # ScatterElements' name before opset 11 (no reduction)
    OpDef("Scatter", Category.OPAQUE, _infer_scatter_elements, _scatter_elements, elementwise_cost(1),
          doc="scatter along axis (deprecated)", vector_class=VectorClass.DATA_MOVE),
    # reverse the first sequence_lens[b] steps of every batch entry along time_axis
    OpDef("ReverseSequence", Category.INJECTIVE, _infer_reverse_sequence, _reverse_sequence, zero_flop_cost,
          doc="per-sequence reversal", vector_class=VectorClass.DATA_MOVE),
    # on/off values by comparing each index with the positions of a new depth axis
    OpDef("OneHot", Category.INJECTIVE, _infer_one_hot, _one_hot, elementwise_cost(1), doc="one-hot encoding"),
    # centre crop and/or zero pad to the given sizes along axes
    OpDef("CenterCropPad", Category.INJECTIVE, _infer_center_crop_pad, _center_crop_pad, zero_flop_cost,
          doc="centred crop or pad", vector_class=VectorClass.DATA_MOVE),
]
