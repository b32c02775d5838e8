"""The float32 Gelu path (ops/erf32.py's erfc) against the float64 erf it replaces for float32 data, and
erfc_float32 against math.erfc, on seeded random values including the far tails."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ge_core.ir.node import Node
from ge_core.ops import REGISTRY
from ge_core.ops.activation import erf
from ge_core.ops.erf32 import erfc_float32


@pytest.mark.parametrize("seed", range(5))
def test_gelu_float32_matches_the_float64_formula(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(1, 40, size=int(rng.integers(1, 4))))
    x = (rng.standard_normal(shape) * rng.choice([0.01, 1.0, 4.0, 12.0])).astype(np.float32)
    node = Node("g", "Gelu", ("x",), ("y",), {}, opset=20)
    (got,) = REGISTRY.lookup(node).kernel(node, [x])
    x64 = x.astype(np.float64)
    want = 0.5 * x64 * (1.0 + erf(x64 / math.sqrt(2.0)))
    assert got.dtype == np.float32 and got.shape == x.shape
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


def test_erfc_float32_keeps_relative_accuracy_in_the_tails() -> None:
    z = np.concatenate([np.linspace(-6, 6, 24001), np.geomspace(1e-20, 4, 2000)]).astype(np.float32)
    want = np.array([math.erfc(float(v)) for v in z])
    got = erfc_float32(z).astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=4e-6, atol=0)
    special = erfc_float32(np.array([np.inf, -np.inf, np.nan], dtype=np.float32))
    assert special[0] == 0.0 and special[1] == 2.0 and np.isnan(special[2])
