"""numpy's BLAS thread count and kernel set, for the benchmarks and tools (the control lives in ops/blas.py,
beside the matrix products that use it)."""

from ge_core.ops.blas import blas_core, blas_threads, set_blas_threads

__all__ = ["blas_core", "blas_threads", "set_blas_threads"]
