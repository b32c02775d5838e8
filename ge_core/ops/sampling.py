"""Sampling at computed coordinates: GridSample and AffineGrid (which builds GridSample's grid).

GridSample reads X [N, C, D1..Dn] at the points of grid [N, O1..Om, n] (normalised to [-1, 1], the last
axis listing x first: the reverse of X's axis order). Every output point is computed at once: one gather
per interpolation tap (1 for nearest, 2^n for linear, 4^n for cubic), never a loop over points.
Both are OPAQUE: which input elements an output reads depends on data.
"""

from __future__ import annotations

import itertools

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import UNK, io_bytes, known_ints, make_desc, operand, require_inputs, shape_error
from ge_core.ops.math import FLOATS, NUMERIC, check_dtype
from ge_core.ops.registry import Category, Cost, OpDef, Operand

MODES = {"linear": "linear", "bilinear": "linear", "nearest": "nearest", "cubic": "cubic", "bicubic": "cubic"}
PADDINGS = ("zeros", "border", "reflection")
CUBIC_A = -0.75  # Keys' cubic convolution coefficient, as PyTorch and ONNX use it


# ---- helpers shared with DeformConv -------------------------------------------------------------------
def gather_points(xt: np.ndarray, index: list[np.ndarray]) -> np.ndarray:
    """xt [N, D1..Dn, C] read at integer points index[a] [N, ...] (in range): [N, ..., C]."""
    batch = np.arange(xt.shape[0]).reshape((-1,) + (1,) * (index[0].ndim - 1))
    return xt[(batch, *index)]


def linear_taps(coords: np.ndarray) -> list[tuple[list[np.ndarray], np.ndarray]]:
    """The 2^n corners around each point coords [..., n]: (integer index per axis, weight)."""
    base = np.floor(coords)
    frac = coords - base
    base_i = base.astype(np.int64)
    taps = []
    for corner in itertools.product((0, 1), repeat=coords.shape[-1]):
        weight = np.ones(coords.shape[:-1], dtype=coords.dtype)
        for a, c in enumerate(corner):
            weight = weight * (frac[..., a] if c else 1 - frac[..., a])
        taps.append(([base_i[..., a] + c for a, c in enumerate(corner)], weight))
    return taps


def sample_zeros(xt: np.ndarray, index: list[np.ndarray], dims: tuple[int, ...]) -> np.ndarray:
    """gather_points where every index is in range, 0 elsewhere (zero padding)."""
    valid = np.ones(index[0].shape, dtype=bool)
    for i, d in zip(index, dims, strict=True):
        valid &= (i >= 0) & (i < d)
    safe = [np.clip(i, 0, d - 1) for i, d in zip(index, dims, strict=True)]
    return gather_points(xt, safe) * valid[..., None]


# ---- GridSample ---------------------------------------------------------------------------------------
def _gs_attrs(node: Node, operands: list[Operand | None]) -> tuple[str, str, bool]:
    mode, padding = str(node.attr("mode", "linear" if node.opset >= 20 else "bilinear")), \
        str(node.attr("padding_mode", "zeros"))
    if mode not in MODES:
        raise shape_error(node, operands, f"mode {mode!r} is not one of {', '.join(MODES)}")
    if padding not in PADDINGS:
        raise shape_error(node, operands, f"padding_mode {padding!r} is not one of {', '.join(PADDINGS)}")
    return MODES[mode], padding, bool(node.attr("align_corners", 0))


