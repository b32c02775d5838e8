"""Cast, CastLike and BitCast over every ONNX data type: inference, kernels against onnx.reference (every
pair of types, saturate on and off, E8M0's rounding modes, strings), and ONNX's conformance cases."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from ge_core.errors import ShapeError
from ge_core.ir.dtypes import DTYPES, dtype_bits
from ge_core.ops import REGISTRY
from ge_core.ops.cast import CASTABLE, SATURATING, cast_array
from ge_core.ops.registry import Category
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import decoded, infer, infer_error, run_ge

CODE = {d.name: d.onnx for d in DTYPES}
NUMBERS = sorted(n for n in CASTABLE if n != "str")
OPSET = onnx.defs.onnx_opset_version()  # float6 arrived at Cast 28; every other type is older
# Values every type has something to say about: fractions and ties, negatives, out-of-range magnitudes.
SOURCE = np.array([0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -3.5, 7.0, 0.3, 448.0, 1000.0, -60000.0, 1e-7], np.float32)


def same(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal dtype, shape and values, NaN equal to NaN (floats compared through float32)."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype == object:
        return bool(got.tolist() == want.tolist())
    if want.dtype.kind == "b" or (dtype_bits(want.dtype.name) < 8 and want.dtype.name.startswith(("int", "uint"))):
        return bool(np.array_equal(got.astype(np.int64), want.astype(np.int64)))
    return bool(np.array_equal(got.astype(np.float64), want.astype(np.float64), equal_nan=True))


def reference_cast(x: np.ndarray, to: str, **attrs: object) -> np.ndarray:
    node = helper.make_node("Cast", ["x"], ["y"], to=CODE[to], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", CODE[x.dtype.name], x.shape)],
                              [helper.make_tensor_value_info("y", CODE[to], x.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    return np.asarray(ReferenceEvaluator(model).run(None, {"x": x})[0])


def source(dtype: str) -> np.ndarray:
    with np.errstate(all="ignore"):
        return SOURCE.astype(dtype)


# ---- the Cast matrix -----------------------------------------------------------------------------
@pytest.mark.parametrize("src", NUMBERS)
def test_cast_matrix_matches_onnx_reference(src: str) -> None:
    """Every pair of numeric types, as onnx.reference (numpy/ml_dtypes conversions) computes them."""
    x = source(src)
    wrong = []
    for dst in NUMBERS:
        (got,) = run_ge("Cast", [x], {"to": CODE[dst]}, opset=OPSET)
        with np.errstate(all="ignore"):
            want = reference_cast(x, dst)
        if not same(got, want):
            wrong.append(f"{src}->{dst}: {got} != {want}")
    assert wrong == []


@pytest.mark.parametrize("src", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("dst", sorted(SATURATING))
@pytest.mark.parametrize("saturate", [0, 1])
def test_float8_saturate_matches_onnx_reference(src: str, dst: str, saturate: int) -> None:
    with np.errstate(over="ignore"):  # 1e6 is inf in float16
        x = np.array([0.0, -0.0, 1e6, -1e6, np.inf, -np.inf, np.nan, 0.4, 240.0, 57344.0, 1e-9], np.float32).astype(src)
    (got,) = run_ge("Cast", [x], {"to": CODE[dst], "saturate": saturate}, opset=OPSET)
    assert same(got, reference_cast(x, dst, saturate=saturate))
    info = ml_dtypes.finfo(dst)
    if saturate:  # the spec's table: out of range and infinities clip to +-max, NaN stays NaN
        assert float(got[2]) == float(info.max) and float(got[5]) == float(info.min) and np.isnan(float(got[6]))
    else:  # E5M2 overflows to inf, the others have none and give NaN
        assert np.isinf(float(got[4])) if dst == "float8_e5m2" else np.isnan(float(got[4]))


@pytest.mark.parametrize("mode", ["up", "down", "nearest"])
@pytest.mark.parametrize("saturate", [0, 1])
def test_e8m0_rounding_matches_onnx(mode: str, saturate: int) -> None:
    x = np.array([0.0, 0.124, 0.25, 0.5, 1.1, 1.5, 1.75, 2.0, 3.0, 4.0, 8.0, 3e38, np.inf, np.nan, 1e-40], np.float32)
    for src in ("float32", "float16"):
        with np.errstate(over="ignore"):  # 3e38 is inf in float16
            xs = x.astype(src)
        (got,) = run_ge("Cast", [xs], {"to": TensorProto.FLOAT8E8M0, "saturate": saturate, "round_mode": mode},
                        opset=OPSET)
        want = onnx.numpy_helper.to_float8e8m0(xs, saturate=bool(saturate), round_mode=mode)
        assert got.dtype == ml_dtypes.float8_e8m0fnu
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_bfloat16_rounds_to_nearest_even() -> None:
    x = np.array([1.0, 1.00390625, 1.005859375, 1.0078125 + 2**-8, -3.14159, 3.4e38, np.inf, np.nan, 1e-40],
                 np.float32)
    (got,) = run_ge("Cast", [x], {"to": TensorProto.BFLOAT16})
    assert got.dtype == ml_dtypes.bfloat16  # a real bfloat16 array, not float32 holding bfloat16 values
    assert got[0] == 1.0 and got[1] == 1.0  # a tie rounds down to the even mantissa...
    assert got[2] == 1.0078125 and got[3] == 1.015625  # ...or up to it
    assert np.isinf(got[5]) and np.isinf(got[6]) and np.isnan(got[7])
    np.testing.assert_array_equal(got.view(np.uint16), x.astype(ml_dtypes.bfloat16).view(np.uint16))


def test_cast_semantics() -> None:
    x = np.array([-2.7, -0.5, 0.0, 0.5, 2.7, np.nan], np.float32)
    assert run_ge("Cast", [x[:5]], {"to": TensorProto.INT32})[0].tolist() == [-2, 0, 0, 0, 2]  # toward zero
    assert run_ge("Cast", [x], {"to": TensorProto.BOOL})[0].tolist() == [True, True, False, True, True, True]
    (f16,) = run_ge("Cast", [np.array([65504.0, 1e6, 1.0 / 3], np.float64)], {"to": TensorProto.FLOAT16})
    assert f16.dtype == np.float16 and f16[0] == 65504 and f16[1] == np.inf
    (same_type,) = run_ge("Cast", [x], {"to": TensorProto.FLOAT})
    assert same_type is not x and same_type.flags.writeable  # always a fresh array
    (i4,) = run_ge("Cast", [np.array([-8, 7, 3], np.int8)], {"to": TensorProto.INT4})
    assert i4.dtype == ml_dtypes.int4 and i4.astype(np.int8).tolist() == [-8, 7, 3]


@pytest.mark.parametrize("dst", ["float32", "int8", "bfloat16", "float8_e4m3fn", "int4", "bool"])
def test_castlike_matches_onnx_reference(dst: str) -> None:
    x = source("float16")
    like = np.zeros((1,), dtype=dst)
    (got,) = run_ge("CastLike", [x, like], opset=OPSET)
    with np.errstate(all="ignore"):
        assert same(got, reference_cast(x, dst))


# ---- strings -------------------------------------------------------------------------------------
def test_numbers_to_strings() -> None:
    """Finite numbers print as onnx.reference prints them; NaN and the infinities as the spec's literals."""
    finite = np.array([0.47892547, -1.0, 1e20, 3.0e-5, 0.0], np.float32)
    (got,) = run_ge("Cast", [finite], {"to": TensorProto.STRING})
    assert got.dtype == object and got.tolist() == reference_cast(finite, "str").tolist()
    (special,) = run_ge("Cast", [np.array([np.nan, np.inf, -np.inf], np.float32)], {"to": TensorProto.STRING})
    assert special.tolist() == ["NaN", "INF", "-INF"]
    (ints,) = run_ge("Cast", [np.array([-9, 0, 2**40], np.int64)], {"to": TensorProto.STRING})
    assert ints.tolist() == ["-9", "0", str(2**40)]
    (bools,) = run_ge("Cast", [np.array([True, False])], {"to": TensorProto.STRING})
    assert bools.tolist() == ["True", "False"]


