"""Convolution and pooling at learned or given positions: DeformConv and RoiAlign.

DeformConv samples X bilinearly (zero outside) at every kernel tap moved by its offset, scales it by the
mask, and contracts the resulting columns with W as a grouped GEMM: im2col with moving taps. It is CUBE
(GE runs the contraction on the cube, as a Conv). RoiAlign averages (or maxes) bilinear samples over each
bin of each region; the bilinear weights separate into a row and a column part, so an average is two small
matrix products per region. RoiAlign is OPAQUE: which pixels it reads depends on the rois' values.
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.errors import ExecutionError
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import UNK, io_bytes, make_desc, operand, optional, require_inputs, shape_error
from ge_core.ops.math import FLOATS, check_dtype
from ge_core.ops.matrix_view import conv_view
from ge_core.ops.registry import Category, Cost, OpDef, Operand
from ge_core.ops.sampling import linear_taps, sample_zeros
from ge_core.ops.spatial import explicit_pads, int_list, operands_of


# ---- DeformConv ---------------------------------------------------------------------------------------
def _deform_geometry(node: Node, operands: list[Operand | None]) -> tuple[tuple[int, ...], ...]:
    """(kernel, strides, dilations, pads_begin, pads_end, output spatial dims) with every check."""
    require_inputs(node, operands, 3, 5)
    x, w, off = (operand(node, operands, i).desc for i in range(3))
    check_dtype(node, operands, x.dtype, FLOATS, "X")
    if x.rank < 3 or w.rank != x.rank or off.rank != x.rank:
        raise shape_error(node, operands, f"X, W and offset must share one rank >= 3, got {x.rank}, {w.rank}, "
                                          f"{off.rank}")
    rank = x.rank - 2
    kernel = int_list(node, operands, "kernel_shape", rank, None) if node.attr("kernel_shape") else w.shape[2:]
    strides = int_list(node, operands, "strides", rank, 1)
    dilations = int_list(node, operands, "dilations", rank, 1)
    begin, end = explicit_pads(node, operands, rank)
    out = tuple(UNK if d < 0 or k < 0 else (d + b + e - dl * (k - 1) - 1) // s + 1
                for d, k, s, dl, b, e in zip(x.shape[2:], kernel, strides, dilations, begin, end, strict=True))
    _check_channels(node, operands, x, w, off, kernel, out)
    return tuple(kernel), strides, dilations, begin, end, out


def _check_channels(node: Node, operands: list[Operand | None], x: TensorDesc, w: TensorDesc, off: TensorDesc,
                    kernel: tuple[int, ...], out: tuple[int, ...]) -> None:
    group, offset_group = int(node.attr("group", 1)), int(node.attr("offset_group", 1))
    c, oc, taps = x.shape[1], w.shape[0], math.prod(kernel)
    if c >= 0 and w.shape[1] >= 0 and (c != w.shape[1] * group or c % offset_group):
        raise shape_error(node, operands, f"X has {c} channels: W needs C/group = {c // max(group, 1)} (has "
                                          f"{w.shape[1]}) and C must divide by offset_group={offset_group}")
    if oc >= 0 and oc % group:
        raise shape_error(node, operands, f"W's {oc} output channels do not divide by group={group}")
    want = offset_group * taps * len(kernel)
    if off.shape[1] >= 0 and off.shape[1] != want:
        raise shape_error(node, operands, f"offset must have offset_group * prod(kernel) * {len(kernel)} = {want} "
                                          f"channels, got {off.shape[1]}")
    if any(a >= 0 and b >= 0 and a != b for a, b in zip(off.shape[2:], out, strict=True)):
        raise shape_error(node, operands, f"offset's spatial dims {list(off.shape[2:])} must be the output's "
                                          f"{list(out)}")
    mask = optional(operands, 4)
    if mask is not None and mask.desc.shape[1] not in (offset_group * taps, UNK):
        raise shape_error(node, operands, f"mask must have offset_group * prod(kernel) = {offset_group * taps} "
                                          f"channels, got {mask.desc.shape[1]}")


def _infer_deform_conv(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    *_, out = _deform_geometry(node, operands)
    x, w = operand(node, operands, 0).desc, operand(node, operands, 1).desc
    return [make_desc((x.shape[0], w.shape[0], *out), x.dtype)]


def _sample_columns(x: np.ndarray, off: np.ndarray, mask: np.ndarray | None,
                    geometry: tuple[tuple[int, ...], ...], offset_group: int) -> np.ndarray:
    """The deformed im2col columns [N, C, taps, out points], masked."""
    kernel, strides, dilations, begin, _, out = geometry
    n, c, nd = x.shape[0], x.shape[1], len(kernel)
    off = off.reshape(n, offset_group, *kernel, nd, *out)
    # Where each tap of each output point reads before its offset: -pad + stride * o + dilation * k.
    grids = np.meshgrid(*(np.arange(k) for k in kernel), *(np.arange(o) for o in out), indexing="ij")
    base = [-b + s * grids[nd + a] + d * grids[a] for a, (b, s, d) in enumerate(zip(begin, strides, dilations,
                                                                                  strict=True))]
    cg = c // offset_group
    cols = np.empty((n, c, math.prod(kernel), math.prod(out)), dtype=x.dtype)
    for g in range(offset_group):
        coords = np.stack([base[a] + np.take(off[:, g], a, axis=1 + nd) for a in range(nd)], axis=-1)
        xt = np.moveaxis(x[:, g * cg:(g + 1) * cg], 1, -1)  # [N, D.., Cg]
        acc = sum(w[..., None] * sample_zeros(xt, idx, x.shape[2:]) for idx, w in linear_taps(coords))
        if mask is not None:
            acc = acc * mask.reshape(n, offset_group, *kernel, *out)[:, g, ..., None]
        cols[:, g * cg:(g + 1) * cg] = np.moveaxis(np.asarray(acc), -1, 1).reshape(n, cg, *cols.shape[2:])
    return cols


def _deform_conv(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, w, off = inputs[0], inputs[1], inputs[2]
    assert x is not None and w is not None and off is not None
    bias = inputs[3] if len(inputs) > 3 else None
    mask = inputs[4] if len(inputs) > 4 else None
    geometry = _deform_geometry(node, operands_of(inputs))
    work = np.float32 if x.dtype.itemsize < 4 else x.dtype
    cols = _sample_columns(x.astype(work), off.astype(work), None if mask is None else mask.astype(work),
                           geometry, int(node.attr("offset_group", 1)))
    group, oc = int(node.attr("group", 1)), w.shape[0]
    n, out = x.shape[0], geometry[-1]
    cols = cols.reshape(n, group, -1, cols.shape[-1])  # [N, g, C/g * taps, points]
    weights = w.astype(work).reshape(group, oc // group, -1)  # [g, oc/g, C/g * taps]
    y = np.einsum("gok,ngkp->ngop", weights, cols, optimize=True).reshape(n, oc, *out)
    if bias is not None:
        y = y + bias.astype(work).reshape((1, oc) + (1,) * len(out))
    return [np.ascontiguousarray(y).astype(x.dtype, copy=False)]


def _deform_conv_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """The GEMM's 2 * N * OC * points * C/g * taps, plus 3 FLOPs per bilinear corner per sampled value."""
    x, w = inputs[0], inputs[1]
    read, written = io_bytes(inputs, outputs)
    y = outputs[0]
    if x is None or w is None or not (x.is_static and w.is_static and y.is_static):
        return Cost(0, read, written)
    taps, points = math.prod(w.shape[2:]), math.prod(y.shape[2:])
    gemm = 2 * y.shape[0] * y.shape[1] * points * w.shape[1] * taps
    sampling = 3 * 2 ** (x.rank - 2) * x.shape[0] * x.shape[1] * taps * points
    return Cost(gemm + sampling, read, written)


