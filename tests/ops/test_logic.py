"""Logic ops: comparisons, boolean ops, IsNaN/IsInf, Where, Cast/CastLike, Identity, Dropout.
Inference (shapes, dtypes, unknown dims, errors), kernels against onnx.reference and ONNX Runtime, and
ONNX's conformance cases."""

from __future__ import annotations

import dataclasses
import re

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto

from ge_core.errors import ShapeError
from ge_core.ops import REGISTRY, activation, logic
from ge_core.ops import math as math_ops
from ge_core.ops.logic import round_to_bfloat16
from ge_core.ops.registry import Category
from tests.ops.conformance import all_cases, cases_for, run_case
from tests.ops.elementwise_oracle import bfloat16_as_float32, check, decoded, infer, infer_error, owner_of, run_ge

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


# ---- Cast / CastLike ------------------------------------------------------------------------------
CAST_DTYPES = ["float32", "float64", "float16", "int8", "int32", "int64", "uint8", "uint16", "bool"]


def _cast_source(dtype: str) -> np.ndarray:
    """Values every target can hold (casting out-of-range floats to ints is undefined in ONNX)."""
    values = np.array([[0.0, 1.0, 2.7, 99.5, 3.2, 0.49], [7.9, 0.0, 1.5, 42.0, 100.25, 5.5]])
    if dtype == "bool":
        return values > 2
    return values.astype(dtype)


@pytest.mark.parametrize("src", CAST_DTYPES)
@pytest.mark.parametrize("dst", CAST_DTYPES)
def test_cast_matrix(src: str, dst: str) -> None:
    to = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dst))
    x = _cast_source(src)
    check("Cast", [x], {"to": to}, opset=13, oracle="both" if "uint16" not in (src, dst) else "reference")
    like = np.zeros((1,), dtype=dst)
    check("CastLike", [x, like], opset=15, oracle="reference")


def test_cast_semantics() -> None:
    x = np.array([-2.7, -0.5, 0.0, 0.5, 2.7, np.nan], np.float32)
    assert run_ge("Cast", [x[:5]], {"to": TensorProto.INT32})[0].tolist() == [-2, 0, 0, 0, 2]  # toward zero
    assert run_ge("Cast", [x], {"to": TensorProto.BOOL})[0].tolist() == [True, True, False, True, True, True]
    (f16,) = run_ge("Cast", [np.array([65504.0, 1e6, 1.0 / 3], np.float64)], {"to": TensorProto.FLOAT16})
    assert f16.dtype == np.float16 and f16[0] == 65504 and f16[1] == np.inf
    (same,) = run_ge("Cast", [x], {"to": TensorProto.FLOAT})
    assert same is not x and same.flags.writeable  # always a fresh array


def test_cast_to_bfloat16_rounds_to_nearest_even() -> None:
    x = np.array([1.0, 1.00390625, 1.005859375, 1.0078125 + 2**-8, -3.14159, 3.4e38, np.inf, np.nan, 1e-40],
                 np.float32)
    (got,) = run_ge("Cast", [x], {"to": TensorProto.BFLOAT16})
    assert got.dtype == np.float32  # bfloat16 values held in float32
    assert got[0] == 1.0 and got[1] == 1.0  # a tie rounds down to the even mantissa...
    assert got[2] == 1.0078125 and got[3] == 1.015625  # ...or up to it
    assert got[5] == np.inf and got[6] == np.inf and np.isnan(got[7])
    want = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(got, want)
    wide = RNG.standard_normal(10_000).astype(np.float32) * 1e3
    np.testing.assert_array_equal(round_to_bfloat16(wide), wide.astype(ml_dtypes.bfloat16).astype(np.float32))


@pytest.mark.parametrize("name", ["test_cast_FLOAT_to_BFLOAT16", "test_cast_BFLOAT16_to_FLOAT"])
def test_cast_bfloat16_conformance_bits(name: str) -> None:
    """The op on the conformance data, without the executor (which cannot be fed bfloat16 inputs yet)."""
    (case,) = [c for c in all_cases() if c.name == name]
    assert case.data_sets is not None
    ((tensor_in,), (tensor_out,)) = case.data_sets[0]
    assert isinstance(tensor_in, TensorProto) and isinstance(tensor_out, TensorProto)
    x = bfloat16_as_float32(tensor_in)
    want = bfloat16_as_float32(tensor_out)
    (got,) = run_ge("Cast", [x], {"to": tensor_out.data_type}, opset=21)
    np.testing.assert_array_equal(got, want)


def test_cast_infer() -> None:
    (out,) = infer("Cast", [((-1, 3), "float32")], {"to": TensorProto.INT64})
    assert out.shape == (-1, 3) and out.dtype == "int64"
    assert infer("Cast", [((2,), "float32")], {"to": TensorProto.BFLOAT16})[0].dtype == "bfloat16"
    assert infer("CastLike", [((2, -1), "int8"), ((), "float16")])[0].dtype == "float16"
    infer_error("Cast", [((2,), "float32")], {"to": TensorProto.FLOAT8E4M3FN}, match="casting to float8")
    infer_error("Cast", [((2,), "float32")], {"to": TensorProto.STRING}, match="not supported")
    infer_error("Cast", [((2,), "float32")], {}, match="'to'")
    infer_error("Cast", [((2,), "str")], {"to": TensorProto.FLOAT}, match="the input must be one of")
    with pytest.raises(ShapeError, match="unknown ONNX data type code 999"):
        infer("Cast", [((2,), "float32")], {"to": 999})
    infer_error("CastLike", [((2,), "float32"), ((2,), "str")], match="target")


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
    assert cats["Not"] == cats["Cast"] == cats["IsNaN"] == Category.ELEMENTWISE
    d = infer("Identity", [((4, 8), "float32")])
    assert REGISTRY.get("Identity").cost(None, d, d).flops == 0  # type: ignore[union-attr,arg-type]


# ---- ONNX conformance -----------------------------------------------------------------------------
FAMILIES = [{o.op_type for o in m.OPS} for m in (activation, math_ops, logic)]
CASES = [c for c in cases_for(set().union(*FAMILIES)) if owner_of(c, FAMILIES) == 2]
# Deliberately unsupported, by case-name pattern (strict: a pass means the list is stale):
XFAIL = [
    # float8, 4-bit, 2-bit and e8m0 dtypes: not held by GE Workbench
    (r"FLOAT8|FLOAT4E2M1|INT4|UINT4|INT2|UINT2|e8m0", "float8/4-bit/2-bit dtypes are not supported"),
    # inference only: Dropout with training_mode=true and ratio > 0 is refused (zero_ratio cases pass)
    (r"^test_training_dropout(_default)?(_mask)?$", "Dropout training mode is not supported"),
    # sequences and optionals are not tensors
    (r"^test_identity_(sequence|opt)$", "sequence/optional types are not supported"),
    # Cast to bfloat16 (also inside the expanded CastLike) returns bfloat16 values in a float32 array, as the
    # frontend holds bfloat16 constants, while these cases expect ml_dtypes bfloat16 arrays: the dtype check
    # fails, deterministically. test_cast_bfloat16_conformance_bits checks the values bit for bit. Strict
    # too: once Cast returns ml_dtypes bfloat16 arrays these pass, and the entry must go.
    (r"^test_cast_FLOAT_to_BFLOAT16$|^test_castlike_FLOAT_to_BFLOAT16_expanded$",
     "bfloat16 results are held in float32 arrays"),
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
