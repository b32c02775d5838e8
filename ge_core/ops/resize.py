"""Resize and Upsample: separable interpolation (nearest, linear, cubic), one axis at a time.

For every resized axis we compute, per output position, its source coordinate (the
coordinate_transformation_mode), then a few taps (input indices) and their weights (the mode's
kernel). The output is the weighted sum of np.take along that axis: vectorised, and exact for
nearest (a plain gather). Resize-10 and Upsample (opsets 7/9) use asymmetric coordinates and
ORT's legacy nearest rounding (floor when upsampling, ceil when downsampling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ge_core.ir.limits import check_tensor_size
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import UNK, elementwise_cost, like, normalize_axis, operand, optional, shape_error
from ge_core.ops.kernel_memo import memoized
from ge_core.ops.registry import Category, NpuLayout, OpDef, Operand
from ge_core.ops.resize_kernels import ResizeArgs, Taps, axis_taps
from ge_core.ops.shape_ops import like_array, operands_of

MODES = ("nearest", "linear", "cubic")
COORD_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
               "asymmetric", "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
POLICIES = ("stretch", "not_larger", "not_smaller")


def _args(node: Node, operands: list[Operand | None], rank: int) -> ResizeArgs:
    legacy = node.op_type == "Upsample" or node.opset < 11
    mode = str(node.attr("mode", "nearest"))
    mode = "linear" if mode in ("bilinear", "trilinear") and node.op_type == "Upsample" else mode
    coord = "asymmetric" if legacy else str(node.attr("coordinate_transformation_mode", "half_pixel"))
    nearest = "legacy" if legacy else str(node.attr("nearest_mode", "round_prefer_floor"))
    raw_axes = node.attr("axes") if node.opset >= 18 and not legacy else None
    axes = list(range(rank))
    if raw_axes is not None:
        axes = [normalize_axis(node, operands, int(a), rank, name="axes") for a in raw_axes]
    args = ResizeArgs(mode, coord, nearest, float(node.attr("cubic_coeff_a", -0.75)),
                      bool(node.attr("exclude_outside", 0)), float(node.attr("extrapolation_value", 0.0)),
                      bool(node.attr("antialias", 0)) and node.opset >= 18, axes,
                      str(node.attr("keep_aspect_ratio_policy", "stretch")))
    _check_args(node, operands, args, legacy)
    return args


def _check_args(node: Node, operands: list[Operand | None], args: ResizeArgs, legacy: bool) -> None:
    modes = MODES[:2] if legacy else MODES
    problems = [
        (args.mode not in modes, f"mode {args.mode!r} is not one of {list(modes)}"),
        (args.coord not in COORD_MODES, f"coordinate_transformation_mode {args.coord!r} is unknown"),
        (not legacy and args.nearest not in NEAREST_MODES, f"nearest_mode {args.nearest!r} is unknown"),
        (args.policy not in POLICIES, f"keep_aspect_ratio_policy {args.policy!r} is unknown"),
        (len(set(args.axes)) != len(args.axes), f"axes {args.axes} repeat an axis"),
    ]
    for bad, message in problems:
        if bad:
            raise shape_error(node, operands, message)


def _inputs(node: Node, operands: list[Operand | None]) -> tuple[Operand | None, Operand | None,
                                                                   Operand | None, bool]:
    """(roi, scales, sizes, known) by op and opset; known is False while scales/sizes are unknown."""
    if node.op_type == "Upsample" and node.opset < 9:
        scales = node.attr("scales")
        if scales is None:
            raise shape_error(node, operands, "the scales attribute is required")
        return None, Operand(like_array(np.asarray(scales)), np.asarray(scales, dtype=np.float32)), None, True
    if node.op_type == "Upsample" or node.opset < 11:
        roi, scales, sizes = None, optional(operands, 1), None
    else:
        roi, scales, sizes = optional(operands, 1), optional(operands, 2), optional(operands, 3)
    known = all(o is None or o.value is not None for o in (scales, sizes))  # roi never sets the shape
    return roi, scales, sizes, known


def _vector(op: Operand | None) -> np.ndarray | None:
    """A given, non-empty 1-D value (ONNX passes "absent" scales/sizes/roi as empty tensors too)."""
    if op is None or op.value is None or np.asarray(op.value).size == 0:
        return None
    return np.asarray(op.value).reshape(-1)


def output_plan(node: Node, operands: list[Operand | None], shape: tuple[int, ...], args: ResizeArgs,
                scales: np.ndarray | None, sizes: np.ndarray | None) -> tuple[list[int], list[float]]:
    """Output dims and per-axis scales (1.0 on axes not resized); -1 where a dim is unknown."""
    out, scale = list(shape), [1.0] * len(shape)
    if (scales is None) == (sizes is None):
        raise shape_error(node, operands, "exactly one of scales and sizes must be given")
    given = scales if scales is not None else sizes
    assert given is not None
    if len(given) != len(args.axes):
        raise shape_error(node, operands, f"{'scales' if scales is not None else 'sizes'} has "
                                          f"{len(given)} values for {len(args.axes)} axes")
    if scales is not None:
        if any(float(s) <= 0 for s in scales):
            raise shape_error(node, operands, f"scales {scales.tolist()} must be positive")
        for a, s in zip(args.axes, scales, strict=True):
            scale[a] = float(s)
            out[a] = UNK if shape[a] < 0 else math.floor(float(s) * shape[a])
        return out, scale
    assert sizes is not None
    if any(int(s) < 0 for s in sizes):
        raise shape_error(node, operands, f"sizes {sizes.tolist()} must be non-negative")
    return _sized_plan(args, shape, out, scale, [int(s) for s in sizes])


def _sized_plan(args: ResizeArgs, shape: tuple[int, ...], out: list[int], scale: list[float],
                sizes: list[int]) -> tuple[list[int], list[float]]:
    if any(shape[a] < 0 for a in args.axes):  # the scales would need the unknown input dims
        for a, s in zip(args.axes, sizes, strict=True):
            out[a] = s if args.policy == "stretch" else UNK
        return out, scale
    ratios = [s / shape[a] if shape[a] else 1.0 for a, s in zip(args.axes, sizes, strict=True)]
    if args.policy == "stretch":
        for a, s, r in zip(args.axes, sizes, ratios, strict=True):
            out[a], scale[a] = s, r
        return out, scale
    common = min(ratios) if args.policy == "not_larger" else max(ratios)
    for a in args.axes:
        out[a], scale[a] = int(common * shape[a] + 0.5), common  # round half up, as the spec says
    return out, scale


def _infer_resize(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    x = operand(node, operands, 0).desc
    args = _args(node, operands, x.rank)
    roi, scales, sizes, known = _inputs(node, operands)
    if not known:
        return [like(x, [UNK if a in args.axes else d for a, d in enumerate(x.shape)])]
    out, _ = output_plan(node, operands, x.shape, args, _vector(scales), _vector(sizes))
    if args.coord == "tf_crop_and_resize" and (roi is None or roi.value is not None):
        _roi(node, operands, x.rank, args, _vector(roi))
    return [like(x, out)]


def _roi(node: Node, operands: list[Operand | None], rank: int, args: ResizeArgs,
         roi: np.ndarray | None) -> list[tuple[float, float]]:
    """Per-axis (start, end) of the region of interest; (0, 1) where not given."""
    spans = [(0.0, 1.0)] * rank
    if args.coord != "tf_crop_and_resize":
        return spans
    if roi is None or len(roi) != 2 * len(args.axes):
        raise shape_error(node, operands, f"tf_crop_and_resize needs roi with 2 x {len(args.axes)} values")
    n = len(args.axes)
    for i, a in enumerate(args.axes):
        spans[a] = (float(roi[i]), float(roi[i + n]))
    return spans


def resize_plan(node: Node, inputs: list[np.ndarray | None]) -> ResizePlan:
    """How a Resize/Upsample node resizes these inputs (memoized per attributes, shapes and the values of
    roi, scales and sizes; the fast path in ge_core/kernels asks too)."""
    x = inputs[0]
    values = tuple(None if a is None or a is x else a.tobytes() for a in inputs)  # roi, scales, sizes
    return memoized(node, inputs, lambda: _plan(node, inputs), values)


def _resize(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    plan = resize_plan(node, inputs)
    if plan.repeats is not None:  # integer upsampling by nearest neighbour: a copy
        return [_repeat(x, plan.repeats)]
    result = x
    for a, taps in plan.taps:
        result = _apply(result, a, taps, plan.extrapolation)
    return [_cast_back(result, x.dtype)]


@dataclass(frozen=True)
class ResizePlan:
    """What a Resize does to inputs of one shape: the taps per resized axis, or, when every resized axis
    only repeats each input element k times in order, the factors."""

    taps: tuple[tuple[int, Taps], ...]
    extrapolation: float
    repeats: tuple[int, ...] | None


def _plan(node: Node, inputs: list[np.ndarray | None]) -> ResizePlan:
    x = inputs[0]
    assert x is not None
    operands = operands_of(inputs)
    args = _args(node, operands, x.ndim)
    roi, scales, sizes, _ = _inputs(node, operands)
    out_shape, scale = output_plan(node, operands, x.shape, args, _vector(scales), _vector(sizes))
    check_tensor_size(f"node '{node.name}' ({node.op_type})", out_shape, like_array(x).dtype)
    spans = _roi(node, operands, x.ndim, args, _vector(roi))
    taps = tuple((a, t) for a in args.axes
                 if (t := axis_taps(args, x.shape[a], out_shape[a], scale[a], spans[a])) is not None)
    repeats = [1] * x.ndim
    for a, t in taps:
        factor = out_shape[a] // max(x.shape[a], 1)
        single = t.index.shape[1] == 1 and t.outside is None and bool(np.all(t.weight == 1.0))
        if not (single and factor * x.shape[a] == out_shape[a]
                and np.array_equal(t.index[:, 0], np.arange(out_shape[a]) // factor)):
            return ResizePlan(taps, args.extrapolation, None)
        repeats[a] = factor
    return ResizePlan(taps, args.extrapolation, tuple(repeats) if taps else None)


def _repeat(x: np.ndarray, repeats: tuple[int, ...]) -> np.ndarray:
    """Each element repeated k times along each axis (k = repeats[axis]): np.repeat along the last axis
    (a broadcast there would copy element by element: 4x slower, measured), then every other axis as a
    broadcast of whole contiguous rows, one copy."""
    if repeats[-1] > 1:
        x = np.repeat(x, repeats[-1], axis=-1)
    if all(k == 1 for k in repeats[:-1]):
        return x
    spread = x.reshape([d for n in x.shape[:-1] for d in (n, 1)] + [x.shape[-1]])
    wide = np.broadcast_to(spread, [d for n, k in zip(x.shape[:-1], repeats, strict=False) for d in (n, k)]
                           + [x.shape[-1]])
    return wide.reshape([n * k for n, k in zip(x.shape[:-1], repeats, strict=False)] + [x.shape[-1]])


def _apply(data: np.ndarray, axis: int, taps: Taps, extrapolation: float) -> np.ndarray:
    """The weighted sum of the taps along axis (a plain gather for one tap of weight 1)."""
    view = (1,) * axis + (-1,) + (1,) * (data.ndim - axis - 1)
    if taps.index.shape[1] == 1 and taps.outside is None:
        return np.take(data, taps.index[:, 0], axis=axis)
    acc = np.zeros((), dtype=np.float64)
    for k in range(taps.index.shape[1]):
        acc = acc + np.take(data, taps.index[:, k], axis=axis) * taps.weight[:, k].reshape(view)
    if taps.outside is not None:
        acc = np.where(taps.outside.reshape(view), extrapolation, acc)
    return np.asarray(acc)


def _cast_back(result: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if result.dtype == dtype:
        return result
    if dtype.kind in "iu":  # round and saturate, rather than wrap, when interpolating integers
        info = np.iinfo(dtype)
        return np.clip(np.rint(result), info.min, info.max).astype(dtype)
    return result.astype(dtype)


def _infer_upsample(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    operand(node, operands, 0)
    _, scales, _, _ = _inputs(node, operands)
    values = _vector(scales)
    if values is not None and any(float(s) < 1 for s in values):
        raise shape_error(node, operands, f"scales {values.tolist()} must be >= 1 (Upsample only grows)")
    return _infer_resize(node, operands)


OPS: list[OpDef] = [
    # interpolate to new sizes/scales: nearest, linear or cubic, per coordinate_transformation_mode
    OpDef("Resize", Category.INJECTIVE, _infer_resize, _resize, elementwise_cost(4), doc="interpolate",
          npu_layout=NpuLayout.RESIZE, ge_types=("ResizeBilinearV2", "ResizeNearestNeighborV2", "Upsample")),
    # the opset 7/9 form of Resize: scales only, asymmetric coordinates, nearest or linear
    OpDef("Upsample", Category.INJECTIVE, _infer_upsample, _resize, elementwise_cost(4), doc="upsample",
          npu_layout=NpuLayout.RESIZE),
]