# ---- RoiAlign -----------------------------------------------------------------------------------------
def _infer_roi_align(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 3, 3)
    x, rois, idx = (operand(node, operands, i).desc for i in range(3))
    check_dtype(node, operands, x.dtype, FLOATS, "X")
    if x.rank != 4:
        raise shape_error(node, operands, f"X must be [N, C, H, W], got rank {x.rank}")
    if rois.dtype != x.dtype or rois.rank != 2 or rois.shape[1] not in (4, UNK):
        raise shape_error(node, operands, f"rois must be [num_rois, 4] of X's dtype, got {rois.text()}")
    if idx.dtype != "int64" or idx.rank != 1 or (idx.shape[0] >= 0 and rois.shape[0] >= 0
                                                  and idx.shape[0] != rois.shape[0]):
        raise shape_error(node, operands, f"batch_indices must be int64 [num_rois], got {idx.text()}")
    mode = str(node.attr("mode", "avg"))
    if mode not in ("avg", "max"):
        raise shape_error(node, operands, f"mode {mode!r} must be 'avg' or 'max'")
    oh, ow = int(node.attr("output_height", 1)), int(node.attr("output_width", 1))
    return [make_desc((rois.shape[0], x.shape[1], oh, ow), x.dtype)]


def _axis_samples(start: float, size: float, bins: int, grid: int, limit: int) -> tuple[np.ndarray, ...]:
    """Along one axis: per (bin, sample) the low/high pixel and their weights (0 outside the map)."""
    pos = start + np.arange(bins)[:, None] * (size / bins) + (np.arange(grid)[None, :] + 0.5) * (size / bins) / grid
    outside = (pos < -1.0) | (pos > limit)
    pos = np.maximum(pos, 0.0)
    low = np.floor(pos).astype(np.int64)
    at_end = low >= limit - 1
    low = np.where(at_end, limit - 1, low)
    high = np.where(at_end, limit - 1, low + 1)
    frac = np.where(at_end, 0.0, pos - low)
    w_low, w_high = np.where(outside, 0.0, 1 - frac), np.where(outside, 0.0, frac)
    return low, high, w_low, w_high


