"""Optional fast CPU paths beside the op registry's reference kernels (see registry.py for how a path is
chosen, switched off and listed; bench/bench_kernels.py for what each one saves).

The op registry (ge_core/ops) holds every op's reference kernel, numpy and numpy's BLAS, and imports no
numba. This package registers compiled kernels (numba) by op type, each for the inputs where it was measured
to be faster on the CPU it runs on; the interpreter (ge_core/runtime) calls `FAST_PATHS.call`, which takes
the first path that takes a node's inputs and else the reference kernel. Nothing here changes process-wide
state on import: threads and allocator settings are `ge_core.tune_process()`'s (runtime/process.py).
"""

from ge_core.kernels import activation, body_epilogue, body_gate, conv, norm, pool, reduce, resize
from ge_core.kernels.registry import FAST_PATHS, BodyPath, BodyPlan, Decision, FastPath, FastPaths

FAST_PATHS.register_all([*conv.PATHS, *pool.PATHS, *reduce.PATHS, *norm.PATHS, *resize.PATHS, *activation.PATHS,
                         *body_epilogue.PATHS, *body_gate.PATHS])

__all__ = ["FAST_PATHS", "BodyPath", "BodyPlan", "Decision", "FastPath", "FastPaths"]
