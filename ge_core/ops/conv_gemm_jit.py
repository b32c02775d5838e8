"""2-D convolutions as slabs of output rows on numba's threads: each slab's columns, then its GEMM.

The im2col path (conv.py) writes the whole column buffer on numba's OpenMP threads, then hands it to
numpy's matmul, which runs on OpenBLAS's own threads: two thread pools on the same cores, each waking the
other's sleeping threads and spinning where the other needs the core, and a buffer of C*K*OH*OW values
that leaves the caches before the GEMM reads it back (2.7 MB for the first conv of a DB text detector).
Here one parallel loop does it all: each task takes a slab of output rows sized so that its columns fit in
half of a core's L2 cache, builds them (conv_im2col_jit's block copy) and multiplies them with the weights
by one single-threaded OpenBLAS call, straight into the output rows. Every output element is the same sum
of the same products as in the one large call. In-process A/B against the im2col path on the benchmark's
models (ratio to ONNX Runtime, each variant right after an ORT run): Inception v2 2.26 -> 2.05x, the DB
detector 2.30 -> 2.20x, the CRNN 2.28 -> 2.19x, geomean 1.89 -> 1.86x.

numba reaches OpenBLAS through LLVM symbols bound to numpy's cblas functions at run time (`_bound`), so the
compiled kernel is cached on disk like the others (a ctypes function object would make numba recompile it
in every process).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ge_core.ops import blas, jit
from ge_core.ops.conv_im2col_jit import fill_block
from ge_core.ops.jit import ThreadedKernel, compiled, numba, prange, threaded
from ge_core.ops.spatial import Window

SGEMM, DGEMM = "ge_core_cblas_sgemm64", "ge_core_cblas_dgemm64"  # our names for OpenBLAS's ILP64 cblas calls
ROW_MAJOR, NO_TRANS = 101, 111  # CBLAS enum values
SLAB_BYTES = 512 << 10  # a slab's columns: half of a core's L2 cache (1 MiB on this machine)
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

_sgemm: Any = None  # numba's handles on the two OpenBLAS functions, called from compiled code only
_dgemm: Any = None
if numba is not None:
    _t = numba.types
    # cblas_?gemm(order, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); pointers as int64
    _sgemm = _t.ExternalFunction(SGEMM, _t.void(_t.int32, _t.int32, _t.int32, _t.int64, _t.int64, _t.int64,
                                                _t.float32, _t.int64, _t.int64, _t.int64, _t.int64, _t.float32,
                                                _t.int64, _t.int64))
    _dgemm = _t.ExternalFunction(DGEMM, _t.void(_t.int32, _t.int32, _t.int32, _t.int64, _t.int64, _t.int64,
                                                _t.float64, _t.int64, _t.int64, _t.int64, _t.int64, _t.float64,
                                                _t.int64, _t.int64))


def _gemm(size: int, m: int, n: int, k: int, a: int, lda: int, b: int, ldb: int, c: int, ldc: int) -> None:
    """C (m x n) = A (m x k) @ B (k x n), row-major, at byte addresses; float32 when size is 4."""
    if size == 4:
        _sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc)
    else:
        _dgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc)


gemm: Any = compiled(_gemm)


def _conv_slabs(x: np.ndarray, wmat: np.ndarray, y: np.ndarray, kernel: tuple[int, int],
                strides: tuple[int, int], dilations: tuple[int, int], pads: tuple[int, int],
                rows_per_slab: int) -> None:
    """y (N, M, OH, OW) = conv(x (N, C, H, W), wmat (M, C*kh*kw)), one task per (image, slab of output rows)."""
    n, c = x.shape[0], x.shape[1]
    m, k = wmat.shape
    kh, kw = kernel
    oh, ow = y.shape[2], y.shape[3]
    slabs = (oh + rows_per_slab - 1) // rows_per_slab
    size = y.itemsize
    w0, y0 = np.int64(wmat.ctypes.data), np.int64(y.ctypes.data)
    for task in prange(n * slabs):  # (image, slab) tasks, split over threads
        b, s = task // slabs, task % slabs
        r0 = s * rows_per_slab
        rows = min(oh, r0 + rows_per_slab) - r0
        cols = np.empty((1, c, kh, kw, rows, ow), dtype=y.dtype)
        for ch in range(c):
            for i in range(kh):
                fill_block(x, b, ch, i, kernel, strides, dilations, pads, cols, 0, r0)
        count = rows * ow
        gemm(size, m, count, k, w0, k, np.int64(cols.ctypes.data), count, y0 + (b * m * oh * ow + r0 * ow) * size,
             oh * ow)


_KERNEL: ThreadedKernel | None = threaded(_conv_slabs, min_work=0) if gemm is not None else None
_bound: list[bool | None] = [None]  # whether the symbols are bound (None: not tried yet)


def _ready() -> bool:
    """The kernel exists and its OpenBLAS symbols are bound (tried once per process)."""
    if _bound[0] is None:
        addresses = blas.cblas_gemm_addresses() if _KERNEL is not None else None
        if addresses is not None:
            import llvmlite.binding  # numba's own dependency: present whenever the kernel is

            llvmlite.binding.add_symbol(SGEMM, addresses[0])
            llvmlite.binding.add_symbol(DGEMM, addresses[1])
        _bound[0] = addresses is not None
    return bool(_bound[0])


def supports(x: np.ndarray, w: np.ndarray, group: int) -> bool:
    """An ungrouped 2-D conv in float32/float64 (x and w of one dtype), when numba's threads are on (more
    than one: on one thread the im2col path is the same work) and numpy's BLAS is OpenBLAS."""
    return x.ndim == 4 and group == 1 and x.dtype in DTYPES and w.dtype == x.dtype and x.size > 0 and \
        jit.thread_count() > 1 and _ready()


def conv(x: np.ndarray, w: np.ndarray, win: Window) -> np.ndarray:
    """conv(x, w) for one resolved window, no bias (supports() holds)."""
    assert _KERNEL is not None
    n, m = x.shape[0], w.shape[0]
    k = math.prod(w.shape[1:])
    oh, ow = win.out
    y = np.empty((n, m, oh, ow), dtype=x.dtype)
    if y.size == 0:
        return y
    rows = max(1, SLAB_BYTES // (k * ow * x.itemsize))
    threads = jit.thread_count()
    if n * math.ceil(oh / rows) < threads:  # at least one slab per thread
        rows = math.ceil(oh * n / threads)
    blas.one_thread()  # each task's GEMM is one single-threaded call
    _KERNEL.threaded(np.ascontiguousarray(x), np.ascontiguousarray(w.reshape(m, k)), y, win.kernel, win.strides,
                     win.dilations, win.pads_begin, rows)
    return y
