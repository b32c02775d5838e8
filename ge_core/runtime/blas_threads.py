"""How many threads numpy's BLAS (the OpenBLAS numpy wheels bundle) uses, read and set at run time.

Conv and MatMul kernels spend their time in BLAS. OpenBLAS's threads wait for each other at the end of
every call, so when another process holds one of the cores, a two-thread GEMM waits for its slower half
(measured here: 6x slower than with one thread while a neighbour ran, 1.8x faster when the machine was
free). `OPENBLAS_NUM_THREADS` fixes the count before numpy loads; `set_blas_threads` changes it afterwards
(bench/bench_executor.py --blas-threads uses it). Nothing changes unless asked: numpy's default, one thread
per core, stays.

Only numpy's bundled scipy-openblas is driven; with another BLAS the functions report None and do nothing.
"""

from __future__ import annotations

import ctypes
import functools
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
    """The thread count numpy's OpenBLAS uses now (None when numpy does not bundle OpenBLAS)."""
    found = _openblas()
    return None if found is None else int(getattr(found[0], found[2])())


def set_blas_threads(threads: int) -> int | None:
    """Use `threads` BLAS threads from now on; returns the previous count (None: no OpenBLAS, nothing set)."""
    if threads < 1:
        raise ValueError(f"BLAS threads must be >= 1, got {threads}")
    found = _openblas()
    if found is None:
        return None
    previous = blas_threads()
    getattr(found[0], found[1])(ctypes.c_int(threads))
    return previous
