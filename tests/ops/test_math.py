"""Arithmetic ops: inference (broadcasting, unknown dims, dtype rules, errors), kernels against
onnx.reference and ONNX Runtime over dtypes, broadcasting and opsets, and ONNX's conformance cases."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ge_core.ops import REGISTRY, activation, logic
from ge_core.ops import math as math_ops
from ge_core.ops.registry import Category
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import check, decoded, infer, infer_error, owner_of, run_ge

RNG = np.random.default_rng(1)
# dtypes ORT has kernels for in every binary arithmetic op; the others are checked against onnx.reference
ORT_DTYPES = {"float32", "float64", "int32", "int64"}


def _rand(shape: tuple[int, ...], dtype: str, *, low: int = -50, high: int = 50) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        return np.asarray(RNG.standard_normal(shape) * 10).astype(dtype)
    info = np.iinfo(dtype)
    return np.asarray(RNG.integers(max(low, info.min), min(high, info.max), size=shape)).astype(dtype)


def _oracle(dtype: str) -> str:
    return "both" if dtype in ORT_DTYPES else "reference"


BROADCASTS = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3)), ((1,), ())]
DTYPES = ["float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "uint32", "uint64"]


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
def test_add_sub_mul(op: str, dtype: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    a, b = _rand(shapes[0], dtype), _rand(shapes[1], dtype)
    check(op, [a, b], opset=14, oracle=_oracle(dtype), rtol=1e-3 if dtype == "float16" else 1e-6)


def test_integer_arithmetic_wraps() -> None:
    a, b = np.array([100, -128, 127], np.int8), np.array([100, -1, 1], np.int8)
    (s,) = run_ge("Add", [a, b])
    (d,) = run_ge("Sub", [a, b])
    (m,) = run_ge("Mul", [a, b])
    assert s.tolist() == [-56, 127, -128] and d.tolist() == [0, -127, 126] and m.tolist() == [16, -128, 127]
    (scalar,) = run_ge("Add", [np.array(250, np.uint8), np.array(10, np.uint8)])
    assert scalar.shape == () and scalar.dtype == np.uint8 and int(scalar) == 4


@pytest.mark.parametrize("dtype", DTYPES)
def test_div(dtype: str) -> None:
    a = _rand((3, 4), dtype)
    b = _rand((4,), dtype, low=1)  # nonzero divisors (and positive for unsigned)
    if np.dtype(dtype).kind == "i":
        b = np.where(RNG.random(4) < 0.5, -b, b).astype(dtype)
    check("Div", [a, b], opset=14, oracle=_oracle(dtype), rtol=1e-3 if dtype == "float16" else 1e-6)


def test_integer_div_truncates_toward_zero() -> None:
    a = np.array([7, -7, 7, -7, 6, -6, 0], np.int32)
    b = np.array([2, 2, -2, -2, 3, -3, 5], np.int32)
    (q,) = run_ge("Div", [a, b])
    assert q.tolist() == [3, -3, -3, 3, 2, 2, 0]
    check("Div", [a, b], opset=13)
    big = np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min + 1], np.int64)
    check("Div", [big, np.array([-3, 7], np.int64)], opset=13)  # no float round trip


def test_float_div_by_zero_is_ieee() -> None:
    (q,) = run_ge("Div", [np.array([1.0, -1.0, 0.0], np.float32), np.zeros(3, np.float32)])
    assert q[0] == np.inf and q[1] == -np.inf and np.isnan(q[2])


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "uint64", "float32", "float64"])
def test_mod(fmod: int, dtype: str) -> None:
    a = _rand((3, 5), dtype)
    b = _rand((5,), dtype, low=1)
    if np.dtype(dtype).kind == "i":
        b = np.array([3, -3, 7, -7, 1], dtype=dtype)
    if np.dtype(dtype).kind == "f" and not fmod:
        check("Mod", [a, b], {"fmod": fmod}, opset=13, oracle="reference")  # float fmod=0 is opset-28 ONNX
        return
    check("Mod", [a, b], {"fmod": fmod}, opset=13, oracle=_oracle(dtype))


def test_mod_signs() -> None:
    a, b = np.array([-7, 7, -7, 7], np.int32), np.array([3, -3, -3, 3], np.int32)
    assert run_ge("Mod", [a, b])[0].tolist() == [2, -2, -1, 1]  # sign of the divisor
    assert run_ge("Mod", [a, b], {"fmod": 1})[0].tolist() == [-1, 1, -1, 1]  # sign of the dividend


POW_TYPES = [("float32", "float32"), ("float32", "int64"), ("float32", "int32"), ("float64", "float32"),
             ("int64", "float32"), ("int32", "float32"), ("int64", "int64"), ("int32", "int32"),
             ("float16", "float16")]


@pytest.mark.parametrize("types", POW_TYPES, ids=lambda t: f"{t[0]}^{t[1]}")
def test_pow_types(types: tuple[str, str]) -> None:
    base_t, exp_t = types
    base = np.abs(_rand((2, 3), base_t, low=0, high=6)) if base_t != "float16" else \
        (RNG.random((2, 3)) * 3).astype(base_t)
    if np.dtype(base_t).kind == "f":
        base = np.abs(base)
    exponent = _rand((3,), exp_t, low=0, high=4) if np.dtype(exp_t).kind in "iu" else \
        (RNG.random(3) * 3).astype(exp_t)
    oracle = "reference" if "float16" in types else "both"
    check("Pow", [base, exponent], opset=15, oracle=oracle, rtol=1e-3 if base_t == "float16" else 1e-6)


def test_pow_integer_edge_cases() -> None:
    base = np.array([2, -2, 1, -1, -1, 3, 0], np.int64)
    exponent = np.array([10, 3, -5, -3, -2, -1, 0], np.int64)
    (got,) = run_ge("Pow", [base, exponent], opset=15)
    assert got.tolist() == [1024, -8, 1, -1, 1, 0, 1]
    (wrap,) = run_ge("Pow", [np.array([3], np.int32), np.array([40], np.int64)], opset=15)
    assert wrap.dtype == np.int32 and int(wrap[0]) == int(np.array(3**40).astype(np.int64).astype(np.int32))
    (flt,) = run_ge("Pow", [np.array([4, 9], np.int32), np.array([0.5, 1.5], np.float32)], opset=15)
    assert flt.tolist() == [2, 27] and flt.dtype == np.int32


# ---- variadic -------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["Max", "Min", "Sum", "Mean"])
@pytest.mark.parametrize("shapes", [[(3, 4)], [(3, 4), (4,)], [(2, 1, 4), (3, 1), ()], [(2,), (2,), (2,), (2,)]],
                         ids=str)
@pytest.mark.parametrize("opset", [8, 13])
def test_variadic(op: str, shapes: list[tuple[int, ...]], opset: int) -> None:
    inputs = [_rand(s, "float32") for s in shapes]
    # onnx.reference's Mean accumulates in place into the first input and fails when that one broadcasts
    oracle = "onnxruntime" if op == "Mean" and len(shapes) == 3 else "both"
    check(op, inputs, opset=opset, oracle=oracle, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op", ["Max", "Min", "Sum"])
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint16", "float16", "float64"])
def test_variadic_dtypes(op: str, dtype: str) -> None:
    inputs = [_rand((2, 3), dtype), _rand((3,), dtype), _rand((2, 1), dtype)]
    oracle = "reference" if op == "Sum" and dtype not in ("float64",) else _oracle(dtype)
    check(op, inputs, opset=13, oracle=oracle, rtol=1e-3 if dtype == "float16" else 1e-6)


def test_variadic_nan_propagates_and_single_input_is_a_copy() -> None:
    a, b = np.array([1.0, np.nan], np.float32), np.array([np.nan, 0.0], np.float32)
    for op in ("Max", "Min"):
        (out,) = run_ge(op, [a, b])
        assert np.isnan(out).all()
    (one,) = run_ge("Sum", [a])
    assert one is not a and np.array_equal(one, a, equal_nan=True)


# ---- unary ----------------------------------------------------------------------------------------
UNARY = ["Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos"]


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")  # onnx.reference's float16 Exp overflows
def test_unary_float(op: str, dtype: str) -> None:
    x = _rand((3, 4, 5), dtype)
    if op in ("Sqrt", "Log"):
        x = np.abs(x) + np.asarray(0.1, dtype)
    oracle = "reference" if dtype == "float16" else "both"
    check(op, [x], opset=13, oracle=oracle, rtol=1e-3 if dtype == "float16" else 1e-6)


def test_unary_special_values() -> None:
    (r,) = run_ge("Round", [np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, np.nan], np.float32)])
    np.testing.assert_array_equal(r, [0, 2, 2, -0.0, -2, -2, 2, np.nan])  # halves go to even
    (s,) = run_ge("Sign", [np.array([-2.0, -0.0, 0.0, 3.0, np.nan], np.float32)])
    np.testing.assert_array_equal(s, [-1, 0, 0, 1, np.nan])
    (lg,) = run_ge("Log", [np.array([0.0, -1.0], np.float32)])
    assert lg[0] == -np.inf and np.isnan(lg[1])
    (rc,) = run_ge("Reciprocal", [np.array([0.0, -0.0], np.float32)])
    assert rc.tolist() == [np.inf, -np.inf]


@pytest.mark.parametrize("op", ["Neg", "Abs", "Sign"])
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_unary_integers(op: str, dtype: str) -> None:
    x = np.array([[np.iinfo(dtype).min + 1, -5, 0, 7]], dtype=dtype)
    check(op, [x], opset=13, oracle="reference")


def test_abs_sign_unsigned_and_neg_wraps() -> None:
    x = np.array([0, 3, 255], np.uint8)
    assert run_ge("Abs", [x])[0].tolist() == [0, 3, 255]
    assert run_ge("Sign", [x])[0].tolist() == [0, 1, 1]
    assert run_ge("Neg", [np.array([-128, 5], np.int8)])[0].tolist() == [-128, -5]


# The oracle: numpy arithmetic on ml_dtypes bfloat16 arrays (each op computed in float32, rounded to nearest
# bfloat16). Exp may differ by one bfloat16 ulp: numpy's float32 exp is not correctly rounded (e.g. exp(6.84375)
# = 938.00005 is 938.0 in numpy's float32, a tie that rounds to 936, where ml_dtypes rounds to 940).
BF16_ORACLE = {"Add": (np.add, 0.0), "Mul": (np.multiply, 0.0), "Div": (np.divide, 0.0), "Max": (np.maximum, 0.0),
               "Sqrt": (np.sqrt, 0.0), "Exp": (np.exp, 2.0**-7), "Round": (np.rint, 0.0), "Abs": (np.abs, 0.0)}


@pytest.mark.parametrize("op", list(BF16_ORACLE))
def test_fed_bfloat16_arrays_keep_their_container(op: str) -> None:
    """Feeds may be ml_dtypes bfloat16 arrays: kernels compute them and keep the dtype, with ml_dtypes'
    bfloat16 results."""
    oracle, rtol = BF16_ORACLE[op]
    x = (np.abs(_rand((8, 16), "float32")) / 2 + 0.1).astype(ml_dtypes.bfloat16)  # Exp stays finite
    y = _rand((8, 16), "float32").astype(ml_dtypes.bfloat16)
    inputs = [x] if op in UNARY else [x, y]
    (got,) = run_ge(op, inputs, opset=13)
    want = oracle(*inputs)
    assert got.dtype == ml_dtypes.bfloat16 and want.dtype == ml_dtypes.bfloat16
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=rtol, atol=0)


def test_graph_with_unknown_batch_runs_like_onnxruntime() -> None:
    """Through the frontend and executor: a symbolic batch dim flows through inference as -1."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    import ge_core

    nodes = [helper.make_node("Add", ["x", "b"], ["s"]), helper.make_node("Sqrt", ["s"], ["r"]),
             helper.make_node("Max", ["r", "x", "b"], ["m"]), helper.make_node("Pow", ["m", "e"], ["p"]),
             helper.make_node("Mod", ["k", "k3"], ["km"], fmod=0)]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3]),
         helper.make_tensor_value_info("k", TensorProto.INT64, ["N", 1])],
        [helper.make_tensor_value_info("p", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("km", TensorProto.INT64, None)],
        [helper.make_tensor("b", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0]),
         helper.make_tensor("e", TensorProto.INT64, [], [2]),
         helper.make_tensor("k3", TensorProto.INT64, [], [-3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
    model.ir_version = 8
    g = ge_core.load_onnx(model.SerializeToString())
    assert g.desc("p").shape == (-1, 3) and g.desc("km").shape == (-1, 1) and g.desc("km").dtype == "int64"
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in (1, 5):
        feeds = {"x": np.abs(_rand((n, 3), "float32")), "k": _rand((n, 1), "int64")}
        got = ge_core.execute(g, feeds)
        want = dict(zip(["p", "km"], session.run(None, feeds), strict=True))
        np.testing.assert_allclose(got["p"], want["p"], rtol=1e-6)
        np.testing.assert_array_equal(got["km"], want["km"])


# ---- inference ------------------------------------------------------------------------------------
def test_binary_infer_broadcasts_unknown_dims() -> None:
    (out,) = infer("Add", [((-1, 1, 4), "float32"), ((3, -1), "float32")])
    assert out.shape == (-1, 3, 4) and out.dtype == "float32"
    (out,) = infer("Mul", [((-1, 5), "int64"), ((), "int64")])
    assert out.shape == (-1, 5)
    (out,) = infer("Sum", [((2, -1), "float16"), ((-1, 1), "float16"), ((3,), "float16")])
    assert out.shape == (2, 3)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from([1, 2, 3]), max_size=4), min_size=1, max_size=4),
       st.lists(st.booleans(), min_size=16, max_size=16))
