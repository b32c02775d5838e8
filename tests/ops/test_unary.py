"""Unary float functions (trigonometric and hyperbolic, Shrink, Swish) and the ops along axes (CumProd,
Hardmax, LpNormalization, MeanVarianceNormalization, ReduceLogSum): kernels against onnx.reference and
ONNX Runtime, dtypes, shape errors, facts, and ONNX's conformance cases."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ge_core.ops import REGISTRY, Category, VectorClass
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import check, infer, infer_error, reference, run_ge
from tests.ops.shape_oracle import check as shape_check

RNG = np.random.default_rng(3)
X = (RNG.standard_normal((2, 3, 4, 5)) * 2).astype(np.float32)
UNIT = np.clip(X / 3, -0.99, 0.99)  # inside the domain of asin, acos, atanh
TRIG = {"Tan": X / 2, "Asin": UNIT, "Acos": UNIT, "Atan": X, "Sinh": X, "Cosh": X, "Asinh": X,
        "Acosh": np.abs(X) + 1, "Atanh": UNIT}


@pytest.mark.parametrize("op", sorted(TRIG))
def test_trig_matches_oracles_in_float32_float64_and_float16(op: str) -> None:
    x = TRIG[op]
    check(op, [x], opset=7 if op in ("Tan", "Asin", "Acos", "Atan") else 9, rtol=2e-6, atol=1e-6)
    check(op, [x.astype(np.float64)], opset=9, oracle="reference", rtol=1e-12)
    (got,) = run_ge(op, [x.astype(np.float16)], opset=22)  # in float32, rounded once
    assert got.dtype == np.float16
    (want,) = reference(op, [x.astype(np.float16).astype(np.float64)], opset=22)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float16), rtol=1e-3, atol=1e-3)


def test_out_of_domain_gives_nan_or_inf_not_an_error() -> None:
    (acos,) = run_ge("Acos", [np.array([2.0, -1.0], np.float32)])
    assert np.isnan(acos[0]) and acos[1] == np.float32(np.pi)
    (atanh,) = run_ge("Atanh", [np.array([1.0, -1.0], np.float32)])
    assert np.isposinf(atanh[0]) and np.isneginf(atanh[1])


@pytest.mark.parametrize("attrs", [{}, {"lambd": 1.5}, {"lambd": 0.5, "bias": 1.5}])
def test_shrink_floats_and_integers(attrs: dict[str, float]) -> None:
    check("Shrink", [X], attrs, opset=9)
    ints = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    check("Shrink", [ints], {"lambd": 2.0, "bias": 1.0}, opset=9, oracle="reference")


@pytest.mark.parametrize("alpha", [1.0, 0.5, 2.0])
def test_swish_matches_reference(alpha: float) -> None:
    x = np.concatenate([X.reshape(-1), np.array([-200.0, 200.0], np.float32)])
    check("Swish", [x], {"alpha": alpha}, opset=24, oracle="reference", rtol=1e-6, atol=1e-6)


def test_unary_infer_and_errors() -> None:
    assert infer("Asinh", [((-1, 3), "float16")])[0].shape == (-1, 3)
    infer_error("Tan", [((2,), "int32")], match="must be one of")
    infer_error("Swish", [((2,), "int64")], opset=24, match="must be one of")
    infer_error("Shrink", [((2,), "bool")], match="must be one of")


def test_unary_facts() -> None:
    for op in TRIG:
        opdef = REGISTRY.get(op)
        assert opdef is not None and opdef.category == Category.ELEMENTWISE
        assert opdef.vector_class == VectorClass.TRANSCENDENTAL
    shrink = REGISTRY.get("Shrink")
    assert shrink is not None and shrink.activation


# ---- ops along axes -----------------------------------------------------------------------------------
@pytest.mark.parametrize("attrs", [{}, {"exclusive": 1}, {"reverse": 1}, {"exclusive": 1, "reverse": 1}])
@pytest.mark.parametrize("axis", [0, 2, -1])
def test_cumprod(attrs: dict[str, int], axis: int) -> None:
    x = (RNG.random((3, 4, 5)) + 0.5).astype(np.float32)
    check("CumProd", [x, np.array(axis, np.int64)], attrs, opset=26, oracle="reference", rtol=1e-6)
    ints = RNG.integers(-3, 4, (3, 4)).astype(np.int32)
    check("CumProd", [ints, np.array(axis % 2, np.int32)], attrs, opset=26, oracle="reference")


@pytest.mark.parametrize(("axis", "opset"), [(-1, 13), (0, 13), (2, 13), (1, 11), (0, 11), (2, 11)])
def test_hardmax_one_axis_and_coerced_2d(axis: int, opset: int) -> None:
    x = np.round(X, 0)  # ties: the first maximum wins
    # onnx.reference implements only opset 13's one-axis form
    check("Hardmax", [x], {"axis": axis}, opset=opset, oracle="both" if opset >= 13 else "onnxruntime")


@pytest.mark.parametrize(("p", "axis"), [(2, -1), (1, 0), (2, 1), (1, 3)])
def test_lp_normalization(p: int, axis: int) -> None:
    # onnx.reference's L1 norm sums x, not |x|: ORT (and the conformance cases) are the oracle there
    x = X.copy()
    x[0, 0, 0, :] = 0  # a zero row: 0, not NaN
    if p == 2:
        check("LpNormalization", [x], {"p": p, "axis": axis}, opset=22, oracle="reference", rtol=1e-6, atol=1e-7)
    check("LpNormalization", [X], {"p": p, "axis": axis}, opset=1, oracle="onnxruntime", rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("axes", [None, [0, 2, 3], [1], [2, 3], [-1, 0]])
def test_mean_variance_normalization(axes: list[int] | None) -> None:
    attrs = {} if axes is None else {"axes": axes}
    check("MeanVarianceNormalization", [X], attrs, opset=13, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("axes", "keepdims"), [(None, 1), ([1], 0), ([0, -1], 1), ([], 1)])
def test_reduce_log_sum(axes: list[int] | None, keepdims: int) -> None:
    x = np.abs(X) + 0.1
    ins: list[np.ndarray | None] = [x] if axes is None else [x, np.array(axes, np.int64)]
    shape_check("ReduceLogSum", ins, {"keepdims": keepdims}, opset=18, rtol=1e-6, atol=1e-6)
    attrs: dict[str, Any] = {"keepdims": keepdims} if not axes else {"keepdims": keepdims, "axes": axes}
    shape_check("ReduceLogSum", [x], attrs, opset=13, rtol=1e-6, atol=1e-6)
    (empty,) = run_ge("ReduceLogSum", [np.zeros((2, 0, 3), np.float32)], {"axes": [1]}, opset=13)
    assert empty.shape == (2, 1, 3) and np.isneginf(empty).all()  # log of an empty sum


def test_axis_ops_infer_errors() -> None:
    f32 = ((2, 3, 4), "float32")
    infer_error("CumProd", [f32, ((2,), "int64")], opset=26, match="axis must be a scalar")
    infer_error("CumProd", [f32, ((), "float32")], opset=26, match="axis must be int32 or int64")
    infer_error("CumProd", [f32, ((), "int64")], opset=26, values=[None, np.array(3)], match="axis=3 is out of range")
    infer_error("Hardmax", [f32], {"axis": 3}, match="axis=3 is out of range")
    infer_error("LpNormalization", [f32], {"p": 3}, opset=22, match="p=3 must be 1 or 2")
    infer_error("MeanVarianceNormalization", [f32], {"axes": [0, 4]}, opset=13, match="axes=4 is out of range")
    infer_error("Hardmax", [((2,), "int32")], match="must be one of")


def test_axis_ops_keep_the_shape_and_span_their_rows() -> None:
    for op, attrs in (("Hardmax", {"axis": 1}), ("LpNormalization", {"axis": 1}),
                      ("MeanVarianceNormalization", {})):
        opdef = REGISTRY.get(op)
        assert opdef is not None and opdef.category == Category.REDUCE and opdef.reduce_span is not None
        assert infer(op, [((2, -1, 4, 4), "float32")], attrs)[0].shape == (2, -1, 4, 4)
    from ge_core.ir.node import Node

    mvn = REGISTRY.get("MeanVarianceNormalization")
    assert mvn is not None and mvn.reduce_span is not None
    assert mvn.reduce_span(Node("n", "MeanVarianceNormalization", ("x",), ("y",)), (2, 4, 3, 5)) == 30


OPS = {*TRIG, "Shrink", "Swish", "CumProd", "Hardmax", "LpNormalization", "MeanVarianceNormalization",
       "ReduceLogSum"}


@pytest.mark.parametrize("case", cases_for(OPS), ids=lambda c: c.name)
def test_conformance(case: Any) -> None:
    run_case(case)
