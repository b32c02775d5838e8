"""Softmax's compiled row maximum (ops/reduce_jit.py) against numpy's, exactly, on seeded random shapes and
both float widths; and a Softmax whose rows hold NaN or inf gives numpy's result through it."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ge_core.ops import REGISTRY, reduce_jit
from ge_core.ops.common import widened
from tests.ops.elementwise_oracle import make_node

pytestmark = pytest.mark.skipif(os.environ.get("GE_NO_JIT") == "1", reason="GE_NO_JIT=1 turns the kernel off")


@pytest.mark.parametrize("seed", range(10))
def test_the_row_maximum_is_numpys(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dtype = np.float64 if seed % 3 == 0 else np.float32
    shape = tuple(int(v) for v in rng.integers(1, 40, 1 + seed % 3))
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    assert reduce_jit.supports(x)
    got = reduce_jit.last_axis_max(x)
    np.testing.assert_array_equal(got, np.max(x, axis=-1, keepdims=True))


def test_softmax_rows_with_nan_or_inf_match_numpy() -> None:
    x = np.random.default_rng(0).standard_normal((4, 9)).astype(np.float32)
    x[1, 3], x[2, 0], x[3, 5] = np.nan, np.inf, -np.inf
    node = make_node("Softmax", [True], {"axis": -1}, opset=13)
    with np.errstate(all="ignore"):  # as the interpreter runs kernels: inf - inf is NaN here on purpose
        got = REGISTRY.get("Softmax").kernel(node, [x])[0]  # type: ignore[union-attr]
        shifted = widened(x) - np.max(x, axis=-1, keepdims=True)
        want = np.exp(shifted) / np.sum(np.exp(shifted), axis=-1, keepdims=True)
    np.testing.assert_array_equal(got, want)
