"""numpy's BLAS (the OpenBLAS numpy wheels bundle): its thread count, read and set at run time, and the
matrix products of the kernels, each on as many threads as its size pays for.

Conv and MatMul kernels spend their time in BLAS. OpenBLAS's threads wait for each other at the end of
every call, so when another process holds one of the cores, a two-thread GEMM waits for its slower half
(measured here: 6x slower than with one thread while a neighbour ran, 1.8x faster when the machine was
free). `OPENBLAS_NUM_THREADS` fixes the count before numpy loads; `set_blas_threads` changes it afterwards
(bench/bench_executor.py --blas-threads uses it); numpy's default is one thread per core.

A small GEMM is faster on one thread: waking OpenBLAS's sleeping threads costs 30-180 us on this virtual
machine, more than a product under ~12 MFLOP takes alone. So, once `adapt_threads(True)` is called
(`ge_core.tune_process()` does, for the CLI, the app and the benchmarks: the count is process-wide, so a
library never changes it on its own), `matmul` runs those on one thread and larger ones on the configured
count (in-process A/B over the benchmark's nine models, against two threads for
all: BERT and the CRNN 8-9% faster, the CNNs within noise; 12 MFLOP against 32 MFLOP: the CNNs 2-5%
faster, the small models even; against 6 MFLOP: even or 1-4% faster). Only numpy's bundled scipy-openblas
is driven; with another BLAS the functions report None and do nothing, and `matmul` is np.matmul.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
from collections.abc import Iterator
from pathlib import Path

import numpy as np

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
_configured = [0]  # the thread count for large products: numpy's own until set_blas_threads (0: not read yet)
_current = [0]  # the count last set here (0: unknown)
_adapt = [False]  # small products on one thread (adapt_threads)


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Every product on one BLAS thread while inside (process-wide, so only for short work that must give the
    same bits wherever it runs: OpenBLAS's results may differ in the last bits between thread counts)."""
    found = _openblas()
    if found is None:
        yield
        return
    before = int(getattr(found[0], found[2])())
    adapt, _adapt[0] = _adapt[0], False
    _set(found, 1)
    try:
        yield
    finally:
        _set(found, before)
        _adapt[0] = adapt


def adapt_threads(on: bool) -> bool:
    """From now on, run small products on one BLAS thread (on) or leave numpy's count alone (off, the default);
    returns whether it can (numpy's bundled OpenBLAS)."""
    found = _openblas()
    _adapt[0] = on
    if not on and found is not None and _configured[0] and _current[0] != _configured[0]:
        _set(found, _configured[0])  # back to the count products ran on before
    return found is not None


def _set(found: tuple[ctypes.CDLL, str, str, str], threads: int) -> None:
    getattr(found[0], found[1])(ctypes.c_int(threads))
    _current[0] = threads


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.matmul(a, b); with `adapt_threads(True)`, on one BLAS thread when the product is small. The count is
    process-wide: two sessions computing at once may run a product on the other's count, which changes its
    speed, not its result."""
    found = _openblas() if _adapt[0] else None
    if found is not None and a.ndim >= 1 and b.ndim >= 1:
        if not _configured[0]:
            _configured[0] = blas_threads() or 1
        inner = a.shape[-1]
        rows = a.shape[-2] if a.ndim > 1 else 1
        cols = b.shape[-1] if b.ndim > 1 else 1
        batch = max(a.size // max(rows * inner, 1), b.size // max(inner * cols, 1))  # exact unless both broadcast
        flops = 2 * batch * rows * inner * cols
        want = 1 if flops < SMALL_GEMM_FLOPS else _configured[0]
        if want != _current[0]:
            _set(found, want)
    return np.matmul(a, b)
