"""The compiled LayerNormalization (kernels/norm.py) against the numpy kernel it stands in for, on seeded
random shapes and axes, with and without B, float32 and float64, a row holding NaN and one holding inf;
Y, Mean and InvStdDev alike; and the cases it leaves to numpy."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ge_core.kernels import norm as norm_jit
from ge_core.ops.norm import _standardize

pytestmark = pytest.mark.skipif(os.environ.get("GE_NO_JIT") == "1", reason="GE_NO_JIT=1 turns the kernel off")


@pytest.mark.parametrize("seed", range(16))
def test_matches_the_numpy_kernel(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dtype = np.float64 if seed % 4 == 0 else np.float32
    shape = (*(int(rng.integers(1, 9)) for _ in range(1 + seed % 3)), int(rng.integers(2, 300)))
    axis = int(rng.integers(0, len(shape)))
    x: np.ndarray = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    normalized = shape[axis:]
    scale: np.ndarray = rng.standard_normal(normalized).astype(dtype)
    bias = rng.standard_normal(normalized).astype(dtype) if seed % 2 else None
    if x.size > 2 * np.prod(normalized):
        x.reshape(-1, int(np.prod(normalized)))[0, 0] = np.nan
        x.reshape(-1, int(np.prod(normalized)))[1, -1] = np.inf
    assert norm_jit.supports(x, scale, bias, axis, np.dtype(dtype))
    y, mean, inv_std = norm_jit.layer_norm(x, scale, bias, axis, 1e-5)
    with np.errstate(all="ignore"):  # inf - inf in the row holding inf, as the interpreter runs kernels
        want, want_mean, want_inv = _standardize(x, tuple(range(axis, x.ndim)), 1e-5)
        want *= scale
        if bias is not None:
            want += bias
    tol = 1e-12 if dtype == np.float64 else 2e-5
    for got, expected in ((y, want), (mean, want_mean), (inv_std, want_inv)):
        assert got.shape == expected.shape and got.dtype == dtype
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_broadcast_parameters_and_other_stash_types_take_the_numpy_kernel() -> None:
    x = np.zeros((2, 3, 8), np.float32)
    full = np.ones(8, np.float32)
    assert norm_jit.supports(x, full, None, 2, np.dtype(np.float32))
    assert not norm_jit.supports(x, np.ones(1, np.float32), None, 2, np.dtype(np.float32))  # Scale broadcast
    assert not norm_jit.supports(x, full, None, 2, np.dtype(np.float64))  # stash_type double
    assert not norm_jit.supports(x.astype(np.float16), full.astype(np.float16), None, 2, np.dtype(np.float32))
