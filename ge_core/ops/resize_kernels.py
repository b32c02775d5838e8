"""Resize's per-axis maths: source coordinates, taps and weights (nearest, linear, cubic, antialias), from
the node's arguments (ResizeArgs, filled in by resize.py).

Taps are clamped to the input (edge padding, as ONNX specifies); `exclude_outside` zeroes the weights
of taps that fell outside instead and renormalises. Antialias (downsampling linear/cubic) widens the
kernel by 1/scale so that every input pixel contributes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ResizeArgs:
    """Everything a Resize/Upsample node asks for, with the opset's defaults filled in."""

    mode: str
    coord: str
    nearest: str  # one of resize.NEAREST_MODES, or "legacy" before Resize-11
    cubic_a: float
    exclude_outside: bool
    extrapolation: float
    antialias: bool
    axes: list[int]
    policy: str


@dataclass(frozen=True)
class Taps:
    index: np.ndarray  # [out, n] int64 input indices, clamped into [0, in)
    weight: np.ndarray  # [out, n] float64
    outside: np.ndarray | None  # [out] bool: tf_crop_and_resize positions taking extrapolation_value


def source_coords(coord: str, in_len: int, out_len: int, scale: float,
                  span: tuple[float, float]) -> np.ndarray:
    """Where each output position samples the input (coordinate_transformation_mode).

    align_corners and tf_crop_and_resize divide by the *fractional* resized length scale * in_len, as
    onnx.reference and ONNX's conformance data do (ORT uses the integer length; they differ only when
    scales, not sizes, give a non-integral length).
    """
    y = np.arange(out_len, dtype=np.float64)
    resized = scale * in_len
    if coord == "asymmetric":
        return y / scale
    if coord == "half_pixel":
        return (y + 0.5) / scale - 0.5
    if coord == "pytorch_half_pixel":
        return (y + 0.5) / scale - 0.5 if out_len > 1 else np.zeros(out_len)
    if coord == "align_corners":
        return y * (in_len - 1) / (resized - 1) if resized != 1 else np.zeros(out_len)
    if coord == "half_pixel_symmetric":
        offset = in_len / 2 * (1 - out_len / resized)
        return offset + (y + 0.5) / scale - 0.5
    # tf_crop_and_resize: the roi is float32 data; its products round in float32 as in onnx.reference
    # and ORT, which decides ties of nearest rounding (x = 3.5 or 3.4999999)
    start, end = np.float32(span[0]), np.float32(span[1])
    if resized != 1:
        return y * float(np.float32((end - start) * np.float32(in_len - 1))) / (resized - 1) + \
            float(start * np.float32(in_len - 1))
    return np.full(out_len, float((end - start) * np.float32(in_len - 1) / 2 + start * np.float32(in_len - 1)))


def _nearest(x: np.ndarray, mode: str, scale: float) -> np.ndarray:
    if mode == "round_prefer_floor":
        return np.ceil(x - 0.5)
    if mode == "round_prefer_ceil":
        return np.floor(x + 0.5)
    if mode == "floor":
        return np.floor(x)
    if mode == "ceil":
        return np.ceil(x)
    # legacy (Resize-10, Upsample): ORT truncates when upsampling and rounds up when downsampling
    return np.ceil(x) if scale < 1 else np.floor(x)


def _cubic(d: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel with coefficient a, at distances d."""
    d = np.abs(d)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def _linear(d: np.ndarray) -> np.ndarray:
    return np.clip(1 - np.abs(d), 0, None)


def _interpolating_taps(args: ResizeArgs, x: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Indices and weights for linear/cubic: 2 or 4 taps, or the antialias footprint."""
    support = 1.0 if args.mode == "linear" else 2.0
    base = np.floor(x)
    t = x - base
    stretch = min(scale, 1.0) if args.antialias else 1.0  # antialias widens the kernel by 1/scale
    start = int(np.floor(-support / stretch)) + 1
    offsets = np.arange(start, 1 - start + 1, dtype=np.float64)  # start .. 1 - start
    dist = (offsets[None, :] - t[:, None]) * stretch
    weight = _linear(dist) if args.mode == "linear" else _cubic(dist, args.cubic_a)
    if args.antialias:
        weight = weight / weight.sum(axis=1, keepdims=True)
    return base[:, None].astype(np.int64) + offsets[None, :].astype(np.int64), weight


def axis_taps(args: ResizeArgs, in_len: int, out_len: int, scale: float,
              span: tuple[float, float]) -> Taps | None:
    """The taps resizing one axis, or None when the axis is left as it is."""
    x = source_coords(args.coord, in_len, out_len, scale, span)
    if out_len == in_len and np.array_equal(x, np.arange(out_len)):
        return None
    outside = None
    if args.coord == "tf_crop_and_resize":
        outside = (x < 0) | (x > in_len - 1)
    if args.mode == "nearest":
        index = _nearest(x, args.nearest, scale).astype(np.int64)[:, None]
        weight = np.ones(index.shape)
    else:
        index, weight = _interpolating_taps(args, x, scale)
    if args.exclude_outside:
        weight = np.where((index < 0) | (index >= in_len), 0.0, weight)
        total = weight.sum(axis=1, keepdims=True)
        weight = weight / np.where(total == 0, 1.0, total)
    return Taps(np.clip(index, 0, max(in_len - 1, 0)), weight, outside)
