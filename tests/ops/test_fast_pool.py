"""The pools' axis-at-a-time window reduction (ops/pool.py `_reduce_taps`) against the all-taps loop it
replaced, on seeded random 1-D/2-D/3-D windows with strides, dilations and pads, for max and sum."""

from __future__ import annotations

import numpy as np
import pytest

from ge_core.ops.pool import _reduce_taps
from ge_core.ops.spatial import Window, pad_input


def _all_taps(xp: np.ndarray, win: Window, fn: np.ufunc) -> np.ndarray:
    """The straightforward kernel: every kernel offset's strided view, reduced one after another."""
    acc: np.ndarray | None = None
    for offset in win.positions():
        view = xp[win.taps(offset)]
        acc = view.copy() if acc is None else fn(acc, view)
    assert acc is not None
    return acc


@pytest.mark.parametrize("seed", range(30))
def test_matches_the_all_taps_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rank = 1 + seed % 3
    spatial = tuple(int(v) for v in rng.integers(6, 14, rank))
    kernel = tuple(int(v) for v in rng.integers(1, 4, rank))
    dilations = tuple(int(v) for v in rng.integers(1, 3, rank))
    strides = tuple(int(v) for v in rng.integers(1, 4, rank))
    begin = tuple(int(v) for v in rng.integers(0, 2, rank))
    end = tuple(int(v) for v in rng.integers(0, 2, rank))
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    out = tuple((n + b + e - sp) // s + 1 for n, b, e, sp, s in zip(spatial, begin, end, spans, strides, strict=True))
    win = Window(kernel, strides, dilations, begin, end, out)
    x = rng.standard_normal((2, 3, *spatial)).astype(np.float32)
    x[x > 2.0] = np.nan  # fmax skips NaN the same way in either order
    for fn, fill in ((np.fmax, -np.inf), (np.add, 0.0)):
        xp = pad_input(x, win, fill)
        got, want = _reduce_taps(xp, win, fn), _all_taps(xp, win, fn)
        assert got.shape == want.shape == (2, 3, *out)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
