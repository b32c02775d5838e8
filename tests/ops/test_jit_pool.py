"""The compiled channels-last pools (ops/pool_jit.py) against the numpy tap reduction they stand in for, on
seeded random 1-D/2-D windows with strides, dilations, asymmetric pads and ceil-mode windows reaching past
the end, NaN inputs, both float widths and both ways of counting an average's taps; and the pool ops'
choice of them."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ge_core.ops import pool_jit
from ge_core.ops.pool import _reduce_taps, _tap_counts
from ge_core.ops.spatial import Window, pad_input

pytestmark = pytest.mark.skipif(os.environ.get("GE_NO_JIT") == "1", reason="GE_NO_JIT=1 turns the kernel off")


def _window(rng: np.random.Generator, spatial: tuple[int, ...], ceil: bool) -> Window:
    kernel = tuple(int(rng.integers(1, 5)) for _ in spatial)
    strides = tuple(int(rng.integers(1, 4)) for _ in spatial)
    dilations = tuple(int(rng.integers(1, 3)) for _ in spatial)
    begin = tuple(int(rng.integers(0, k)) for k in kernel)
    end = tuple(int(rng.integers(0, k)) for k in kernel)
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    rounding = (lambda a, s: -(-a // s)) if ceil else (lambda a, s: a // s)
    out = tuple(rounding(n + b + e - sp, s) + 1
                for n, b, e, sp, s in zip(spatial, begin, end, spans, strides, strict=True))
    return Window(kernel, strides, dilations, begin, end, out)


def _padded(x: np.ndarray, win: Window, fill: float) -> np.ndarray:
    """x padded as the numpy kernels pad it, plus what ceil-mode windows read past the declared end."""
    xp = pad_input(x, win, fill)
    extra = [max(0, (o - 1) * s + sp - n) for o, s, sp, n in zip(win.out, win.strides, win.spans, xp.shape[2:],
                                                                    strict=True)]
    return np.pad(xp, [(0, 0), (0, 0), *((0, e) for e in extra)], constant_values=fill)


@pytest.mark.parametrize("seed", range(40))
def test_matches_the_numpy_tap_reduction(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rank = 1 + seed % 2
    dtype = np.float64 if seed % 5 == 0 else np.float32
    spatial = tuple(int(rng.integers(5, 15)) for _ in range(rank))
    win = _window(rng, spatial, ceil=seed % 3 == 0)
    x: np.ndarray = rng.standard_normal((int(rng.integers(1, 3)), int(rng.integers(1, 20)), *spatial)).astype(dtype)
    x[x > 1.8] = np.nan  # fmax: a NaN tap never wins over a number
    got = pool_jit.max_pool(x, win)
    want = _reduce_taps(_padded(x, win, -np.inf), win, np.fmax)
    assert got.shape == want.shape and got.dtype == dtype
    np.testing.assert_array_equal(got, want)
    x = np.nan_to_num(x)
    for include_pad in (False, True):
        counts = _tap_counts(win, spatial, include_pad)
        got = pool_jit.average_pool(x, win, counts)
        want = _reduce_taps(_padded(x, win, 0.0), win, np.add) / counts
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_the_pool_ops_take_it_on_small_maps_only() -> None:
    small, large = np.zeros((1, 4, 14, 14), np.float32), np.zeros((1, 4, 56, 56), np.float32)
    win = Window((3, 3), (1, 1), (1, 1), (1, 1), (1, 1), (14, 14))
    assert pool_jit.supports(small, win) and not pool_jit.supports(large, win)
    assert not pool_jit.supports(small.astype(np.float16), win)
