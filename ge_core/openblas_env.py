"""How numpy's OpenBLAS threads wait, set before numpy loads it: imported first by ge_core (and so by
workbench_ui, which imports ge_core before anything else).

OpenBLAS's idle threads spin for OPENBLAS_THREAD_TIMEOUT (2^28 cycles by default, ~0.1 s) after every
product before they sleep, and the variable is read once, when numpy loads the library. A model run
alternates BLAS products with numba's threaded kernels (ops/jit.py): a spinning BLAS thread holds the core
those kernels need: on two cores, with ge_core imported first, runs took 1.31x (BERT) to 1.58x (squeezenet)
as long with OpenBLAS's default as with this one (inception_v2 1.35x, the DB detector 1.42x; medians of 60
runs). bench/bench_executor.py sets the same value for the same reason. A value the user set is kept, and
nothing changes when numpy was imported before ge_core.
"""

from __future__ import annotations

import os

THREAD_TIMEOUT = "4"  # OpenBLAS's minimum: 2^4 cycles of spinning, then sleep

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", THREAD_TIMEOUT)
