"""ops/blas.py's matmul: np.matmul's values, small products on one OpenBLAS thread and large ones on the
configured count, which set_blas_threads changes and blas_threads reports."""

from __future__ import annotations

import numpy as np
import pytest

from ge_core.ops import blas


def _raw_threads() -> int:
    found = blas._openblas()
    assert found is not None
    return int(getattr(found[0], found[2])())


@pytest.fixture
def two_threads() -> object:
    if blas._openblas() is None:
        pytest.skip("numpy does not bundle OpenBLAS here")
    before = blas.set_blas_threads(2)
    adapting = blas._adapt[0]
    blas.adapt_threads(True)  # what tune_process turns on; on its own, a test must not rely on another's call
    yield
    blas.adapt_threads(adapting)
    assert before is not None
    blas.set_blas_threads(before)


@pytest.mark.usefixtures("two_threads")
def test_small_products_run_on_one_thread_large_ones_on_the_configured_count() -> None:
    rng = np.random.default_rng(0)
    small_a, small_b = rng.standard_normal((16, 32)), rng.standard_normal((32, 64))
    np.testing.assert_array_equal(blas.matmul(small_a, small_b), np.matmul(small_a, small_b))
    assert _raw_threads() == 1
    assert blas.blas_threads() == 2  # what large products get: the configured count, not the momentary one
    large_a, large_b = rng.standard_normal((4, 256, 256)).astype(np.float32), \
        rng.standard_normal((256, 256)).astype(np.float32)  # 2 * 4 * 256^3 = 134 MFLOP
    np.testing.assert_array_equal(blas.matmul(large_a, large_b), np.matmul(large_a, large_b))
    assert _raw_threads() == 2


@pytest.mark.usefixtures("two_threads")
def test_batched_and_vector_operands_count_every_product() -> None:
    a = np.ones((64, 128, 64), np.float32)  # 64 products of 128 x 64 x 128: 134 MFLOP in all
    b = np.ones((64, 64, 128), np.float32)
    np.testing.assert_array_equal(blas.matmul(a, b), np.matmul(a, b))
    assert _raw_threads() == 2
    v = np.ones(64, np.float32)
    np.testing.assert_array_equal(blas.matmul(v, b), np.matmul(v, b))  # 64 x (1 x 64 x 128): small
    assert _raw_threads() == 1


@pytest.mark.usefixtures("two_threads")
def test_set_blas_threads_changes_the_large_count() -> None:
    assert blas.set_blas_threads(1) == 2
    a = np.ones((512, 512), np.float32)
    blas.matmul(a, a)
    assert _raw_threads() == 1 and blas.blas_threads() == 1
