"""numpy's BLAS (the OpenBLAS numpy wheels bundle): its thread count, read and set at run time, and the
matrix products of the kernels, each on as many threads as its size pays for.

Conv and MatMul kernels spend their time in BLAS. OpenBLAS's threads wait for each other at the end of
every call, so when another process holds one of the cores, a two-thread GEMM waits for its slower half
(measured here: 6x slower than with one thread while a neighbour ran, 1.8x faster when the machine was
free). `OPENBLAS_NUM_THREADS` fixes the count before numpy loads; `set_blas_threads` changes it afterwards
(bench/bench_executor.py --blas-threads uses it); numpy's default is one thread per core.

A small GEMM is faster on one thread: waking OpenBLAS's sleeping threads costs 30-180 us on this virtual
machine, more than a product under ~12 MFLOP takes alone. So `matmul` runs those on one thread and larger
ones on the configured count (in-process A/B over the benchmark's nine models, against two threads for
all: BERT and the CRNN 8-9% faster, the CNNs within noise; 12 MFLOP against 32 MFLOP: the CNNs 2-5%
faster, the small models even; against 6 MFLOP: even or 1-4% faster). Only numpy's bundled scipy-openblas
is driven; with another BLAS the functions report None and do nothing, and `matmul` is np.matmul.

A large product of float32 or float64 operands runs on numba's OpenMP threads instead, each thread one
single-threaded OpenBLAS call on a block of the output (gemm_jit.py): one thread pool for every kernel instead
of two taking turns. In-process A/B on the benchmark's nine models against OpenBLAS's two threads, ratio to
ONNX Runtime, median of 11 alternating runs: SqueezeNet 2.14 -> 2.02x, ResNet-50 1.81 -> 1.67x, Inception v2
2.13 -> 1.98x, ShuffleNet 2.10 -> 1.91x, BERT 1.48 -> 1.37x, the OCR detector 2.44 -> 2.30x, the others 1-5%.
"""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path

import numpy as np

from ge_core.ops import gemm_jit, jit

_LIBS = Path(np.__file__).resolve().parent.parent / "numpy.libs"
_PREFIXES = ("scipy_openblas_", "scipy_openblas64_", "openblas_")  # symbol prefixes across numpy wheels


@functools.cache
def _openblas() -> tuple[ctypes.CDLL, str, str, str] | None:
    """numpy's bundled OpenBLAS with the names of its set/get thread functions and of its core-name
    function, or None (another BLAS)."""
    for path in sorted(_LIBS.glob("lib*openblas*.so*")):
        lib = ctypes.CDLL(str(path))
        for prefix in _PREFIXES:
            for suffix in ("64_", "_64_", ""):
                setter, getter = f"{prefix}set_num_threads{suffix}", f"{prefix}get_num_threads{suffix}"
                if hasattr(lib, setter) and hasattr(lib, getter):
                    return lib, setter, getter, f"{prefix}get_corename{suffix}"
    return None


def blas_core() -> str | None:
    """The CPU kernel set numpy's OpenBLAS runs (SkylakeX, Haswell, Zen ...): OPENBLAS_CORETYPE forces an
    older one, whose GEMMs can be 1.8x slower on an AVX-512 machine (measured). None: not OpenBLAS."""
    found = _openblas()
    if found is None or not hasattr(found[0], found[3]):
        return None
    function = getattr(found[0], found[3])
    function.restype = ctypes.c_char_p
    name = function()
    return None if name is None else name.decode()


def blas_threads() -> int | None:
    """The thread count numpy's OpenBLAS runs large products on (None when numpy does not bundle OpenBLAS)."""
    found = _openblas()
    if found is None:
        return None
    return _configured[0] or int(getattr(found[0], found[2])())


def set_blas_threads(threads: int) -> int | None:
    """Use `threads` BLAS threads from now on (for the products that pay for more than one); returns the
    previous count (None: no OpenBLAS, nothing set)."""
    if threads < 1:
        raise ValueError(f"BLAS threads must be >= 1, got {threads}")
    found = _openblas()
    if found is None:
        return None
    previous = blas_threads()
    _set(found, threads)
    _configured[0] = threads
    return previous


