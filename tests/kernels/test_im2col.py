"""The compiled im2col (kernels/conv_im2col.py) against conv.py's numpy im2col of the padded input, on seeded
random shapes, strides, dilations, asymmetric pads (wider than the kernel's reach too), batch sizes and both
float widths; and a Conv taking it matches ONNX Runtime's."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from ge_core.kernels import conv_im2col as conv_im2col_jit
from ge_core.ops.spatial import Window, pad_input
from tests.ops.test_fast_depthwise import _window

pytestmark = pytest.mark.skipif(os.environ.get("GE_NO_JIT") == "1", reason="GE_NO_JIT=1 turns the kernel off")


def _numpy_im2col(x: np.ndarray, win: Window) -> np.ndarray:
    xp = pad_input(x, win, 0)
    cols = np.empty((*x.shape[:2], *win.kernel, *win.out), dtype=x.dtype)
    for offset in win.positions():
        cols[(slice(None), slice(None), *offset)] = xp[win.taps(offset)]
    return cols


@pytest.mark.parametrize("seed", range(40))
def test_matches_the_numpy_im2col(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dtype = np.float64 if seed % 4 == 0 else np.float32
    spatial = (int(rng.integers(9, 24)), int(rng.integers(9, 24)))  # >= the widest dilated kernel drawn (9)
    win = _window(rng, spatial)
    x = rng.standard_normal((int(rng.integers(1, 3)), int(rng.integers(1, 12)), *spatial)).astype(dtype)
    want = _numpy_im2col(x, win)
    np.testing.assert_array_equal(conv_im2col_jit.im2col(x, win), want)
    assert conv_im2col_jit.im2col_kernel is not None
    cols = np.full_like(want, np.nan)  # every element must be written
    conv_im2col_jit.im2col_kernel(x, win.kernel, win.strides, win.dilations, win.pads_begin, cols)
    np.testing.assert_array_equal(cols, want)


def test_large_padded_strided_input() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 57, 61)).astype(np.float32)
    out = ((57 + 3 + 2 - 7) // 2 + 1, (61 + 3 + 4 - 7) // 2 + 1)
    win = Window((7, 7), (2, 2), (1, 1), (3, 3), (2, 4), out)
    assert math.prod(win.out) * 3 * 49 >= 1 << 15
    np.testing.assert_array_equal(conv_im2col_jit.im2col(x, win), _numpy_im2col(x, win))
