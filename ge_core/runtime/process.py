"""Process-wide settings that make the workbench's own runs faster, made only when asked.

Importing ge_core changes no environment variable, allocator setting or thread count: a library must not
retune its host process behind its back. The workbench's entry points (the CLI, the web app, the
benchmarks) call `tune_process()` once, first thing; a program that embeds ge_core may call it too.

- glibc's malloc keeps freed activation buffers for the next run (host_memory.py: runs of the OCR detector
  23-28 ms -> 15-17 ms, no page faults after warm-up);
- numpy's OpenBLAS runs small products on one thread (ops/blas.py: waking its sleeping threads costs more
  than a product under ~12 MFLOP takes alone).
"""

from __future__ import annotations

from ge_core.ops import blas
from ge_core.runtime.host_memory import keep_freed_host_memory


def tune_process() -> list[str]:
    """Make the settings above (idempotent); what was set, in words (nothing where the platform or the user's
    own environment decides: a glibc threshold the user set, a BLAS other than numpy's OpenBLAS)."""
    done = []
    if keep_freed_host_memory():
        done.append("glibc malloc keeps freed buffers below 32 MB (mmap threshold 32 MB, trim threshold 64 MB)")
    if blas.adapt_threads(True):
        done.append(f"numpy's OpenBLAS runs products under {blas.SMALL_GEMM_FLOPS / 1e6:g} MFLOP on one thread")
    return done
