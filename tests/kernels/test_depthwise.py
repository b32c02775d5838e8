"""The compiled channels-last depthwise conv (kernels/conv_depthwise.py) against the shifted-view numpy kernel,
bias included, on seeded random shapes, strides, dilations, asymmetric pads, channel multipliers, batch
sizes and both float widths; and the Conv op's choice of it."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from onnx import helper

from ge_core.kernels import conv_depthwise as conv_depthwise_jit
from ge_core.kernels import phase_planes as phase_planes_jit
from ge_core.ops.conv import _depthwise
from ge_core.ops.spatial import pad_input
from ge_core.runtime.executor import execute
from tests.ops.test_fast_depthwise import _window

pytestmark = pytest.mark.skipif(os.environ.get("GE_NO_JIT") == "1", reason="GE_NO_JIT=1 turns the kernel off")


def test_numba_is_installed_and_on() -> None:
    """requirements.txt installs numba: without it every depthwise conv silently takes the slow path."""
    assert conv_depthwise_jit.AVAILABLE


@pytest.mark.parametrize("seed", range(40))
def test_matches_the_shifted_view_kernel(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rank = 1 + seed % 2
    dtype = np.float64 if seed % 5 == 0 else np.float32
    n, channels, mult = int(rng.integers(1, 3)), int(rng.integers(2, 40)), int(rng.integers(1, 3))
    spatial = tuple(int(rng.integers(9, 20)) for _ in range(rank))
    win = _window(rng, spatial)
    x = rng.standard_normal((n, channels, *spatial)).astype(dtype)
    w = rng.standard_normal((channels * mult, 1, *win.kernel)).astype(dtype)
    b = rng.standard_normal(channels * mult).astype(dtype) if seed % 3 else None
    got = conv_depthwise_jit.depthwise(x, w, b, win)
    want = _depthwise(pad_input(x, win, 0), w, channels, win)
    if b is not None:
        want = want + b.reshape((-1,) + (1,) * rank)
    assert got.shape == want.shape == (n, channels * mult, *win.out)
    assert got.dtype == dtype and got.flags.c_contiguous
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("seed", range(24))
def test_large_maps_take_the_phase_plane_loop(seed: int) -> None:
    """Maps of at least PHASES_MIN_PIXELS output pixels run the phase-plane loop: the same values as the
    shifted-view kernel, and bit for bit the channels-last loop's (the same sums in the same order)."""
    rng = np.random.default_rng(100 + seed)
    dtype = np.float64 if seed % 5 == 0 else np.float32
    channels, mult = int(rng.integers(2, 12)), 1 + seed % 2
    spatial = (int(rng.integers(60, 80)), int(rng.integers(100, 200)))
    win = _window(rng, spatial)
    assert math.prod(win.out) >= conv_depthwise_jit.PHASES_MIN_PIXELS
    x = rng.standard_normal((1 + seed % 2, channels, *spatial)).astype(dtype)
    w = rng.standard_normal((channels * mult, 1, *win.kernel)).astype(dtype)
    b = rng.standard_normal(channels * mult).astype(dtype)
    got = conv_depthwise_jit.depthwise(x, w, b, win)
    want = _depthwise(pad_input(x, win, 0), w, channels, win) + b.reshape(-1, 1, 1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    xr = np.repeat(x, mult, axis=1)
    taps = np.ascontiguousarray(w[:, 0].transpose(1, 2, 0))
    channels_last = np.ascontiguousarray(xr.transpose(0, 2, 3, 1))
    rows = np.empty_like(got)
    assert conv_depthwise_jit.depthwise_rows is not None and conv_depthwise_jit.depthwise_phases is not None
    conv_depthwise_jit.depthwise_rows(channels_last, taps, b, win.strides, win.dilations, win.pads_begin,
                                      rows)
    np.testing.assert_array_equal(got, rows)
    xflat, hq, wq = phase_planes_jit.split(xr, win)
    offsets = phase_planes_jit.tap_offsets(1, *win.kernel, *win.dilations, *win.strides, hq, wq)
    planes = np.full_like(got, np.nan)
    conv_depthwise_jit.depthwise_phases(xflat, np.ascontiguousarray(w.reshape(len(w), -1)), offsets, b, wq, planes)
    np.testing.assert_array_equal(planes, rows)


def test_nan_and_inf_propagate() -> None:
    """The kernels are compiled without fastmath's no-NaN/no-inf assumptions."""
    win = _window(np.random.default_rng(0), (6, 6))
    x = np.ones((1, 3, 6, 6), dtype=np.float32)
    x[0, 0, 2, 2], x[0, 1, 3, 3] = np.nan, np.inf
    w = np.ones((3, 1, *win.kernel), dtype=np.float32)
    got = conv_depthwise_jit.depthwise(x, w, None, win)
    want = _depthwise(pad_input(x, win, 0), w, 3, win)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))


def test_a_depthwise_conv_node_runs_the_compiled_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """A small-map depthwise Conv with a bias goes through it, and gives the numpy path's result."""
    calls: list[tuple[int, ...]] = []
    original = conv_depthwise_jit.depthwise

    def counted(x: np.ndarray, *rest: object) -> np.ndarray:
        calls.append(x.shape)
        return original(x, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(conv_depthwise_jit, "depthwise", counted)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 8, 10, 10)).astype(np.float32)
    w = rng.standard_normal((8, 1, 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=8, pads=[1, 1, 1, 1], strides=[2, 2])
    graph = helper.make_graph([node], "dw", [helper.make_tensor_value_info("x", 1, [1, 8, 10, 10])],
                              [helper.make_tensor_value_info("y", 1, None)],
                              [helper.make_tensor(n, 1, a.shape, a.ravel()) for n, a in (("w", w), ("b", b))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    import ge_core

    got = execute(ge_core.load_onnx(model.SerializeToString()), {"x": x})["y"]
    assert calls == [(1, 8, 10, 10)]
    monkeypatch.setattr(conv_depthwise_jit, "AVAILABLE", False)
    want = execute(ge_core.load_onnx(model.SerializeToString()), {"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