SMALL_GEMM_FLOPS = 12e6  # products below this run on one thread (see the module's docstring)
SPLIT_GEMM_FLOPS = 4e6  # products from this size split over numba's threads, whose pool is awake (gemm_jit.py)
_configured = [0]  # the thread count for large products: numpy's own until set_blas_threads (0: not read yet)
_current = [0]  # the count last set here (0: unknown)


def _set(found: tuple[ctypes.CDLL, str, str, str], threads: int) -> None:
    getattr(found[0], found[1])(ctypes.c_int(threads))
    _current[0] = threads


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.matmul(a, b): on one BLAS thread when the product is small, split over numba's threads when it is
    large and gemm_jit.py takes its operands, else on the configured count. The count is process-wide: two
    sessions computing at once may run a product on the other's count, which changes its speed, not its
    result."""
    found = _openblas()
    if found is not None and a.ndim >= 1 and b.ndim >= 1:
        if not _configured[0]:
            _configured[0] = blas_threads() or 1
        inner = a.shape[-1]
        rows = a.shape[-2] if a.ndim > 1 else 1
        cols = b.shape[-1] if b.ndim > 1 else 1
        batch = max(a.size // max(rows * inner, 1), b.size // max(inner * cols, 1))  # exact unless both broadcast
        flops = 2 * batch * rows * inner * cols
        split = _split_operands(a, b) if flops >= SPLIT_GEMM_FLOPS and _configured[0] > 1 and \
            _split_gemm_ready(found) else None
        # each part of a split product is one single-threaded call
        want = 1 if split is not None or flops < SMALL_GEMM_FLOPS else _configured[0]
        if want != _current[0]:
            _set(found, want)
        if split is not None:
            a3, b3, batch_shape = split
            parts = min(_configured[0], jit.thread_count())
            return gemm_jit.products(a3, b3, parts).reshape(*batch_shape, rows, cols)
    return np.matmul(a, b)


def _split_gemm_ready(found: tuple[ctypes.CDLL, str, str, str]) -> bool:
    """Whether large products may run split over numba's threads now (gemm_jit.py): its kernel compiled,
    numpy's ILP64 cblas functions bound to it, threads on (not in a forked child)."""
    if not _bound[0]:
        _bound[0] = True
        addresses = [_cblas_address(found[0], name) for name in ("sgemm", "dgemm")]
        if gemm_jit.compiled_on() and None not in addresses:
            gemm_jit.bind(*addresses)  # type: ignore[arg-type]
    return gemm_jit.available() and jit.threads_on() and jit.thread_count() > 1


_bound = [False]  # whether _split_gemm_ready looked up the cblas functions (once per process)


def _cblas_address(lib: ctypes.CDLL, routine: str) -> int | None:
    """The address of numpy's OpenBLAS cblas_<routine> with 64-bit integers (numpy's wheels since 1.22), or
    None (a 32-bit-integer build: not taken)."""
    for name in (f"scipy_cblas_{routine}64_", f"cblas_{routine}64_", f"cblas_{routine}_64"):
        if hasattr(lib, name):
            return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
    return None


def _split_operands(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]] | None:
    """a and b as (BA, M, K) and (BB, K, N) views for gemm_jit.products, with the result's batch shape; None
    when it cannot take them (vectors, another dtype, non-contiguous, or a batch that is neither shared
    nor broadcast from one product)."""
    if a.ndim < 2 or b.ndim < 2 or a.dtype != b.dtype or a.dtype not in _SPLIT_DTYPES:
        return None
    if not (a.flags.c_contiguous and b.flags.c_contiguous) or 0 in a.shape or 0 in b.shape:
        return None
    a_batch, b_batch = _strip_ones(a.shape[:-2]), _strip_ones(b.shape[:-2])
    if a_batch and b_batch and a_batch != b_batch:
        return None
    try:
        batch_shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        return None
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    if b.shape[-2] != k:
        return None  # np.matmul raises its error
    return a.reshape(-1, m, k), b.reshape(-1, k, n), tuple(batch_shape)


def _strip_ones(shape: tuple[int, ...]) -> tuple[int, ...]:
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape


_SPLIT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
