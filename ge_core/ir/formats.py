"""Tensor formats (GE's ge::Format) and the device shape a tensor takes in each.

On the CPU every array stays in its origin (logical) layout: `TensorDesc.shape` is always that shape, so
inference, kernels and the memory planner are unchanged by formats. `TensorDesc.format` says how the
tensor is laid out on the NPU, and `device_shape` gives the shape it has there, padding included:

    NC1HWC0    [N, C, H, W]        -> [N, ceil(C/C0), H, W, C0]           (cube and vector ops' 5-D layout)
    FRACTAL_Z  [Co, Ci, Kh, Kw]    -> [ceil(Ci/C0)*Kh*Kw, ceil(Co/16), 16, C0]   (cube weights)

C0 is 16: the cube unit multiplies 16x16 fp16 fractals, so channels are padded to a multiple of 16 (a 3-channel
image costs 16 channels of bytes once in NC1HWC0). Unknown dims (-1) stay unknown.
"""

from __future__ import annotations

import math

ND = "ND"
NCHW = "NCHW"
NC1HWC0 = "NC1HWC0"
FRACTAL_Z = "FRACTAL_Z"
C0 = 16  # channels per C0 block (fp16 cube fractal side)
CUBE_N0 = 16  # output channels per fractal

DEVICE_FORMATS = frozenset({NC1HWC0, FRACTAL_Z})  # formats whose device shape differs from the origin shape


def ceil_div(a: int, b: int) -> int:
    return -1 if a < 0 else -(-a // b)


def as_4d(shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """A shape of rank <= 4 right-aligned to NCHW (a per-channel [C,1,1] constant is [1,C,1,1])."""
    padded = (1,) * (4 - len(shape)) + tuple(shape)
    return padded[0], padded[1], padded[2], padded[3]


def device_shape(shape: tuple[int, ...], fmt: str) -> tuple[int, ...]:
    """The shape a tensor of origin `shape` has on the device in format `fmt` (the origin shape for ND/NCHW)."""
    if fmt == NC1HWC0 and len(shape) <= 4:
        n, c, h, w = as_4d(shape)
        return (n, ceil_div(c, C0), h, w, C0)
    if fmt == FRACTAL_Z and len(shape) == 4:
        co, ci, kh, kw = shape
        k = -1 if min(ci, kh, kw) < 0 else ceil_div(ci, C0) * kh * kw
        return (k, ceil_div(co, CUBE_N0), CUBE_N0, C0)
    return shape


def device_numel(shape: tuple[int, ...], fmt: str) -> int | None:
    dims = device_shape(shape, fmt)
    return None if any(d < 0 for d in dims) else math.prod(dims)