def test_strings_to_numbers() -> None:
    """Plain and scientific notation, and the special literals in any case (the spec's examples)."""
    texts = np.array(["3.14", "1000", "1e-5", "1E8", "+INF", "inf", "-INF", "NaN", "nan", " 2.5 "], dtype=object)
    (f32,) = run_ge("Cast", [texts], {"to": TensorProto.FLOAT})
    want = np.array([3.14, 1000, 1e-5, 1e8, np.inf, np.inf, -np.inf, np.nan, np.nan, 2.5], np.float32)
    assert f32.dtype == np.float32 and same(f32, want)
    (i64,) = run_ge("Cast", [np.array(["100.5", "-7", "9007199254740993"], dtype=object)], {"to": TensorProto.INT64})
    assert i64.tolist() == [100, -7, 9007199254740993]  # an integer text is taken whole, not via a double
    (flags,) = run_ge("Cast", [np.array(["0", "1", "true", "False", "2.5"], dtype=object)], {"to": TensorProto.BOOL})
    assert flags.tolist() == [False, True, True, False, True]
    (bf,) = run_ge("Cast", [np.array(["0.1", "1e6"], dtype=object)], {"to": TensorProto.FLOAT8E4M3FN})
    assert same(bf, np.clip(np.array([0.1, 1e6]), -448, 448).astype(ml_dtypes.float8_e4m3fn))  # saturated


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "uint8", "bool", "int4"])
def test_strings_round_trip(dtype: str) -> None:
    x = (SOURCE[:9] if dtype != "bool" else SOURCE[:9] > 0).astype(dtype)
    (text,) = run_ge("Cast", [x], {"to": TensorProto.STRING})
    (back,) = run_ge("CastLike", [text, np.zeros((1,), dtype)], opset=OPSET)
    assert same(back, x)


