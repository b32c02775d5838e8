"""Softmax along the last axis through the compiled row loops (kernels/reduce.py) against numpy's five
passes, on seeded random shapes and both float widths; rows holding NaN or inf give numpy's result."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ge_core.kernels import reduce as reduce_jit
from ge_core.ops import REGISTRY
from ge_core.ops.common import widened
from tests.ops.elementwise_oracle import make_node

pytestmark = pytest.mark.skipif(os.environ.get("GE_NO_JIT") == "1", reason="GE_NO_JIT=1 turns the kernel off")


def _numpy_softmax(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        shifted = x - np.max(x, axis=-1, keepdims=True)
        e = np.exp(shifted)
        return e / np.sum(e, axis=-1, keepdims=True)


@pytest.mark.parametrize("seed", range(10))
def test_matches_numpys_passes(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dtype = np.float64 if seed % 3 == 0 else np.float32
    shape = tuple(int(v) for v in rng.integers(1, 200, 1 + seed % 3))
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    assert reduce_jit.supports(x)
    got = reduce_jit.softmax_last_axis(x)
    assert got.shape == x.shape and got.dtype == dtype
    np.testing.assert_allclose(got, _numpy_softmax(x), rtol=1e-6 if dtype == np.float32 else 1e-13, atol=1e-30)


def test_softmax_rows_with_nan_or_inf_match_numpy() -> None:
    x = np.random.default_rng(0).standard_normal((4, 9)).astype(np.float32)
    x[1, 3], x[2, 0], x[3, 5] = np.nan, np.inf, -np.inf
    node = make_node("Softmax", [True], {"axis": -1}, opset=13)
    with np.errstate(all="ignore"):  # as the interpreter runs kernels: inf - inf is NaN here on purpose
        got = REGISTRY.get("Softmax").kernel(node, [x])[0]  # type: ignore[union-attr]
    want = _numpy_softmax(widened(x))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[1:3]).all()  # the rows holding NaN and +inf: NaN throughout
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("shape", [(1, 48, 80, 80), (2, 3, 5), (1, 2048, 7, 7), (2, 4, 3, 2, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mean_over_the_last_axes_is_numpys(shape: tuple[int, ...], dtype: type) -> None:
    """GlobalAveragePool's compiled mean (float64 sums, one rounding) gives numpy's mean(dtype=float64)."""
    x = (np.random.default_rng(len(shape)).standard_normal(shape) * 10).astype(dtype)
    x.flat[0], x.flat[-1] = np.nan, np.inf
    axes = len(shape) - 2
    want = x.mean(axis=tuple(range(2, x.ndim)), keepdims=True, dtype=np.float64).astype(dtype)
    got = reduce_jit.mean_last_axes(x, axes)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-9 if dtype == np.float64 else 0, atol=1e-12)  # sum order
