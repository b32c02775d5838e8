"""Indexed data movement: Gather, GatherElements, GatherND, ScatterND, TopK.

Indices may be negative (counted from the end). Out-of-range indices are a ShapeError when known at
inference and an ExecutionError naming the node at run time, never a bare IndexError.
"""

from __future__ import annotations

import numpy as np

from ge_core.errors import ExecutionError
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    UNK,
    elementwise_cost,
    gather_cost,
    like,
    make_desc,
    normalize_axis,
    operand,
    optional,
    require_inputs,
    same_dtype,
    shape_error,
)
from ge_core.ops.registry import Category, OpDef, Operand, VectorClass

INDEX_DTYPES = ("int32", "int64")


def _check_index_dtype(node: Node, operands: list[Operand | None], index: int) -> None:
    dtype = operand(node, operands, index).desc.dtype
    if dtype not in INDEX_DTYPES:
        raise shape_error(node, operands, f"indices must be int32 or int64, got {dtype}")


def _check_known_range(node: Node, operands: list[Operand | None], indices: Operand, dim: int,
                       what: str) -> None:
    """When both the indices and the dim they index are known, every index must be in [-dim, dim)."""
    if indices.value is None or dim < 0 or indices.value.size == 0:
        return
    lo, hi = int(np.min(indices.value)), int(np.max(indices.value))
    if lo < -dim or hi >= dim:
        bad = lo if lo < -dim else hi
        raise shape_error(node, operands, f"index {bad} is out of range for {what} of size {dim}")


def _normalized(node: Node, inputs: list[np.ndarray | None], idx: np.ndarray, dim: int) -> np.ndarray:
    """Indices wrapped into [0, dim); an ExecutionError naming the node when one is out of range."""
    idx = idx.astype(np.int64, copy=False)
    if idx.size and (idx.min() < -dim or idx.max() >= dim):
        bad = int(idx.min()) if idx.min() < -dim else int(idx.max())
        raise ExecutionError(node.name, node.op_type, [None if a is None else list(a.shape) for a in inputs],
                             f"index {bad} is out of range for a dim of size {dim}.")
    return np.where(idx < 0, idx + dim, idx)


