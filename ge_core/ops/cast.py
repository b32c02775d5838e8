"""Cast, CastLike and BitCast over every ONNX data type (ge_core/ir/dtypes.py names them).

Values convert as numpy and ml_dtypes convert them, which is what onnx.reference does: float -> int
truncates toward zero, nonzero -> True, floats round to nearest even. On top of that, as the spec says:
- float8 (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ) with `saturate` (the default) clip to the type's finite range
  first, so out-of-range values and infinities become +-max while NaN stays NaN; without it they become
  NaN (or inf for E5M2), ml_dtypes' own conversion;
- float8 E8M0 (an exponent only) keeps the exponent of the float32 value, rounded as `round_mode` says
  ("up" by default, "down", "nearest"), saturating at the largest exponent unless `saturate` is 0;
- strings parse as plain or scientific numbers, with "INF"/"+INF", "-INF" and "NaN" in any case (and
  "true"/"false" for bools); an integer target takes an integer text as it is and truncates a decimal one.
  Numbers print as numpy prints them (the shortest text that reads back to the same value), bools as
  "True"/"False", and the special floats as the spec's literals "NaN", "INF", "-INF".
BitCast reinterprets the bits: same bit width, little endian, no strings.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from ge_core.ir.dtypes import BY_NAME, dtype_bits, is_float, name_of
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    choice_attr,
    dtype_from_onnx,
    elementwise_cost,
    like,
    operand,
    require_inputs,
    shape_error,
)
from ge_core.ops.math import check_dtype
from ge_core.ops.registry import Category, OpDef, Operand

# ONNX's Cast takes every data type but the complex ones.
CASTABLE = frozenset(d.name for d in BY_NAME.values() if d.kind != "complex")
BIT_CASTABLE = frozenset(d.name for d in BY_NAME.values() if d.kind != "str")
SATURATING = frozenset({"float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz"})
E8M0 = "float8_e8m0fnu"
ROUND_MODES = ("up", "down", "nearest")
_SPECIAL_TEXT = {"nan": "NaN", "inf": "INF", "-inf": "-INF"}


# ---- the conversions -----------------------------------------------------------------------------
def cast_array(x: np.ndarray, dtype: str, *, saturate: bool = True, round_mode: str = "up") -> np.ndarray:
    """`x` converted to `dtype` with ONNX's semantics (see the module docstring). Always a new array.
    Out-of-range float -> int is undefined in ONNX; numpy's result is kept and its warning muted."""
    if dtype == "str":
        return to_strings(x)
    if x.dtype.kind in "OUS":
        x = from_strings(x, dtype)
    if dtype == E8M0:
        return to_e8m0(x, saturate=saturate, round_mode=round_mode)
    with np.errstate(all="ignore"):
        if saturate and dtype in SATURATING:
            info = ml_dtypes.finfo(dtype)
            x = np.clip(x.astype(np.float32) if x.dtype.itemsize < 4 else x, float(info.min), float(info.max))
        return x.astype(dtype)