def _infer_grid_sample(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    x, grid = operand(node, operands, 0).desc, operand(node, operands, 1).desc
    check_dtype(node, operands, x.dtype, NUMERIC, "X")
    check_dtype(node, operands, grid.dtype, FLOATS, "grid")
    _gs_attrs(node, operands)
    if x.rank < 3:
        raise shape_error(node, operands, f"X must be [N, C, D1, ...] (rank >= 3), got rank {x.rank}")
    n = x.rank - 2
    if grid.rank != x.rank or grid.shape[-1] not in (n, UNK):
        raise shape_error(node, operands, f"grid must be [N, out dims ({n}), {n}] for X of rank {x.rank}, got "
                                          f"{list(grid.shape)}")
    if x.shape[0] >= 0 and grid.shape[0] >= 0 and x.shape[0] != grid.shape[0]:
        raise shape_error(node, operands, f"X and grid disagree on the batch: {x.shape[0]} vs {grid.shape[0]}")
    return [make_desc((x.shape[0], x.shape[1], *grid.shape[1:-1]), x.dtype)]


def _reflect(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Fold v into [lo, hi] by reflecting off the borders as often as needed."""
    span = hi - lo
    if span <= 0:
        return np.full_like(v, lo)
    below = v < lo
    dist = np.where(below, lo - v, v - hi)
    flips = np.trunc(dist / span)
    rest = dist - flips * span
    even = flips % 2 == 0
    inside_lo, inside_hi = lo + rest, hi - rest
    folded = np.where(below, np.where(even, inside_lo, inside_hi), np.where(even, inside_hi, inside_lo))
    return np.where(below | (v > hi), folded, v)


def _borders(dims: tuple[int, ...], align: bool) -> list[tuple[float, float]]:
    return [(0.0, d - 1.0) if align else (-0.5, d - 0.5) for d in dims]


def _fetch(xt: np.ndarray, index: list[np.ndarray], dims: tuple[int, ...], padding: str, align: bool) -> np.ndarray:
    """Pixels at integer points with the padding mode's rule for points outside X."""
    if padding == "zeros":
        return sample_zeros(xt, index, dims)
    if padding == "reflection":
        index = [np.trunc(_reflect(i.astype(np.float64), lo, hi)).astype(np.int64)
                 for i, (lo, hi) in zip(index, _borders(dims, align), strict=True)]
    return gather_points(xt, [np.clip(i, 0, d - 1) for i, d in zip(index, dims, strict=True)])


def _cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    """Keys' weights of the taps at floor - 1, floor, floor + 1, floor + 2 for t = x - floor(x)."""
    a = CUBIC_A
    w0 = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a
    w1 = ((a + 2) * t - (a + 3)) * t * t + 1
    w2 = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1
    w3 = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a
    return [w0, w1, w2, w3]


def _coords(grid: np.ndarray, dims: tuple[int, ...], mode: str, padding: str, align: bool) -> np.ndarray:
    """Grid points in pixel units, in X's axis order, with border/reflection applied to points outside."""
    g = grid[..., ::-1].astype(np.float32)
    size = np.asarray(dims, dtype=np.float32)
    x = (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2
    if mode == "nearest":
        x = np.rint(x)  # half to even, as PyTorch
    for a, (lo, hi) in enumerate(_borders(dims, align)):
        v = x[..., a]
        outside = (v < lo) | (v > hi)  # per axis, as ONNX's reference (ORT adjusts both when one is out)
        if padding == "border":
            x[..., a] = np.where(outside, np.clip(v, 0, dims[a] - 1), v)
        elif padding == "reflection":
            x[..., a] = _reflect(v, lo, hi)
    return x


def _cubic(xt: np.ndarray, coords: np.ndarray, dims: tuple[int, ...], padding: str, align: bool) -> np.ndarray:
    """4^n taps around each point, weighted by Keys' cubic per axis."""
    base = np.floor(coords)
    weights = [_cubic_weights(coords[..., a] - base[..., a]) for a in range(len(dims))]
    out = np.zeros((*coords.shape[:-1], xt.shape[-1]), dtype=xt.dtype)
    for taps in itertools.product(range(4), repeat=len(dims)):
        idx = [base[..., a].astype(np.int64) + t - 1 for a, t in enumerate(taps)]
        w = weights[0][taps[0]]
        for a in range(1, len(dims)):
            w = w * weights[a][taps[a]]
        out += w[..., None] * _fetch(xt, idx, dims, padding, align)
    return out


def _grid_sample(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, grid = inputs[0], inputs[1]
    assert x is not None and grid is not None
    mode, padding, align = _gs_attrs(node, [])
    dims = tuple(x.shape[2:])
    work = x.astype(np.float64) if x.dtype.kind in "iu" else x.astype(np.float32) if x.dtype.itemsize < 4 else x
    xt = np.moveaxis(work, 1, -1)  # [N, D1..Dn, C]: a gather reads all channels of a point at once
    coords = _coords(grid, dims, mode, padding, align)
    if mode == "nearest":
        out = _fetch(xt, [coords[..., a].astype(np.int64) for a in range(len(dims))], dims, padding, align)
    elif mode == "linear":
        out = np.zeros((*coords.shape[:-1], xt.shape[-1]), dtype=xt.dtype)
        for idx, w in linear_taps(coords):
            out += w[..., None] * _fetch(xt, idx, dims, padding, align)
    else:
        out = _cubic(xt, coords, dims, padding, align)
    y = np.moveaxis(np.asarray(out), -1, 1)
    if x.dtype.kind in "iu":
        y = np.rint(y)
    return [np.ascontiguousarray(y).astype(x.dtype)]


def _grid_sample_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """Per output element: each tap's multiply-add and its weight (2 FLOPs per tap per axis)."""
    x = inputs[0]
    n = x.rank - 2 if x is not None else 2
    mode = MODES.get(str(node.attr("mode", "linear")), "linear")
    taps = {"nearest": 1, "linear": 2 ** n, "cubic": 4 ** n}[mode]
    read, written = io_bytes(inputs, outputs)
    return Cost(2 * (taps + n) * (outputs[0].numel or 0), read, written)


# ---- AffineGrid ---------------------------------------------------------------------------------------
def _infer_affine_grid(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    theta, size = operand(node, operands, 0).desc, operand(node, operands, 1)
    check_dtype(node, operands, theta.dtype, FLOATS, "theta")
    if size.desc.dtype != "int64" or size.desc.rank != 1 or size.desc.shape[0] not in (4, 5):
        raise shape_error(node, operands, f"size must be [N, C, H, W] or [N, C, D, H, W] (int64), got "
                                          f"{size.desc.text()}")
    n = size.desc.shape[0] - 2
    if theta.rank != 3 or theta.shape[1:] not in ((n, n + 1), (UNK, n + 1), (n, UNK), (UNK, UNK)):
        raise shape_error(node, operands, f"theta must be [N, {n}, {n + 1}] for a {n}-D size, got "
                                          f"{list(theta.shape)}")
    values = known_ints(size)
    spatial = [UNK] * n if values is None else values[2:]
    return [make_desc((theta.shape[0], *spatial, n), theta.dtype)]


def _base_axis(d: int, align: bool) -> np.ndarray:
    """Normalised centres of d pixels: from -1 to 1 (corners) or (2i + 1)/d - 1 (pixel centres)."""
    if align:
        return np.linspace(-1.0, 1.0, d) if d > 1 else np.full(d, -1.0)
    return (2 * np.arange(d) + 1) / d - 1


def _affine_grid(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """grid[n, ..., :] = theta[n] @ (x, y[, z], 1) over the base grid of the spatial size."""
    theta, size = inputs[0], inputs[1]
    assert theta is not None and size is not None
    spatial = [int(v) for v in size.reshape(-1)[2:]]
    align = bool(node.attr("align_corners", 0))
    axes = [_base_axis(d, align) for d in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    homo = np.stack([*mesh[::-1], np.ones(spatial)], axis=-1).reshape(-1, len(spatial) + 1)  # x first
    out = np.einsum("pk,nck->npc", homo, theta.astype(np.float64))
    return [out.reshape((theta.shape[0], *spatial, len(spatial))).astype(theta.dtype)]


OPS: list[OpDef] = [
    # interpolate X at normalised grid points (nearest/linear/cubic; zeros/border/reflection padding)
    OpDef("GridSample", Category.OPAQUE, _infer_grid_sample, _grid_sample, _grid_sample_cost,
          doc="sample at grid points"),
    # the sampling grid of an affine transform theta over an output size
    OpDef("AffineGrid", Category.OPAQUE, _infer_affine_grid, _affine_grid, doc="affine sampling grid"),
]
