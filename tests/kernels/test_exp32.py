"""The float32 exp of compiled loops (kernels/exp32.py), and the kernels that use it: Gelu (kernels/activation.py)
and float32 Softmax on long rows (kernels/reduce.py), against float64 references and the numpy kernels."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from ge_core.kernels import activation as activation_jit
from ge_core.kernels import reduce as reduce_jit
from ge_core.kernels.exp32 import exp32
from ge_core.kernels.jit import numba
from ge_core.ops.erf32 import erfc_float32

pytestmark = pytest.mark.skipif(os.environ.get("GE_NO_JIT") == "1" or numba is None,
                                reason="GE_NO_JIT=1 turns the compiled kernels off")


def _exp_all(x: np.ndarray) -> np.ndarray:
    assert numba is not None

    @numba.njit(cache=False)
    def run(x: np.ndarray, y: np.ndarray) -> None:
        for i in range(x.shape[0]):
            y[i] = exp32(x[i])
    y = np.empty_like(x)
    run(x, y)
    return y


def test_exp_is_within_a_float32_rounding_of_the_exact_one() -> None:
    x = np.arange(-87.0, 88.7, 1e-4).astype(np.float32)
    exact = np.exp(x.astype(np.float64))
    relative = np.abs(_exp_all(x) - exact) / exact
    assert relative.max() < 1.2e-7  # numpy's own float32 exp: ~2.1e-7 here


def test_exp_special_values() -> None:
    x = np.array([np.nan, np.inf, -np.inf, -105.0, -1e30, 88.73, 0.0, -0.0], np.float32)
    np.testing.assert_array_equal(_exp_all(x), [np.nan, np.inf, 0, 0, 0, np.inf, 1, 1])
    subnormal = np.array([-88.0, -95.0, -100.0, -103.0], np.float32)  # 2^-150 < e^x < 2^-126
    np.testing.assert_allclose(_exp_all(subnormal), np.exp(subnormal), rtol=0, atol=2 * 2.0 ** -149)
    top = np.float32(88.72)  # 2^n with n = 128 put together in two halves: finite, not inf
    assert abs(_exp_all(np.array([top]))[0] / np.exp(np.float64(top)) - 1) < 1.2e-7


def _gelu_numpy(x: np.ndarray) -> np.ndarray:
    return np.float32(0.5) * x * erfc_float32(x * np.float32(-1.0 / math.sqrt(2.0)))


@pytest.mark.parametrize("size", [1, 17, 5000, 1 << 17])
def test_gelu_matches_the_numpy_float32_kernel(size: int) -> None:
    x = (np.random.default_rng(size).standard_normal(size) * 4).astype(np.float32)
    x[: min(size, 6)] = [np.nan, np.inf, -np.inf, 0.0, 40.0, -40.0][: min(size, 6)]
    with np.errstate(invalid="ignore"):
        want = _gelu_numpy(x)
    got = activation_jit.gelu(x)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)  # a few ulps: exp and FMA round differently


@pytest.mark.parametrize("shape", [(3, 40), (2, 12, 128, 128), (5, 257)])
def test_float32_softmax_on_long_rows(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(shape))
    x = (rng.standard_normal(shape) * 5).astype(np.float32)
    x[..., 0, :3] = -np.inf  # masked positions: exactly 0
    x[..., -1, :] = -np.inf if len(shape) > 2 else x[..., -1, :]
    assert x.shape[-1] >= reduce_jit.LONG_ROW
    got = reduce_jit.softmax_last_axis(x)
    with np.errstate(invalid="ignore"):
        shifted = x.astype(np.float64) - x.astype(np.float64).max(-1, keepdims=True)
        e = np.exp(shifted)
        want = e / e.sum(-1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    assert np.all(got[..., 0, :3] == 0)


@pytest.mark.parametrize("size", [3, 5000, 1 << 18])
def test_sigmoid_against_the_exact_one(size: int) -> None:
    x = (np.random.default_rng(size).standard_normal(size) * 20).astype(np.float32)
    x[:3] = [np.nan, np.inf, -np.inf]
    got = activation_jit.sigmoid(x)
    assert np.isnan(got[0]) and got[1] == 1 and got[2] == 0
    exact = 1 / (1 + np.exp(-x[3:].astype(np.float64)))
    normal = exact > np.finfo(np.float32).tiny
    np.testing.assert_allclose(got[3:][normal], exact[normal], rtol=2.5e-7)
    assert np.all(np.abs(got[3:][~normal] - exact[~normal]) <= 2 * 2.0 ** -149)  # subnormal: to the last bit
