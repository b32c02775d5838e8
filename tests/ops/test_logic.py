"""Logic ops: comparisons, boolean ops, IsNaN/IsInf, Where, Identity, Dropout (Cast: test_cast.py).
Inference (shapes, dtypes, unknown dims, errors), kernels against onnx.reference and ONNX Runtime, and
ONNX's conformance cases."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import onnx
import pytest

from ge_core.errors import ShapeError
from ge_core.ops import REGISTRY, activation, logic
from ge_core.ops import math as math_ops
from ge_core.ops.registry import Category
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import check, decoded, infer, infer_error, owner_of, run_ge

RNG = np.random.default_rng(2)
F = RNG.standard_normal((2, 3, 4)).astype(np.float32)
BROADCASTS = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((3, 1), (2, 1, 4)), ((), (3,))]


def _ints(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return np.asarray(RNG.integers(0, 4, size=shape)).astype(dtype)  # small range: many equal pairs


# ---- comparisons ----------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "int8", "uint8", "uint64"])
@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
def test_comparisons(op: str, dtype: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    a, b = _ints(shapes[0], dtype), _ints(shapes[1], dtype)
    oracle = "both" if dtype in ("float32", "float64", "int32", "int64") else "reference"
    check(op, [a, b], opset=16, oracle=oracle)


def test_comparisons_with_nan_and_equal_on_bool_and_strings() -> None:
    a, b = np.array([np.nan, 1.0, np.inf], np.float32), np.array([np.nan, np.nan, np.inf], np.float32)
    assert run_ge("Equal", [a, b])[0].tolist() == [False, False, True]
    assert run_ge("GreaterOrEqual", [a, b])[0].tolist() == [False, False, True]
    check("Equal", [np.array([True, False]), np.array([True, True])], opset=13)
    s1 = np.array(["a", "bc", ""], dtype=object)
    s2 = np.array(["a", "b", ""], dtype=object)
    (eq,) = run_ge("Equal", [s1, s2], opset=19)
    assert eq.dtype == bool and eq.tolist() == [True, False, True]


def test_comparison_infer() -> None:
    (out,) = infer("Less", [((-1, 3), "float32"), ((1, -1), "float32")])
    assert out.shape == (-1, 3) and out.dtype == "bool"
    assert infer("Equal", [((2,), "str"), ((), "str")], opset=19)[0].dtype == "bool"
    infer_error("Greater", [((2,), "float32"), ((2,), "int32")], match="share one dtype")
    infer_error("Greater", [((2,), "bool"), ((2,), "bool")], match="must be one of")
    infer_error("Equal", [((2, 3), "int64"), ((2, 2), "int64")], match="cannot broadcast")


# ---- boolean ops ----------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
def test_boolean_binary(op: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    a, b = RNG.random(shapes[0]) < 0.5, RNG.random(shapes[1]) < 0.5
    check(op, [np.asarray(a), np.asarray(b)], opset=7)


def test_not_and_bool_infer() -> None:
    check("Not", [RNG.random((3, 4)) < 0.5], opset=1)
    assert infer("Not", [((-1, 2), "bool")])[0].shape == (-1, 2)
    infer_error("And", [((2,), "bool"), ((2,), "int32")], match="share one dtype")
    infer_error("Or", [((2,), "int32"), ((2,), "int32")], match="must be one of")
    infer_error("Not", [((2,), "float32")], match="must be one of")


# ---- IsNaN / IsInf --------------------------------------------------------------------------------
SPECIAL = np.array([[np.nan, np.inf, -np.inf, 0.0, -1.5, 3.0e38]], np.float32)


def _special(dtype: str) -> np.ndarray:
    with np.errstate(over="ignore"):  # 3e38 becomes inf in float16, on purpose
        return SPECIAL.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("attrs", [{}, {"detect_negative": 0}, {"detect_positive": 0},
                                   {"detect_negative": 0, "detect_positive": 0}])
def test_isinf(dtype: str, attrs: dict[str, int]) -> None:
    oracle = "reference" if dtype == "float16" else "both"
    check("IsInf", [_special(dtype)], attrs, opset=20, oracle=oracle)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_isnan(dtype: str) -> None:
    check("IsNaN", [_special(dtype)], opset=20, oracle="reference" if dtype == "float16" else "both")


def test_isnan_isinf_infer() -> None:
    for op in ("IsNaN", "IsInf"):
        (out,) = infer(op, [((-1, 3), "float16")])
        assert out.shape == (-1, 3) and out.dtype == "bool"
        infer_error(op, [((2,), "int32")], match="must be one of")


# ---- Where ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "int64", "int8", "bool", "float16"])
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3), (2, 3)), ((3,), (2, 1), ()), ((1, 3), (2, 1, 1), (3,))],
                         ids=str)
def test_where(dtype: str, shapes: tuple[tuple[int, ...], ...]) -> None:
    cond = np.asarray(RNG.random(shapes[0]) < 0.5)
    x, y = (np.asarray(RNG.integers(0, 5, s)).astype(dtype) for s in shapes[1:])
    check("Where", [cond, x, y], opset=16, oracle="both" if dtype in ("float32", "int64") else "reference")


def test_where_strings_and_infer() -> None:
    x, y = np.array(["a", "b"], dtype=object), np.array(["c"], dtype=object)
    (out,) = run_ge("Where", [np.array([True, False]), x, y], opset=16)
    assert out.tolist() == ["a", "c"]
    (d,) = infer("Where", [((-1, 1), "bool"), ((1, 4), "float32"), ((), "float32")])
    assert d.shape == (-1, 4) and d.dtype == "float32"
    infer_error("Where", [((2,), "int32"), ((2,), "float32"), ((2,), "float32")], match="condition")
    infer_error("Where", [((2,), "bool"), ((2,), "float32"), ((2,), "float64")], match="share one dtype")
    infer_error("Where", [((2,), "bool"), ((3,), "float32"), ((2,), "float32")], match="cannot broadcast")


# ---- Identity / Dropout ---------------------------------------------------------------------------
def test_identity() -> None:
    for x in (F, np.array([True, False]), np.array(["x", "y"], dtype=object), np.array(3, np.int64)):
        (out,) = run_ge("Identity", [x], opset=16)
        assert out.dtype == x.dtype and np.array_equal(out, x)
    assert infer("Identity", [((-1, 2), "str")])[0].shape == (-1, 2)


@pytest.mark.parametrize("opset", [10, 11])
def test_dropout_ratio_attribute(opset: int) -> None:
    # ORT reports an all-False mask for Dropout-10/11 in inference; onnx.reference (and opset 12+ ORT) all-True
    check("Dropout", [F], {"ratio": 0.3}, opset=opset, n_outputs=2, oracle="reference")
    check("Dropout", [F], {"ratio": 0.3}, opset=opset, n_outputs=1)
    check("Dropout", [F], {}, opset=opset, n_outputs=1)


@pytest.mark.parametrize("opset", [12, 13, 22])
def test_dropout_ratio_input(opset: int) -> None:
    ratio = np.array(0.4, np.float32)
    check("Dropout", [F, ratio], opset=opset, n_outputs=2)
    check("Dropout", [F], opset=opset, n_outputs=2)
    # training mode with a zero ratio is the identity too
    check("Dropout", [F, np.array(0.0, np.float32), np.array(True)], opset=opset, n_outputs=2)
    check("Dropout", [F, ratio, np.array(False)], opset=opset, n_outputs=2)


def test_dropout_mask_dtype_by_opset() -> None:
    assert [d.dtype for d in infer("Dropout", [((2, -1), "float32")], opset=9, n_outputs=2)] == \
        ["float32", "float32"]
    (_, mask) = run_ge("Dropout", [F], opset=9, n_outputs=2)
    assert mask.dtype == np.float32 and (mask == 1).all()
    (_, mask) = run_ge("Dropout", [F], opset=13, n_outputs=2)
    assert mask.dtype == bool and mask.all()


def test_dropout_training_mode_is_refused() -> None:
    descs = [(F.shape, "float32"), ((), "float32"), ((), "bool")]
    err = infer_error("Dropout", descs, opset=13, values=[None, np.array(0.5, np.float32), np.array(True)],
                      match="training mode")
    assert "not supported" in str(err)
    # no ratio given: the default 0.5 applies
    infer_error("Dropout", [descs[0], None, descs[2]], opset=13, values=[None, None, np.array(True)],
                match="training mode")
    # unknown at inference time: the kernel refuses
    with pytest.raises(ShapeError, match="training mode"):
        run_ge("Dropout", [F, np.array(0.5, np.float32), np.array(True)], opset=13)
    # known training flag, ratio zero: fine
    infer("Dropout", descs, opset=13, values=[None, np.array(0.0, np.float32), np.array(True)])


def test_dropout_infer_errors() -> None:
    infer_error("Dropout", [((2,), "float32"), ((), "float32")], opset=13,
                values=[None, np.array(1.5, np.float32)], match=r"ratio must be in \[0, 1\)")
    infer_error("Dropout", [((2,), "float32")], {"ratio": -0.1}, opset=10, match="ratio must be")
    infer_error("Dropout", [((2,), "int32")], opset=13, match="must be one of")
    infer_error("Dropout", [((2,), "float32"), ((), "float32")], opset=10, match="expects 1 inputs")


def test_categories() -> None:
    cats = {o.op_type: o.category for o in logic.OPS}
    assert cats["Identity"] == Category.INJECTIVE and cats["Dropout"] == Category.INJECTIVE
    assert cats["Where"] == cats["Equal"] == cats["And"] == Category.BROADCAST
    assert cats["Not"] == cats["IsNaN"] == Category.ELEMENTWISE
    d = infer("Identity", [((4, 8), "float32")])
    assert REGISTRY.get("Identity").cost(None, d, d).flops == 0  # type: ignore[union-attr,arg-type]


# ---- ONNX conformance -----------------------------------------------------------------------------
FAMILIES = [{o.op_type for o in m.OPS} for m in (activation, math_ops, logic)]
CASES = [c for c in cases_for(set().union(*FAMILIES)) if owner_of(c, FAMILIES) == 2]
# Deliberately unsupported, by case-name pattern (strict: a pass means the list is stale):
XFAIL = [
    # inference only: Dropout with training_mode=true and ratio > 0 is refused (zero_ratio cases pass)
    (r"^test_training_dropout(_default)?(_mask)?$", "Dropout training mode is not supported"),
    # sequences and optionals are not tensors
    (r"^test_identity_(sequence|opt)$", "sequence/optional types are not supported"),
]


def _param(case):
    reason = next((r for pattern, r in XFAIL if re.search(pattern, case.name)), None)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(case, id=case.name, marks=marks)


def test_every_xfail_pattern_matches_a_case() -> None:
    assert [p for p, _ in XFAIL if not any(re.search(p, c.name) for c in CASES)] == []


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_conformance(case) -> None:
    case = decoded(case)
    if case.model.opset_import[0].version < 9:
        # And/Or/Xor/Not cases are written against opsets 1/7, below what the frontend reads (9+):
        # upgrade them as the frontend's error message advises, then run.
        case = dataclasses.replace(case, model=onnx.version_converter.convert_version(case.model, 13))
    run_case(case)
