"""Compiled loop kernels through numba, where numpy has no fast formulation; None when numba is absent.

numpy's BLAS covers the dense convs and matmuls, but a depthwise conv or a pool is many short passes in
numpy (one per kernel tap, each over rows of 7..80 elements) where a compiled loop makes one. numba
compiles these kernels on first use for the CPU it runs on (its own target: the host's features, AVX2 or
AVX-512 alike) and caches the machine code beside this package (`cache=True`): `python -m ge_core warmup`
compiles them all once, after an install, so that no run pays for it. `compiled(fn)` returns None when numba
cannot be imported or GE_NO_JIT=1 is set; the fast paths then decline and the reference kernels run.

One thread. The kernels run on the calling thread: numpy's BLAS is the only part of a run on more than one
core. Threaded numba kernels (OpenMP) were measured here before: on two cores they were even with serial ones
over the executor benchmark, but they made every import load libgomp, set its spin count process-wide, fail
in forked children and double the compile time.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

numba: ModuleType | None
try:  # optional at import time: ge_core runs (more slowly) without it
    import numba
except ImportError:  # pragma: no cover - the requirements install numba
    numba = None

ENABLED = numba is not None and os.environ.get("GE_NO_JIT", "") not in ("1", "true", "yes")

# "contract" lets the compiler use fused multiply-adds; the full fastmath set would also assume no NaN or
# inf, which ONNX inputs may hold. Bounds checks are off (they stop loops vectorising): every fast path checks
# its arrays against the node's geometry before the first compiled call (checks.py).
_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True, "fastmath": {"contract"}, "boundscheck": False,
                            "error_model": "numpy"}


_DISPATCHERS: list[Any] = []  # every kernel compiled here, for `compiles`


def compiled(fn: Callable[..., Any], *, exact: bool = False, reassociate: bool = False, finite: bool = False
             ) -> Callable[..., Any] | None:
    """fn compiled by numba (lazily, on the first call), or None when the compiled path is off. `exact`
    compiles without fused multiply-adds, for kernels that must round as numpy's do, step by step;
    `reassociate` lets sums be reordered so that reductions vectorise (still no NaN/inf assumptions);
    `finite` adds the no-NaN assumption too, for a kernel whose caller's result does not depend on it."""
    if not ENABLED or numba is None:
        return None
    dispatcher = numba.njit(**{**_OPTIONS, "fastmath": _fastmath(exact, reassociate, finite)})(fn)
    _DISPATCHERS.append(dispatcher)
    return dispatcher


def compiles() -> int:
    """How many kernel signatures this process compiled because numba's cache did not have them (a fresh
    install, another CPU, edited kernel code): what `python -m ge_core warmup` does ahead, once."""
    return sum(sum(d.stats.cache_misses.values()) for d in _DISPATCHERS)


def frozen(a: np.ndarray) -> np.ndarray:
    """`a` as a read-only view. numba compiles a kernel per argument type, and a read-only array is a type of
    its own: a kernel's inputs are always handed over read-only, so that one compiled signature (the one
    `python -m ge_core warmup` compiled) serves constants (read-only as the ONNX reader makes them) and
    computed values alike."""
    if not a.flags.writeable:
        return a
    view = a.view()
    view.flags.writeable = False
    return view


def _fastmath(exact: bool, reassociate: bool, finite: bool) -> bool | set[str]:
    if exact:
        return False
    return {"contract"} | ({"reassoc"} if reassociate or finite else set()) | ({"nnan"} if finite else set())
