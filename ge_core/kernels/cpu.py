"""The CPU the compiled kernels are built for: numba's target (the host, unless NUMBA_CPU_NAME /
NUMBA_CPU_FEATURES name another), its name and its features, as LLVM spells them ("avx2", "avx512f").

A fast path whose compiled code assumes a feature lists it (FastPath.needs) and is not taken on a target
without it. Reading numba's target rather than /proc/cpuinfo is what lets a test or a benchmark run every
path as an AVX2-only CPU would (`avx2_environment()`), on a machine that has AVX-512.
"""

from __future__ import annotations

import functools
import os
from types import ModuleType

llvm: ModuleType | None
try:  # numba's own dependency, optional as numba is
    import llvmlite.binding

    llvm = llvmlite.binding
except ImportError:  # pragma: no cover - the requirements install numba
    llvm = None

AVX512_PREFIX = "avx512"
AVX2_CPU_NAME = "znver2"  # an AVX2 CPU without AVX-512, as many cloud EPYCs are (Zen 2)


@functools.cache
def features() -> frozenset[str]:
    """The features numba compiles for (those it would enable, '+' in LLVM's feature string)."""
    flat = os.environ.get("NUMBA_CPU_FEATURES") or _host_feature_string()
    return frozenset(f[1:] for f in flat.split(",") if f.startswith("+"))


def name() -> str:
    """The CPU name numba compiles for (LLVM's: "znver5", "skylake-avx512", "haswell" ...)."""
    return os.environ.get("NUMBA_CPU_NAME") or _host_name()


def has(feature: str) -> bool:
    return feature in features()


def summary() -> str:
    """One line for benchmark headers: the target, and its widest vector extension."""
    widest = "AVX-512" if has("avx512f") else "AVX2" if has("avx2") else "AVX" if has("avx") else "SSE only"
    return f"{name()} ({widest})"


def avx2_environment() -> dict[str, str]:
    """Environment variables under which a new process compiles and runs every kernel as on an AVX2 CPU
    without AVX-512: numba's target CPU and features, and numpy's OpenBLAS kernels (its Zen kernels are
    its AVX2 Haswell ones). Pair it with a NUMBA_CACHE_DIR of its own when comparing."""
    flat = _host_feature_string()
    without = ",".join("-" + f[1:] if f[1:].startswith(AVX512_PREFIX) else f for f in flat.split(","))
    return {"NUMBA_CPU_NAME": AVX2_CPU_NAME, "NUMBA_CPU_FEATURES": without, "OPENBLAS_CORETYPE": "Zen"}


@functools.cache
def _host_feature_string() -> str:
    return "" if llvm is None else str(llvm.get_host_cpu_features().flatten())


@functools.cache
def _host_name() -> str:
    return "unknown" if llvm is None else str(llvm.get_host_cpu_name())