# ---- Gather --------------------------------------------------------------------------------------
def _infer_gather(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    data, indices = operand(node, operands, 0), operand(node, operands, 1)
    _check_index_dtype(node, operands, 1)
    axis = normalize_axis(node, operands, int(node.attr("axis", 0)), data.desc.rank)
    _check_known_range(node, operands, indices, data.desc.shape[axis], f"axis {axis}")
    d = data.desc.shape
    return [like(data.desc, d[:axis] + indices.desc.shape + d[axis + 1:])]


def _gather(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    data, indices = inputs[0], inputs[1]
    assert data is not None and indices is not None
    axis = int(node.attr("axis", 0))
    axis = axis + data.ndim if axis < 0 else axis
    return [np.take(data, _normalized(node, inputs, indices, data.shape[axis]), axis=axis)]


# ---- GatherElements ------------------------------------------------------------------------------
def _infer_gather_elements(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    data, indices = operand(node, operands, 0), operand(node, operands, 1)
    _check_index_dtype(node, operands, 1)
    if data.desc.rank != indices.desc.rank or data.desc.rank == 0:
        raise shape_error(node, operands, "data and indices must have the same rank (>= 1)")
    axis = normalize_axis(node, operands, int(node.attr("axis", 0)), data.desc.rank)
    _check_known_range(node, operands, indices, data.desc.shape[axis], f"axis {axis}")
    for i, (di, dd) in enumerate(zip(indices.desc.shape, data.desc.shape, strict=True)):
        if i != axis and di >= 0 and dd >= 0 and di > dd:
            raise shape_error(node, operands, f"indices dim {i} ({di}) exceeds the data's ({dd})")
    return [like(data.desc, indices.desc.shape)]


def _gather_elements(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    data, indices = inputs[0], inputs[1]
    assert data is not None and indices is not None
    axis = int(node.attr("axis", 0))
    axis = axis + data.ndim if axis < 0 else axis
    idx = _normalized(node, inputs, indices, data.shape[axis])
    # indices may be smaller than data on the other axes: open grids over the indices' own extent
    index = list(np.ogrid[tuple(slice(n) for n in idx.shape)])
    index[axis] = idx
    return [data[tuple(index)]]


# ---- GatherND / ScatterND ------------------------------------------------------------------------
def _nd_parts(node: Node, operands: list[Operand | None], data: tuple[int, ...],
              indices: tuple[int, ...], batch_dims: int) -> int:
    """Checks the ranks and returns q, the length of each index tuple (last dim of indices)."""
    if len(indices) < 1 or len(data) < 1:
        raise shape_error(node, operands, "data and indices must have rank >= 1")
    q = indices[-1]
    if q < 0:
        raise shape_error(node, operands, "the last dim of indices must be static")
    if batch_dims >= min(len(data), len(indices)) or batch_dims + q > len(data):
        raise shape_error(node, operands, f"indices tuples of length {q} with batch_dims={batch_dims} do "
                                          f"not fit data of rank {len(data)}")
    return q


def _infer_gather_nd(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    data, indices = operand(node, operands, 0).desc, operand(node, operands, 1).desc
    _check_index_dtype(node, operands, 1)
    b = int(node.attr("batch_dims", 0))
    q = _nd_parts(node, operands, data.shape, indices.shape, b)
    return [like(data, indices.shape[:-1] + data.shape[b + q:])]


def _nd_index(node: Node, inputs: list[np.ndarray | None], data_shape: tuple[int, ...],
              indices: np.ndarray, b: int) -> tuple[np.ndarray, ...]:
    """An advanced-indexing tuple into data reshaped to [batch, *data_shape[b:]]."""
    q = indices.shape[-1]
    batch = int(np.prod(data_shape[:b]))
    idx = indices.reshape(batch, -1, q)
    cols = [_normalized(node, inputs, idx[..., j], data_shape[b + j]) for j in range(q)]
    return (np.arange(batch)[:, None], *cols)


def _gather_nd(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    data, indices = inputs[0], inputs[1]
    assert data is not None and indices is not None
    b = int(node.attr("batch_dims", 0))
    q = indices.shape[-1]
    flat = data.reshape((int(np.prod(data.shape[:b])), *data.shape[b:]))
    out_shape = indices.shape[:-1] + data.shape[b + q:]
    if q == 0:  # empty index tuples select whole slices, once per index position
        m = int(np.prod(indices.shape[b:-1]))
        return [np.broadcast_to(flat[:, None], (flat.shape[0], m, *data.shape[b:])).reshape(out_shape)]
    picked = flat[_nd_index(node, inputs, data.shape, indices, b)]
    return [picked.reshape(out_shape)]


SCATTER_REDUCTIONS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _infer_scatter_nd(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 3, 3)
    data, indices, updates = (operand(node, operands, i).desc for i in range(3))
    _check_index_dtype(node, operands, 1)
    same_dtype(node, operands, [0, 2])
    reduction = str(node.attr("reduction", "none"))
    if reduction != "none" and reduction not in SCATTER_REDUCTIONS:
        raise shape_error(node, operands, f"reduction {reduction!r} is not one of none/add/mul/max/min")
    q = _nd_parts(node, operands, data.shape, indices.shape, 0)
    want = indices.shape[:-1] + data.shape[q:]
    if len(want) != updates.rank or any(a >= 0 and b >= 0 and a != b
                                        for a, b in zip(want, updates.shape, strict=True)):
        raise shape_error(node, operands, f"updates must have shape {list(want)}, got {list(updates.shape)}")
    return [like(data)]


def _scatter_nd(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    data, indices, updates = inputs[0], inputs[1], inputs[2]
    assert data is not None and indices is not None and updates is not None
    q = indices.shape[-1]
    out = data.copy()  # never write into the input
    index = _nd_index(node, inputs, (1, *data.shape), indices, 1)[1:]
    values = updates.reshape((-1, *data.shape[q:]))
    reduction = str(node.attr("reduction", "none"))
    if reduction == "none":
        out[index] = values[None]
    else:  # ufunc.at applies repeated indices one after another, as the spec's loop does
        SCATTER_REDUCTIONS[reduction].at(out, tuple(i[0] for i in index), values)
    return [out]


# ---- TopK ----------------------------------------------------------------------------------------
def _infer_topk(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1 if node.opset < 10 else 2, 1 if node.opset < 10 else 2)
    x = operand(node, operands, 0).desc
    axis = normalize_axis(node, operands, int(node.attr("axis", -1)), x.rank)
    k = _k(node, operands)
    if k is not None and (k < 0 or 0 <= x.shape[axis] < k):
        raise shape_error(node, operands, f"k={k} must be in 0..{x.shape[axis]} (the size of axis {axis})")
    shape = [(UNK if k is None else k) if i == axis else d for i, d in enumerate(x.shape)]
    return [like(x, shape), make_desc(shape, "int64")]


def _k(node: Node, operands: list[Operand | None]) -> int | None:
    if node.opset < 10:
        return int(node.attr("k"))
    k = optional(operands, 1)
    if k is None or k.value is None:
        return None
    return int(np.asarray(k.value).reshape(-1)[0])


def _topk(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    axis = int(node.attr("axis", -1))
    axis = axis + x.ndim if axis < 0 else axis
    k = int(node.attr("k")) if node.opset < 10 else int(np.asarray(inputs[1]).reshape(-1)[0])
    n = x.shape[axis]
    if node.attr("largest", 1):
        # descending with ties to the lower index: stable-sort the flipped axis, read it backwards
        flipped = np.argsort(np.flip(x, axis=axis), axis=axis, kind="stable")
        order = n - 1 - np.flip(flipped, axis=axis)
    else:
        order = np.argsort(x, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return [np.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)]


OPS: list[OpDef] = [
    # pick slices of data along axis at the given indices
    OpDef("Gather", Category.INJECTIVE, _infer_gather, _gather, gather_cost, doc="take along axis",
          vector_class=VectorClass.DATA_MOVE, indexed_input=0, ge_types=("GatherV2", "GatherV2D")),
    # pick one element per index along axis (output has the indices' shape)
    OpDef("GatherElements", Category.INJECTIVE, _infer_gather_elements, _gather_elements, gather_cost,
          doc="take_along_axis", vector_class=VectorClass.DATA_MOVE, indexed_input=0),
    # pick slices addressed by index tuples (last dim of indices), after batch_dims
    OpDef("GatherND", Category.INJECTIVE, _infer_gather_nd, _gather_nd, gather_cost,
          doc="gather by index tuples", vector_class=VectorClass.DATA_MOVE, indexed_input=0),
    # copy of data with slices at index tuples replaced (or combined by reduction) with updates;
    # which elements are written depends on data, so OPAQUE
    OpDef("ScatterND", Category.OPAQUE, _infer_scatter_nd, _scatter_nd, elementwise_cost(1),
          doc="scatter by index tuples", vector_class=VectorClass.DATA_MOVE),
    # the k largest (or smallest) values along axis and their int64 indices; a sort, so OPAQUE
    OpDef("TopK", Category.OPAQUE, _infer_topk, _topk, elementwise_cost(1), doc="k largest/smallest",
          vector_class=VectorClass.DATA_MOVE),
]
