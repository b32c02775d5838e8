"""MatMul and Gemm: inference (numpy matmul shapes incl. 1-D and batch broadcasting, transposes, C
broadcasting, unknown dims, errors), kernels against ONNX Runtime / onnx.reference over dtypes and
opsets, costs, and ONNX's conformance cases."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ge_core.ops import REGISTRY, matmul
from ge_core.ops.common import make_desc
from ge_core.ops.registry import Category
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import check, infer, infer_error, make_node, run_ge

RNG = np.random.default_rng(0)
F32 = "float32"


def _rand(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


# ---- MatMul ------------------------------------------------------------------------------------------

SHAPES = [
    ((3, 4), (4, 5), (3, 5)),
    ((4,), (4,), ()),
    ((4,), (2, 4, 5), (2, 5)),
    ((2, 3, 4), (4,), (2, 3)),
    ((2, 3, 4), (4, 5), (2, 3, 5)),
    ((3, 4), (2, 4, 5), (2, 3, 5)),
    ((2, 1, 3, 4), (5, 4, 2), (2, 5, 3, 2)),
    ((1, 3, 4), (6, 4, 2), (6, 3, 2)),
]


@pytest.mark.parametrize(("a", "b", "want"), SHAPES)
def test_matmul_infer_and_kernel(a: tuple[int, ...], b: tuple[int, ...], want: tuple[int, ...]) -> None:
    (out,) = infer("MatMul", [(a, F32), (b, F32)])
    assert out.shape == want and out.dtype == F32
    check("MatMul", [_rand(*a), _rand(*b)], opset=13, oracle="onnxruntime", rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("a", "b", "want"), [
    ((-1, 3, 4), (4, 5), (-1, 3, 5)),
    ((2, -1, 4), (-1, 5), (2, -1, 5)),
    ((-1, 4), (4,), (-1,)),
    ((-1, 1, 3, 4), (5, 4, -1), (-1, 5, 3, -1)),
    ((2, 3, -1), (-1, 5), (2, 3, 5)),
])
def test_matmul_infer_unknown_dims(a: tuple[int, ...], b: tuple[int, ...], want: tuple[int, ...]) -> None:
    assert infer("MatMul", [(a, F32), (b, F32)])[0].shape == want


@pytest.mark.parametrize(("a", "b", "match"), [
    ((3, 4), (5, 6), r"inner dimensions differ: \[3, 4\] @ \[5, 6\] \(4 vs 5\)"),
    ((4,), (5,), r"inner dimensions differ"),
    ((2, 3, 4), (3, 4, 5), r"cannot broadcast"),
    ((), (4, 5), r"rank >= 1"),
])
def test_matmul_infer_errors(a: tuple[int, ...], b: tuple[int, ...], match: str) -> None:
    infer_error("MatMul", [(a, F32), (b, F32)], match=match)


def test_matmul_dtype_errors() -> None:
    infer_error("MatMul", [((3, 4), F32), ((4, 5), "float16")], match="share one dtype")
    infer_error("MatMul", [((3, 4), "bool"), ((4, 5), "bool")], match="got bool")
    infer_error("MatMul", [((3, 4), "int8"), ((4, 5), "int8")], match="got int8")


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64, np.uint32, np.uint64])
def test_matmul_dtypes(dtype: Any) -> None:
    a = RNG.integers(0, 50, (2, 3, 4)).astype(dtype)
    b = RNG.integers(0, 50, (4, 5)).astype(dtype)
    check("MatMul", [a, b], opset=13, oracle="reference", rtol=1e-12, atol=0)
    if dtype in (np.float64, np.int32, np.int64):
        check("MatMul", [a, b], opset=13, oracle="onnxruntime", rtol=1e-12, atol=0)


def test_matmul_float16_accumulates_in_float32() -> None:
    a, b = _rand(8, 256, dtype=np.float16), _rand(256, 8, dtype=np.float16)
    (got,) = run_ge("MatMul", [a, b], opset=13)
    assert got.dtype == np.float16
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-2)


@pytest.mark.parametrize("opset", [1, 9, 13])
def test_matmul_opsets(opset: int) -> None:
    check("MatMul", [_rand(2, 3, 4), _rand(4, 2)], opset=opset, oracle="reference", rtol=1e-5, atol=1e-6)


# ---- Gemm --------------------------------------------------------------------------------------------

GEMM_CASES: list[tuple[dict[str, Any], tuple[int, ...] | None]] = [
    ({}, (3, 5)),
    ({}, None),
    ({}, ()),
    ({}, (1,)),
    ({}, (5,)),
    ({}, (1, 5)),
    ({}, (3, 1)),
    ({"transA": 1}, (5,)),
    ({"transB": 1}, (3, 5)),
    ({"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0}, (3, 5)),
    ({"alpha": 0.25}, (1, 5)),
    ({"beta": 0.0}, (3, 5)),
    ({"beta": -1.5}, ()),
]


def _gemm_inputs(attrs: dict[str, Any], c_shape: tuple[int, ...] | None, dtype: Any = np.float32
                 ) -> list[np.ndarray]:
    a = _rand(*((4, 3) if attrs.get("transA") else (3, 4)), dtype=dtype)
    b = _rand(*((5, 4) if attrs.get("transB") else (4, 5)), dtype=dtype)
    return [a, b] + ([] if c_shape is None else [_rand(*c_shape, dtype=dtype)])


@pytest.mark.parametrize(("attrs", "c_shape"), GEMM_CASES)
def test_gemm_matches_onnxruntime(attrs: dict[str, Any], c_shape: tuple[int, ...] | None) -> None:
    inputs = _gemm_inputs(attrs, c_shape)
    (out,) = infer("Gemm", [(x.shape, F32) for x in inputs], attrs)
    assert out.shape == (3, 5)
    check("Gemm", inputs, attrs, opset=13, oracle="onnxruntime", rtol=1e-5, atol=1e-5)
    check("Gemm", _gemm_inputs(attrs, c_shape, np.float64), attrs, opset=13, oracle="onnxruntime",
          rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("opset", [7, 9, 11])
def test_gemm_older_opsets(opset: int) -> None:
    inputs = _gemm_inputs({"transB": 1, "alpha": 2.0}, (5,))
    check("Gemm", inputs, {"transB": 1, "alpha": 2.0}, opset=opset, oracle="onnxruntime", rtol=1e-5,
          atol=1e-5)


def test_gemm_opset_6_broadcast_attribute() -> None:
    a, b, c = _rand(3, 4), _rand(4, 5), _rand(5)
    (got,) = run_ge("Gemm", [a, b, c], {"broadcast": 1}, opset=6)
    np.testing.assert_allclose(got, a @ b + c, rtol=1e-5, atol=1e-5)
    infer_error("Gemm", [((3, 4), F32), ((4, 5), F32), ((5,), F32)], opset=6, match="does not broadcast")
    assert infer("Gemm", [((3, 4), F32), ((4, 5), F32), ((3, 5), F32)], opset=6)[0].shape == (3, 5)


def test_gemm_integers() -> None:
    a = RNG.integers(-20, 20, (3, 4)).astype(np.int64)
    b = RNG.integers(-20, 20, (4, 5)).astype(np.int64)
    c = RNG.integers(-20, 20, (5,)).astype(np.int64)
    check("Gemm", [a, b, c], opset=13, oracle="reference", rtol=0, atol=0)
    check("Gemm", [a.astype(np.int32), b.astype(np.int32)], {"alpha": 2.0, "beta": 3.0}, opset=13,
          oracle="reference", rtol=0, atol=0)
    (big,) = run_ge("Gemm", [np.array([[2**40]], np.int64), np.array([[2**20 + 1]], np.int64)])
    assert big[0, 0] == 2**60 + 2**40  # exact: no float64 round trip when alpha = beta = 1


def test_gemm_float16() -> None:
    inputs = _gemm_inputs({"alpha": 0.5, "beta": 0.5}, (5,), np.float16)
    (got,) = run_ge("Gemm", inputs, {"alpha": 0.5, "beta": 0.5})
    a, b, c = (x.astype(np.float64) for x in inputs)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, 0.5 * a @ b + 0.5 * c, rtol=5e-3, atol=5e-3)


@pytest.mark.parametrize(("a", "b", "c", "attrs", "want"), [
    ((-1, 4), (4, 5), (5,), {}, (-1, 5)),
    ((4, -1), (5, 4), None, {"transA": 1, "transB": 1}, (-1, 5)),
    ((3, -1), (-1, 5), (3, 1), {}, (3, 5)),
    ((3, 4), (4, -1), (1, 7), {}, (3, -1)),
])
def test_gemm_infer_unknown_dims(a: tuple[int, ...], b: tuple[int, ...], c: tuple[int, ...] | None,
                                 attrs: dict[str, Any], want: tuple[int, ...]) -> None:
    descs = [(a, F32), (b, F32)] + ([] if c is None else [(c, F32)])
    assert infer("Gemm", descs, attrs)[0].shape == want


@pytest.mark.parametrize(("a", "b", "c", "attrs", "match"), [
    ((3, 4), (5, 6), None, {}, r"inner dimensions differ: A' is \[3,4\] and B' is \[5,6\]"),
    ((3, 4), (4, 5), None, {"transA": 1}, r"inner dimensions differ: A' is \[4,3\].*transA=1"),
    ((3, 4), (4, 5), (4,), {}, r"C \[4\] does not broadcast to the output \[3,5\]"),
    ((3, 4), (4, 5), (5, 3), {}, r"C \[5, 3\] does not broadcast"),
    ((3, 4), (4, 5), (1, 3, 5), {}, r"does not broadcast"),
    ((2, 3, 4), (4, 5), None, {}, r"must be matrices \(rank 2\)"),
])
def test_gemm_infer_errors(a: tuple[int, ...], b: tuple[int, ...], c: tuple[int, ...] | None,
                           attrs: dict[str, Any], match: str) -> None:
    descs = [(a, F32), (b, F32)] + ([] if c is None else [(c, F32)])
    infer_error("Gemm", descs, attrs, match=match)


def test_gemm_c_required_before_opset_11() -> None:
    infer_error("Gemm", [((3, 4), F32), ((4, 5), F32)], opset=9, match="C is required before opset 11")
    infer_error("Gemm", [((3, 4), F32), ((4, 5), "float64")], match="share one dtype")
    infer_error("Gemm", [((3, 4), "bool"), ((4, 5), "bool")], match="got bool")


# ---- registry facts ----------------------------------------------------------------------------------

def test_categories_and_costs() -> None:
    assert all(op.category == Category.CUBE for op in matmul.OPS)
    mm = REGISTRY.get("MatMul")
    gemm = REGISTRY.get("Gemm")
    assert mm is not None and gemm is not None
    a, b = make_desc((2, 3, 4), F32), make_desc((4, 5), F32)
    (y,) = infer("MatMul", [((2, 3, 4), F32), ((4, 5), F32)])
    cost = mm.cost(make_node("MatMul", [True, True]), [a, b], [y])
    assert cost.flops == 2 * 2 * 3 * 5 * 4
    assert cost.bytes_read == 4 * (24 + 20) and cost.bytes_written == 4 * 30
    v = make_desc((4,), F32)
    (yv,) = infer("MatMul", [((2, 3, 4), F32), ((4,), F32)])
    assert mm.cost(make_node("MatMul", [True, True]), [a, v], [yv]).flops == 2 * 2 * 3 * 4
    node = make_node("Gemm", [True, True, True], {"transA": 1})
    at, c = make_desc((4, 3), F32), make_desc((5,), F32)
    (yg,) = infer("Gemm", [((4, 3), F32), ((4, 5), F32), ((5,), F32)], {"transA": 1})
    assert gemm.cost(node, [at, make_desc((4, 5), F32), c], [yg]).flops == 2 * 3 * 5 * 4 + 2 * 15
    unknown = make_desc((-1, 5), F32)
    assert gemm.cost(node, [make_desc((4, -1), F32), make_desc((4, 5), F32), c], [unknown]).flops == 0


# ---- conformance -------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", cases_for({"MatMul", "Gemm"}), ids=lambda c: c.name)
def test_conformance(case: Any) -> None:
    run_case(case)
