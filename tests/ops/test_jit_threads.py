"""Threaded compiled kernels (ops/jit.py `threaded`): each one gives bit for bit its serial twin's result on
work large enough to run on the threads, small work stays serial, and a forked child (sweep/isolate.py
forks after the parent has run threaded kernels) runs them serially instead of being aborted by numba."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ge_core.ops import conv_depthwise_jit, conv_transpose_jit, epilogue, jit, norm_jit, pool_jit, reduce_jit
from ge_core.ops.epilogue import Act, Epilogue
from ge_core.ops.jit import ThreadedKernel
from ge_core.ops.spatial import Window
from ge_core.sweep.isolate import run_isolated

pytestmark = pytest.mark.skipif(os.environ.get("GE_NO_JIT") == "1", reason="GE_NO_JIT=1 turns the kernels off")
RNG_SEED = 7


def test_threads_are_on_where_libgomp_is() -> None:
    """The machine this suite runs on has libgomp (numba's omp layer) and two cores: a kernel may thread."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: numba's thread count is 1")
    assert jit.THREADS and jit.threads_on()


def _both(kernel: ThreadedKernel | None, make: Callable[[], tuple[list[np.ndarray], int]],
          out: Callable[[list[np.ndarray]], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The output of the threaded and of the serial version, each on fresh arguments from `make`."""
    assert kernel is not None
    threaded_args, work = make()
    assert work >= kernel.min_work, "the case must be large enough to take the threads"
    kernel(*threaded_args, work=work)
    serial_args, _ = make()
    kernel.serial(*serial_args)
    return out(threaded_args), out(serial_args)


def _window(k: int, s: int, pad: int, out: int) -> Window:
    return Window((k, k), (s, s), (1, 1), (pad, pad), (pad, pad), (out, out))


def test_depthwise_rows() -> None:
    rng = np.random.default_rng(RNG_SEED)
    x = rng.standard_normal((2, 81, 79, 32)).astype(np.float32)  # N, H, W, C
    w = rng.standard_normal((3, 3, 32)).astype(np.float32)
    bias = rng.standard_normal(32).astype(np.float32)

    def make() -> tuple[list[np.ndarray], int]:
        y = np.empty((2, 32, 41, 40), np.float32)
        return [x, w, bias, (2, 2), (1, 1), (1, 1), y], y.size * 9
    threaded, serial = _both(conv_depthwise_jit.depthwise_rows, make, lambda a: a[-1])
    np.testing.assert_array_equal(threaded, serial)


def test_channels_last_copy() -> None:
    x = np.random.default_rng(RNG_SEED).standard_normal((2, 12, 6000)).astype(np.float32)

    def make() -> tuple[list[np.ndarray], int]:
        return [x, np.empty((2, 6000, 12), np.float32)], x.size
    threaded, serial = _both(conv_depthwise_jit.to_channels_last, make, lambda a: a[1])
    np.testing.assert_array_equal(threaded, x.transpose(0, 2, 1))
    np.testing.assert_array_equal(threaded, serial)


@pytest.mark.parametrize("act", list(Act))
def test_epilogue(act: Act) -> None:
    rng = np.random.default_rng(RNG_SEED)
    y0 = rng.standard_normal((2, 33, 16000)).astype(np.float32)
    y0[0, 0, :5] = np.nan
    bias, residual = rng.standard_normal(33).astype(np.float32), rng.standard_normal(y0.shape).astype(np.float32)
    params = np.array([0.2, 0.7, 0.0, 1.0, 6.0, 0.5], np.float32)

    scale = rng.standard_normal(33).astype(np.float32)
    for source, factors in ((None, scale[:0]), (rng.standard_normal(y0.shape).astype(np.float32), scale)):
        def make(source: np.ndarray | None = source, factors: np.ndarray = factors) -> tuple[list[Any], int]:
            y = y0.copy()
            return [y, bias, residual, int(act), params, False, y if source is None else source, factors], y0.size
        threaded, serial = _both(epilogue.apply_kernel, make, lambda a: a[0])
        np.testing.assert_array_equal(threaded, serial)


@pytest.mark.parametrize("act", list(Act))
def test_scaled_is_numpys_product_then_the_epilogue(act: Act) -> None:
    """An inference BatchNormalization's x * k folded into the epilogue pass rounds as numpy's product does."""
    rng = np.random.default_rng(RNG_SEED)
    x = rng.standard_normal((2, 40, 30, 31)).astype(np.float32)
    x[1, 3, 0, :4] = np.nan
    k, shift = rng.standard_normal((2, 40)).astype(np.float32)
    residual = rng.standard_normal(x.shape).astype(np.float32)
    ending = Epilogue(act, 0.2, 0.7)
    want = x * k.reshape(-1, 1, 1)
    epilogue.apply(want, shift, residual, ending)
    np.testing.assert_array_equal(epilogue.scaled(x, k.reshape(-1, 1, 1), shift, residual, ending), want)


def test_epilogue_through_apply_matches_numpy() -> None:
    rng = np.random.default_rng(RNG_SEED)
    y = rng.standard_normal((1, 64, 128, 128)).astype(np.float32)
    bias = rng.standard_normal(64).astype(np.float32)
    want = np.maximum(y + bias.reshape(-1, 1, 1), 0)
    epilogue.apply(y, bias, None, Epilogue(Act.RELU))
    np.testing.assert_array_equal(y, want)


def test_layer_norm_rows() -> None:
    rng = np.random.default_rng(RNG_SEED)
    x = rng.standard_normal((600, 257)).astype(np.float32)
    scale, bias = rng.standard_normal(257).astype(np.float32), rng.standard_normal(257).astype(np.float32)

    def make() -> tuple[list[np.ndarray], int]:
        return [x, scale, bias, 1e-5, np.empty_like(x), np.empty(600, np.float32), np.empty(600, np.float32)], x.size
    threaded, serial = _both(norm_jit.layer_norm_rows, make, lambda a: np.concatenate([a[4].ravel(), a[5], a[6]]))
    np.testing.assert_array_equal(threaded, serial)


def test_softmax_rows() -> None:
    x = np.random.default_rng(RNG_SEED).standard_normal((2100, 128)).astype(np.float32)

    def shift() -> tuple[list[np.ndarray], int]:
        return [x, np.empty_like(x)], x.size

    def normalize() -> tuple[list[np.ndarray], int]:
        return [np.exp(x)], x.size
    for kernel, make, pick in ((reduce_jit.shift_rows, shift, 1), (reduce_jit.normalize_rows, normalize, 0)):
        threaded, serial = _both(kernel, make, lambda a, i=pick: a[i])
        np.testing.assert_array_equal(threaded, serial)


def test_pool_rows() -> None:
    x = np.random.default_rng(RNG_SEED).standard_normal((1, 28, 28, 160)).astype(np.float32)  # N, H, W, C
    scale = np.ones(28, np.float32)
    for is_max in (True, False):
        def make(is_max: bool = is_max) -> tuple[list[np.ndarray], int]:
            y = np.empty((1, 160, 28, 28), np.float32)
            return [x, (3, 3), (1, 1), (1, 1), (1, 1), is_max, scale, scale, y], y.size * 9
        threaded, serial = _both(pool_jit.pool_rows, make, lambda a: a[-1])
        np.testing.assert_array_equal(threaded, serial)


@pytest.mark.parametrize("k", [2, 3])  # the written-out 2-wide interleave and the general one
def test_conv_transpose_interleave(k: int) -> None:
    cols = np.random.default_rng(RNG_SEED).standard_normal((1, 24, k, k, 80, 80)).astype(np.float32)

    def make() -> tuple[list[np.ndarray], int]:
        y = np.empty((1, 24, 80 * k, 80 * k), np.float32)
        return [cols, y], y.size
    threaded, serial = _both(conv_transpose_jit.interleave, make, lambda a: a[-1])
    np.testing.assert_array_equal(threaded, serial)
    np.testing.assert_array_equal(threaded, cols.transpose(0, 1, 4, 2, 5, 3).reshape(threaded.shape))


def test_small_work_runs_serially(monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = epilogue.apply_kernel
    assert kernel is not None
    calls: list[str] = []
    monkeypatch.setattr(kernel, "serial", lambda *a: calls.append("serial"))
    monkeypatch.setattr(kernel, "threaded", lambda *a: calls.append("threaded"))
    kernel(work=kernel.min_work - 1)
    kernel(work=kernel.min_work)
    assert calls == ["serial", "threaded" if jit.threads_on() else "serial"]


def _depthwise_in_child() -> float:
    """A threaded-size depthwise conv, run in a forked child."""
    x = np.ones((1, 32, 64, 64), np.float32)
    w = np.ones((32, 1, 3, 3), np.float32)
    return float(conv_depthwise_jit.depthwise(x, w, None, _window(3, 1, 1, 64)).sum())


def test_a_forked_child_runs_kernels_serially() -> None:
    """GNU OpenMP does not survive a fork: numba kills a child that launches a threaded kernel after its
    parent has. The parent runs one first, so the child below would die without the serial fallback."""
    expected = _depthwise_in_child()  # the parent's own threads start here
    outcome = run_isolated(_depthwise_in_child, timeout=120)
    assert outcome.returned, outcome.died or "timed out"
    assert outcome.value == expected
    assert jit.threads_on() == jit.THREADS  # the parent keeps its threads
