"""Pad and Tile: data movement whose output size comes from a small input (pads, repeats).

Both outputs can be far larger than the input, so the kernels check the tensor budget first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ge_core.ir.limits import check_tensor_size
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    UNK,
    known_ints,
    like,
    normalize_axis,
    operand,
    optional,
    require_inputs,
    shape_error,
    zero_flop_cost,
)
from ge_core.ops.registry import Category, OpDef, Operand, Unit
from ge_core.ops.shape_ops import like_array, operands_of

PAD_MODES = ("constant", "reflect", "edge", "wrap")


# ---- Pad -----------------------------------------------------------------------------------------
def _pad_mode(node: Node, operands: list[Operand | None]) -> str:
    mode = str(node.attr("mode", "constant"))
    allowed = PAD_MODES if node.opset >= 19 else PAD_MODES[:3]
    if mode not in allowed:
        raise shape_error(node, operands,
                          f"mode {mode!r} is not one of {list(allowed)} at opset {node.opset}")
    return mode


def _pads_and_axes(node: Node, operands: list[Operand | None],
                   rank: int) -> tuple[list[int], list[int]] | None:
    """(pads, axes) with axes normalized; None while the pads (or axes) input value is unknown."""
    if node.opset < 11:
        raw = node.attr("pads")
        if raw is None:
            raise shape_error(node, operands, "the pads attribute is required")
        pads, axes_raw = [int(p) for p in raw], None
    else:
        axes_op = optional(operands, 3) if node.opset >= 18 else None
        known_pads, axes_raw = known_ints(operand(node, operands, 1)), known_ints(axes_op)
        if known_pads is None or (axes_op is not None and axes_raw is None):
            return None
        pads = known_pads
    if axes_raw is None:
        axes = list(range(rank))
    else:
        axes = [normalize_axis(node, operands, a, rank, name="axes") for a in axes_raw]
    if len(set(axes)) != len(axes):
        raise shape_error(node, operands, f"axes {axes_raw} repeat an axis")
    if len(pads) != 2 * len(axes):
        raise shape_error(node, operands, f"pads {pads} must hold 2 x {len(axes)} values (begins, then ends)")
    return pads, axes


def _padded_shape(node: Node, operands: list[Operand | None], shape: tuple[int, ...],
                  pads: list[int], axes: list[int]) -> list[int]:
    out = list(shape)
    for i, a in enumerate(axes):
        if out[a] < 0:
            continue
        out[a] += pads[i] + pads[i + len(axes)]
        if out[a] < 0:
            raise shape_error(node, operands, f"pads {pads} crop axis {a} (dim {shape[a]}) below zero")
    return out


def _infer_pad(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1 if node.opset < 11 else 2, 1 if node.opset < 11 else 4)
    x = operand(node, operands, 0).desc
    _pad_mode(node, operands)
    got = _pads_and_axes(node, operands, x.rank)
    if got is None:
        return [like(x, [UNK] * x.rank)]
    return [like(x, _padded_shape(node, operands, x.shape, *got))]


def _pad_value(node: Node, inputs: list[np.ndarray | None], dtype: np.dtype) -> Any:
    if node.opset < 11:
        return np.asarray(node.attr("value", 0.0)).astype(dtype)
    value = inputs[2] if len(inputs) > 2 else None
    if value is None or value.size == 0:
        return np.zeros((), dtype=dtype)
    return value.reshape(-1)[0]


def _pad(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    operands = operands_of(inputs)
    mode = _pad_mode(node, operands)
    got = _pads_and_axes(node, operands, x.ndim)
    assert got is not None
    pads, axes = got
    out_shape = _padded_shape(node, operands, x.shape, pads, axes)
    check_tensor_size(f"node '{node.name}' ({node.op_type})", out_shape, like_array(x).dtype)
    # Negative pads crop: slice first, then pad with the positive parts.
    crop = [slice(None)] * x.ndim
    width = [(0, 0)] * x.ndim
    for i, a in enumerate(axes):
        begin, end = pads[i], pads[i + len(axes)]
        crop[a] = slice(max(-begin, 0), x.shape[a] - max(-end, 0))
        width[a] = (max(begin, 0), max(end, 0))
    data = x[tuple(crop)]
    if mode == "constant":
        return [np.pad(data, width, mode="constant", constant_values=_pad_value(node, inputs, x.dtype))]
    return [np.pad(data, width, mode=mode)]  # type: ignore[call-overload]  # mode is a checked str


# ---- Tile ----------------------------------------------------------------------------------------
def _repeats(node: Node, operands: list[Operand | None], rank: int, repeats: list[int]) -> list[int]:
    if len(repeats) != rank or any(r < 0 for r in repeats):
        raise shape_error(node, operands, f"repeats {repeats} must hold {rank} non-negative values")
    return repeats


def _infer_tile(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    x, reps = operand(node, operands, 0).desc, operand(node, operands, 1)
    values = known_ints(reps)
    if values is None:
        return [like(x, [UNK] * x.rank)]
    repeats = _repeats(node, operands, x.rank, values)
    return [like(x, [UNK if d < 0 else d * r for d, r in zip(x.shape, repeats, strict=True)])]


def _tile(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, reps = inputs[0], inputs[1]
    assert x is not None and reps is not None
    repeats = _repeats(node, operands_of(inputs), x.ndim, [int(r) for r in reps.reshape(-1)])
    out_shape = [d * r for d, r in zip(x.shape, repeats, strict=True)]
    check_tensor_size(f"node '{node.name}' ({node.op_type})", out_shape, like_array(x).dtype)
    return [np.tile(x, repeats)]


OPS: list[OpDef] = [
    # grow (or crop, with negative pads) each axis: constant fill, reflect, edge or wrap
    OpDef("Pad", Category.INJECTIVE, _infer_pad, _pad, zero_flop_cost, doc="pad axes", unit=Unit.MTE,
          ge_types=("PadD", "PadV3")),
    # repeat the input repeats[i] times along each axis
    OpDef("Tile", Category.INJECTIVE, _infer_tile, _tile, zero_flop_cost, doc="repeat along axes", unit=Unit.MTE,
          ge_types=("TileD",)),
]
