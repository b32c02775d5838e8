"""Activation ops: inference (shapes, dtypes, unknown dims, errors), kernels against onnx.reference and
ONNX Runtime, erf accuracy, and ONNX's conformance cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ge_core.ops import REGISTRY, activation, logic
from ge_core.ops import math as math_ops
from ge_core.ops.activation import erf
from ge_core.ops.registry import Category
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import check, decoded, infer, infer_error, owner_of, reference, run_ge

RNG = np.random.default_rng(0)
X = (RNG.standard_normal((2, 3, 4, 5)) * 3).astype(np.float32)

# (op, attrs, opset) run on float32 and float16 against both oracles.
UNARY_CASES = [
    ("Relu", {}, 14),
    ("Sigmoid", {}, 13),
    ("Tanh", {}, 13),
    ("HardSigmoid", {}, 6),
    ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}, 22),
    ("HardSwish", {}, 14),
    ("LeakyRelu", {}, 16),
    ("LeakyRelu", {"alpha": 0.2}, 9),
    ("Elu", {}, 6),
    ("Elu", {"alpha": 0.5}, 22),
    ("Selu", {}, 6),
    ("Selu", {"alpha": 2.0, "gamma": 3.0}, 22),
    ("Celu", {}, 12),
    ("Celu", {"alpha": 2.0}, 12),
    ("Softplus", {}, 1),
    ("Softsign", {}, 1),
    ("Gelu", {}, 20),
    ("Gelu", {"approximate": "tanh"}, 20),
    ("Mish", {}, 18),
    ("ThresholdedRelu", {}, 10),
    ("ThresholdedRelu", {"alpha": 0.5}, 22),
    ("Erf", {}, 13),
]


def _id(case: tuple[str, dict[str, object], int]) -> str:
    op, attrs, opset = case
    return f"{op}-{opset}-" + ",".join(f"{k}={v}" for k, v in attrs.items())


@pytest.mark.parametrize("case", UNARY_CASES, ids=_id)
def test_unary_float32_matches_oracles(case: tuple[str, dict[str, object], int]) -> None:
    op, attrs, opset = case
    opset = max(opset, 13) if op != "Gelu" else opset  # ORT lacks some very old versions; attrs are the same
    check(op, [X], attrs, opset, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("case", UNARY_CASES, ids=_id)
def test_unary_float16_and_float64(case: tuple[str, dict[str, object], int]) -> None:
    op, attrs, opset = case
    opset = max(opset, 13) if op != "Gelu" else opset
    # onnx.reference expands the function ops HardSwish and Gelu with float32 constants (1/6, 0.044715...)
    # and computes Erf in float32: those float64 results are checked against math.erf below instead
    if op not in ("Erf", "Gelu") or attrs:
        rtol = 1e-6 if op in ("HardSwish", "Gelu") else 1e-12
        check(op, [X.astype(np.float64)], attrs, opset, oracle="reference", rtol=rtol, atol=1e-13)
    # float16: we compute in float32 and round once; the oracle is the float64 result rounded to float16
    # (onnx.reference itself fails on float16 for some ops, e.g. HardSigmoid returns float32)
    x16 = X.astype(np.float16)
    (got,) = run_ge(op, [x16], attrs, opset)
    (want,) = reference(op, [x16.astype(np.float64)], attrs, opset)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float16), rtol=1e-3, atol=1e-4)


def test_extreme_values_do_not_overflow() -> None:
    x = np.array([-1e30, -100.0, -0.0, 0.0, 100.0, 1e30, np.inf, -np.inf, np.nan], dtype=np.float32)
    (sig,) = run_ge("Sigmoid", [x])
    np.testing.assert_allclose(sig[:-1], [0, 3.7835e-44, 0.5, 0.5, 1, 1, 1, 0], rtol=1e-3, atol=0)
    assert np.isnan(sig[-1])
    (sp,) = run_ge("Softplus", [x])
    np.testing.assert_allclose(sp[:6], [0, 3.7835e-44, math.log(2), math.log(2), 100, 1e30], rtol=1e-4)
    (mish,) = run_ge("Mish", [x])
    np.testing.assert_allclose(mish[:6], [0, 0, 0, 0, 100, 1e30], rtol=1e-6, atol=1e-30)
    for op in ("Elu", "Selu", "Celu", "Gelu"):
        (y,) = run_ge(op, [x[:6]])
        assert np.all(np.isfinite(y)), op


def test_relu_integers() -> None:
    x = np.array([[-3, 0, 5], [127, -128, 1]], dtype=np.int8)
    check("Relu", [x], opset=14, oracle="reference")  # ORT has no int8 Relu kernel
    check("Relu", [x.astype(np.int32)], opset=14)


# ---- Clip -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("opset", [11, 12, 13])
@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (None, 0.5), (-0.5, None), (None, None), (2.0, -2.0)])
def test_clip_bound_inputs(opset: int, bounds: tuple[float | None, float | None]) -> None:
    lo, hi = (None if b is None else np.array(b, dtype=np.float32) for b in bounds)
    inputs = [X, lo, hi] if hi is not None else ([X, lo] if lo is not None else [X])
    check("Clip", inputs, opset=opset)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.float64, np.float16])
def test_clip_dtypes(dtype: type) -> None:
    x: np.ndarray = np.array([[0, 3, 7, 100], [1, 2, 9, 50]]).astype(dtype)
    check("Clip", [x, np.array(2, dtype=dtype), np.array(8, dtype=dtype)], opset=13)
    check("Clip", [x, None, np.array(8, dtype=dtype)], opset=13)


@pytest.mark.parametrize("attrs", [{"min": -1.0, "max": 1.0}, {"min": 0.0}, {"max": 0.5}, {}])
def test_clip_attributes_before_opset_11(attrs: dict[str, float]) -> None:
    check("Clip", [X], attrs, opset=6, oracle="reference")
    (got,) = run_ge("Clip", [X], attrs, opset=10)
    np.testing.assert_array_equal(got, np.clip(X, attrs.get("min", -np.inf), attrs.get("max", np.inf)))


def test_clip_bound_of_shape_one() -> None:
    (got,) = run_ge("Clip", [X, np.array([-1.0], np.float32), np.array([1.0], np.float32)], opset=13)
    assert got.shape == X.shape and got.max() == 1.0 and got.min() == -1.0


def test_clip_infer_errors() -> None:
    f32 = ((2, 3), "float32")
    infer_error("Clip", [f32, ((), "float64")], opset=13, match="min must have the input's dtype float32")
    infer_error("Clip", [f32, None, ((3,), "float32")], opset=13, match="max must be a scalar")
    infer_error("Clip", [((2, 3), "bool")], opset=13, match="must be one of")
    infer_error("Clip", [f32, ((), "float32")], opset=10, match="expects 1 inputs, got 2")
    assert infer("Clip", [((-1, 3), "int32"), ((), "int32")], opset=13)[0].shape == (-1, 3)


# ---- PRelu ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("slope_shape", [(1,), (5,), (4, 1), (3, 1, 1), (1, 3, 4, 5), ()])
def test_prelu_slope_broadcast(slope_shape: tuple[int, ...]) -> None:
    slope = RNG.standard_normal(slope_shape).astype(np.float32)
    check("PRelu", [X, slope], opset=16)


def test_prelu_integers_and_opset9() -> None:
    check("PRelu", [np.array([[-4, 3], [5, -6]], np.int32), np.array([2, 3], np.int32)], opset=16)
    check("PRelu", [X, np.array([0.25], np.float32)], opset=9, oracle="reference")


def test_prelu_infer() -> None:
    assert infer("PRelu", [((-1, 3, 8, 8), "float32"), ((3, 1, 1), "float32")])[0].shape == (-1, 3, 8, 8)
    # an unknown dim is known from the slope when the slope decides it
    assert infer("PRelu", [((2, -1), "float32"), ((5,), "float32")])[0].shape == (2, 5)
    infer_error("PRelu", [((2, 3), "float32"), ((4,), "float32")], match="cannot broadcast")
    infer_error("PRelu", [((2, 1), "float32"), ((3,), "float32")], match="without changing it")
    infer_error("PRelu", [((3,), "float32"), ((2, 3), "float32")], match="without changing it")
    infer_error("PRelu", [((3,), "float32"), ((3,), "float16")], match="share one dtype")


# ---- inference ------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", [o.op_type for o in activation.OPS if o.op_type not in ("Clip", "PRelu")])
def test_unary_infer_keeps_shape_and_dtype(op: str) -> None:
    for dtype in ("float32", "float16", "float64", "bfloat16"):
        (out,) = infer(op, [((-1, 3, -1), dtype)], opset=20)
        assert out.shape == (-1, 3, -1) and out.dtype == dtype
    (scalar,) = infer(op, [((), "float32")], opset=20)
    assert scalar.shape == ()


@pytest.mark.parametrize("op", ["Sigmoid", "Tanh", "Elu", "Gelu", "Softplus", "HardSwish", "LeakyRelu"])
def test_float_only_ops_refuse_integers(op: str) -> None:
    infer_error(op, [((2, 3), "int64")], opset=20, match="inputs must be one of")


def test_infer_errors() -> None:
    infer_error("Relu", [((2,), "uint8")], match="got uint8")
    infer_error("Relu", [((2,), "float32"), ((2,), "float32")], match="expects 1 inputs, got 2")
    infer_error("Gelu", [((2,), "float32")], {"approximate": "fast"}, opset=20, match="'none' or 'tanh'")


def test_categories_and_costs() -> None:
    for op in activation.OPS:
        want = Category.BROADCAST if op.op_type == "PRelu" else Category.ELEMENTWISE
        assert op.category == want, op.op_type
    d = infer("Gelu", [((2, 8), "float32")], opset=20)
    cost = REGISTRY.get("Gelu").cost(None, d, d)  # type: ignore[union-attr,arg-type]
    assert cost.flops == 8 * 16 and cost.bytes_read == 64 and cost.bytes_written == 64


# ---- erf ------------------------------------------------------------------------------------------
def test_erf_matches_math_erf() -> None:
    xs = np.concatenate([np.linspace(-7, 7, 20001), np.logspace(-40, 1.5, 2000), -np.logspace(-40, 1.5, 2000),
                         [2.4999999, 2.5, 2.5000001, 1e300, -1e300]])
    want = np.array([math.erf(v) for v in xs])
    got = erf(xs)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    assert erf(np.array([np.inf, -np.inf])).tolist() == [1.0, -1.0]
    assert np.isnan(erf(np.array([np.nan])))[0]
    assert np.signbit(erf(np.array([-0.0])))[0]


def test_erf_and_gelu_float64() -> None:
    x = X.astype(np.float64).reshape(-1)
    exact = np.array([math.erf(v) for v in x])
    (got,) = run_ge("Erf", [x], opset=13)
    np.testing.assert_allclose(got, exact, rtol=1e-13, atol=0)
    (gelu,) = run_ge("Gelu", [x], opset=20)
    np.testing.assert_allclose(gelu, 0.5 * x * (1 + np.array([math.erf(v / math.sqrt(2)) for v in x])),
                               rtol=1e-13, atol=1e-14)  # 1 + erf cancels for x << 0 in both


def test_erf_float32_accuracy() -> None:
    x = RNG.standard_normal(100_000).astype(np.float32) * 3
    (got,) = run_ge("Erf", [x], opset=13)
    want = np.array([math.erf(v) for v in x.astype(np.float64)]).astype(np.float32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1.2e-7, atol=0)


def test_erf_integer_input() -> None:
    x = np.array([-3, -1, 0, 1, 9], dtype=np.int64)
    check("Erf", [x], opset=13, oracle="reference")  # ORT refuses integer Erf, ONNX allows it


# ---- ONNX conformance -----------------------------------------------------------------------------
FAMILIES = [{o.op_type for o in m.OPS} for m in (activation, math_ops, logic)]
CASES = [c for c in cases_for(set().union(*FAMILIES)) if owner_of(c, FAMILIES) == 0]
# Every case runs: no activations variant is deliberately unsupported (the unsupported Cast dtypes, training
# Dropout and sequence Identity cases are listed in test_logic.py).


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_conformance(case) -> None:
    run_case(decoded(case))
