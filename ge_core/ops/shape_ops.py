"""Shape ops: views that change only the shape (Reshape, Flatten, Squeeze, Unsqueeze) and ops that
compute shapes or build tensors from them (Shape, Size, Expand). Tensor makers (Constant,
ConstantOfShape, Range, EyeLike) and NonZero are in makers.py.

Shape and Size have `value` functions: with a static input their outputs are known before running,
which is how Reshape targets built by Shape -> Gather -> Concat chains resolve during inference.
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.ir.limits import check_tensor_size
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    UNK,
    int_arg_known,
    known_ints,
    like,
    make_desc,
    normalize_axis,
    operand,
    require_inputs,
    shape_error,
    zero_flop_cost,
)
from ge_core.ops.kernel_memo import memoized
from ge_core.ops.registry import Category, OpDef, Operand, Unit


def _product(dims: list[int] | tuple[int, ...]) -> int:
    """Product of dims, or -1 when one is unknown."""
    return UNK if any(d < 0 for d in dims) else math.prod(dims)


# ---- Reshape -------------------------------------------------------------------------------------
def reshape_target(node: Node, operands: list[Operand | None], in_shape: tuple[int, ...],
                   target: list[int]) -> list[int]:
    """Resolve 0 (copy the input dim unless allowzero) and one -1 (inferred) in a Reshape target."""
    allowzero = node.opset >= 14 and bool(node.attr("allowzero", 0))
    if target.count(-1) > 1:
        raise shape_error(node, operands, f"shape {target} has more than one -1")
    if any(d < -1 for d in target):
        raise shape_error(node, operands, f"shape {target} has a dim below -1")
    if allowzero and 0 in target and -1 in target:
        raise shape_error(node, operands, f"shape {target} mixes 0 and -1 with allowzero=1")
    out: list[int] = []
    for i, d in enumerate(target):
        if d == 0 and not allowzero:
            if i >= len(in_shape):
                raise shape_error(node, operands, f"shape {target} copies dim {i} (0) but the input has "
                                                  f"rank {len(in_shape)}")
            out.append(in_shape[i])
        else:
            out.append(d)
    return _resolve_minus_one(node, operands, in_shape, target, out)


def _resolve_minus_one(node: Node, operands: list[Operand | None], in_shape: tuple[int, ...],
                       target: list[int], out: list[int]) -> list[int]:
    """Infer the -1 (or check the element count). Dims copied by 0 appear on both sides and cancel,
    so `[0, -1]` on an input with an unknown batch dim still resolves the -1."""
    copied = {i for i, d in enumerate(target) if d == 0 and out[i] == in_shape[i] and out[i] != 0}
    total = _product([d for i, d in enumerate(in_shape) if i not in copied])
    rest = _product([d for i, d in enumerate(out) if i not in copied and target[i] != -1])
    if -1 in target:
        at = target.index(-1)
        if total < 0 or rest < 0:
            out[at] = UNK
        elif rest == 0 or total % rest:
            raise shape_error(node, operands, f"cannot reshape {_product(in_shape)} elements into {target}")
        else:
            out[at] = total // rest
    elif total >= 0 and rest >= 0 and total != rest:
        raise shape_error(node, operands, f"cannot reshape {_product(in_shape)} elements into {target} "
                                          f"({_product(out)} elements)")
    return out


def shape_input(node: Node, operands: list[Operand | None], index: int) -> tuple[list[int] | None, int]:
    """A shape-valued input: its values when known (else None) and its length, which must be static."""
    shape = operand(node, operands, index)
    target = known_ints(shape)
    if target is not None:
        return target, len(target)
    if shape.desc.rank != 1 or shape.desc.shape[0] < 0:
        raise shape_error(node, operands, "cannot infer the output rank: the shape input is unknown "
                                          "and its length is not static")
    return None, shape.desc.shape[0]


def _infer_reshape(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    x = operand(node, operands, 0).desc
    target, length = shape_input(node, operands, 1)
    if target is None:
        return [like(x, [UNK] * length)]
    return [like(x, reshape_target(node, operands, x.shape, target))]


def _reshape(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, shape = inputs[0], inputs[1]
    assert x is not None and shape is not None
    dims = tuple(int(d) for d in shape.reshape(-1))

    def target() -> tuple[int, ...]:
        operands = [Operand(like_array(x)), Operand(like_array(shape), shape)]
        return tuple(reshape_target(node, list(operands), x.shape, list(dims)))

    return [x.reshape(memoized(node, inputs, target, dims))]  # the checks once per (shape, target dims)


def like_array(a: np.ndarray) -> TensorDesc:
    """A desc for a runtime array (kernels reuse the infer helpers for their checks)."""
    return make_desc(a.shape, "str" if a.dtype.kind in "OUS" else a.dtype.name)


def operands_of(inputs: list[np.ndarray | None]) -> list[Operand | None]:
    """Operands for a kernel's runtime arrays, so kernels reuse the infer helpers (and their errors)."""
    return [None if a is None else Operand(like_array(a), a) for a in inputs]


