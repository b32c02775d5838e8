"""The implicit-GEMM conv (ops/conv_direct_jit.py and its small-map kernel conv_pixels_jit.py, on the LLVM
microkernels of ops/simd_microkernel.py), each kernel against conv.py's float64 im2col path on seeded random
shapes: batch sizes, groups, kernels, strides, dilations, asymmetric pads wider than the kernel's reach;
serial and threaded bit for bit; the fused epilogue bit for bit what the separate epilogue pass gives; the
weight panels cached only for read-only weights."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ge_core.ops import conv, conv_direct_jit, conv_pixels_jit, epilogue, phase_planes_jit
from ge_core.ops.epilogue import Act, Epilogue
from ge_core.ops.jit import ThreadedKernel
from ge_core.ops.spatial import Window

pytestmark = pytest.mark.skipif(os.environ.get("GE_NO_JIT") == "1", reason="GE_NO_JIT=1 turns the kernel off")


def _case(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, int, Window]:
    """A random 2-D conv whose kernel fits its padded input."""
    while True:
        group = int(rng.integers(1, 4))
        kernel = (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
        strides = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        dils = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        begin = (int(rng.integers(0, 4)), int(rng.integers(0, 4)))
        end = (int(rng.integers(0, 4)), int(rng.integers(0, 4)))
        spatial = (int(rng.integers(1, 40)), int(rng.integers(1, 40)))
        padded = [s + b + e for s, b, e in zip(spatial, begin, end, strict=True)]
        spans = [(k - 1) * d + 1 for k, d in zip(kernel, dils, strict=True)]
        if all(s <= p for s, p in zip(spans, padded, strict=True)) and kernel != (1, 1):
            break
    out = tuple((p - s) // st + 1 for p, s, st in zip(padded, spans, strides, strict=True))
    x = rng.standard_normal((int(rng.integers(1, 3)), group * int(rng.integers(1, 9)), *spatial))
    w = rng.standard_normal((group * int(rng.integers(1, 15)), x.shape[1] // group, *kernel))
    return x.astype(np.float32), w.astype(np.float32), group, Window(kernel, strides, dils, begin, end, out)


def _oracle(x: np.ndarray, w: np.ndarray, group: int, win: Window) -> np.ndarray:
    """conv.py's im2col + BLAS path in float64 (the direct kernel takes float32 only)."""
    assert not conv_direct_jit.supports(x.astype(np.float64), w.astype(np.float64), group, win)
    return conv.conv_forward(x.astype(np.float64), w.astype(np.float64), group, win)


