"""Reductions: Reduce* over axes, Softmax/LogSoftmax, ArgMax/ArgMin, CumSum.

Axes moved from an attribute to an optional input in ReduceSum-13 and in the other Reduce* ops at
opset 18; `noop_with_empty_axes` (same versions) turns "no axes" from "reduce everything" into "reduce
nothing" (the elementwise part still applies: ReduceL1 acts as Abs, ReduceSumSquare as Square).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ge_core.ir.dtypes import is_float
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    UNK,
    check_axis_input,
    int_arg_known,
    like,
    make_desc,
    normalize_axis,
    operand,
    require_inputs,
    shape_error,
    wide_dtype,
    widened,
)
from ge_core.ops.registry import Category, Cost, CostFn, OpDef, Operand

ReduceFn = Callable[[np.ndarray, tuple[int, ...]], np.ndarray]


def _axes_input_since(op_type: str) -> int:
    return 13 if op_type == "ReduceSum" else 18


def _axes_arg(node: Node, operands: list[Operand | None]) -> tuple[list[int] | None, bool]:
    """(axes, known): axes None means "none given"; known False means an input whose value is unknown."""
    return int_arg_known(node, operands, attr="axes", input_index=1, since_opset=_axes_input_since(node.op_type))


def _noop_when_empty(node: Node) -> bool:
    return node.opset >= _axes_input_since(node.op_type) and bool(node.attr("noop_with_empty_axes", 0))


def _reduced_axes(node: Node, operands: list[Operand | None], rank: int,
                  axes: list[int] | None) -> tuple[int, ...] | None:
    """Normalized axes to reduce; None means identity (noop_with_empty_axes with no axes)."""
    if not axes:
        return None if _noop_when_empty(node) else tuple(range(rank))
    norm = [normalize_axis(node, operands, a, rank, name="axes") for a in axes]
    if len(set(norm)) != len(norm):
        raise shape_error(node, operands, f"axes {axes} name the same axis twice")
    return tuple(sorted(norm))


def _infer_reduce(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 2)
    x = operand(node, operands, 0).desc
    keepdims = bool(node.attr("keepdims", 1))
    axes, known = _axes_arg(node, operands)
    if not known:
        return [_unknown_axes_desc(node, operands, x, keepdims)]
    reduced = _reduced_axes(node, operands, x.rank, axes)
    if reduced is None:
        return [like(x)]
    if keepdims:
        shape = [1 if i in reduced else d for i, d in enumerate(x.shape)]
    else:
        shape = [d for i, d in enumerate(x.shape) if i not in reduced]
    return [like(x, shape)]


def _unknown_axes_desc(node: Node, operands: list[Operand | None], x: TensorDesc,
                       keepdims: bool) -> TensorDesc:
    """Axes come from a tensor not known yet: keepdims keeps the rank; else the axes' length decides it."""
    if keepdims:
        return like(x, [1 if d == 1 else UNK for d in x.shape])
    count = operand(node, operands, 1).desc.shape
    if len(count) != 1 or count[0] < 0:
        raise shape_error(node, operands, "cannot infer the output rank: keepdims=0 and the axes input "
                                          "is neither known nor of a static length")
    if count[0] == 0:  # empty axes: reduce all, or noop
        return like(x) if _noop_when_empty(node) else like(x, [])
    return like(x, [UNK] * max(x.rank - count[0], 0))


def _accumulator(x: np.ndarray) -> np.dtype:
    """Half-precision sums (float16, bfloat16) accumulate in float32 (as ORT does); others in their own dtype."""
    return wide_dtype(x.dtype)


