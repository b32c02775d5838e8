"""Ops whose output shape depends on input values: Compress, Unique and NonMaxSuppression.

Inference gives the data-dependent dims as unknown (-1) unless the deciding input is known (a constant),
when the kernel's own answer is used. The ops are deterministic, so they still fold on constant inputs.
All are OPAQUE: a kernel of unknown output size is never fused with its neighbours.
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.errors import ExecutionError
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    UNK,
    elementwise_cost,
    io_bytes,
    like,
    make_desc,
    normalize_axis,
    operand,
    optional,
    require_inputs,
    shape_error,
)
from ge_core.ops.registry import Category, Cost, OpDef, Operand, VectorClass


# ---- Compress -----------------------------------------------------------------------------------------
def _infer_compress(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    x, cond = operand(node, operands, 0).desc, operand(node, operands, 1)
    if cond.desc.dtype != "bool" or cond.desc.rank != 1:
        raise shape_error(node, operands, f"condition must be a 1-D bool tensor, got {cond.desc.text()}")
    axis = node.attr("axis")
    length = x.numel if axis is None else x.shape[normalize_axis(node, operands, int(axis), x.rank)]
    c = cond.desc.shape[0]
    if length is not None and length >= 0 and c > length:
        raise shape_error(node, operands, f"condition has {c} values, more than the {length} it selects from")
    kept = UNK if cond.value is None else int(np.count_nonzero(cond.value))
    if axis is None:
        return [like(x, [kept])]
    a = normalize_axis(node, operands, int(axis), x.rank)
    return [like(x, [kept if i == a else d for i, d in enumerate(x.shape)])]


def _compress(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """The slices (or, without axis, the flattened elements) where condition is true; the condition may be
    shorter than the axis: the rest is dropped."""
    x, cond = inputs[0], inputs[1]
    assert x is not None and cond is not None
    axis = node.attr("axis")
    return [np.compress(cond.astype(bool), x, axis=None if axis is None else int(axis))]


# ---- Unique -------------------------------------------------------------------------------------------
def _infer_unique(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    x = operand(node, operands, 0)
    axis = node.attr("axis")
    if axis is not None:
        axis = normalize_axis(node, operands, int(axis), x.desc.rank)
    if x.value is not None:  # a constant: the exact answer
        return [make_desc(a.shape, d) for a, d in zip(_unique(node, [x.value]), (x.desc.dtype, *["int64"] * 3),
                                                      strict=True)]
    if axis is None:
        n_inverse = x.desc.numel if x.desc.numel is not None else UNK
        y = like(x.desc, [UNK])
    else:
        n_inverse = x.desc.shape[axis]
        y = like(x.desc, [UNK if i == axis else d for i, d in enumerate(x.desc.shape)])
    return [y, make_desc([UNK], "int64"), make_desc([n_inverse], "int64"), make_desc([UNK], "int64")]


def _unique(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """Unique values (or slices along axis), sorted or in order of first occurrence, with the index of each
    one's first occurrence, each input's position among them, and how often each occurs."""
    x = inputs[0]
    assert x is not None
    axis = node.attr("axis")
    axis = None if axis is None else int(axis) % x.ndim
    y, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    inverse = inverse.reshape(-1)
    if not node.attr("sorted", 1):  # order of first occurrence instead of sorted
        perm = np.argsort(first, kind="stable")
        rank = np.empty_like(perm)
        rank[perm] = np.arange(perm.size)
        y = np.take(y, perm, axis=0 if axis is None else axis)
        first, counts, inverse = first[perm], counts[perm], rank[inverse]
    return [y.astype(x.dtype, copy=False), *(a.astype(np.int64) for a in (first, inverse, counts))]


def _unique_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """A sort: n log2 n comparisons."""
    x = inputs[0]
    n = (x.numel or 0) if x is not None else 0
    read, written = io_bytes(inputs, [d for d in outputs if d.is_static])
    return Cost(int(n * max(math.log2(max(n, 1)), 1)), read, written)


# ---- NonMaxSuppression --------------------------------------------------------------------------------
def _infer_nms(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 5)
    boxes, scores = operand(node, operands, 0).desc, operand(node, operands, 1).desc
    for name, d in (("boxes", boxes), ("scores", scores)):
        if d.dtype != "float32" or d.rank != 3:
            raise shape_error(node, operands, f"{name} must be a 3-D float32 tensor, got {d.text()}")
    if boxes.shape[2] not in (4, UNK):
        raise shape_error(node, operands, f"boxes must be [batch, boxes, 4], got {list(boxes.shape)}")
    for i, (a, b) in enumerate(((boxes.shape[0], scores.shape[0]), (boxes.shape[1], scores.shape[2]))):
        if a >= 0 and b >= 0 and a != b:
            what = "batch" if i == 0 else "box count"
            raise shape_error(node, operands, f"boxes {list(boxes.shape)} and scores {list(scores.shape)} "
                                              f"disagree on the {what}")
    for index, dtype in ((2, "int64"), (3, "float32"), (4, "float32")):
        op = optional(operands, index)
        if op is not None and (op.desc.dtype != dtype or op.desc.numel not in (None, 0, 1)):
            raise shape_error(node, operands, f"input {index} must be a {dtype} scalar, got {op.desc.text()}")
    if int(node.attr("center_point_box", 0)) not in (0, 1):
        raise shape_error(node, operands, "center_point_box must be 0 (corners) or 1 (centre, size)")
    return [make_desc([UNK, 3], "int64")]


def _scalar(inputs: list[np.ndarray | None], index: int, default: float) -> float:
    value = inputs[index] if index < len(inputs) else None
    return default if value is None or value.size == 0 else float(value.reshape(-1)[0])


def _corners(boxes: np.ndarray, center: bool) -> np.ndarray:
    """[n, 4] as (y_min, x_min, y_max, x_max); corner boxes may come flipped (max before min)."""
    if center:
        x, y, w, h = boxes.T
        return np.stack([y - h / 2, x - w / 2, y + h / 2, x + w / 2], axis=1)
    y1, x1, y2, x2 = boxes.T
    return np.stack([np.minimum(y1, y2), np.minimum(x1, x2), np.maximum(y1, y2), np.maximum(x1, x2)], axis=1)


def _suppressed(box: np.ndarray, others: np.ndarray, threshold: float) -> np.ndarray:
    """IoU(box, others) > threshold; empty intersections and degenerate boxes never suppress."""
    ih = np.minimum(box[2], others[:, 2]) - np.maximum(box[0], others[:, 0])
    iw = np.minimum(box[3], others[:, 3]) - np.maximum(box[1], others[:, 1])
    inter = ih * iw
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    union = area + areas - inter
    ok = (ih > 0) & (iw > 0) & (area > 0) & (areas > 0) & (union > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return ok & (inter / np.where(ok, union, 1) > threshold)


def _select(corners: np.ndarray, scores: np.ndarray, limit: int, iou: float, score_min: float | None) -> list[int]:
    """Greedy selection: the best remaining box, then drop what it overlaps (ties: the lower index first)."""
    idx = np.arange(scores.size)
    if score_min is not None:
        idx = idx[scores > score_min]
    remaining = idx[np.lexsort((idx, -scores[idx]))]
    picked: list[int] = []
    while remaining.size and len(picked) < limit:
        top, rest = int(remaining[0]), remaining[1:]
        picked.append(top)
        remaining = rest[~_suppressed(corners[top], corners[rest], iou)]
    return picked


def _nms(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    boxes, scores = inputs[0], inputs[1]
    assert boxes is not None and scores is not None
    if boxes.shape[0] != scores.shape[0] or boxes.shape[1] != scores.shape[2]:
        raise ExecutionError(node.name, node.op_type, [list(boxes.shape), list(scores.shape)],
                             "boxes and scores disagree on the batch or the box count.")
    limit = max(int(_scalar(inputs, 2, 0)), 0)
    iou = _scalar(inputs, 3, 0.0)
    score_in = inputs[4] if len(inputs) > 4 else None
    score_min = None if score_in is None or score_in.size == 0 else float(score_in.reshape(-1)[0])
    rows: list[tuple[int, int, int]] = []
    for b in range(boxes.shape[0]):
        corners = _corners(boxes[b], bool(node.attr("center_point_box", 0)))
        for c in range(scores.shape[1]):
            rows += [(b, c, i) for i in _select(corners, scores[b, c], limit, iou, score_min)]
    return [np.array(rows, dtype=np.int64).reshape(-1, 3)]


def _nms_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """A sort per class plus, at worst, every pair's IoU (~12 FLOPs)."""
    scores = inputs[1]
    shape = scores.shape if scores is not None and scores.is_static else (0, 0, 0)
    b, c, n = shape
    read, written = io_bytes(inputs, [d for d in outputs if d.is_static])
    return Cost(b * c * (int(n * max(math.log2(max(n, 1)), 1)) + 6 * n * n), read, written)


OPS: list[OpDef] = [
    # slices (or flattened elements) where the 1-D condition is true; output size from its values
    OpDef("Compress", Category.OPAQUE, _infer_compress, _compress, elementwise_cost(1), doc="select by mask",
          vector_class=VectorClass.DATA_MOVE),
    # unique values or slices, first indices, inverse indices, counts; output size from the values
    OpDef("Unique", Category.OPAQUE, _infer_unique, _unique, _unique_cost, doc="unique elements",
          vector_class=VectorClass.DATA_MOVE),
    # per batch and class, greedily keep the best-scoring boxes that overlap none kept (IoU)
    OpDef("NonMaxSuppression", Category.OPAQUE, _infer_nms, _nms, _nms_cost, doc="non-maximum suppression"),
]
