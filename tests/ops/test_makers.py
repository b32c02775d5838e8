"""Tensor makers: Constant, ConstantOfShape, Range, EyeLike, NonZero. Inference from known values,
unknown values, errors, the tensor budget (refused before allocating), kernels against the oracles."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper
from onnx.backend.test.case.test_case import TestCase

from ge_core.errors import ResourceLimitError
from ge_core.ops import REGISTRY, makers
from ge_core.ops.registry import Category
from tests.ops.conformance import run_case
from tests.ops.elementwise_oracle import infer, infer_error, make_node
from tests.ops.shape_oracle import check, conformance_cases, i64, run_ge

RNG = np.random.default_rng(11)


def _constant(attrs: dict[str, Any]) -> tuple[np.ndarray, Any]:
    op = REGISTRY.get("Constant")
    assert op is not None
    node = make_node("Constant", [], attrs)
    (desc,) = op.infer(node, [])
    (value,) = op.kernel(node, [])
    return value, desc


@pytest.mark.parametrize("attrs,want,dtype", [
    ({"value": np.arange(6, dtype=np.float32).reshape(2, 3)}, np.arange(6).reshape(2, 3), "float32"),
    ({"value_float": 1.5}, np.float32(1.5), "float32"),
    ({"value_floats": [1.0, 2.5]}, np.array([1.0, 2.5]), "float32"),
    ({"value_int": 7}, np.int64(7), "int64"),
    ({"value_ints": [1, -2, 3]}, np.array([1, -2, 3]), "int64"),
], ids=["value", "value_float", "value_floats", "value_int", "value_ints"])
def test_constant_forms(attrs: dict[str, Any], want: Any, dtype: str) -> None:
    value, desc = _constant(attrs)
    assert desc.dtype == dtype and value.dtype.name == dtype
    assert desc.shape == np.shape(want)
    np.testing.assert_array_equal(value, want)


def test_constant_strings_and_refusals() -> None:
    value, desc = _constant({"value_strings": ["a", "bc"]})
    assert desc.dtype == "str" and desc.shape == (2,) and value.tolist() == ["a", "bc"]
    value, desc = _constant({"value_string": "hi"})
    assert desc.shape == () and value.item() == "hi"
    infer_error("Constant", [], {"sparse_value": object()}, match="sparse")
    infer_error("Constant", [], {}, match="exactly one")
    infer_error("Constant", [], {"value_int": 1, "value_float": 2.0}, match="exactly one")


def test_constant_matches_reference() -> None:
    (got,) = run_ge("Constant", [], {"value": np.array([[1, 2]], dtype=np.int32)})
    assert got.dtype == np.int32 and got.tolist() == [[1, 2]]


# ---- ConstantOfShape -----------------------------------------------------------------------------
@pytest.mark.parametrize("value", [None, np.array([2.5], np.float32), np.array([3], np.int32),
                                   np.array([True]), np.array([7], np.int64)], ids=str)
@pytest.mark.parametrize("shape", [(2, 3), (0,), (), (1, 4, 1)], ids=str)
def test_constant_of_shape_matches_oracles(value: np.ndarray | None, shape: tuple[int, ...]) -> None:
    attrs = {} if value is None else {"value": helper.make_tensor("v", helper.np_dtype_to_tensor_dtype(
        value.dtype), [1], value.tolist())}
    ge_attrs = {} if value is None else {"value": value}
    (got,) = run_ge("ConstantOfShape", [np.array(shape, dtype=np.int64)], ge_attrs, 20, known=[0])
    from tests.ops.elementwise_oracle import onnxruntime, reference
    for oracle in (reference, onnxruntime):
        (want,) = oracle("ConstantOfShape", [np.array(shape, dtype=np.int64)], attrs, 20)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_constant_of_shape_infer() -> None:
    (y,) = infer("ConstantOfShape", [((3,), "int64")])
    assert y.shape == (-1, -1, -1) and y.dtype == "float32"
    (y,) = infer("ConstantOfShape", [((2,), "int64")], {"value": np.array([1], np.int8)}, values=[i64(4, 5)])
    assert y.shape == (4, 5) and y.dtype == "int8"
    infer_error("ConstantOfShape", [((2,), "int64")], values=[i64(4, -5)], match="negative")
    infer_error("ConstantOfShape", [((-1,), "int64")], match="output rank")
    infer_error("ConstantOfShape", [((1,), "int64")], {"value": np.array([1, 2])}, values=[i64(4)],
                match="one element")


def test_constant_of_shape_refuses_huge_before_allocating() -> None:
    op = REGISTRY.get("ConstantOfShape")
    assert op is not None
    with pytest.raises(ResourceLimitError, match=r"node 'n0' \(ConstantOfShape\)"):
        op.kernel(make_node("ConstantOfShape", [True]), [i64(100000, 100000, 64)])


# ---- Range ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("start,limit,delta,dtype", [
    (0, 10, 3, np.int64), (10, 0, -3, np.int32), (1, 1, 1, np.int64), (5, 0, 1, np.int32),
    (0.5, 4.0, 0.7, np.float32), (3.0, -1.0, -0.5, np.float64), (1.0, 5.0, 0.1, np.float32),
    (-7, 7, 2, np.int16)], ids=str)
def test_range_matches_oracles(start: float, limit: float, delta: float, dtype: type) -> None:
    args: list[np.ndarray | None] = [np.array(v, dtype=dtype) for v in (start, limit, delta)]
    oracle = "reference" if dtype == np.int16 else "both"
    check("Range", args, {}, 11, oracle=oracle, rtol=1e-6, atol=1e-6, known=[0, 1, 2])


def test_range_infer() -> None:
    scalar = ((), "int64")
    (y,) = infer("Range", [scalar, scalar, scalar])
    assert y.shape == (-1,) and y.dtype == "int64"
    (y,) = infer("Range", [scalar, scalar, scalar], values=[np.array(2), np.array(9), np.array(2)])
    assert y.shape == (4,)
    infer_error("Range", [scalar, scalar, scalar], values=[np.array(0), np.array(3), np.array(0)],
                match="delta")
    infer_error("Range", [scalar, ((), "int32"), scalar], match="share a dtype")
    infer_error("Range", [((2,), "int64"), scalar, scalar], match="scalars")


def test_range_refuses_huge_before_allocating() -> None:
    op = REGISTRY.get("Range")
    assert op is not None
    with pytest.raises(ResourceLimitError, match="node 'n0'"):
        op.kernel(make_node("Range", [True, True, True]),
                  [np.array(0, np.int64), np.array(1 << 62, np.int64), np.array(1, np.int64)])


# ---- EyeLike -------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2)], ids=str)
@pytest.mark.parametrize("k", [0, 1, -1, 4])
def test_eye_like_matches_oracles(shape: tuple[int, int], k: int) -> None:
    x = np.zeros(shape, dtype=np.float32)
    check("EyeLike", [x], {"k": k}, 9)
    (y,) = check("EyeLike", [x], {"k": k, "dtype": 7}, 9)  # INT64
    assert y.dtype == np.int64


def test_eye_like_infer() -> None:
    (y,) = infer("EyeLike", [((-1, 4), "int32")], {"dtype": 1})
    assert y.shape == (-1, 4) and y.dtype == "float32"
    infer_error("EyeLike", [((2, 3, 4), "float32")], match="2-D")


# ---- NonZero -------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (0, 3)], ids=str)
def test_nonzero_matches_oracles(shape: tuple[int, ...]) -> None:
    x = (RNG.random(shape) > 0.6).astype(np.float32)
    (y,) = check("NonZero", [x], {}, 13, exact=False)  # the count is known only when running
    assert y.dtype == np.int64 and y.shape[0] == len(shape)


def test_nonzero_infer_and_scalar() -> None:
    (y,) = infer("NonZero", [((2, 3), "float32")])
    assert y.shape == (2, -1) and y.dtype == "int64"
    (z,) = run_ge("NonZero", [np.array(5.0, dtype=np.float32)], exact=False)
    assert z.shape == (0, 1)


def test_categories() -> None:
    assert all(op.category == Category.OPAQUE for op in makers.OPS)


# ---- ONNX conformance ----------------------------------------------------------------------------
# Every case made of our ops passes: none is deliberately unsupported (conformance_cases' xfail).
@pytest.mark.parametrize("case", conformance_cases(makers))
def test_conformance(case: TestCase) -> None:
    run_case(case)
