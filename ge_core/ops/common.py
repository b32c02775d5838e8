"""Helpers shared by the op families: argument checks, broadcasting, axes, descs and costs.

Unknown dims (-1) flow through: a helper that cannot decide a dim yields -1 rather than guessing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ge_core.errors import ShapeError
from ge_core.ir.dtypes import is_float, onnx_dtype_name
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc, default_format
from ge_core.ops.registry import Cost, CostFn, Operand

UNK = -1


def shapes_of(operands: Sequence[Operand | None]) -> list[tuple[int, ...] | None]:
    return [o.desc.shape if o is not None else None for o in operands]


def shape_error(node: Node, operands: Sequence[Operand | None], message: str) -> ShapeError:
    """A ShapeError naming the node, its op and its input shapes."""
    return ShapeError(node.name, node.op_type, shapes_of(operands), message)


def require_inputs(node: Node, operands: Sequence[Operand | None], minimum: int, maximum: int) -> None:
    present = len(operands)
    if present < minimum or present > maximum:
        want = str(minimum) if minimum == maximum else f"{minimum} to {maximum}"
        raise shape_error(node, operands, f"expects {want} inputs, got {present}")
    for i in range(minimum):
        if operands[i] is None:
            raise shape_error(node, operands, f"required input {i} is missing")


def operand(node: Node, operands: Sequence[Operand | None], index: int) -> Operand:
    """The operand at `index`, which must be present."""
    op = operands[index] if index < len(operands) else None
    if op is None:
        raise shape_error(node, operands, f"required input {index} is missing")
    return op


def optional(operands: Sequence[Operand | None], index: int) -> Operand | None:
    return operands[index] if index < len(operands) else None


def make_desc(shape: Sequence[int], dtype: str) -> TensorDesc:
    shape = tuple(int(d) for d in shape)
    fmt = default_format(len(shape))
    return TensorDesc(shape, dtype, fmt, origin_shape=shape, origin_format=fmt)


def like(desc: TensorDesc, shape: Sequence[int] | None = None, dtype: str | None = None) -> TensorDesc:
    return make_desc(desc.shape if shape is None else shape, desc.dtype if dtype is None else dtype)


def broadcast(node: Node, operands: Sequence[Operand | None], shapes: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """Numpy (multidirectional) broadcasting with unknown dims; raises a ShapeError when incompatible."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[int] = []
    for axis in range(rank):
        dims = [s[len(s) - rank + axis] for s in shapes if len(s) - rank + axis >= 0]
        known = {d for d in dims if d >= 0 and d != 1}
        if len(known) > 1:
            shown = " vs ".join(str(list(s)) for s in shapes)
            raise shape_error(node, operands, f"cannot broadcast {shown} (axis {axis}: {sorted(known)})")
        if known:
            out.append(known.pop())
        elif any(d < 0 for d in dims):
            out.append(UNK)
        else:
            out.append(1)
    return tuple(out)


def same_dtype(node: Node, operands: Sequence[Operand | None], indices: Sequence[int]) -> str:
    """The common dtype of the given inputs; ONNX requires them equal (no implicit promotion)."""
    dtypes = {operands[i].desc.dtype for i in indices if i < len(operands) and operands[i] is not None}  # type: ignore[union-attr]
    if len(dtypes) > 1:
        raise shape_error(node, operands, f"inputs must share one dtype, got {sorted(dtypes)}")
    return dtypes.pop()


def normalize_axis(node: Node, operands: Sequence[Operand | None], axis: int, rank: int,
                   *, name: str = "axis", extra: int = 0) -> int:
    """Map a possibly negative axis into [0, rank + extra); a ShapeError when out of range."""
    limit = rank + extra
    if not -limit <= axis < limit:
        raise shape_error(node, operands,
                          f"{name}={axis} is out of range for rank {rank} (valid: {-limit}..{limit - 1})")
    return axis + limit if axis < 0 else axis


def positive_int_attr(node: Node, operands: Sequence[Operand | None], name: str) -> int:
    """A required int attribute that must be >= 1 (num_groups, size, blocksize)."""
    value = node.attr(name)
    if value is None or int(value) < 1:
        raise shape_error(node, operands, f"{name} must be given and >= 1, got {value}")
    return int(value)