def _roi_grid(node: Node, roi: np.ndarray, oh: int, ow: int) -> tuple[float, float, float, float, int, int]:
    """(start_h, start_w, height, width, samples per bin along h, along w) of one region."""
    default = "half_pixel" if node.opset >= 16 else "output_half_pixel"
    half = str(node.attr("coordinate_transformation_mode", default)) == "half_pixel"
    scale = float(node.attr("spatial_scale", 1.0))
    x1, y1, x2, y2 = (float(v) * scale - (0.5 if half else 0.0) for v in roi)
    h, w = y2 - y1, x2 - x1
    if not half:  # malformed regions are forced to 1x1
        h, w = max(h, 1.0), max(w, 1.0)
    ratio = int(node.attr("sampling_ratio", 0))
    gh = ratio if ratio > 0 else math.ceil(h / oh)
    gw = ratio if ratio > 0 else math.ceil(w / ow)
    return y1, x1, h, w, gh, gw


def _roi_align(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, rois, batch = inputs[0], inputs[1], inputs[2]
    assert x is not None and rois is not None and batch is not None
    oh, ow = int(node.attr("output_height", 1)), int(node.attr("output_width", 1))
    n, c, height, width = x.shape
    if batch.size and (batch.min() < 0 or batch.max() >= n):
        raise ExecutionError(node.name, node.op_type, [list(a.shape) for a in (x, rois, batch)],
                             f"batch_indices must be in [0, {n}), got {batch.tolist()}.")
    work = x.astype(np.float64)
    out = np.zeros((rois.shape[0], c, oh, ow), dtype=np.float64)
    for r in range(rois.shape[0]):  # each region has its own sampling grid
        y0, x0, h, w, gh, gw = _roi_grid(node, rois[r], oh, ow)
        ys, xs = _axis_samples(y0, h, oh, gh, height), _axis_samples(x0, w, ow, gw, width)
        fmap = work[int(batch[r])]
        if str(node.attr("mode", "avg")) == "avg":
            out[r] = _roi_average(fmap, ys, xs, gh * gw)
        else:
            out[r] = _roi_max(fmap, ys, xs)
    return [out.astype(x.dtype)]


def _interpolation_matrix(samples: tuple[np.ndarray, ...], size: int) -> np.ndarray:
    """[bins, size]: each bin's summed bilinear weight on every pixel of the axis."""
    low, high, w_low, w_high = samples
    m = np.zeros((low.shape[0], size))
    rows = np.broadcast_to(np.arange(low.shape[0])[:, None], low.shape)
    np.add.at(m, (rows, low), w_low)
    np.add.at(m, (rows, high), w_high)
    return m


def _roi_average(fmap: np.ndarray, ys: tuple[np.ndarray, ...], xs: tuple[np.ndarray, ...], count: int) -> np.ndarray:
    """Mean of the samples: sum_{samples} wy * wx * X = (My @ X @ Mx^T) / count, per channel."""
    my, mx = _interpolation_matrix(ys, fmap.shape[1]), _interpolation_matrix(xs, fmap.shape[2])
    return np.einsum("ph,chw,qw->cpq", my, fmap, mx, optimize=True) / max(count, 1)


def _roi_max(fmap: np.ndarray, ys: tuple[np.ndarray, ...], xs: tuple[np.ndarray, ...]) -> np.ndarray:
    """Per bin, the max over samples of the max over the 4 weighted corners (ONNX's max mode); 0 for a bin
    without samples (an empty region)."""
    if ys[0].size == 0 or xs[0].size == 0:
        return np.zeros((fmap.shape[0], ys[0].shape[0], xs[0].shape[0]))
    best = None
    for yi, wy in ((ys[0], ys[2]), (ys[1], ys[3])):
        for xi, wx in ((xs[0], xs[2]), (xs[1], xs[3])):
            # [C, oh, gh, ow, gw]: the corner's weighted value at every sample
            v = fmap[:, yi[:, :, None, None], xi[None, None]] * (wy[:, :, None, None] * wx[None, None])
            best = v if best is None else np.maximum(best, v)
    assert best is not None
    return best.max(axis=(2, 4))


def _roi_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """~4 corners x 2 FLOPs per sample, with a guessed 2x2 samples per bin (the grid depends on the rois)."""
    read, written = io_bytes(inputs, outputs)
    return Cost(8 * 4 * (outputs[0].numel or 0), read, written)


OPS: list[OpDef] = [
    # convolution whose taps read X at offset (and masked) positions, sampled bilinearly
    OpDef("DeformConv", Category.CUBE, _infer_deform_conv, _deform_conv, _deform_conv_cost,
          doc="deformable convolution", channel_axis=1, gemm=conv_view(0, 1)),
    # average (or max) of bilinear samples over each output bin of each region of interest
    OpDef("RoiAlign", Category.OPAQUE, _infer_roi_align, _roi_align, _roi_cost, doc="region of interest align"),
]