def _sum(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return np.sum(x, axis=axes, dtype=_accumulator(x), keepdims=True)


def _mean(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    count = int(np.prod([x.shape[a] for a in axes]))
    with np.errstate(invalid="ignore", divide="ignore"):
        if x.dtype.kind in "iu":  # integer mean truncates toward zero, like ORT
            return np.trunc(np.sum(x, axis=axes, dtype=np.float64, keepdims=True) / count)
        return np.sum(x, axis=axes, dtype=_accumulator(x), keepdims=True) / count


def _extreme(x: np.ndarray, axes: tuple[int, ...], *, largest: bool) -> np.ndarray:
    """Max/Min; over an empty set they give the identity (-inf/+inf, or the int/bool bounds)."""
    if x.dtype == np.bool_:
        initial: Any = not largest
    elif is_float(x.dtype.name):  # bfloat16 too
        initial = -np.inf if largest else np.inf
    else:
        info = np.iinfo(x.dtype)
        initial = info.min if largest else info.max
    fn = np.max if largest else np.min
    return fn(x, axis=axes, keepdims=True, initial=initial)


def _log_sum(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """log(sum(x)): -inf over an empty set (log 0), NaN where the sum is negative."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(_sum(x, axes))


def _log_sum_exp(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """Shifted by the max so that large inputs do not overflow."""
    xf = x.astype(np.float64)
    if xf.size == 0:
        with np.errstate(divide="ignore"):
            return np.log(np.sum(np.exp(xf), axis=axes, keepdims=True))
    m = np.max(xf, axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(xf - m), axis=axes, keepdims=True)) + m


REDUCERS: dict[str, ReduceFn] = {
    "ReduceSum": _sum,
    "ReduceMean": _mean,
    "ReduceMax": lambda x, a: _extreme(x, a, largest=True),
    "ReduceMin": lambda x, a: _extreme(x, a, largest=False),
    "ReduceProd": lambda x, a: np.prod(x, axis=a, dtype=_accumulator(x), keepdims=True),
    "ReduceL1": lambda x, a: np.sum(np.abs(x), axis=a, dtype=_accumulator(x), keepdims=True),
    "ReduceL2": lambda x, a: np.sqrt(np.sum(np.square(x.astype(np.float64)), axis=a, keepdims=True)),
    "ReduceSumSquare": lambda x, a: np.sum(np.square(x), axis=a, dtype=_accumulator(x), keepdims=True),
    "ReduceLogSumExp": _log_sum_exp,
    "ReduceLogSum": _log_sum,
}


def _reduce(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    axes_in = inputs[1] if len(inputs) > 1 else None
    if node.opset < _axes_input_since(node.op_type):
        raw = node.attr("axes")
        axes = None if raw is None else [int(a) for a in raw]
    else:
        axes = None if axes_in is None else [int(a) for a in axes_in.reshape(-1)]
    if not axes:
        # noop_with_empty_axes reduces nothing but still applies the op's elementwise part
        # (ReduceL1 becomes Abs, ReduceSumSquare becomes Square), as the spec says
        reduced = () if _noop_when_empty(node) else tuple(range(x.ndim))
    else:
        reduced = tuple(sorted(a + x.ndim if a < 0 else a for a in axes))
    out = REDUCERS[node.op_type](x, reduced)
    if not node.attr("keepdims", 1):
        out = np.squeeze(out, axis=reduced)
    return [np.asarray(out).astype(x.dtype, copy=False)]


def _reduce_cost(flops_per_input: int) -> CostFn:
    """A reduction touches every input element: `flops_per_input` FLOPs each."""

    def cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
        x = inputs[0]
        n = (x.numel or 0) if x is not None else 0
        read = (x.nbytes or 0) if x is not None else 0
        return Cost(flops_per_input * n, read, sum(d.nbytes or 0 for d in outputs))

    return cost


# ---- Softmax / LogSoftmax -----------------------------------------------------------------------
def _softmax_axis(node: Node) -> int:
    """Opset < 13: default 1 and the input is coerced to 2-D at axis; since 13: default -1, one axis."""
    return int(node.attr("axis", 1 if node.opset < 13 else -1))


def _infer_softmax(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    x = operand(node, operands, 0).desc
    if x.dtype not in ("float16", "float32", "float64", "bfloat16"):
        raise shape_error(node, operands, f"input must be a float tensor, got {x.dtype}")
    normalize_axis(node, operands, _softmax_axis(node), max(x.rank, 1))
    return [like(x)]


def softmax_axis(node: Node, rank: int) -> int:
    """The axis a Softmax/LogSoftmax node of an input of `rank` normalises (non-negative; before opset 13 the
    input is first coerced to 2-D at it)."""
    axis = _softmax_axis(node)
    return axis + rank if axis < 0 else axis


def _softmax(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    axis = softmax_axis(node, x.ndim)
    if node.opset < 13:  # coerce to [prod(shape[:axis]), prod(shape[axis:])] and work on dim 1
        data, axis = x.reshape(int(np.prod(x.shape[:axis])), -1), 1
    else:
        data = x
    xf = widened(data)  # float16/bfloat16 in float32
    shifted = xf - np.max(xf, axis=axis, keepdims=True)
    if node.op_type == "LogSoftmax":
        out = shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    else:  # in place on the one new array: exp, then the division
        out = np.exp(shifted, out=shifted)
        out /= np.sum(out, axis=axis, keepdims=True)
    return [out.reshape(x.shape).astype(x.dtype, copy=False)]


def softmax_span(node: Node, shape: tuple[int, ...]) -> int:
    """Elements one softmax (or Hardmax, the same axis rule) reads: the coerced row [axis:] before opset 13,
    the one axis since."""
    axis = _softmax_axis(node) % len(shape)
    return math.prod(shape[axis:]) if node.opset < 13 else shape[axis]


# ---- ArgMax / ArgMin -----------------------------------------------------------------------------
def _infer_arg(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    x = operand(node, operands, 0).desc
    axis = normalize_axis(node, operands, int(node.attr("axis", 0)), x.rank)
    if node.attr("keepdims", 1):
        shape = [1 if i == axis else d for i, d in enumerate(x.shape)]
    else:
        shape = [d for i, d in enumerate(x.shape) if i != axis]
    return [make_desc(shape, "int64")]


def _arg(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    axis = int(node.attr("axis", 0))
    axis = axis + x.ndim if axis < 0 else axis
    fn = np.argmax if node.op_type == "ArgMax" else np.argmin
    if node.attr("select_last_index", 0):  # numpy returns the first hit: search the flipped axis
        out = x.shape[axis] - 1 - fn(np.flip(x, axis=axis), axis=axis, keepdims=True)
    else:
        out = fn(x, axis=axis, keepdims=True)
    if not node.attr("keepdims", 1):
        out = np.squeeze(out, axis=axis)
    return [np.asarray(out, dtype=np.int64)]


# ---- CumSum --------------------------------------------------------------------------------------
def _infer_cumsum(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    x = operand(node, operands, 0).desc
    check_axis_input(node, operands, 1, x.rank)
    return [like(x)]


def _cumsum(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, axis_t = inputs[0], inputs[1]
    assert x is not None and axis_t is not None
    axis = int(axis_t.reshape(-1)[0])
    axis = axis + x.ndim if axis < 0 else axis
    reverse = bool(node.attr("reverse", 0))
    data = np.flip(x, axis=axis) if reverse else x
    out = np.cumsum(data, axis=axis, dtype=_accumulator(x))
    if node.attr("exclusive", 0):  # shift by one along axis: element i sums the elements before i
        shifted = np.zeros_like(out)
        dst = [slice(None)] * x.ndim
        src = [slice(None)] * x.ndim
        dst[axis], src[axis] = slice(1, None), slice(None, -1)
        shifted[tuple(dst)] = out[tuple(src)]
        out = shifted
    if reverse:
        out = np.flip(out, axis=axis)
    return [np.ascontiguousarray(out).astype(x.dtype, copy=False)]


def _reduce_def(op_type: str, flops: int, doc: str) -> OpDef:
    return OpDef(op_type, Category.REDUCE, _infer_reduce, _reduce, _reduce_cost(flops), doc=doc)


OPS: list[OpDef] = [
    # sum of the elements over axes
    _reduce_def("ReduceSum", 1, "sum over axes"),
    # arithmetic mean over axes
    _reduce_def("ReduceMean", 1, "mean over axes"),
    # maximum over axes (-inf / the type's minimum over an empty set)
    _reduce_def("ReduceMax", 1, "max over axes"),
    # minimum over axes (+inf / the type's maximum over an empty set)
    _reduce_def("ReduceMin", 1, "min over axes"),
    # product over axes
    _reduce_def("ReduceProd", 1, "product over axes"),
    # sum of absolute values over axes
    _reduce_def("ReduceL1", 2, "sum(|x|) over axes"),
    # Euclidean norm over axes
    _reduce_def("ReduceL2", 2, "sqrt(sum(x^2)) over axes"),
    # sum of squares over axes
    _reduce_def("ReduceSumSquare", 2, "sum(x^2) over axes"),
    # log(sum(exp(x))) over axes, computed shifted by the max
    _reduce_def("ReduceLogSumExp", 4, "log(sum(exp(x))) over axes"),
    # log of the sum over axes
    _reduce_def("ReduceLogSum", 2, "log(sum(x)) over axes"),
    # exp(x - max) / sum(exp(x - max)) along axis (2-D coerced before opset 13)
    OpDef("Softmax", Category.REDUCE, _infer_softmax, _softmax, _reduce_cost(5), doc="softmax along axis",
          reduce_span=softmax_span, ge_types=("SoftmaxV2",)),
    # x - max - log(sum(exp(x - max))) along axis (2-D coerced before opset 13)
    OpDef("LogSoftmax", Category.REDUCE, _infer_softmax, _softmax, _reduce_cost(5),
          doc="log-softmax along axis", reduce_span=softmax_span),
    # index (int64) of the largest element along axis
    OpDef("ArgMax", Category.REDUCE, _infer_arg, _arg, _reduce_cost(1), doc="index of the max along axis"),
    # index (int64) of the smallest element along axis
    OpDef("ArgMin", Category.REDUCE, _infer_arg, _arg, _reduce_cost(1), doc="index of the min along axis"),
    # running sum along axis (exclusive/reverse); a scan keeps the shape, so neither REDUCE nor
    # INJECTIVE fusion rules apply: OPAQUE
    OpDef("CumSum", Category.OPAQUE, _infer_cumsum, _cumsum, _reduce_cost(1), doc="cumulative sum"),
]
