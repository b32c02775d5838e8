"""Precision modes (ATC's --precision_mode) and running a compiled model's real kernels under them.

- force_fp32 / must_keep_origin_dtype: every op in the graph's own dtype (fp32 models stay fp32): the
  outputs are the CPU executor's, bit for bit.
- allow_fp32_to_fp16: cube ops (Conv, MatMul, Gemm, and fused kernels around them) take fp16 inputs and
  accumulate in fp32, as the Da Vinci cube does; vector ops stay fp32.
- force_fp16: as allow_fp32_to_fp16, and every float result is also rounded to fp16 (vector ops in fp16).

fp16 is emulated on the CPU: values are rounded to fp16 and computed in fp32, so the error shown is the
error of fp16 storage with fp32 accumulation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ge_core.errors import UsageError
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY
from ge_core.ops.registry import Category, OpDef, OpRegistry
from ge_core.runtime import Executor, Interpreter, relative_error
from ge_core.sim.cost import Precision

PRECISION_MODES: dict[str, Precision] = {
    "force_fp32": Precision("force_fp32", None, None),
    "must_keep_origin_dtype": Precision("must_keep_origin_dtype", None, None),
    "allow_fp32_to_fp16": Precision("allow_fp32_to_fp16", 2, None),
    "force_fp16": Precision("force_fp16", 2, 2),
}


def parse_precision(mode: str | Precision) -> Precision:
    if isinstance(mode, Precision):
        return mode
    key = str(mode).strip().lower().replace("-", "_")
    if key not in PRECISION_MODES:
        raise UsageError(f"unknown precision mode '{mode}'.", hint=f"Use one of: {', '.join(PRECISION_MODES)}.")
    return PRECISION_MODES[key]


def exact(precision: Precision) -> bool:
    """True when the mode computes in the graph's own dtypes (no rounding to emulate)."""
    return precision.cube_bytes is None and precision.vector_bytes is None


def _to_fp16(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float16).astype(np.float32) if x.dtype == np.float32 else x


class PrecisionInterpreter(Interpreter):
    """The interpreter with fp16 rounding where the precision mode puts it (inside fused bodies too)."""

    def __init__(self, graph: Graph, registry: OpRegistry = REGISTRY, *, precision: Precision) -> None:
        super().__init__(graph, registry)
        self.precision = precision
        self._cube_fp16 = precision.cube_bytes == 2
        self._vector_fp16 = precision.vector_bytes == 2

    def call_kernel(self, node: Node, op: OpDef, args: list[np.ndarray | None]) -> Sequence[np.ndarray]:
        if op.view:  # no computation: the bytes are the input's
            return op.kernel(node, args)
        if self._cube_fp16 and op.category == Category.CUBE:  # operands in fp16, bias and accumulation in fp32
            args = [_to_fp16(x) if i < 2 and x is not None else x for i, x in enumerate(args)]
        outputs = op.kernel(node, args)
        return [_to_fp16(np.asarray(y)) for y in outputs] if self._vector_fp16 else outputs


def run_outputs(graph: Graph, feeds: Mapping[str, np.ndarray], precision: Precision) -> dict[str, np.ndarray]:
    """The graph's outputs computed with the precision mode's rounding."""
    def interpreter(g: Graph, registry: OpRegistry) -> Interpreter:
        return PrecisionInterpreter(g, registry, precision=precision)

    return Executor(graph, interpreter=interpreter).run(feeds).outputs


def relative_errors(got: Mapping[str, np.ndarray], want: Mapping[str, np.ndarray]) -> dict[str, float]:
    """relative_error per output of `want` (ge_core.runtime.relative_error says what counts as equal)."""
    return {name: relative_error(got[name], ref) for name, ref in want.items()}