def test_broadcast_infer_agrees_with_numpy(shapes: list[list[int]], hide: list[bool]) -> None:
    """Sum's inferred shape is numpy's broadcast shape; hiding dims (-1) only ever loosens it."""
    try:
        want: tuple[int, ...] | None = np.broadcast_shapes(*[tuple(s) for s in shapes])
    except ValueError:
        want = None
    descs = [(tuple(s), "float32") for s in shapes]
    if want is None:
        infer_error("Sum", descs, match="cannot broadcast")
        return
    assert infer("Sum", descs)[0].shape == want
    flags = iter(hide)
    hidden = [(tuple(-1 if next(flags) else d for d in s), "float32") for s in shapes]
    got = infer("Sum", hidden)[0].shape
    assert len(got) == len(want) and all(g in (-1, w) for g, w in zip(got, want, strict=True))


def test_binary_infer_errors() -> None:
    infer_error("Add", [((2, 3), "float32"), ((2, 3), "float16")], match="share one dtype")
    infer_error("Sub", [((2, 3), "float32"), ((4,), "float32")], match="cannot broadcast")
    infer_error("Mul", [((2, 3), "bool"), ((2, 3), "bool")], match="must be one of")
    infer_error("Div", [((2, 3), "float32")], match="expects 2 inputs, got 1")
    infer_error("Max", [], match="expects 1 to")
    infer_error("Max", [((2,), "float32"), None], match="every input is required")
    infer_error("Mean", [((2,), "int32"), ((2,), "int32")], match="must be one of")
    infer_error("Sqrt", [((2,), "int32")], match="must be one of")
    infer_error("Neg", [((2,), "uint8")], match="got uint8")