# ---- Flatten -------------------------------------------------------------------------------------
def _infer_flatten(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    x = operand(node, operands, 0).desc
    axis = int(node.attr("axis", 1))
    if not -x.rank <= axis <= x.rank:
        raise shape_error(node, operands, f"axis={axis} is out of range for rank {x.rank} "
                                          f"(valid: {-x.rank}..{x.rank})")
    axis = axis + x.rank if axis < 0 else axis
    return [like(x, [_product(x.shape[:axis]), _product(x.shape[axis:])])]


def _flatten(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    axis = int(node.attr("axis", 1))
    axis = axis + x.ndim if axis < 0 else axis
    return [x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))]


# ---- Squeeze / Unsqueeze -------------------------------------------------------------------------
def _axes(node: Node, operands: list[Operand | None]) -> tuple[list[int] | None, bool]:
    """(axes, known): the axes attribute before opset 13, the optional input since."""
    return int_arg_known(node, operands, attr="axes", input_index=1, since_opset=13)


def _squeeze_axes(node: Node, operands: list[Operand | None], shape: tuple[int, ...],
                  axes: list[int] | None) -> list[int]:
    if not axes:
        # Without axes every 1 goes; an unknown dim is assumed not to be 1 (batch dims are the
        # usual unknowns and are kept), so the rank may be a guess that execution corrects.
        return [i for i, d in enumerate(shape) if d == 1]
    norm = sorted({normalize_axis(node, operands, a, len(shape), name="axes") for a in axes})
    bad = [a for a in norm if shape[a] not in (1, UNK)]
    if bad:
        raise shape_error(node, operands, f"cannot squeeze axes {bad}: their dims are "
                                          f"{[shape[a] for a in bad]}, not 1")
    return norm


def _infer_squeeze(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 2)
    x = operand(node, operands, 0).desc
    axes, known = _axes(node, operands)
    if not known:
        count = operand(node, operands, 1).desc.shape
        if len(count) != 1 or count[0] < 0:
            raise shape_error(node, operands, "cannot infer the output rank: the axes input is unknown")
        return [like(x, [UNK] * max(x.rank - count[0], 0))]
    drop = _squeeze_axes(node, operands, x.shape, axes)
    return [like(x, [d for i, d in enumerate(x.shape) if i not in drop])]


