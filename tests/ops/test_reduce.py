"""Reductions: Reduce*, Softmax/LogSoftmax, ArgMax/ArgMin, CumSum. Inference (axes as attribute or
input per opset, keepdims, noop_with_empty_axes, unknown dims and values, errors) and kernels against
onnx.reference and ONNX Runtime, plus ONNX's conformance cases."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx.backend.test.case.test_case import TestCase

from ge_core.ops import REGISTRY, reduce
from ge_core.ops.common import make_desc
from ge_core.ops.registry import Category
from tests.ops.conformance import run_case
from tests.ops.elementwise_oracle import infer, infer_error
from tests.ops.shape_oracle import check, conformance_cases, i64, run_ge

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4, 5)).astype(np.float32)
POSITIVE = (np.abs(X) + 0.5).astype(np.float32)  # ReduceProd/LogSum-style ops stay well conditioned

REDUCE_OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
              "ReduceSumSquare", "ReduceLogSumExp"]
AXES = [None, [1], [0, 2], [-1], [2, 0]]


def _axes_opsets(op: str) -> tuple[int, int]:
    """(last opset with axes as attribute, first with axes as input)."""
    return (11, 13) if op == "ReduceSum" else (13, 18)


def _reduce_case(op: str, axes: list[int] | None, keepdims: int, as_input: bool
                 ) -> tuple[list[np.ndarray | None], dict[str, Any], int]:
    old, new = _axes_opsets(op)
    attrs: dict[str, Any] = {"keepdims": keepdims}
    x = POSITIVE if op == "ReduceProd" else X
    if as_input:
        return [x, None if axes is None else i64(*axes)], attrs, new
    if axes is not None:
        attrs["axes"] = axes
    return [x], attrs, old


@pytest.mark.parametrize("op", REDUCE_OPS)
@pytest.mark.parametrize("axes", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("as_input", [False, True], ids=["attr", "input"])
def test_reduce_matches_oracles(op: str, axes: list[int] | None, keepdims: int, as_input: bool) -> None:
    inputs, attrs, opset = _reduce_case(op, axes, keepdims, as_input)
    check(op, inputs, attrs, opset, rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("op", REDUCE_OPS)
def test_noop_with_empty_axes(op: str) -> None:
    _, new = _axes_opsets(op)
    empty = np.zeros(0, dtype=np.int64)
    # nothing is reduced, but the elementwise part stays (ReduceL1 acts as Abs, ReduceSumSquare as Square)
    (same,) = check(op, [X, empty], {"noop_with_empty_axes": 1}, new, oracle="reference", rtol=1e-6)
    assert same.shape == X.shape
    (same,) = check(op, [X], {"noop_with_empty_axes": 1}, new, oracle="reference")
    assert same.shape == X.shape
    (everything,) = check(op, [POSITIVE, empty], {"keepdims": 0}, new, rtol=2e-5, atol=1e-5)
    assert everything.shape == ()


@pytest.mark.parametrize("op,dtype", [("ReduceSum", np.int32), ("ReduceSum", np.int64),
                                      ("ReduceMax", np.int32), ("ReduceMin", np.int64),
                                      ("ReduceProd", np.int64), ("ReduceMean", np.int32),
                                      ("ReduceL1", np.int32), ("ReduceSumSquare", np.int64),
                                      ("ReduceSum", np.float64), ("ReduceLogSumExp", np.float64)])
def test_reduce_other_dtypes(op: str, dtype: type) -> None:
    x: np.ndarray = RNG.integers(-5, 6, size=(3, 4, 5)).astype(dtype)
    check(op, [x, i64(1)], {"keepdims": 0}, 18, rtol=1e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the oracle's numpy mean of an empty slice
@pytest.mark.parametrize("op", REDUCE_OPS)
def test_reduce_over_an_empty_axis(op: str) -> None:
    x = np.zeros((2, 0, 3), dtype=np.float32)
    (got,) = check(op, [x, i64(1)], {"keepdims": 1}, 18, oracle="reference")
    assert got.shape == (2, 1, 3)


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
def test_reduce_max_min_on_bool(op: str) -> None:
    x = RNG.random((3, 4)) > 0.5
    check(op, [x, i64(1)], {"keepdims": 0}, 20, oracle="reference")


def test_reduce_float16_accumulates_in_float32() -> None:
    x = np.full((4096,), 0.1, dtype=np.float16)
    (got,) = run_ge("ReduceSum", [x], {"keepdims": 0}, 13)
    assert got.dtype == np.float16
    assert abs(float(got) - 4096 * float(np.float16(0.1))) < 2.0  # a float16 running sum stalls at 256


def test_log_sum_exp_is_stable_for_large_inputs() -> None:
    x = np.array([[1000.0, 1000.0], [-1000.0, -1000.0]], dtype=np.float32)
    (got,) = run_ge("ReduceLogSumExp", [x, i64(1)], {"keepdims": 0}, 18)
    np.testing.assert_allclose(got, [1000 + np.log(2), -1000 + np.log(2)], rtol=1e-6)


# ---- inference -----------------------------------------------------------------------------------
def test_reduce_infer_keeps_unknown_dims() -> None:
    (y,) = infer("ReduceMean", [((-1, 8, 16), "float32")], {"axes": [2], "keepdims": 1}, 13)
    assert y.shape == (-1, 8, 1) and y.dtype == "float32"
    (y,) = infer("ReduceMean", [((-1, 8, 16), "float32"), ((1,), "int64")], {"keepdims": 0}, 18,
                 values=[None, i64(-1)])
    assert y.shape == (-1, 8)


def test_reduce_infer_with_unknown_axes_values() -> None:
    (y,) = infer("ReduceSum", [((2, 1, 4), "float32"), ((2,), "int64")], {"keepdims": 1}, 13)
    assert y.shape == (-1, 1, -1)
    (y,) = infer("ReduceSum", [((2, 1, 4), "float32"), ((2,), "int64")], {"keepdims": 0}, 13)
    assert y.shape == (-1,)
    infer_error("ReduceSum", [((2, 1, 4), "float32"), ((-1,), "int64")], {"keepdims": 0}, 13,
                match="output rank")


@pytest.mark.parametrize("axes,match", [([3], "out of range"), ([-4], "out of range"),
                                        ([1, -2], "same axis")])
def test_reduce_infer_errors(axes: list[int], match: str) -> None:
    infer_error("ReduceMax", [((2, 3, 4), "float32")], {"axes": axes}, 13, match=match)
    infer_error("ReduceMax", [((2, 3, 4), "float32"), ((len(axes),), "int64")], {}, 18,
                values=[None, i64(*axes)], match=match)


def test_reduce_cost_counts_input_elements() -> None:
    op = REGISTRY.get("ReduceSum")
    assert op is not None and op.category == Category.REDUCE
    x, y = make_desc((8, 16), "float32"), make_desc((8, 1), "float32")
    cost = op.cost(None, [x], [y])  # type: ignore[arg-type]
    assert (cost.flops, cost.bytes_read, cost.bytes_written) == (128, 512, 32)


# ---- Softmax / LogSoftmax ------------------------------------------------------------------------
SOFTMAX_X = (RNG.standard_normal((2, 3, 4, 5)) * 4).astype(np.float32)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, -3])
def test_softmax_matches_oracles(op: str, opset: int, axis: int | None) -> None:
    attrs = {} if axis is None else {"axis": axis}
    # onnx.reference only implements the opset-13 form; ORT also keeps the 2-D coercion of opset < 13
    oracle = "both" if opset >= 13 else "onnxruntime"
    check(op, [SOFTMAX_X], attrs, opset, oracle=oracle, rtol=1e-5, atol=1e-6)


def test_softmax_opset11_flattens_from_axis() -> None:
    (old,) = run_ge("Softmax", [SOFTMAX_X], {"axis": 1}, 11)
    np.testing.assert_allclose(old.reshape(2, -1).sum(axis=1), 1.0, rtol=1e-5)
    (new,) = run_ge("Softmax", [SOFTMAX_X], {"axis": 1}, 13)
    np.testing.assert_allclose(new.sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_large_values_and_float16(op: str) -> None:
    x = np.array([[1e4, 1e4 + 1, -1e4], [0.0, 0.0, 0.0]], dtype=np.float32)
    (got,) = run_ge(op, [x])
    assert np.all(np.isfinite(got))
    x16 = SOFTMAX_X.astype(np.float16)
    (got16,) = run_ge(op, [x16])
    (want,) = run_ge(op, [x16.astype(np.float64)])
    assert got16.dtype == np.float16
    np.testing.assert_allclose(got16.astype(np.float64), want, rtol=2e-3, atol=2e-3)


def test_softmax_infer_errors() -> None:
    err = infer_error("Softmax", [((2, 3), "float32")], {"axis": 5}, 13, match="axis=5")
    assert "[2,3]" in str(err)
    infer_error("LogSoftmax", [((2, 3), "float32")], {"axis": -3}, 11, match="out of range")
    infer_error("Softmax", [((2, 3), "int64")], {}, 13, match="float")


def test_softmax_infer_unknown_dims() -> None:
    (y,) = infer("Softmax", [((-1, 7), "float16")], {}, 13)
    assert y.shape == (-1, 7) and y.dtype == "float16"


# ---- ArgMax / ArgMin -----------------------------------------------------------------------------
TIES = RNG.integers(0, 3, size=(3, 4, 5)).astype(np.float32)  # many equal values


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("last", [0, 1])
def test_arg_matches_oracles(op: str, axis: int, keepdims: int, last: int) -> None:
    attrs = {"axis": axis, "keepdims": keepdims, "select_last_index": last}
    (got,) = check(op, [TIES], attrs, 13)
    assert got.dtype == np.int64


def test_arg_defaults_and_errors() -> None:
    (y,) = infer("ArgMax", [((-1, 3), "float32")], {})
    assert y.shape == (1, 3) and y.dtype == "int64"
    (y,) = infer("ArgMin", [((-1, 3), "int32")], {"axis": -1, "keepdims": 0})
    assert y.shape == (-1,)
    infer_error("ArgMax", [((2, 3), "float32")], {"axis": 2}, match="out of range")


# ---- CumSum --------------------------------------------------------------------------------------
@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum_matches_oracles(exclusive: int, reverse: int, axis: int) -> None:
    attrs = {"exclusive": exclusive, "reverse": reverse}
    check("CumSum", [X, np.array(axis, dtype=np.int64)], attrs, 14, rtol=1e-5, atol=1e-6)
    ints = RNG.integers(-9, 9, size=(4, 6)).astype(np.int32)
    check("CumSum", [ints, np.array(min(axis, 1), dtype=np.int32)], attrs, 14)


def test_cumsum_infer_errors() -> None:
    infer_error("CumSum", [((2, 3), "float32"), ((2,), "int64")], match="scalar")
    infer_error("CumSum", [((2, 3), "float32"), ((), "int64")], values=[None, np.array(2)],
                match="out of range")
    (y,) = infer("CumSum", [((-1, 3), "float32"), ((), "int32")])
    assert y.shape == (-1, 3)


def test_categories() -> None:
    cats = {op.op_type: op.category for op in reduce.OPS}
    assert all(cats[op] == Category.REDUCE for op in [*REDUCE_OPS, "Softmax", "LogSoftmax", "ArgMax"])
    assert cats["CumSum"] == Category.OPAQUE


# ---- ONNX conformance ----------------------------------------------------------------------------
# Every case made of our ops passes: none is deliberately unsupported (conformance_cases' xfail).
@pytest.mark.parametrize("case", conformance_cases(reduce))
def test_conformance(case: TestCase) -> None:
    run_case(case)