def test_pow_infer_dtype_rules() -> None:
    (out,) = infer("Pow", [((2, 3), "float32"), ((3,), "int64")], opset=15)
    assert out.dtype == "float32" and out.shape == (2, 3)
    (out,) = infer("Pow", [((-1,), "int32"), ((), "float32")], opset=12)
    assert out.dtype == "int32" and out.shape == (-1,)
    infer_error("Pow", [((2,), "float32"), ((2,), "int64")], opset=11, match="share one dtype")
    infer_error("Pow", [((2,), "float32"), ((3,), "float32")], opset=15, match="cannot broadcast")


def test_categories_and_costs() -> None:
    for op in math_ops.OPS:
        binary = op.op_type in {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Mean", "Sum"}
        assert op.category == (Category.BROADCAST if binary else Category.ELEMENTWISE), op.op_type
    ins = [infer("Abs", [((4, 8), "float32")])[0]] * 3
    out = infer("Sum", [((4, 8), "float32")] * 3)
    cost = REGISTRY.get("Sum").cost(None, ins, out)  # type: ignore[union-attr,arg-type]
    assert cost.flops == 2 * 32 and cost.bytes_read == 3 * 128 and cost.bytes_written == 128


# ---- ONNX conformance -----------------------------------------------------------------------------
FAMILIES = [{o.op_type for o in m.OPS} for m in (activation, math_ops, logic)]
CASES = [c for c in cases_for(set().union(*FAMILIES)) if owner_of(c, FAMILIES) == 1]
# Every case runs: no arithmetic variant is deliberately unsupported (the unsupported Cast dtypes, training
# Dropout and sequence Identity cases are listed in test_logic.py).


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_conformance(case) -> None:
    run_case(decoded(case))
