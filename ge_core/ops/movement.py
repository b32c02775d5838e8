"""Data movement: each output element is one input element (INJECTIVE). Transpose, Concat, Split,
Slice, DepthToSpace/SpaceToDepth, Trilu. Pad and Tile are in pad.py, the indexed gathers in
indexing.py, Resize/Upsample in resize.py.
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    UNK,
    choice_attr,
    int_arg_known,
    like,
    normalize_axis,
    operand,
    optional,
    positive_int_attr,
    require_inputs,
    same_dtype,
    shape_error,
    zero_flop_cost,
)
from ge_core.ops.kernel_memo import memoized
from ge_core.ops.registry import Category, NpuLayout, OpDef, Operand, Unit, VectorClass
from ge_core.ops.shape_ops import operands_of


# ---- Transpose -----------------------------------------------------------------------------------
def _perm(node: Node, operands: list[Operand | None], rank: int) -> list[int]:
    perm = node.attr("perm")
    if perm is None:
        return list(reversed(range(rank)))
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(rank)):
        raise shape_error(node, operands, f"perm {perm} is not a permutation of 0..{rank - 1}")
    return perm


def _infer_transpose(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    x = operand(node, operands, 0).desc
    return [like(x, [x.shape[p] for p in _perm(node, operands, x.rank)])]


def _transpose(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    # the permutation checked once per (attributes, shape): the checks cost 10x the view (5 us a call)
    return [np.transpose(x, memoized(node, inputs, lambda: _perm(node, operands_of(inputs), x.ndim)))]


# ---- Concat --------------------------------------------------------------------------------------
def _infer_concat(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    present = [o for o in operands if o is not None]
    if not present or len(present) != len(operands):
        raise shape_error(node, operands, "needs at least one input and no omitted inputs")
    dtype = same_dtype(node, operands, range(len(operands)))
    shapes = [o.desc.shape for o in present]
    rank = len(shapes[0])
    if any(len(s) != rank for s in shapes):
        raise shape_error(node, operands, f"inputs must share one rank, got ranks {[len(s) for s in shapes]}")
    if node.attr("axis") is None:
        raise shape_error(node, operands, "the axis attribute is required")
    axis = normalize_axis(node, operands, int(node.attr("axis")), rank)
    out = []
    for i in range(rank):
        dims = [s[i] for s in shapes]
        if i == axis:
            out.append(UNK if any(d < 0 for d in dims) else sum(dims))
            continue
        known = {d for d in dims if d >= 0}
        if len(known) > 1:
            raise shape_error(node, operands, f"dims on axis {i} differ ({dims}); only axis {axis} may")
        out.append(known.pop() if known else UNK)
    return [like(present[0].desc, out, dtype)]


def _concat(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    arrays = [a for a in inputs if a is not None]
    return [np.concatenate(arrays, axis=int(node.attr("axis")))]


# ---- Split ---------------------------------------------------------------------------------------
def _split_arg(node: Node, operands: list[Operand | None]) -> tuple[list[int] | None, bool]:
    """(split sizes, known): the attribute before opset 13, the optional input since."""
    return int_arg_known(node, operands, attr="split", input_index=1, since_opset=13)


def split_sizes(node: Node, operands: list[Operand | None], dim: int, count: int) -> list[int]:
    """Sizes of the `count` pieces of a dim (-1 each when the dim is unknown and no split is given)."""
    split, _ = _split_arg(node, operands)
    num_outputs = node.attr("num_outputs") if node.opset >= 18 else None
    if split:
        if len(split) != count or any(s < 0 for s in split):
            raise shape_error(node, operands, f"split {split} must hold {count} non-negative sizes")
        if dim >= 0 and sum(split) != dim:
            raise shape_error(node, operands, f"split {split} sums to {sum(split)}, not to the dim {dim}")
        return split
    if num_outputs is not None and int(num_outputs) != count:
        raise shape_error(node, operands, f"num_outputs={num_outputs} but the node has {count} outputs")
    if dim < 0:
        return [UNK] * count
    if node.opset >= 18:  # uneven: ceil-sized chunks, the last one smaller
        chunk = math.ceil(dim / count)
        last = dim - chunk * (count - 1)
        if last < 0:
            raise shape_error(node, operands, f"cannot split a dim of {dim} into {count} chunks of {chunk}")
        return [chunk] * (count - 1) + [last]
    if dim % count:
        raise shape_error(node, operands, f"cannot split a dim of {dim} into {count} equal parts")
    return [dim // count] * count


def _infer_split(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 2)
    x = operand(node, operands, 0).desc
    axis = normalize_axis(node, operands, int(node.attr("axis", 0)), x.rank)
    count = len(node.outputs)
    if count == 0:
        raise shape_error(node, operands, "has no outputs")
    _, known = _split_arg(node, operands)
    sizes = split_sizes(node, operands, x.shape[axis], count) if known else [UNK] * count
    return [like(x, [s if i == axis else d for i, d in enumerate(x.shape)]) for s in sizes]


def _split(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    axis = int(node.attr("axis", 0))
    axis = axis + x.ndim if axis < 0 else axis
    sizes = split_sizes(node, operands_of(inputs), x.shape[axis], len(node.outputs))
    return list(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


# ---- Slice ---------------------------------------------------------------------------------------
def _slice_args(node: Node, operands: list[Operand | None]) -> list[list[int] | None] | None:
    """[starts, ends, axes, steps] (axes/steps may be None = default); None when a value is unknown."""
    if node.opset < 10:
        return [None if node.attr(k) is None else [int(v) for v in node.attr(k)]
                for k in ("starts", "ends", "axes")] + [None]
    args: list[list[int] | None] = []
    for i in range(1, 5):
        op = optional(operands, i)
        if op is not None and op.value is None:
            return None
        args.append(None if op is None else [int(v) for v in np.asarray(op.value).reshape(-1)])
    return args


def slice_plan(node: Node, operands: list[Operand | None], rank: int,
               args: list[list[int] | None]) -> dict[int, slice]:
    """Per-axis python slices; numpy's slice clamping is exactly ONNX's (negatives wrap once)."""
    starts, ends, axes, steps = args
    if starts is None or ends is None or len(starts) != len(ends):
        raise shape_error(node, operands, "starts and ends are required and must have the same length")
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    if len(axes) != len(starts) or len(steps) != len(starts):
        raise shape_error(node, operands, f"starts/ends/axes/steps lengths differ: {len(starts)}, "
                                          f"{len(ends)}, {len(axes)}, {len(steps)}")
    norm = [normalize_axis(node, operands, a, rank, name="axes") for a in axes]
    if len(set(norm)) != len(norm):
        raise shape_error(node, operands, f"axes {axes} repeat an axis")
    if 0 in steps:
        raise shape_error(node, operands, "steps must not be 0")
    return {a: slice(s, e, st) for a, s, e, st in zip(norm, starts, ends, steps, strict=True)}


def _infer_slice(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1 if node.opset < 10 else 3, 1 if node.opset < 10 else 5)
    x = operand(node, operands, 0).desc
    args = _slice_args(node, operands)
    if args is None:
        return [like(x, [UNK] * x.rank)]
    plan = slice_plan(node, operands, x.rank, args)
    return [like(x, [_sliced_dim(plan.get(a), d) for a, d in enumerate(x.shape)])]


def _sliced_dim(s: slice | None, dim: int) -> int:
    if s is None:
        return dim
    return UNK if dim < 0 else len(range(*s.indices(dim)))


def _slice(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None

    def index() -> tuple[slice, ...]:
        operands = operands_of(inputs)
        args = _slice_args(node, operands)
        assert args is not None
        plan = slice_plan(node, operands, x.ndim, args)
        return tuple(plan.get(a, slice(None)) for a in range(x.ndim))

    # The index depends on the starts/ends/axes/steps values too (inputs since opset 10): ~30 us of
    # Python a call otherwise, as much as the CRNN's slices' copies.
    values = tuple(None if a is None else a.tobytes() for a in inputs[1:])
    return [x[memoized(node, inputs, index, values)]]


# ---- DepthToSpace / SpaceToDepth -----------------------------------------------------------------
def _mode(node: Node, operands: list[Operand | None]) -> str:
    return choice_attr(node, operands, "mode", ("DCR", "CRD"), "DCR")


def _block_input(node: Node, operands: list[Operand | None]) -> tuple[TensorDesc, int]:
    """The one input, checked 4-D (NCHW), and the blocksize (the mode checked too)."""
    require_inputs(node, operands, 1, 1)
    x = operand(node, operands, 0).desc
    b, _ = positive_int_attr(node, operands, "blocksize"), _mode(node, operands)
    if x.rank != 4:
        raise shape_error(node, operands, f"input must be 4-D (NCHW), got rank {x.rank}")
    return x, b


def _infer_depth_to_space(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    x, b = _block_input(node, operands)
    n, c, h, w = x.shape
    if c >= 0 and c % (b * b):
        raise shape_error(node, operands, f"channels {c} are not divisible by blocksize^2 = {b * b}")
    return [like(x, [n, UNK if c < 0 else c // (b * b), _times(h, b), _times(w, b)])]


def _times(dim: int, factor: int) -> int:
    return UNK if dim < 0 else dim * factor


def _depth_to_space(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    b, mode = positive_int_attr(node, [], "blocksize"), _mode(node, [])
    n, c, h, w = x.shape
    if mode == "DCR":  # channels ordered (block row, block col, depth)
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:  # CRD: channels ordered (depth, block row, block col)
        t = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return [t.reshape(n, c // (b * b), h * b, w * b)]


def _infer_space_to_depth(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    x, b = _block_input(node, operands)
    n, c, h, w = x.shape
    if any(d >= 0 and d % b for d in (h, w)):
        raise shape_error(node, operands, f"height {h} and width {w} must be divisible by blocksize {b}")
    return [like(x, [n, UNK if c < 0 else c * b * b, UNK if h < 0 else h // b, UNK if w < 0 else w // b])]


def _space_to_depth(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    b, mode = positive_int_attr(node, [], "blocksize"), _mode(node, [])
    n, c, h, w = x.shape
    t = x.reshape(n, c, h // b, b, w // b, b)
    perm = (0, 3, 5, 1, 2, 4) if mode == "DCR" else (0, 1, 3, 5, 2, 4)
    return [t.transpose(perm).reshape(n, c * b * b, h // b, w // b)]


# ---- Trilu ---------------------------------------------------------------------------------------
def _infer_trilu(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 2)
    x = operand(node, operands, 0).desc
    if x.rank < 2:
        raise shape_error(node, operands, f"input must have rank >= 2, got {x.rank}")
    k = optional(operands, 1)
    if k is not None and k.desc.numel not in (1, None):
        raise shape_error(node, operands, "k must be a scalar")
    return [like(x)]


def _trilu(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    k_in = inputs[1] if len(inputs) > 1 else None
    k = 0 if k_in is None else int(np.asarray(k_in).reshape(-1)[0])
    fn = np.triu if node.attr("upper", 1) else np.tril
    return [fn(x, k)]


OPS: list[OpDef] = [
    # permute the axes (reversed by default)
    OpDef("Transpose", Category.INJECTIVE, _infer_transpose, _transpose, zero_flop_cost, doc="permute axes",
          vector_class=VectorClass.DATA_MOVE, ge_types=("TransposeD", "TransposeV2")),
    # join inputs along axis
    OpDef("Concat", Category.INJECTIVE, _infer_concat, _concat, zero_flop_cost, doc="join along axis",
          unit=Unit.MTE, npu_layout=NpuLayout.CONCAT, ge_types=("ConcatD", "ConcatV2", "ConcatV2D")),
    # cut the input along axis into len(outputs) pieces (given sizes, or equal/ceil chunks)
    OpDef("Split", Category.INJECTIVE, _infer_split, _split, zero_flop_cost, doc="cut along axis", unit=Unit.MTE,
          ge_types=("SplitD", "SplitV", "SplitVD")),
    # strided sub-tensor (starts/ends clamped, negative steps walk backwards)
    OpDef("Slice", Category.INJECTIVE, _infer_slice, _slice, zero_flop_cost, doc="strided sub-tensor", unit=Unit.MTE,
          ge_types=("StridedSliceD", "StridedSlice", "SliceD")),
    # move channel blocks into spatial blocks (DCR or CRD order)
    OpDef("DepthToSpace", Category.INJECTIVE, _infer_depth_to_space, _depth_to_space, zero_flop_cost,
          doc="channels to space", vector_class=VectorClass.DATA_MOVE),
    # move spatial blocks into channels
    OpDef("SpaceToDepth", Category.INJECTIVE, _infer_space_to_depth, _space_to_depth, zero_flop_cost,
          doc="space to channels", vector_class=VectorClass.DATA_MOVE),
    # keep the upper (or lower) triangle of the last two dims from diagonal k, zero the rest
    OpDef("Trilu", Category.INJECTIVE, _infer_trilu, _trilu, zero_flop_cost, doc="triangle mask",
          vector_class=VectorClass.DATA_MOVE),
]
