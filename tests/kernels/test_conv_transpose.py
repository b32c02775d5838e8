"""ConvTranspose with kernel = stride (kernels/conv_transpose.py: one GEMM, then a compiled interleave)
against the generic scatter kernel, on seeded random shapes with groups, batches and both float widths; and
the windows it declines."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ge_core.kernels import conv_transpose as conv_transpose_jit
from ge_core.ops.conv import conv_transpose_forward
from ge_core.ops.spatial import Window

pytestmark = pytest.mark.skipif(os.environ.get("GE_NO_JIT") == "1", reason="GE_NO_JIT=1 turns the kernel off")


@pytest.mark.parametrize("seed", range(12))
def test_matches_the_scatter_kernel(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    dtype = np.float64 if seed % 4 == 0 else np.float32
    group = 1 + seed % 3
    k = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    n, h, w = int(rng.integers(1, 3)), int(rng.integers(2, 9)), int(rng.integers(2, 9))
    cin, cout_per_group = group * int(rng.integers(1, 5)), int(rng.integers(1, 5))
    x = rng.standard_normal((n, cin, h, w)).astype(dtype)
    weight = rng.standard_normal((cin, cout_per_group, *k)).astype(dtype)
    win = Window(k, k, (1, 1), (0, 0), (0, 0), (h * k[0], w * k[1]))
    assert conv_transpose_jit.supports(x, group, win)
    got = conv_transpose_forward(x, weight, group, win)
    monkeypatch.setattr(conv_transpose_jit, "supports", lambda *args: False)
    want = conv_transpose_forward(x, weight, group, win)
    assert got.shape == want.shape == (n, cout_per_group * group, h * k[0], w * k[1]) and got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_overlapping_padded_or_dilated_windows_take_the_scatter_kernel() -> None:
    x = np.zeros((1, 2, 4, 4), np.float32)
    assert not conv_transpose_jit.supports(x, 1, Window((3, 3), (2, 2), (1, 1), (0, 0), (0, 0), (9, 9)))
    assert not conv_transpose_jit.supports(x, 1, Window((2, 2), (2, 2), (1, 1), (1, 0), (0, 0), (7, 8)))
    assert not conv_transpose_jit.supports(x, 1, Window((2, 2), (2, 2), (2, 1), (0, 0), (0, 0), (8, 8)))
