"""Helpers for the elementwise op tests (activation, math, logic): run one op through ge_core's registry
(infer + kernel) and through the oracles (onnx.reference, ONNX Runtime) on the same inputs."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper
from onnx.backend.test.case.test_case import TestCase
from onnx.reference import ReferenceEvaluator

from ge_core.errors import ShapeError
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc, desc_of
from ge_core.ops import REGISTRY
from ge_core.ops.common import make_desc
from ge_core.ops.registry import Operand

Arrays = Sequence[np.ndarray | None]


def make_node(op_type: str, n_inputs: Sequence[bool], attrs: dict[str, Any] | None = None, opset: int = 21,
              n_outputs: int = 1) -> Node:
    """A node named 'n0'; `n_inputs[i]` False leaves input i omitted ("")."""
    inputs = tuple(f"x{i}" if present else "" for i, present in enumerate(n_inputs))
    return Node("n0", op_type, inputs, tuple(f"y{i}" for i in range(n_outputs)), dict(attrs or {}),
                opset=opset)


def infer(op_type: str, descs: Sequence[TensorDesc | tuple[tuple[int, ...], str] | None],
          attrs: dict[str, Any] | None = None, opset: int = 21, values: Arrays | None = None,
          n_outputs: int = 1) -> list[TensorDesc]:
    """Run the op's infer on descs (or (shape, dtype) pairs), with optional known values."""
    ds = [d if d is None or isinstance(d, TensorDesc) else make_desc(*d) for d in descs]
    vals = list(values) if values is not None else [None] * len(ds)
    operands = [None if d is None else Operand(d, v) for d, v in zip(ds, vals, strict=True)]
    node = make_node(op_type, [d is not None for d in ds], attrs, opset, n_outputs)
    return REGISTRY.get(op_type).infer(node, operands)  # type: ignore[union-attr]


def infer_error(op_type: str, descs: Sequence[TensorDesc | tuple[tuple[int, ...], str] | None],
                attrs: dict[str, Any] | None = None, opset: int = 21, values: Arrays | None = None,
                match: str = "") -> ShapeError:
    """infer must raise a ShapeError naming node 'n0' and its op (and matching `match`)."""
    with pytest.raises(ShapeError, match=match) as info:
        infer(op_type, descs, attrs, opset, values)
    assert "node 'n0'" in str(info.value) and f"({op_type})" in str(info.value)
    return info.value


def run_ge(op_type: str, inputs: Arrays, attrs: dict[str, Any] | None = None, opset: int = 21,
           n_outputs: int = 1) -> list[np.ndarray]:
    """Infer then run the kernel on read-only inputs; checks outputs match the inferred descs."""
    frozen = [None if x is None else read_only(x) for x in inputs]
    before = [None if x is None else x.copy() for x in frozen]
    node = make_node(op_type, [x is not None for x in inputs], attrs, opset, n_outputs)
    op = REGISTRY.get(op_type)
    assert op is not None, f"{op_type} is not registered"
    descs = op.infer(node, [None if x is None else Operand(desc_of(x)) for x in frozen])
    outs = op.kernel(node, frozen)[:n_outputs]
    assert all(isinstance(o, np.ndarray) for o in outs), "kernels return arrays (not numpy scalars)"
    for out, desc in zip(outs, descs, strict=False):
        dtype = "str" if out.dtype.kind in "OUS" else out.dtype.name
        assert dtype == desc.dtype, (out.dtype, desc.dtype)
        assert out.shape == desc.shape, (out.shape, desc.shape)
    for x, orig in zip(frozen, before, strict=True):
        if x is not None:
            np.testing.assert_array_equal(x, orig)
    return outs


def read_only(x: np.ndarray) -> np.ndarray:
    y = np.array(x)
    y.flags.writeable = False  # a kernel writing into its input fails loudly
    return y


def _model(op_type: str, inputs: Arrays, attrs: dict[str, Any] | None, opset: int,
           n_outputs: int) -> onnx.ModelProto:
    names = [f"x{i}" if x is not None else "" for i, x in enumerate(inputs)]
    outputs = [f"y{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, names, outputs, **(attrs or {}))
    graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
                    for n, x in zip(names, inputs, strict=True) if x is not None]
    graph = helper.make_graph([node], "g", graph_inputs, [onnx.ValueInfoProto(name=o) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _feeds(inputs: Arrays) -> dict[str, np.ndarray]:
    return {f"x{i}": x for i, x in enumerate(inputs) if x is not None}


def reference(op_type: str, inputs: Arrays, attrs: dict[str, Any] | None = None, opset: int = 21,
              n_outputs: int = 1) -> list[np.ndarray]:
    model = _model(op_type, inputs, attrs, opset, n_outputs)
    return [np.asarray(o) for o in ReferenceEvaluator(model).run(None, _feeds(inputs))]


def onnxruntime(op_type: str, inputs: Arrays, attrs: dict[str, Any] | None = None, opset: int = 21,
                n_outputs: int = 1) -> list[np.ndarray]:
    model = _model(op_type, inputs, attrs, opset, n_outputs)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(o) for o in session.run(None, _feeds(inputs))]


def check(op_type: str, inputs: Arrays, attrs: dict[str, Any] | None = None, opset: int = 21, *,
          oracle: str = "both", rtol: float = 1e-6, atol: float = 1e-7, n_outputs: int = 1) -> None:
    """ge_core's result equals the oracle(s) in dtype, shape and (closely) value."""
    got = run_ge(op_type, inputs, attrs, opset, n_outputs)
    assert_like_oracles(got, op_type, inputs, attrs, opset, n_outputs, oracle=oracle, rtol=rtol, atol=atol)


def assert_like_oracles(got: list[np.ndarray], op_type: str, inputs: Arrays, attrs: dict[str, Any] | None,
                        opset: int, n_outputs: int, *, oracle: str, rtol: float, atol: float) -> None:
    """`got` equals the outputs of the oracle(s) ("both", or one by name) in dtype and shape; in value within
    rtol/atol for floats (and complex), exactly for the other types."""
    oracles = {"reference": reference, "onnxruntime": onnxruntime}
    for name in list(oracles) if oracle == "both" else [oracle]:
        want = oracles[name](op_type, inputs, attrs, opset, n_outputs)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype, f"{name}: dtype {g.dtype} != {w.dtype}"
            assert g.shape == w.shape, f"{name}: shape {g.shape} != {w.shape}"
            if g.dtype.kind in "fc":
                np.testing.assert_allclose(g.astype(np.float64) if g.dtype.kind == "f" else g, w, rtol=rtol,
                                           atol=atol, equal_nan=True, err_msg=name)
            else:
                np.testing.assert_array_equal(g, w, err_msg=name)


def owner_of(case: TestCase, families: Sequence[set[str]]) -> int:
    """Index of the first family one of the case's ops belongs to (each case is tested in one file)."""
    assert case.model is not None
    ops = {n.op_type for n in case.model.graph.node}
    return next(i for i, fam in enumerate(families) if ops & fam)


def decoded(case: TestCase) -> TestCase:
    """The case with its data sets as arrays: the Cast cases store TensorProtos, which the shared harness
    would feed as-is. bfloat16, float8 and int4 data are ml_dtypes arrays, which feeds accept."""
    assert case.data_sets is not None
    data = [([_array(v) for v in ins], [_array(v) for v in outs]) for ins, outs in case.data_sets]
    return dataclasses.replace(case, data_sets=data)


def _array(value: object) -> np.ndarray:
    return numpy_helper.to_array(value) if isinstance(value, onnx.TensorProto) else np.asarray(value)
