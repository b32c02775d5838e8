"""Helpers for the shape, movement, indexing, resize and reduction op tests.

Unlike elementwise ops, these often take shape-like inputs (Reshape's shape, Slice's starts, Resize's
sizes) whose *values* decide the output shape. `run_ge` therefore infers twice: once with those values
known (the output shape must then be exact) and once with them unknown (the output must still have a
compatible desc: right rank, -1 where a dim cannot be known).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ge_core.ir.tensor import TensorDesc, desc_of
from ge_core.ops import REGISTRY, indexing, makers, movement, pad, reduce, resize, shape_ops
from ge_core.ops.registry import Operand
from tests.ops.conformance import cases_for, with_xfails
from tests.ops.elementwise_oracle import assert_like_oracles, make_node, owner_of, read_only

Arrays = Sequence[np.ndarray | None]

# Each conformance case is run by exactly one test file: the first family (in this order) it uses.
FAMILY_MODULES = (reduce, shape_ops, makers, movement, pad, indexing, resize)
FAMILIES: list[set[str]] = [{op.op_type for op in m.OPS} for m in FAMILY_MODULES]
ALL_OPS: set[str] = set().union(*FAMILIES)


def conformance_cases(module: object, xfail: Mapping[str, str] | None = None) -> list[object]:
    """ONNX node cases made only of our ops (and Constant) whose first family is `module`, as params named
    after the case; those in `xfail` (name -> why: deliberately unsupported) run as xfail(strict=True)."""
    index = FAMILY_MODULES.index(module)
    return with_xfails([c for c in cases_for(ALL_OPS) if owner_of(c, FAMILIES) == index], xfail or {})


def _compatible(desc: TensorDesc, exact: TensorDesc) -> bool:
    return desc.rank == exact.rank and desc.dtype == exact.dtype and all(
        d < 0 or d == e for d, e in zip(desc.shape, exact.shape, strict=True))


def run_ge(op_type: str, inputs: Arrays, attrs: dict[str, Any] | None = None, opset: int = 21,
           n_outputs: int = 1, known: Sequence[int] | None = None, exact: bool = True) -> list[np.ndarray]:
    """Infer (values of `known` inputs given, default every input but the first), run the kernel on
    read-only inputs, and check: outputs match the inferred descs exactly (merely compatible when not
    `exact`: data-dependent sizes), infer without the values is compatible, no input was written."""
    frozen = [None if x is None else read_only(x) for x in inputs]
    known = range(1, len(inputs)) if known is None else known
    node = make_node(op_type, [x is not None for x in inputs], attrs, opset, n_outputs)
    op = REGISTRY.get(op_type)
    assert op is not None, f"{op_type} is not registered"
    with_values = [None if x is None else Operand(desc_of(x), x if i in known else None)
                   for i, x in enumerate(frozen)]
    descs = op.infer(node, with_values)
    blind = op.infer(node, [None if o is None else Operand(o.desc) for o in with_values])
    outs = [np.asarray(o) for o in op.kernel(node, frozen)[:n_outputs]]
    assert len(outs) == n_outputs
    for out, desc, loose in zip(outs, descs, blind, strict=False):
        assert out.dtype.name == desc.dtype or (desc.dtype == "str" and out.dtype == object), \
            (out.dtype, desc.dtype)
        if exact:
            assert out.shape == desc.shape, f"kernel gave {out.shape}, infer said {desc.shape}"
        assert _compatible(desc, desc.with_shape(out.shape)), f"kernel gave {out.shape}, infer said {desc.shape}"
        assert _compatible(loose, desc), f"infer without values said {loose.text()}, exact is {desc.text()}"
    for x, orig in zip(frozen, inputs, strict=True):
        if x is not None:
            np.testing.assert_array_equal(x, orig)
    return outs


def check(op_type: str, inputs: Arrays, attrs: dict[str, Any] | None = None, opset: int = 21, *,
          oracle: str = "both", rtol: float = 1e-6, atol: float = 1e-7, n_outputs: int = 1,
          known: Sequence[int] | None = None, exact: bool = True) -> list[np.ndarray]:
    """ge_core's result equals the oracle(s) in dtype, shape and (closely) value; returns ge's outputs."""
    inputs = list(inputs)
    while inputs and inputs[-1] is None:  # ORT takes a trailing "" input as present but null
        inputs.pop()
    got = run_ge(op_type, inputs, attrs, opset, n_outputs, known, exact)
    assert_like_oracles(got, op_type, inputs, attrs, opset, n_outputs, oracle=oracle, rtol=rtol, atol=atol)
    return got


def i64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)