def to_e8m0(x: np.ndarray, *, saturate: bool, round_mode: str) -> np.ndarray:
    """float8 E8M0 (2 ** (e - 127), 0xFF is NaN): the float32 exponent, its mantissa rounded away as
    `round_mode` says; NaN and inf become 0xFF (as onnx.numpy_helper.to_float8e8m0 does)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).reshape(np.shape(x)).view(np.uint32)
    exponent = ((bits >> 23) & 0xFF).astype(np.uint16)
    special = exponent == 0xFF
    if round_mode == "up":
        up = (bits & 0x7FFFFF) > 0
    elif round_mode == "nearest":  # guard bit set, and any of round, sticky or an implied leading one
        up = ((bits & 0x400000) > 0) & (((bits & 0x200000) > 0) | ((bits & 0x1FFFFF) > 0) | (exponent > 0))
    else:
        up = np.zeros(bits.shape, dtype=bool)
    if saturate:
        up &= exponent != 0xFE
    exponent += (up & ~special).astype(np.uint16)
    return np.where(special, 0xFF, exponent).astype(np.uint8).view(ml_dtypes.float8_e8m0fnu)


def to_strings(x: np.ndarray) -> np.ndarray:
    """Numbers as text (an object array of str)."""
    if x.dtype.kind in "OUS":
        return x.astype(object)
    if x.dtype == np.bool_:
        texts = ["True" if v else "False" for v in x.reshape(-1).tolist()]
    elif is_float(x.dtype.name):
        wide = x if x.dtype in (np.float16, np.float32, np.float64) else x.astype(np.float32)
        texts = [_float_text(v) for v in wide.reshape(-1)]
    else:
        texts = [str(int(v)) for v in x.astype(np.int64 if x.dtype.kind != "u" else np.uint64).reshape(-1).tolist()]
    return np.array(texts, dtype=object).reshape(x.shape)


def _float_text(value: np.floating) -> str:
    text = str(value)
    return _SPECIAL_TEXT.get(text, text)


def from_strings(x: np.ndarray, dtype: str) -> np.ndarray:
    """Text parsed as numbers for a `dtype` target: int64/uint64 for integers, bool, float64 otherwise."""
    texts = [str(v) for v in x.reshape(-1).tolist()]
    info = BY_NAME.get(dtype)
    if info is not None and info.kind in ("int", "uint"):
        wide = np.uint64 if info.kind == "uint" else np.int64
        return np.array([_parse_int(t) for t in texts], dtype=wide).reshape(x.shape)
    values = np.array([_parse_float(t) for t in texts], dtype=np.float64).reshape(x.shape)
    return values != 0 if dtype == "bool" else values


def _parse_float(text: str) -> float:
    word = text.strip().lower()
    if word in ("true", "false"):
        return float(word == "true")
    return float(word)  # also "nan", "inf", "+inf", "-inf", "1e-5", "1E8"; anything else raises


def _parse_int(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        return math.trunc(_parse_float(text))  # "100.5" -> 100


def bit_cast(x: np.ndarray, dtype: str) -> np.ndarray:
    """The bits of `x` read as `dtype` (same width). Sub-byte codes are masked to their bits; a bool
    is True where its byte is nonzero (numpy bools must be 0 or 1)."""
    raw = np.ascontiguousarray(x).reshape(x.shape)  # (ascontiguousarray makes a scalar 1-D)
    bits = dtype_bits(dtype)
    if dtype == "bool":
        return raw.view(np.uint8) != 0
    if bits < 8:
        return (raw.view(np.uint8) & np.uint8((1 << bits) - 1)).view(dtype)
    return raw.view(np.dtype(dtype)).copy()


# ---- inference and kernels -----------------------------------------------------------------------
def _target(node: Node, operands: list[Operand | None], allowed: frozenset[str]) -> str:
    to = node.attr("to")
    if to is None:
        raise shape_error(node, operands, "the attribute 'to' (target data type) is required")
    dtype = dtype_from_onnx(node, int(to))
    if dtype not in allowed:
        raise shape_error(node, operands, f"{node.op_type} to {dtype} is not supported "
                                          f"(supported: {', '.join(sorted(allowed))})")
    return dtype


def _round_mode(node: Node, operands: list[Operand | None]) -> str:
    return choice_attr(node, operands, "round_mode", ROUND_MODES, "up")


def _cast_infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    desc = operand(node, operands, 0).desc
    check_dtype(node, operands, desc.dtype, CASTABLE, "the input")
    _round_mode(node, operands)
    return [like(desc, dtype=_target(node, operands, CASTABLE))]


def _castlike_infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    desc, target = operand(node, operands, 0).desc, operand(node, operands, 1).desc
    check_dtype(node, operands, desc.dtype, CASTABLE, "the input")
    check_dtype(node, operands, target.dtype, CASTABLE, "the target (input 1)")
    _round_mode(node, operands)
    return [like(desc, dtype=target.dtype)]


def _bitcast_infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    desc = operand(node, operands, 0).desc
    check_dtype(node, operands, desc.dtype, BIT_CASTABLE, "the input")
    dtype = _target(node, operands, BIT_CASTABLE)
    if dtype_bits(dtype) != dtype_bits(desc.dtype):
        raise shape_error(node, operands, f"BitCast needs types of one bit width: {desc.dtype} has "
                                          f"{dtype_bits(desc.dtype)} bits, {dtype} {dtype_bits(dtype)}")
    return [like(desc, dtype=dtype)]


def _options(node: Node) -> dict[str, object]:
    return {"saturate": bool(node.attr("saturate", 1)), "round_mode": _round_mode(node, [])}


def _cast(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    return [cast_array(x, dtype_from_onnx(node, int(node.attr("to"))), **_options(node))]  # type: ignore[arg-type]


def _castlike(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, target = inputs
    assert x is not None and target is not None
    return [cast_array(x, name_of(target.dtype), **_options(node))]  # type: ignore[arg-type]


def _bitcast(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    return [bit_cast(x, dtype_from_onnx(node, int(node.attr("to"))))]


OPS: list[OpDef] = [
    # convert to the dtype `to` (float -> int truncates; float8 saturates unless saturate=0)
    OpDef("Cast", Category.ELEMENTWISE, _cast_infer, _cast, elementwise_cost(1)),
    # convert to the dtype of input 1
    OpDef("CastLike", Category.ELEMENTWISE, _castlike_infer, _castlike, elementwise_cost(1)),
    # the same bits read as the dtype `to` (of the same width)
    OpDef("BitCast", Category.ELEMENTWISE, _bitcast_infer, _bitcast, elementwise_cost(0)),
]
