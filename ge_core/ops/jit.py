"""Compiled loop kernels through numba, where numpy has no fast formulation; None when numba is absent.

numpy's BLAS covers the dense convs and matmuls, but a depthwise conv or a pool is many short passes in
numpy (one per kernel tap, each over rows of 7..80 elements) where a compiled loop makes one. numba
compiles these kernels on first use and caches the machine code beside this package (`cache=True`), so
a process pays the compile once per machine, not per run. Callers keep their numpy kernel as the
fallback (and as the tests' oracle): `compiled(fn)` returns None when numba cannot be imported or
GE_NO_JIT=1 is set (to compare the two paths, or to rule the compiled one out when debugging).

Threads. ONNX Runtime runs every kernel on its thread pool; numpy runs only its BLAS calls on more than one
core. A kernel written with `prange` and compiled with `threaded=True` splits its outer loop over numba's
threads (measured: a depthwise conv of the CRNN 2-2.3x faster at two threads; whole models, in-process A/B
of one against two threads, 4% (ShuffleNet) to 19% (BERT) faster, CRNN 7%, OCR detector 14%). The threads
are GNU OpenMP's (numba's "omp" layer): it is safe when two Python threads (two Streamlit sessions) launch
kernels at once, and a launch costs ~2 us while its idle threads still spin. They spin for GOMP_SPINCOUNT
iterations after a kernel (set below before libgomp loads: OpenMP's default, 300,000, kept a core busy for
~8 ms after every kernel, which took it from OpenBLAS's next GEMM); then they sleep (after ~0.1 ms at 3000),
and the next launch pays a wake-up: 30-180 us on this virtual machine. So a kernel runs threaded only from
about 50 us of serial work (its `min_work`). Serial versions run instead wherever threads cannot: without
libgomp (the workqueue layer is not safe for concurrent launches), with NUMBA_NUM_THREADS=1 or
GE_JIT_THREADS=0, and in a forked child (GNU OpenMP does not survive a fork: numba aborts such a child;
sweep/isolate.py forks).
"""

from __future__ import annotations

import importlib
import os
import types
from collections.abc import Callable
from types import ModuleType
from typing import Any

# Before libgomp loads (numba's omp layer is imported below): how long idle OpenMP threads spin (see above).
os.environ.setdefault("GOMP_SPINCOUNT", "3000")

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
    Serial: `threaded` compiles a kernel that splits its outer loop over threads."""
    if not ENABLED or numba is None:
        return None
    return numba.njit(**{**_OPTIONS, "fastmath": _fastmath(exact, reassociate, finite)})(fn)


def _fastmath(exact: bool, reassociate: bool, finite: bool) -> bool | set[str]:
    if exact:
        return False
    return {"contract"} | ({"reassoc"} if reassociate or finite else set()) | ({"nnan"} if finite else set())


def _threads_available() -> bool:
    """Whether kernels may run on numba's OpenMP threads in this process (see the module's docstring)."""
    if numba is None or not ENABLED or os.environ.get("GE_JIT_THREADS", "") in ("0", "false", "no"):
        return False
    if numba.config.NUMBA_NUM_THREADS < 2 or os.environ.get("NUMBA_THREADING_LAYER", "omp") != "omp":
        return False
    try:
        importlib.import_module("numba.np.ufunc.omppool")  # loads libgomp: an ImportError when it is missing
    except ImportError:
        return False
    numba.config.THREADING_LAYER = "omp"
    return True


THREADS = _threads_available()
_forked = [False]  # set in a forked child: from then on every kernel runs serially there


def _after_fork_in_child() -> None:
    _forked[0] = True


if THREADS:
    os.register_at_fork(after_in_child=_after_fork_in_child)


def threads_on() -> bool:
    """Whether a threaded kernel may run on more than one thread now (threads available, not a forked child)."""
    return THREADS and not _forked[0]


class ThreadedKernel:
    """A kernel with prange loops compiled twice, serial and threaded; a call takes the threaded one when
    threads are on and its `work` (the caller's count of elements or multiply-adds) is at least `min_work`."""

    def __init__(self, fn: Callable[..., Any], fastmath: bool | set[str], min_work: int) -> None:
        self.min_work = min_work
        # Two Python functions: numba's on-disk cache keys a kernel by its qualified name, not its options.
        self.serial = numba.njit(**{**_OPTIONS, "fastmath": fastmath})(fn) if numba else fn
        twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
        twin.__qualname__ = fn.__qualname__ + "_threaded"
        self.threaded = numba.njit(**{**_OPTIONS, "fastmath": fastmath, "parallel": True})(twin) \
            if numba and THREADS else self.serial

    def __call__(self, *args: Any, work: int) -> Any:
        kernel = self.threaded if work >= self.min_work and threads_on() else self.serial
        return kernel(*args)


def threaded(fn: Callable[..., Any], *, min_work: int, exact: bool = False, reassociate: bool = False,
             finite: bool = False) -> ThreadedKernel | None:
    """fn (whose outer loop is a `prange`) compiled as `compiled` does, serially and over numba's threads; None
    when the compiled path is off. Iterations of the prange loop must not write what another one reads."""
    if not ENABLED or numba is None:
        return None
    return ThreadedKernel(fn, _fastmath(exact, reassociate, finite), min_work)


prange: Callable[..., Any] = numba.prange if numba is not None else range
