"""Integer nearest-neighbour upsampling of N x C x H x W maps as one compiled, threaded copy (numba).

A Resize that repeats every pixel kh times down and kw times across (the 2x/4x/8x upsamplings of FPNs and DB
text detectors) is np.repeat along the rows, then a broadcast copy of whole rows (resize.py): two passes
over the output and one thread. Here each input row is widened once into its first output row, which is
then copied to the kh - 1 rows below it while in cache, the rows split over numba's threads. A copy: the
values are the input's exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ge_core.ir.node import Node
from ge_core.kernels.jit import compiled, frozen
from ge_core.kernels.registry import FastPath
from ge_core.ops.resize import resize_plan


def _upsample(x: np.ndarray, kh: int, kw: int, y: np.ndarray) -> None:
    """y[b, c, iy*kh + a, ix*kw + t] = x[b, c, iy, ix] for x (N, C, H, W), y (N, C, H*kh, W*kw)."""
    n, c, h, width = x.shape
    for r in range(n * c * h):  # input rows
        b, rest = r // (c * h), r % (c * h)
        ch, iy = rest // h, rest % h
        top = iy * kh
        for ix in range(width):
            v = x[b, ch, iy, ix]
            for t in range(kw):
                y[b, ch, top, np.uint64(ix * kw + t)] = v
        for a in range(1, kh):
            for q in range(width * kw):
                u = np.uint64(q)
                y[b, ch, top + a, u] = y[b, ch, top, u]


upsample_kernel = compiled(_upsample)
# A copy moves bits: every dtype runs as the unsigned integer of its width (float16 and bfloat16 included,
# which numba has no type for).
_BITS: dict[int, np.dtype[Any]] = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
                                   8: np.dtype(np.uint64)}


def supports(x: np.ndarray, repeats: tuple[int, ...]) -> bool:
    """A 4-D input of fixed-width elements repeated along its last two axes only."""
    return upsample_kernel is not None and x.ndim == 4 and repeats[:2] == (1, 1) and x.dtype.kind in "biufc" \
        and x.dtype.itemsize in _BITS


def upsample(x: np.ndarray, repeats: tuple[int, ...]) -> np.ndarray:
    assert upsample_kernel is not None
    kh, kw = repeats[2], repeats[3]
    y = np.empty((*x.shape[:2], x.shape[2] * kh, x.shape[3] * kw), dtype=x.dtype)
    bits = _BITS[x.dtype.itemsize]
    upsample_kernel(frozen(np.ascontiguousarray(x).view(bits)), kh, kw, y.view(bits))
    return y


def _resize(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
    x = inputs[0]
    assert x is not None
    plan = resize_plan(node, inputs)
    if plan.repeats is None or not supports(x, plan.repeats):
        return None
    return [upsample(x, plan.repeats)]


PATHS = [
    FastPath("Resize.repeat", "Resize", _resize, "integer nearest-neighbour upsampling as one compiled copy"),
    FastPath("Upsample.repeat", "Upsample", _resize, "integer nearest-neighbour upsampling as one compiled copy"),
]