def _squeeze(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    axes = _kernel_axes(node, inputs)
    operands: list[Operand | None] = [Operand(like_array(x))]
    drop = _squeeze_axes(node, operands, x.shape, axes)
    return [x.reshape([d for i, d in enumerate(x.shape) if i not in drop])]


def _kernel_axes(node: Node, inputs: list[np.ndarray | None]) -> list[int] | None:
    if node.opset < 13:
        raw = node.attr("axes")
        return None if raw is None else [int(a) for a in raw]
    axes = inputs[1] if len(inputs) > 1 else None
    return None if axes is None else [int(a) for a in axes.reshape(-1)]


def unsqueeze_shape(node: Node, operands: list[Operand | None], shape: tuple[int, ...],
                    axes: list[int]) -> list[int]:
    rank = len(shape) + len(axes)
    norm = [normalize_axis(node, operands, a, rank, name="axes") for a in axes]
    if len(set(norm)) != len(norm):
        raise shape_error(node, operands, f"axes {axes} name the same output axis twice")
    dims = iter(shape)
    return [1 if i in norm else next(dims) for i in range(rank)]


def _infer_unsqueeze(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1 if node.opset < 13 else 2, 2)
    x = operand(node, operands, 0).desc
    axes, known = _axes(node, operands)
    if not known:
        count = operand(node, operands, 1).desc.shape
        if len(count) != 1 or count[0] < 0:
            raise shape_error(node, operands, "cannot infer the output rank: the axes input is unknown")
        return [like(x, [UNK] * (x.rank + count[0]))]
    if axes is None:
        raise shape_error(node, operands, "axes are required")
    return [like(x, unsqueeze_shape(node, operands, x.shape, axes))]


def _unsqueeze(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    axes = _kernel_axes(node, inputs) or []
    operands: list[Operand | None] = [Operand(like_array(x))]
    return [x.reshape(unsqueeze_shape(node, operands, x.shape, axes))]


# ---- Shape / Size --------------------------------------------------------------------------------
def _shape_range(node: Node, rank: int) -> tuple[int, int]:
    """Shape-15's start/end, clamped to [0, rank] after wrapping negatives."""
    if node.opset < 15:
        return 0, rank
    start, end = int(node.attr("start", 0)), node.attr("end")
    end = rank if end is None else int(end)
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = min(max(end + rank if end < 0 else end, 0), rank)
    return start, max(end, start)


def _infer_shape(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    start, end = _shape_range(node, operand(node, operands, 0).desc.rank)
    return [make_desc([end - start], "int64")]


def _shape_value(node: Node, operands: list[Operand | None]) -> list[np.ndarray | None]:
    x = operand(node, operands, 0).desc
    start, end = _shape_range(node, x.rank)
    dims = x.shape[start:end]
    return [np.array(dims, dtype=np.int64) if all(d >= 0 for d in dims) else None]


def _shape(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    start, end = _shape_range(node, x.ndim)
    return [np.array(x.shape[start:end], dtype=np.int64)]


def _infer_size(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    return [make_desc([], "int64")]


def _size_value(node: Node, operands: list[Operand | None]) -> list[np.ndarray | None]:
    n = operand(node, operands, 0).desc.numel
    return [None if n is None else np.array(n, dtype=np.int64)]


def _size(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    return [np.array(x.size, dtype=np.int64)]


# ---- Expand --------------------------------------------------------------------------------------
def _expand_shape(node: Node, operands: list[Operand | None], shape: tuple[int, ...],
                  target: list[int]) -> list[int]:
    """Bidirectional broadcast of the input shape with the target (a target dim of 1 keeps the input's)."""
    rank = max(len(shape), len(target))
    a = [1] * (rank - len(shape)) + list(shape)
    b = [1] * (rank - len(target)) + list(target)
    out = []
    for i, (da, db) in enumerate(zip(a, b, strict=True)):
        if db < 0:
            raise shape_error(node, operands, f"shape {target} has a negative dim")
        if da == 1 or da == db:
            out.append(db)
        elif db == 1:
            out.append(da)
        elif da == UNK:  # the input dim must be 1 or equal to the target's
            out.append(db)
        else:
            raise shape_error(node, operands, f"cannot expand {list(shape)} to {target} (axis {i}: "
                                              f"{da} vs {db})")
    return out


def _infer_expand(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    x = operand(node, operands, 0).desc
    target, length = shape_input(node, operands, 1)
    if target is None:
        # Unknown target dims: an input dim > 1 survives (the target's must be 1 or equal to it)
        rank = max(x.rank, length)
        padded = [1] * (rank - x.rank) + list(x.shape)
        return [like(x, [d if d > 1 else UNK for d in padded])]
    return [like(x, _expand_shape(node, operands, x.shape, target))]


def _expand(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, shape = inputs[0], inputs[1]
    assert x is not None and shape is not None
    operands: list[Operand | None] = [Operand(like_array(x)), Operand(like_array(shape), shape)]
    out_shape = _expand_shape(node, operands, x.shape, [int(d) for d in shape.reshape(-1)])
    check_tensor_size(f"node '{node.name}' ({node.op_type})", out_shape, like_array(x).dtype)
    return [np.broadcast_to(x, out_shape).copy()]


OPS: list[OpDef] = [
    # the same elements under a new shape (0 copies a dim unless allowzero, one -1 is inferred)
    OpDef("Reshape", Category.INJECTIVE, _infer_reshape, _reshape, zero_flop_cost, view=True, doc="new shape"),
    # 2-D view [prod(dims before axis), prod(dims from axis)]
    OpDef("Flatten", Category.INJECTIVE, _infer_flatten, _flatten, zero_flop_cost, view=True, doc="to 2-D at axis"),
    # drop size-1 dims (the given axes, or all of them)
    OpDef("Squeeze", Category.INJECTIVE, _infer_squeeze, _squeeze, zero_flop_cost, view=True, doc="drop 1-dims"),
    # insert size-1 dims at the given output axes
    OpDef("Unsqueeze", Category.INJECTIVE, _infer_unsqueeze, _unsqueeze, zero_flop_cost, view=True,
          doc="insert 1-dims"),
    # the input's shape (dims start..end) as an int64 vector; reads no data, so OPAQUE (not fusible)
    OpDef("Shape", Category.OPAQUE, _infer_shape, _shape, zero_flop_cost, value=_shape_value,
          doc="shape as int64 tensor", unit=Unit.SCALAR),
    # the input's element count as an int64 scalar; reads no data, so OPAQUE
    OpDef("Size", Category.OPAQUE, _infer_size, _size, zero_flop_cost, value=_size_value,
          doc="element count", unit=Unit.SCALAR),
    # broadcast the input to a shape (bidirectionally, as numpy does)
    OpDef("Expand", Category.INJECTIVE, _infer_expand, _expand, zero_flop_cost, doc="broadcast to shape",
          unit=Unit.MTE, ge_types=("ExpandD", "BroadcastTo")),
]
