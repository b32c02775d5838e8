"""Weights in GE's device layouts <-> our origin-layout arrays (a Const's TensorDef data is stored in its
desc's layout: a Build-stage conv weight is FRACTAL_Z, a feature-map constant NC1HWC0).

    NC1HWC0    [N, C, H, W]      -> [N, C1, H, W, C0]           C padded to C1*C0 with zeros
    FRACTAL_Z  [Co, Ci, Kh, Kw]  -> [Ci1*Kh*Kw, Co1, 16, C0]    Ci padded to Ci1*C0, Co to Co1*16

(ir/formats.py gives the same device shapes.) Other device layouts are not unpacked: `unpack` returns None.
"""

from __future__ import annotations

import numpy as np

from ge_core.ir.formats import C0, CUBE_N0, FRACTAL_Z, NC1HWC0, as_4d, ceil_div


def pack(array: np.ndarray, fmt: str) -> np.ndarray | None:
    """`array` (origin layout, rank <= 4 for NC1HWC0, 4 for FRACTAL_Z) in device layout `fmt`."""
    if fmt == NC1HWC0 and array.ndim <= 4:
        n, c, h, w = as_4d(array.shape)
        c1 = ceil_div(c, C0)
        padded = np.zeros((n, c1 * C0, h, w), array.dtype)
        padded[:, :c] = array.reshape(n, c, h, w)
        return np.ascontiguousarray(padded.reshape(n, c1, C0, h, w).transpose(0, 1, 3, 4, 2))
    if fmt == FRACTAL_Z and array.ndim == 4:
        co, ci, kh, kw = array.shape
        ci1, co1 = ceil_div(ci, C0), ceil_div(co, CUBE_N0)
        padded = np.zeros((co1 * CUBE_N0, ci1 * C0, kh, kw), array.dtype)
        padded[:co, :ci] = array
        blocks = padded.reshape(co1, CUBE_N0, ci1, C0, kh, kw).transpose(2, 4, 5, 0, 1, 3)
        return np.ascontiguousarray(blocks.reshape(ci1 * kh * kw, co1, CUBE_N0, C0))
    return None


def unpack(data: np.ndarray, fmt: str, origin_shape: tuple[int, ...]) -> np.ndarray | None:
    """The origin-layout array of `origin_shape` whose device-layout (`fmt`) elements are `data`."""
    flat = data.reshape(-1)
    if fmt == NC1HWC0 and len(origin_shape) <= 4:
        n, c, h, w = as_4d(origin_shape)
        c1 = ceil_div(c, C0)
        if flat.size != n * c1 * h * w * C0:
            return None
        nchw = flat.reshape(n, c1, h, w, C0).transpose(0, 1, 4, 2, 3).reshape(n, c1 * C0, h, w)[:, :c]
        return np.ascontiguousarray(nchw).reshape(origin_shape)
    if fmt == FRACTAL_Z and len(origin_shape) == 4:
        co, ci, kh, kw = origin_shape
        ci1, co1 = ceil_div(ci, C0), ceil_div(co, CUBE_N0)
        if flat.size != ci1 * kh * kw * co1 * CUBE_N0 * C0:
            return None
        blocks = flat.reshape(ci1, kh, kw, co1, CUBE_N0, C0).transpose(3, 4, 0, 5, 1, 2)
        return np.ascontiguousarray(blocks.reshape(co1 * CUBE_N0, ci1 * C0, kh, kw)[:co, :ci])
    return None
