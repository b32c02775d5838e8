"""The per-tap GEMM conv (ops/conv_taps.py) against im2col, the kernel it replaces for stride-1 2-D convs
with few output channels, on seeded random shapes, pads, dilations and batch sizes."""

from __future__ import annotations

import numpy as np
import pytest

from ge_core.ops.conv import _im2col_conv
from ge_core.ops.conv_taps import tap_gemm_conv, use_tap_gemm
from ge_core.ops.spatial import Window, pad_input


@pytest.mark.parametrize("seed", range(30))
def test_matches_im2col(seed: int) -> None:
    rng = np.random.default_rng(seed)
    kernel = (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
    dilations = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    begin, end = tuple(int(v) for v in rng.integers(0, 3, 2)), tuple(int(v) for v in rng.integers(0, 3, 2))
    spatial = tuple(int(v) for v in rng.integers(10, 24, 2))
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    out = tuple(s + b + e - sp + 1 for s, b, e, sp in zip(spatial, begin, end, spans, strict=True))
    win = Window(kernel, (1, 1), dilations, begin, end, out)
    n, cin = int(rng.integers(1, 3)), int(rng.integers(4, 17))
    cout = int(rng.integers(1, cin // 2 + 1))
    x = rng.standard_normal((n, cin, *spatial)).astype(np.float32)
    w = rng.standard_normal((cout, cin, *kernel)).astype(np.float32)
    xp = pad_input(x, win, 0)
    got = tap_gemm_conv(xp, w, win)
    want = _im2col_conv(xp, w, 1, win)
    assert got.shape == want.shape == (n, cout, *out) and got.flags.c_contiguous
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_taken_only_for_few_output_channels_at_stride_one() -> None:
    win = Window((3, 3), (1, 1), (1, 1), (1, 1), (1, 1), (8, 8))
    x = np.zeros((1, 48, 8, 8), np.float32)
    assert use_tap_gemm(x, np.zeros((12, 48, 3, 3), np.float32), 1, win)
    assert not use_tap_gemm(x, np.zeros((48, 48, 3, 3), np.float32), 1, win)
    strided = Window((3, 3), (2, 2), (1, 1), (1, 1), (1, 1), (4, 4))
    assert not use_tap_gemm(x, np.zeros((12, 48, 3, 3), np.float32), 1, strided)