def test_a_string_that_is_no_number_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="hello"):
        cast_array(np.array(["hello"], dtype=object), "float32")


# ---- BitCast -------------------------------------------------------------------------------------
def reference_bitcast(x: np.ndarray, to: str) -> np.ndarray:
    node = helper.make_node("BitCast", ["x"], ["y"], to=CODE[to])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", CODE[x.dtype.name], x.shape)],
                              [helper.make_tensor_value_info("y", CODE[to], x.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])
    return np.asarray(ReferenceEvaluator(model).run(None, {"x": x})[0])


WIDE = [n for n in sorted(CASTABLE - {"str"}) if dtype_bits(n) >= 8] + ["complex64", "complex128"]


@pytest.mark.parametrize(("src", "dst"), [(a, b) for a, b in itertools.product(WIDE, WIDE)
                                          if a != b and dtype_bits(a) == dtype_bits(b) and b != "bool"])
def test_bitcast_matches_onnx_reference(src: str, dst: str) -> None:
    x = np.arange(12, dtype=np.uint8).view(np.uint8).reshape(3, 4) * 17
    x = np.repeat(x, dtype_bits(src) // 8, axis=1).view(src)  # bytes of every pattern width
    (got,) = run_ge("BitCast", [x], {"to": CODE[dst]}, opset=26)
    want = reference_bitcast(x, dst)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_bitcast_sub_byte_and_bool() -> None:
    (u4,) = run_ge("BitCast", [np.array([-1, 7, -8], ml_dtypes.int4)], {"to": TensorProto.UINT4}, opset=26)
    assert u4.dtype == ml_dtypes.uint4 and u4.astype(np.int64).tolist() == [15, 7, 8]
    (flags,) = run_ge("BitCast", [np.array([0, 1, 2], np.uint8)], {"to": TensorProto.BOOL}, opset=26)
    assert flags.tolist() == [False, True, True]
    (scalar,) = run_ge("BitCast", [np.array(1.0, np.float32)], {"to": TensorProto.INT32}, opset=26)
    assert scalar.shape == () and int(scalar) == 0x3F800000


# ---- inference -----------------------------------------------------------------------------------
def test_cast_infer() -> None:
    (out,) = infer("Cast", [((-1, 3), "float32")], {"to": TensorProto.INT64})
    assert out.shape == (-1, 3) and out.dtype == "int64"
    for d in DTYPES:
        if d.kind != "complex":
            assert infer("Cast", [((2,), "float32")], {"to": d.onnx}, opset=OPSET)[0].dtype == d.name
            assert infer("Cast", [((2,), d.name)], {"to": TensorProto.FLOAT}, opset=OPSET)[0].dtype == "float32"
    assert infer("CastLike", [((2, -1), "int8"), ((), "float8_e5m2")])[0].dtype == "float8_e5m2"
    infer_error("Cast", [((2,), "float32")], {"to": TensorProto.COMPLEX64}, match="Cast to complex64 is not")
    infer_error("Cast", [((2,), "complex64")], {"to": TensorProto.FLOAT}, match="the input must be one of")
    infer_error("Cast", [((2,), "float32")], {}, match="'to'")
    infer_error("Cast", [((2,), "float32")], {"to": TensorProto.FLOAT8E8M0, "round_mode": "odd"},
                match="round_mode")
    with pytest.raises(ShapeError, match="unknown ONNX data type code 999"):
        infer("Cast", [((2,), "float32")], {"to": 999})
    infer_error("CastLike", [((2,), "float32"), ((2,), "complex128")], match="target")


def test_bitcast_infer() -> None:
    assert infer("BitCast", [((2, 3), "float16")], {"to": TensorProto.BFLOAT16}, opset=26)[0].dtype == "bfloat16"
    assert infer("BitCast", [((5,), "int4")], {"to": TensorProto.FLOAT4E2M1}, opset=26)[0].shape == (5,)
    infer_error("BitCast", [((2,), "float32")], {"to": TensorProto.INT64}, opset=26, match="one bit width")
    infer_error("BitCast", [((2,), "int4")], {"to": TensorProto.INT8}, opset=26, match="4 bits, int8 8")
    infer_error("BitCast", [((2,), "str")], {"to": TensorProto.INT64}, opset=26, match="the input must be one of")


def test_categories() -> None:
    for op_type in ("Cast", "CastLike", "BitCast"):
        assert REGISTRY.get(op_type).category == Category.ELEMENTWISE  # type: ignore[union-attr]


# ---- ONNX conformance -----------------------------------------------------------------------------
CASES = cases_for({"Cast", "CastLike", "BitCast"})


def test_every_cast_conformance_case_is_here() -> None:
    assert len(CASES) >= 170  # 116 Cast (and its saturate/e8m0 variants), 56 CastLike, 10 BitCast


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_conformance(case) -> None:
    run_case(decoded(case))
