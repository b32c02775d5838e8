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

import weakref
from collections.abc import Mapping

import numpy as np

from ge_core.errors import UsageError
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY
from ge_core.ops.registry import Category, OpDef, OpRegistry
from ge_core.runtime.executor import Executor
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


def _to_fp16(x: np.ndarray | None) -> np.ndarray | None:
    if x is None or x.dtype != np.float32:
        return x
    return x.astype(np.float16).astype(np.float32)


class PrecisionRegistry(OpRegistry):
    """The registry's kernels, with fp16 rounding where the precision mode puts it (fused bodies too)."""

    def __init__(self, base: OpRegistry, precision: Precision) -> None:
        super().__init__()
        self.base = base
        self.precision = precision
        self._wrapped: dict[int, OpDef] = {}
        self._bodies: weakref.WeakKeyDictionary[Graph, OpDef] = weakref.WeakKeyDictionary()

    def for_node(self, node: Node) -> OpDef | None:
        if node.body is not None and self.base.get(node.op_type, node.domain) is None:
            return self._fused(node)
        op = self.base.for_node(node)
        if op is None or op.view:
            return op
        key = id(op)
        if key not in self._wrapped:
            self._wrapped[key] = self._wrap(op)
        return self._wrapped[key]

    def _wrap(self, op: OpDef) -> OpDef:
        base_kernel = op.kernel
        cube = op.category == Category.CUBE
        round_outputs = self.precision.vector_bytes == 2

        def kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
            if cube:  # operands in fp16, bias and accumulation in fp32
                inputs = [_to_fp16(x) if i < 2 else x for i, x in enumerate(inputs)]
            outputs = base_kernel(node, inputs)
            return [_to_fp16(y) for y in outputs] if round_outputs else outputs  # type: ignore[misc]

        return OpDef(op.op_type, op.category, op.infer, kernel, op.cost, op.domain, op.value, op.foldable, op.view)

    def _fused(self, node: Node) -> OpDef:
        assert node.body is not None
        body = node.body
        cached = self._bodies.get(body)
        if cached is None:
            template = self.base.for_node(node)
            assert template is not None
            executor = Executor(body, self)

            def kernel(inner: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
                arrays = [x for x in inputs if x is not None]
                out = executor.run_body(dict(zip(body.inputs, arrays, strict=True)))
                return [out[t] for t in body.outputs]

            cached = OpDef(template.op_type, template.category, template.infer, kernel, template.cost,
                           template.domain, foldable=False)
            self._bodies[body] = cached
        return cached


def run_outputs(graph: Graph, feeds: Mapping[str, np.ndarray], precision: Precision) -> dict[str, np.ndarray]:
    """The graph's outputs computed with the precision mode's rounding."""
    return Executor(graph, PrecisionRegistry(REGISTRY, precision)).run(feeds).outputs


def relative_errors(got: Mapping[str, np.ndarray], want: Mapping[str, np.ndarray]) -> dict[str, float]:
    """max |got - want| / max |want| per float output (0 for exact or non-float outputs)."""
    errors: dict[str, float] = {}
    for name, ref in want.items():
        value = got[name]
        if ref.dtype.kind != "f" or ref.size == 0:
            errors[name] = 0.0
            continue
        diff = np.abs(value.astype(np.float64) - ref.astype(np.float64))
        scale = float(np.nanmax(np.abs(ref))) if np.isfinite(ref).any() else 1.0
        errors[name] = float(np.nanmax(diff)) / max(scale, 1e-30)
    return errors