def check_axis_input(node: Node, operands: Sequence[Operand | None], index: int, rank: int) -> None:
    """An axis given as an input (CumSum, CumProd): a scalar or one-element tensor, in range once known."""
    axis = operand(node, operands, index)
    shape = axis.desc.shape
    if len(shape) > 1 or (len(shape) == 1 and shape[0] not in (1, UNK)):
        raise shape_error(node, operands, f"axis must be a scalar (or 1-element) tensor, got shape {list(shape)}")
    if axis.value is not None:
        normalize_axis(node, operands, int(np.asarray(axis.value).reshape(-1)[0]), rank)


def choice_attr(node: Node, operands: Sequence[Operand | None], name: str, choices: Sequence[str],
                default: str | None = None) -> str:
    """A string attribute (ONNX may hand it over as bytes) that must be one of `choices`."""
    raw = node.attr(name, default)
    value = raw.decode() if isinstance(raw, bytes) else str(raw)
    if value not in choices:
        raise shape_error(node, operands, f"{name}={value!r} is not one of {', '.join(choices)}")
    return value


def known_ints(op: Operand | None) -> list[int] | None:
    """The operand's value as a list of ints when known before running (shape/axes inputs)."""
    if op is None or op.value is None:
        return None
    return [int(v) for v in np.asarray(op.value).reshape(-1).tolist()]


def int_arg(node: Node, operands: Sequence[Operand | None], *, attr: str, input_index: int,
            since_opset: int) -> list[int] | None:
    """An int-list argument that moved from an attribute to an input at `since_opset` (axes, pads...).

    Returns None when the argument is absent, or when it is an input whose value is not known yet.
    """
    if node.opset < since_opset:
        value = node.attr(attr)
        return None if value is None else [int(v) for v in value]
    op = optional(operands, input_index)
    if op is None:
        return None
    return known_ints(op)


def int_arg_known(node: Node, operands: Sequence[Operand | None], *, attr: str, input_index: int,
                  since_opset: int) -> tuple[list[int] | None, bool]:
    """int_arg, and whether it is known: False for an input whose value is not known yet (None alone means
    the argument is absent)."""
    value = int_arg(node, operands, attr=attr, input_index=input_index, since_opset=since_opset)
    pending = value is None and node.opset >= since_opset and optional(operands, input_index) is not None
    return value, not pending


def nbytes(desc: TensorDesc | None) -> int:
    return 0 if desc is None else (desc.nbytes or 0)


def io_bytes(inputs: Sequence[TensorDesc | None], outputs: Sequence[TensorDesc]) -> tuple[int, int]:
    return sum(nbytes(d) for d in inputs), sum(nbytes(d) for d in outputs)


def elementwise_cost(flops_per_element: int = 1) -> CostFn:
    """A cost function: `flops_per_element` FLOPs per output element, I/O bytes from the descs."""

    def cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
        read, written = io_bytes(inputs, outputs)
        return Cost(flops_per_element * sum(d.numel or 0 for d in outputs), read, written)

    return cost


def gather_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """A gather from input 0 (OpDef.indexed_input): it reads the indices and the rows it picks (as many bytes as
    it writes), never the whole table; no FLOPs."""
    written = sum(d.nbytes or 0 for d in outputs)
    indices = sum(d.nbytes or 0 for d in inputs[1:] if d is not None)
    return Cost(0, indices + written, written)


def zero_flop_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """Data movement only (reshape, transpose, slice, concat...)."""
    read, written = io_bytes(inputs, outputs)
    return Cost(0, read, written)


def np_dtype(dtype: str) -> np.dtype:
    return np.dtype(object) if dtype == "str" else np.dtype(dtype)


def dtype_from_onnx(node: Node, code: int) -> str:
    """The dtype name of an ONNX TensorProto.DataType code (Cast's `to`, EyeLike's `dtype`...)."""
    name = onnx_dtype_name(code)
    if name is None:
        raise ShapeError(node.name, node.op_type, [], f"unknown ONNX data type code {code}")
    return name


def wide_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype a float kernel computes in: float32 for floats narrower than it (float16, bfloat16,
    float8...), as ONNX Runtime computes them; any other dtype itself."""
    return np.dtype(np.float32) if dtype.itemsize < 4 and is_float(dtype.name) else dtype


def widened(x: np.ndarray) -> np.ndarray:
    """`x` in its `wide_dtype` (the array itself when that is its own). Cast the result back with `narrowed`."""
    wide = wide_dtype(x.dtype)
    return x if wide == x.dtype else x.astype(wide)


def narrowed(y: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A result computed on `widened` inputs, back in the inputs' `dtype` (overflow to inf is IEEE's)."""
    with np.errstate(all="ignore"):
        return np.asarray(y).astype(dtype, copy=False)
