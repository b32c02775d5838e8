"""relative_error: the one comparison of outputs; nothing that changed may read as "no error"."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ge_core.runtime import relative_error

INF, NAN = math.inf, math.nan


def f32(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


@pytest.mark.parametrize(("got", "want", "error"), [
    (f32(1, 2, 4), f32(1, 2, 4), 0.0),
    (f32(1, 2, 5), f32(1, 2, 4), 0.25),  # max |diff| over max |want|
    (np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32), INF),  # shapes differ
    (np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32), 0.0),  # empty
    (f32(NAN, 1), f32(NAN, 1), 0.0),  # NaN where the reference is NaN too
    (f32(NAN, 1), f32(0, 1), INF),  # a NaN that appeared
    (f32(0, 1), f32(NAN, 1), INF),  # a NaN that vanished
    (f32(INF, 1), f32(INF, 1), 0.0),  # the same infinity
    (f32(-INF, 1), f32(INF, 1), INF),
    (f32(INF, 3), f32(INF, 2), 0.5),  # the scale is the largest finite |want|
    (f32(1e-6), f32(0), 1e-6 / 1e-30),  # any change of an all-zero reference is huge
    (np.array([3, 4], np.int64), np.array([3, 5], np.int64), 0.2),  # ints compare by value, never 0 by kind
    (np.array([True, False]), np.array([True, True]), 1.0),
    (np.array(["a", "b"]), np.array(["a", "b"]), 0.0),  # non-numbers: exact match or inf
    (np.array(["a", "b"]), np.array(["a", "c"]), INF),
    (f32(1, 2), np.array(["1", "2"]), INF),
])
def test_relative_error(got: np.ndarray, want: np.ndarray, error: float) -> None:
    assert relative_error(got, want) == pytest.approx(error, rel=1e-6)


def test_the_reference_dtype_does_not_matter_for_numbers() -> None:
    want = np.linspace(-1, 1, 11, dtype=np.float32)
    assert relative_error(want.astype(np.float16), want) == pytest.approx(
        float(np.max(np.abs(want.astype(np.float16).astype(np.float64) - want))), rel=1e-6)
