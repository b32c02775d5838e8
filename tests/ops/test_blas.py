"""ops/blas.py's matmul: np.matmul's values; small products on one OpenBLAS thread; large ones split over
numba's threads, each part one single-threaded OpenBLAS call (gemm_jit.py), or where that path cannot take
them, on OpenBLAS's configured count, which set_blas_threads changes and blas_threads reports."""

from __future__ import annotations

import numpy as np
import pytest

from ge_core.ops import blas, gemm_jit, jit


def _raw_threads() -> int:
    found = blas._openblas()
    assert found is not None
    return int(getattr(found[0], found[2])())


@pytest.fixture
def two_threads() -> object:
    if blas._openblas() is None:
        pytest.skip("numpy does not bundle OpenBLAS here")
    before = blas.set_blas_threads(2)
    yield
    assert before is not None
    blas.set_blas_threads(before)


@pytest.fixture
def no_split(monkeypatch: pytest.MonkeyPatch) -> None:
    """Large products on OpenBLAS's threads, as without numba's (a forked child, GE_JIT_THREADS=0)."""
    monkeypatch.setattr(blas, "_split_gemm_ready", lambda found: False)


@pytest.mark.usefixtures("two_threads", "no_split")
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


@pytest.mark.usefixtures("two_threads", "no_split")
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


# ---- large products split over numba's threads (gemm_jit.py) ------------------------------------------

@pytest.fixture
def split_on(two_threads: object) -> None:
    if not (gemm_jit.compiled_on() and jit.threads_on() and jit.thread_count() > 1):
        pytest.skip("numba's threads are off here: large products take OpenBLAS's (tested above)")


@pytest.fixture
def split_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[tuple[int, ...], tuple[int, ...], int]]:
    """The operand shapes and part counts of every split product."""
    calls: list[tuple[tuple[int, ...], tuple[int, ...], int]] = []
    real = gemm_jit.products

    def spy(a: np.ndarray, b: np.ndarray, parts: int) -> np.ndarray:
        calls.append((a.shape, b.shape, parts))
        return real(a, b, parts)

    monkeypatch.setattr(gemm_jit, "products", spy)
    return calls


SPLIT_CASES = [
    ((64, 576), (576, 3136)),  # a conv's GEMM: few rows, many columns (split by columns)
    ((1000, 512), (512, 169)),  # SqueezeNet's last conv: many rows (split by rows)
    ((333, 401), (401, 257)),  # odd sizes: blocks that are not multiples of the column alignment
    ((1, 12, 128, 64), (1, 12, 64, 128)),  # attention scores: a shared batch of heads
    ((3, 128, 256), (256, 300)),  # a batch against one matrix
    ((1, 8, 300, 200), (8, 200, 150)),  # batch shapes that differ by leading ones
    ((4, 100, 200), (4, 200, 150)),  # a batch that shares out evenly: whole products per thread
]


@pytest.mark.usefixtures("split_on")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("a_shape", "b_shape"), SPLIT_CASES)
def test_large_products_split_over_numbas_threads_equal_np_matmul(
        a_shape: tuple[int, ...], b_shape: tuple[int, ...], dtype: type,
        split_calls: list[tuple[tuple[int, ...], tuple[int, ...], int]]) -> None:
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(a_shape).astype(dtype), rng.standard_normal(b_shape).astype(dtype)
    got, want = blas.matmul(a, b), np.matmul(a, b)
    assert got.shape == want.shape and got.dtype == want.dtype
    # whole rows or columns per call: the same sums, up to how OpenBLAS blocks one large call
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)
    assert len(split_calls) == 1 and split_calls[0][2] == 2
    assert _raw_threads() == 1  # each part is one single-threaded OpenBLAS call


@pytest.mark.usefixtures("split_on")
def test_a_conv_gemm_split_by_columns_is_bit_equal_to_one_call() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((64, 576)).astype(np.float32), rng.standard_normal((576, 3136)).astype(np.float32)
    got = blas.matmul(a, b)
    blas.set_blas_threads(1)  # one unsplit single-threaded call
    np.testing.assert_array_equal(got, blas.matmul(a, b))


@pytest.mark.usefixtures("split_on")
@pytest.mark.parametrize("case", ["transposed", "mixed dtypes", "float16", "vector", "broadcast both",
                                  "inner mismatch"])
def test_operands_the_split_cannot_take_go_to_np_matmul(
        case: str, split_calls: list[tuple[tuple[int, ...], tuple[int, ...], int]]) -> None:
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((256, 256)).astype(np.float32), rng.standard_normal((256, 256)).astype(np.float32)
    if case == "transposed":
        a = a.T
    elif case == "mixed dtypes":
        b = b.astype(np.float64)
    elif case == "float16":
        a, b = a.astype(np.float16), b.astype(np.float16)
    elif case == "vector":
        a = rng.standard_normal(256).astype(np.float32)
        b = rng.standard_normal((64, 256, 256)).astype(np.float32)
    elif case == "broadcast both":
        a, b = a.reshape(2, 1, 128, 256), np.stack([b, b, b])
    elif case == "inner mismatch":
        b = b[:128].copy()
        with pytest.raises(ValueError, match="matmul"):
            blas.matmul(a, b)
        assert split_calls == []
        return
    np.testing.assert_array_equal(blas.matmul(a, b), np.matmul(a, b))
    assert split_calls == []


@pytest.mark.usefixtures("split_on")
def test_one_configured_thread_does_not_split(split_calls: list[tuple[tuple[int, ...], tuple[int, ...], int]]
                                              ) -> None:
    blas.set_blas_threads(1)
    a = np.ones((512, 512), np.float32)
    np.testing.assert_array_equal(blas.matmul(a, a), np.full((512, 512), 512, np.float32))
    assert split_calls == []
