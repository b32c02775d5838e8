"""numpy's bundled OpenBLAS, as the executor benchmark reads and sets it: its thread count and the kernel
set it runs (which OPENBLAS_CORETYPE can force), checked against OpenBLAS's own view in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys

from ge_core.runtime.blas_threads import blas_core, blas_threads, set_blas_threads

PROBE = "from ge_core.runtime.blas_threads import blas_core; print(blas_core())"


def test_threads_read_and_set() -> None:
    before = blas_threads()
    assert before is not None and before >= 1
    assert set_blas_threads(1) == before
    assert blas_threads() == 1
    set_blas_threads(before)
    assert blas_threads() == before


def test_the_kernel_set_follows_openblas_coretype() -> None:
    """The name OpenBLAS reports; forcing Haswell (as some machines' environments do) shows as Haswell."""
    assert blas_core()
    env = {**os.environ, "OPENBLAS_CORETYPE": "Haswell"}
    forced = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    assert forced.stdout.strip() == "Haswell"
