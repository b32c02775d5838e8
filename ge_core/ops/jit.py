"""Compiled loop kernels through numba, where numpy has no fast formulation; None when numba is absent.

numpy's BLAS covers the dense convs and matmuls, but a depthwise conv or a pool is many short passes in
numpy (one per kernel tap, each over rows of 7..80 elements) where a compiled loop makes one. numba
compiles these kernels on first use and caches the machine code beside this package (`cache=True`), so
a process pays the compile once per machine, not per run. Callers keep their numpy kernel as the
fallback (and as the tests' oracle): `compiled(fn)` returns None when numba cannot be imported or
GE_NO_JIT=1 is set (to compare the two paths, or to rule the compiled one out when debugging).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

numba: ModuleType | None
try:  # optional at import time: ge_core runs (more slowly) without it
    import numba
except ImportError:  # pragma: no cover - the requirements install numba
    numba = None

ENABLED = numba is not None and os.environ.get("GE_NO_JIT", "") not in ("1", "true", "yes")

# "contract" lets the compiler use fused multiply-adds; the full fastmath set would also assume no NaN or
# inf, which ONNX inputs may hold.
_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True, "fastmath": {"contract"}, "boundscheck": False,
                            "error_model": "numpy"}


def compiled(fn: Callable[..., Any], *, exact: bool = False, reassociate: bool = False, finite: bool = False
             ) -> Callable[..., Any] | None:
    """fn compiled by numba (lazily, on the first call), or None when the compiled path is off. `exact`
    compiles without fused multiply-adds, for kernels that must round as numpy's do, step by step;
    `reassociate` lets sums be reordered so that reductions vectorise (still no NaN/inf assumptions);
    `finite` adds the no-NaN assumption too, for a kernel whose caller's result does not depend on it.

    Serial on purpose: numba's parallel kernels run on an OpenMP pool whose idle threads spin beside
    OpenBLAS's and ORT's (measured in alternating runs with ORT: the CRNN 2.9x with one thread, 3.2-4.3x
    with two; ocr_det 3.3x against 3.6-4.1x)."""
    if not ENABLED or numba is None:
        return None
    if exact:
        fastmath: bool | set[str] = False
    else:
        fastmath = {"contract"} | ({"reassoc"} if reassociate or finite else set()) | ({"nnan"} if finite else set())
    return numba.njit(**{**_OPTIONS, "fastmath": fastmath})(fn)
