"""The contiguous-row depthwise conv (ops/conv_depthwise.py) against the straightforward shifted-view kernel
it replaces for 1-D/2-D inputs, on seeded random shapes, strides, dilations, pads and channel multipliers."""

from __future__ import annotations

import numpy as np
import pytest

from ge_core.ops.conv import _depthwise
from ge_core.ops.conv_depthwise import depthwise2d_or_1d
from ge_core.ops.spatial import Window, pad_input


def _window(rng: np.random.Generator, spatial: tuple[int, ...]) -> Window:
    kernel = tuple(int(rng.integers(1, 6)) for _ in spatial)
    strides = tuple(int(rng.integers(1, 4)) for _ in spatial)
    dilations = tuple(int(rng.integers(1, 3)) for _ in spatial)
    begin = tuple(int(rng.integers(0, 3)) for _ in spatial)
    end = tuple(int(rng.integers(0, 3)) for _ in spatial)
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    out = tuple((n + b + e - sp) // s + 1 for n, b, e, sp, s in zip(spatial, begin, end, spans, strides, strict=True))
    return Window(kernel, strides, dilations, begin, end, out)


@pytest.mark.parametrize("seed", range(40))
def test_matches_the_shifted_view_kernel(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rank = 1 + seed % 2
    n, channels, mult = int(rng.integers(1, 3)), int(rng.integers(2, 9)), int(rng.integers(1, 3))
    spatial = tuple(int(rng.integers(9, 20)) for _ in range(rank))
    win = _window(rng, spatial)
    x = rng.standard_normal((n, channels, *spatial)).astype(np.float32)
    w = rng.standard_normal((channels * mult, 1, *win.kernel)).astype(np.float32)
    xp = pad_input(x, win, 0)
    got = depthwise2d_or_1d(xp, w, channels, win)
    want = _depthwise(xp, w, channels, win)
    assert got.shape == want.shape == (n, channels * mult, *win.out)
    assert got.flags.c_contiguous
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_channel_blocks_give_the_same_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """A column budget smaller than one channel's columns builds them a channel at a time."""
    import ge_core.ops.conv_depthwise as depthwise

    rng = np.random.default_rng(7)
    win = Window((3, 3), (2, 1), (1, 2), (1, 2), (1, 2), (6, 12))
    x = rng.standard_normal((2, 5, 12, 12)).astype(np.float32)
    w = rng.standard_normal((10, 1, 3, 3)).astype(np.float32)
    xp = pad_input(x, win, 0)
    whole = depthwise2d_or_1d(xp, w, 5, win)
    monkeypatch.setattr(depthwise, "COLUMN_BUDGET_ELEMENTS", 64)
    np.testing.assert_allclose(depthwise2d_or_1d(xp, w, 5, win), whole, rtol=1e-6)
    np.testing.assert_allclose(whole, _depthwise(xp, w, 5, win), rtol=1e-5, atol=1e-5)
