"""Large matrix products split over numba's OpenMP threads, each part one single-threaded OpenBLAS call.

numpy's matmul runs a large product on OpenBLAS's own thread pool, and every other threaded kernel here
(im2col, pools, epilogues) runs on numba's OpenMP pool: two pools on the same cores. Each sleeps between
its kernels, so a conv (im2col, GEMM, epilogue) and the pool after it wake one pool, then the other, then
the first again, and a pool's idle spinning takes the core the other needs (measured on this 2-core
virtual machine: a wake-up costs 30-180 us; the threaded kernels of a SqueezeNet run took 20% longer in the
model than back to back). Running the GEMM on the OpenMP pool too leaves one pool: its threads are still
spinning from the im2col when the GEMM starts. Each thread computes a block of output columns (or rows,
when there are few columns) with OpenBLAS on one thread; the split is along whole columns or rows, so every
output element is the same sum as in the unsplit call. Measured alone on the benchmark's conv shapes the
split products were 0-40% faster than OpenBLAS's two threads, and whole models 1-9% faster (blas.py).

The OpenBLAS functions are reached through LLVM symbols bound to their addresses at run time (`bind`), so
the compiled kernel is cached on disk like the others (a ctypes function object would make numba recompile
it in every process).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ge_core.ops.jit import ThreadedKernel, compiled, numba, prange, threaded

SGEMM, DGEMM = "ge_core_cblas_sgemm64", "ge_core_cblas_dgemm64"  # our names for OpenBLAS's ILP64 cblas calls
ROW_MAJOR, NO_TRANS = 101, 111  # CBLAS enum values
COLUMN_ALIGN = 16  # column blocks start on 64-byte boundaries of float32 rows

_sgemm: Any = None  # numba's handles on the two functions, called from compiled code only
_dgemm: Any = None
if numba is not None:
    types = numba.types
    _i32, _i64 = types.int32, types.int64
    # cblas_?gemm(order, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); pointers as int64
    _sgemm = types.ExternalFunction(SGEMM, types.void(_i32, _i32, _i32, _i64, _i64, _i64, types.float32, _i64,
                                                      _i64, _i64, _i64, types.float32, _i64, _i64))
    _dgemm = types.ExternalFunction(DGEMM, types.void(_i32, _i32, _i32, _i64, _i64, _i64, types.float64, _i64,
                                                      _i64, _i64, _i64, types.float64, _i64, _i64))


def _gemm(size: int, m: int, n: int, k: int, a: int, lda: int, b: int, ldb: int, c: int, ldc: int) -> None:
    """C (m x n) = A (m x k) @ B (k x n), row-major, at byte addresses; float32 when size is 4."""
    if size == 4:
        _sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc)
    else:
        _dgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc)


_gemm_compiled: Any = compiled(_gemm)


def _split_products(a: np.ndarray, b: np.ndarray, c: np.ndarray, parts: int, by_columns: bool) -> None:
    """c[i] = a[i or 0] @ b[i or 0] for a (BA, M, K), b (BB, K, N), c (B, M, N), all C-contiguous, BA and BB
    1 or B; each product in `parts` blocks of columns (by_columns) or rows, one task per block."""
    batch, m, n = c.shape
    k = a.shape[2]
    size = c.itemsize
    a_step = m * k * size if a.shape[0] > 1 else 0
    b_step = k * n * size if b.shape[0] > 1 else 0
    a0, b0, c0 = np.int64(a.ctypes.data), np.int64(b.ctypes.data), np.int64(c.ctypes.data)
    for task in prange(batch * parts):  # tasks split over threads
        i, part = task // parts, task % parts
        pa, pb, pc = a0 + i * a_step, b0 + i * b_step, c0 + i * m * n * size
        if by_columns:
            chunk = ((n + parts - 1) // parts + COLUMN_ALIGN - 1) // COLUMN_ALIGN * COLUMN_ALIGN
            lo, hi = part * chunk, min(n, (part + 1) * chunk)
            if lo < hi:
                _gemm_compiled(size, m, hi - lo, k, pa, k, pb + lo * size, n, pc + lo * size, n)
        else:
            chunk = (m + parts - 1) // parts
            lo, hi = part * chunk, min(m, (part + 1) * chunk)
            if lo < hi:
                _gemm_compiled(size, hi - lo, n, k, pa + lo * k * size, k, pb, n, pc + lo * n * size, n)


_KERNEL: ThreadedKernel | None = threaded(_split_products, min_work=0) if _gemm_compiled is not None else None
_bound: list[bool] = [False]


def bind(sgemm_address: int, dgemm_address: int) -> None:
    """Point the kernel's OpenBLAS symbols at numpy's ILP64 cblas_sgemm and cblas_dgemm (blas.py finds them);
    before the first `products`."""
    if _KERNEL is not None:
        import llvmlite.binding  # numba's own dependency: present whenever the kernel is

        llvmlite.binding.add_symbol(SGEMM, sgemm_address)
        llvmlite.binding.add_symbol(DGEMM, dgemm_address)
        _bound[0] = True


def compiled_on() -> bool:
    """Whether the kernel exists (numba present and on)."""
    return _KERNEL is not None


def available() -> bool:
    """Whether `products` may be called: the kernel exists and its OpenBLAS symbols are bound."""
    return _KERNEL is not None and _bound[0]


def products(a: np.ndarray, b: np.ndarray, parts: int) -> np.ndarray:
    """a (BA, M, K) @ b (BB, K, N) -> (B, M, N) on `parts` threads; C-contiguous float32 or float64 operands of
    one dtype, BA and BB 1 or B. OpenBLAS must be on one thread (each part is one call of it)."""
    assert _KERNEL is not None and _bound[0], "bind() the OpenBLAS functions first"
    batch, m, n = max(a.shape[0], b.shape[0]), a.shape[1], b.shape[2]
    c = np.empty((batch, m, n), dtype=a.dtype)
    per_product = parts if batch % parts else 1  # whole products per thread when they share out evenly
    _KERNEL.threaded(a, b, c, per_product, n >= 4 * m)
    return c
