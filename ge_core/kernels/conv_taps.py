"""The tap-GEMM conv's sums (ge_core/ops/conv_taps.py) in one compiled pass: the K slice-adds of every tap's
contribution and the crop from the padded width, each output row summed while in cache and written once.
"""

from __future__ import annotations

import numpy as np

from ge_core.kernels.jit import compiled, frozen
from ge_core.ops.conv_taps import tap_products
from ge_core.ops.spatial import Window


def _tap_sum(per_tap: np.ndarray, starts: np.ndarray, wp: int, y: np.ndarray) -> None:
    """y[b, co, oy, ox] = sum over taps k, in order, of per_tap[b, k, co, starts[k] + oy * wp + ox]: the slice-adds
    above in one pass, each output row summed while in cache and written once, cropped (the padded columns
    past ow never computed). Indices are unsigned: no negative-index checks in the vectorised loop."""
    n, taps, cout, _ = per_tap.shape
    oh, ow = y.shape[2], y.shape[3]
    for r in range(n * cout * oh):  # output rows
        b, rest = r // (cout * oh), r % (cout * oh)
        co, oy = rest // oh, rest % oh
        base = np.uint64(oy * wp)
        first = base + np.uint64(starts[0])
        for ox in range(ow):
            y[b, co, oy, np.uint64(ox)] = per_tap[b, 0, co, first + np.uint64(ox)]
        for k in range(1, taps):
            start = base + np.uint64(starts[k])
            for ox in range(ow):
                u = np.uint64(ox)
                y[b, co, oy, u] += per_tap[b, k, co, start + u]


tap_sum = compiled(_tap_sum, exact=True)


def tap_gemm_conv(xp: np.ndarray, w: np.ndarray, win: Window) -> np.ndarray:
    """conv(xp, w) for an already padded N x C x Hp x Wp input, stride 1, one group (as ops/conv_taps.py)."""
    assert tap_sum is not None
    n, wp = xp.shape[0], xp.shape[3]
    per_tap, starts = tap_products(xp, w, win)
    y = np.empty((n, w.shape[0], *win.out), dtype=xp.dtype)
    # Every tap's rows must lie inside the products: the last output row of the last tap ends at its start
    # + (oh - 1) * wp + ow <= Hp * Wp, which a padded input of the window's size guarantees; checked anyway.
    if int(starts.max()) + (win.out[0] - 1) * wp + win.out[1] > per_tap.shape[3]:
        raise ValueError(f"tap rows run past the padded input {list(xp.shape)} for window {win}")
    tap_sum(frozen(per_tap), frozen(starts), wp, y)
    return y
