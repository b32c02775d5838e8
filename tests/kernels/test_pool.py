"""The compiled channels-last pools (kernels/pool.py) against the numpy tap reduction they stand in for, on
seeded random 1-D/2-D windows with strides, dilations, asymmetric pads and ceil-mode windows reaching past
the end, NaN inputs, both float widths and both ways of counting an average's taps; and the pool ops'
choice of them."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ge_core.kernels import pool as pool_jit
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


@pytest.mark.parametrize("seed", range(70))
def test_matches_the_numpy_tap_reduction(seed: int) -> None:
    """Seeds from 40 draw 2-D maps above MAX_PIXELS (the separable NCHW loop), every third one a 3-wide
    window (its unrolled interior)."""
    rng = np.random.default_rng(seed)
    rank = 1 + seed % 2 if seed < 40 else 2
    dtype = np.float64 if seed % 5 == 0 else np.float32
    spatial = tuple(int(rng.integers(5, 15) if seed < 40 else rng.integers(29, 70)) for _ in range(rank))
    win = _window(rng, spatial, ceil=seed % 3 == 0)
    if seed >= 40 and seed % 3 == 1:
        win = Window((win.kernel[0], 3), win.strides, (win.dilations[0], 1), win.pads_begin, win.pads_end,
                     (win.out[0], (spatial[1] + win.pads_begin[1] + win.pads_end[1] - 3) // win.strides[1] + 1))
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


def test_the_pool_ops_take_it_in_float32_and_float64() -> None:
    small, large = np.zeros((1, 4, 14, 14), np.float32), np.zeros((1, 4, 56, 56), np.float32)
    win = Window((3, 3), (1, 1), (1, 1), (1, 1), (1, 1), (14, 14))
    assert pool_jit.supports(small, win) and pool_jit.supports(large, win)
    assert pool_jit.supports(large.astype(np.float64), win)
    assert not pool_jit.supports(small.astype(np.float16), win)


def test_large_maps_take_the_separable_loop() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 24, 112, 112)).astype(np.float32)
    x[x > 2.5] = np.nan
    win = Window((3, 3), (2, 2), (1, 1), (1, 1), (1, 1), (56, 56))
    want = _reduce_taps(_padded(x, win, -np.inf), win, np.fmax)
    np.testing.assert_array_equal(pool_jit.max_pool(x, win), want)
    assert pool_jit.pool_separable is not None
    one = np.ones(1, np.float32)
    y = np.full_like(want, 7.0)
    pool_jit.pool_separable(x, win.kernel, win.strides, win.dilations, win.pads_begin, True, one, one, y)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize(("shape", "kernel", "strides"), [((1, 24, 16, 160), (2, 1), (2, 1)),
                                                         ((2, 8, 31, 40), (3, 2), (1, 2)),
                                                         ((1, 64, 2, 160), (2, 2), (2, 2))])
def test_one_and_two_wide_windows_on_large_maps(shape: tuple[int, ...], kernel: tuple[int, int],
                                                strides: tuple[int, int]) -> None:
    """The written-out 1- and 2-wide interiors of the separable loop (the CRNN's 2x1 pools), max and average."""
    x = np.random.default_rng(9).standard_normal(shape).astype(np.float32)
    out = tuple((n + 1 - k) // s + 1 for n, k, s in zip(shape[2:], kernel, strides, strict=True))
    win = Window(kernel, strides, (1, 1), (0, 1), (1, 0), out)
    x[0, 0, 0, :5] = np.nan
    np.testing.assert_array_equal(pool_jit.max_pool(x, win), _reduce_taps(_padded(x, win, -np.inf), win, np.fmax))
    x = np.nan_to_num(x)
    counts = _tap_counts(win, shape[2:], False)
    want = _reduce_taps(_padded(x, win, 0.0), win, np.add) / counts
    np.testing.assert_allclose(pool_jit.average_pool(x, win, counts), want, rtol=1e-5, atol=1e-6)
