"""Evaluating one node on constant inputs at compile time: what inference propagates (small values: Shape, the
Concat/Gather chains that build Reshape targets) and what constant folding turns into constants.

Shape and Size compute their values from the input descs (OpDef.value); any other op runs its kernel on the
known input values. Either way the values must be what inference promised, else they are not used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.registry import OpDef, Operand


def evaluate(node: Node, op: OpDef, operands: Sequence[Operand | None], outs: Sequence[TensorDesc],
             max_elements: int) -> list[np.ndarray] | None:
    """The values of the node's outputs (`outs`: their inferred descs), or None when they cannot be computed
    now: the op is not foldable, an input value is unknown, the outputs would hold more than `max_elements`
    elements (known before running the kernel), or the op fails (the executor reports a real failure at
    run time)."""
    if not op.foldable:
        return None
    values: list[np.ndarray | None] | None = None
    value_fn = op.value
    if value_fn is not None:  # Shape, Size: computed from the input's desc, no data needed
        values = _call(lambda: value_fn(node, list(operands)))
    if not _complete(values, outs) and all(o is None or o.value is not None for o in operands):
        if sum(d.numel or 0 for d in outs) > max_elements:
            return None  # too big to hold (known before computing it)
        values = _call(lambda: op.kernel(node, [o.value if o else None for o in operands]))
    if values is None or not _complete(values, outs):
        return None
    arrays = [np.asarray(v) for v in values[: len(outs)]]
    if sum(a.size for a in arrays) > max_elements or not _match(arrays, outs):
        return None
    return arrays


def _call(fn: Callable[[], Sequence[np.ndarray | None]]) -> list[np.ndarray | None] | None:
    """Run a kernel or value function; a failure leaves the node for the executor to report at run time."""
    try:
        with np.errstate(all="ignore"):  # ONNX semantics give inf/nan where numpy would warn
            result = fn()
    except Exception:
        return None
    return None if result is None else list(result)


def _complete(values: list[np.ndarray | None] | None, descs: Sequence[TensorDesc]) -> bool:
    return values is not None and len(values) >= len(descs) and all(v is not None for v in values[: len(descs)])


def _match(arrays: list[np.ndarray], descs: Sequence[TensorDesc]) -> bool:
    """The values are what inference promised (else readers' descs would no longer hold): use them only then."""
    for array, desc in zip(arrays, descs, strict=True):
        dtype = "str" if array.dtype.kind in "OUS" else array.dtype.name
        if dtype != desc.dtype or array.ndim != desc.rank:
            return False
        if any(d >= 0 and d != s for d, s in zip(desc.shape, array.shape, strict=True)):
            return False
    return True