@pytest.fixture(params=["flat", "pixel rows"])
def kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each of the two kernels, whichever the size would choose."""
    monkeypatch.setattr(conv_direct_jit, "_pixel_rows_pay", lambda *args: request.param == "pixel rows")
    return str(request.param)


@pytest.mark.parametrize("seed", range(40))
def test_matches_the_im2col_path(seed: int, kernel: str) -> None:
    x, w, group, win = _case(np.random.default_rng(seed))
    assert conv_direct_jit.supports(x, w, group, win)
    got = conv_direct_jit.conv(x, w, group, win)
    want = _oracle(x, w, group, win)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(want).max())))


def _kernel_outputs(x: np.ndarray, w: np.ndarray, win: Window, threaded: ThreadedKernel | None
                    ) -> list[np.ndarray]:
    """The conv through the serial and the threaded twin of `threaded`, called the way `conv` calls them."""
    kernel = threaded
    assert kernel is not None
    outputs = []
    for variant in (kernel.serial, kernel.threaded):
        kernel_was = kernel.serial, kernel.threaded
        kernel.serial = kernel.threaded = variant
        try:
            outputs.append(conv_direct_jit.conv(x, w, 1, win))
        finally:
            kernel.serial, kernel.threaded = kernel_was
    return outputs


def test_threaded_equals_serial_bit_for_bit(kernel: str) -> None:
    """Every output is one microkernel's sum over the same steps in the same order, whichever thread and
    however the work is split (channel chunks and tile groups both)."""
    rng = np.random.default_rng(3)
    for channels, size, out_channels in ((16, 55, 64), (64, 13, 256), (3, 20, 7)):
        x = rng.standard_normal((1, channels, size, size)).astype(np.float32)
        w = rng.standard_normal((out_channels, channels, 3, 3)).astype(np.float32)
        win = Window((3, 3), (1, 1), (1, 1), (1, 1), (1, 1), (size, size))
        twins = conv_direct_jit.conv_kernel if kernel == "flat" else conv_pixels_jit.conv_kernel
        serial, threaded = _kernel_outputs(x, w, win, twins)
        np.testing.assert_array_equal(serial, threaded)


@pytest.mark.parametrize("ending", [Epilogue(), Epilogue(Act.RELU), Epilogue(Act.LEAKY_RELU, 0.1),
                                    Epilogue(Act.CLIP, -0.5, 0.5), Epilogue(Act.HARD_SIGMOID, 0.2, 0.5),
                                    Epilogue(Act.HARD_SWISH)])
def test_fused_epilogue_is_the_separate_pass_bit_for_bit(ending: Epilogue, kernel: str) -> None:
    rng = np.random.default_rng(int(ending.act))
    x = rng.standard_normal((2, 8, 17, 19)).astype(np.float32)
    w = rng.standard_normal((10, 8, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(10).astype(np.float32)
    residual = rng.standard_normal((2, 10, 9, 10)).astype(np.float32)
    win = Window((3, 3), (2, 2), (1, 1), (1, 1), (1, 1), (9, 10))
    want = conv_direct_jit.conv(x, w, 1, win)
    epilogue.apply(want, bias, residual, ending)
    np.testing.assert_array_equal(conv_direct_jit.conv(x, w, 1, win, bias, residual, ending), want)


def test_one_dimensional() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 6, 40)).astype(np.float32)
    w = rng.standard_normal((6, 3, 4)).astype(np.float32)
    win = Window((4,), (2,), (3,), (2,), (1,), ((40 + 3 - 10) // 2 + 1,))
    np.testing.assert_allclose(conv_direct_jit.conv(x, w, 2, win), _oracle(x, w, 2, win), rtol=1e-5, atol=1e-5)


def test_weight_panels_are_cached_for_read_only_weights_only() -> None:
    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 4, 12, 12)).astype(np.float32)
    win = Window((3, 3), (1, 1), (1, 1), (1, 1), (1, 1), (12, 12))
    writable = rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
    first = conv_direct_jit.conv(x, writable, 1, win)
    writable *= 2  # edited in place: the next call must see it
    np.testing.assert_array_equal(conv_direct_jit.conv(x, writable, 1, win), 2 * first)
    frozen = writable.copy()
    frozen.flags.writeable = False
    assert conv_direct_jit._packed(frozen, 1, 6) is conv_direct_jit._packed(frozen, 1, 6)


def test_phase_split_serial_and_threaded() -> None:
    """The stride phases of the zero-padded input, as the strided slices of a padded copy give them."""
    kernel = phase_planes_jit.phase_split
    assert kernel is not None
    rng = np.random.default_rng(11)
    for stride, pads, size in (((2, 3), (1, 2), (23, 31)), ((1, 1), (3, 0), (5, 4)), ((3, 2), (0, 0), (64, 70))):
        x = rng.standard_normal((2, 3, *size)).astype(np.float32)
        padded = np.pad(x, ((0, 0), (0, 0), (pads[0], 5), (pads[1], 5)))
        hq, wq = -(-(size[0] + pads[0] + 1) // stride[0]), -(-(size[1] + pads[1] + 1) // stride[1])
        want = np.zeros((2, 3, *stride, hq, wq), dtype=np.float32)
        for a in range(stride[0]):
            for b in range(stride[1]):
                part = padded[:, :, a::stride[0], b::stride[1]][:, :, :hq, :wq]
                want[:, :, a, b, :part.shape[2], :part.shape[3]] = part
        for variant in (kernel.serial, kernel.threaded):
            got = np.full_like(want, np.nan)  # every element must be written
            variant(x, pads, stride, got)
            np.testing.assert_array_equal(got, want)
