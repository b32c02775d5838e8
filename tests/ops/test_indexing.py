"""Indexed movement: Gather, GatherElements, GatherND, ScatterND, TopK. Inference (index range when
known, unknown k, errors), kernels against onnx.reference and ONNX Runtime, run-time index errors."""

from __future__ import annotations

import numpy as np
import pytest
from onnx.backend.test.case.test_case import TestCase

from ge_core.errors import ExecutionError
from ge_core.ops import REGISTRY, indexing
from ge_core.ops.registry import Category
from tests.ops.conformance import run_case
from tests.ops.elementwise_oracle import infer, infer_error, make_node
from tests.ops.shape_oracle import check, conformance_cases, i64, run_ge

RNG = np.random.default_rng(13)
X = RNG.standard_normal((3, 4, 5)).astype(np.float32)


# ---- Gather --------------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("shape", [(), (2,), (2, 3)], ids=str)
def test_gather_matches_oracles(axis: int, shape: tuple[int, ...]) -> None:
    dim = X.shape[axis]
    idx = RNG.integers(-dim, dim, size=shape).astype(np.int64)
    check("Gather", [X, idx], {"axis": axis}, 13)
    check("Gather", [X, idx.astype(np.int32)], {"axis": axis}, 13)


def test_gather_infer() -> None:
    (y,) = infer("Gather", [((-1, 4, 5), "float32"), ((2, 3), "int64")], {"axis": 1})
    assert y.shape == (-1, 2, 3, 5)
    (y,) = infer("Gather", [((3,), "int64"), ((), "int64")], {}, values=[None, np.array(0)])
    assert y.shape == ()
    err = infer_error("Gather", [((3, 4), "float32"), ((2,), "int64")], {"axis": 1},
                      values=[None, i64(0, 4)], match="index 4 is out of range")
    assert "[3,4]" in str(err)
    infer_error("Gather", [((3, 4), "float32"), ((2,), "int64")], values=[None, i64(-4, 0)], match="-4")
    infer_error("Gather", [((3, 4), "float32"), ((2,), "int64")], {"axis": 2}, match="out of range")
    infer_error("Gather", [((3, 4), "float32"), ((2,), "float32")], match="int32 or int64")


def test_gather_out_of_range_at_run_time_names_the_node() -> None:
    op = REGISTRY.get("Gather")
    assert op is not None
    with pytest.raises(ExecutionError, match=r"node 'n0' \(Gather\).*index 7"):
        op.kernel(make_node("Gather", [True, True]), [X, i64(7)])


# ---- GatherElements ------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_gather_elements_matches_oracles(axis: int) -> None:
    dim = X.shape[axis]
    shape = list(X.shape)
    shape[axis] = 6  # the indexed axis may have any length
    idx = RNG.integers(-dim, dim, size=shape).astype(np.int64)
    # onnx.reference mishandles a negative axis when the indexed axis lengths differ
    check("GatherElements", [X, idx], {"axis": axis}, 13, oracle="both" if axis >= 0 else "onnxruntime")
    # the other axes may be shorter than the data's; onnx.reference refuses that, ORT does not
    shape[(axis + 1) % 3] -= 1
    idx = RNG.integers(-dim, dim, size=shape).astype(np.int64)
    check("GatherElements", [X, idx], {"axis": axis}, 13, oracle="onnxruntime")


def test_gather_elements_infer() -> None:
    (y,) = infer("GatherElements", [((-1, 4), "float32"), ((2, 4), "int64")], {"axis": 0})
    assert y.shape == (2, 4)
    infer_error("GatherElements", [((3, 4), "float32"), ((2,), "int64")], match="same rank")
    infer_error("GatherElements", [((3, 4), "float32"), ((2, 5), "int64")], {"axis": 0}, match="exceeds")
    infer_error("GatherElements", [((3, 4), "float32"), ((1, 1), "int64")], values=[None, np.array([[3]])],
                match="out of range")


# ---- GatherND ------------------------------------------------------------------------------------
@pytest.mark.parametrize("batch_dims,index_shape", [(0, (2, 1)), (0, (2, 2)), (0, (3,)), (0, (2, 2, 3)),
                                                    (1, (3, 1)), (1, (3, 2, 2)), (2, (3, 4, 1))], ids=str)
def test_gather_nd_matches_oracles(batch_dims: int, index_shape: tuple[int, ...]) -> None:
    q = index_shape[-1]
    dims = X.shape[batch_dims:batch_dims + q]
    cols = [RNG.integers(-d, d, size=index_shape[:-1]) for d in dims]
    idx = np.stack(cols, axis=-1).astype(np.int64)
    check("GatherND", [X, idx], {"batch_dims": batch_dims}, 13)


def test_gather_nd_infer() -> None:
    (y,) = infer("GatherND", [((3, 4, 5), "float32"), ((-1, 2), "int64")])
    assert y.shape == (-1, 5)
    infer_error("GatherND", [((3, 4), "float32"), ((2, 3), "int64")], match="do not fit")
    infer_error("GatherND", [((3, 4), "float32"), ((2, -1), "int64")], match="static")


# ---- ScatterND -----------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", [None, "add", "mul", "max", "min"])
def test_scatter_nd_matches_oracles(reduction: str | None) -> None:
    data = RNG.standard_normal((4, 4, 4)).astype(np.float32)
    idx = np.array([[0], [2], [0]] if reduction else [[0], [2], [3]], dtype=np.int64)  # repeats reduce
    updates = RNG.standard_normal((3, 4, 4)).astype(np.float32)
    attrs = {} if reduction is None else {"reduction": reduction}
    check("ScatterND", [data, idx, updates], attrs, 18, rtol=1e-6, known=[1])
    elem_idx = np.array([[0, 1, 2], [3, 3, 3], [-1, 0, 0]], dtype=np.int64)
    check("ScatterND", [data, elem_idx, RNG.standard_normal(3).astype(np.float32)], attrs, 18, known=[1])


def test_scatter_nd_infer() -> None:
    (y,) = infer("ScatterND", [((-1, 4), "float32"), ((2, 1), "int64"), ((2, 4), "float32")])
    assert y.shape == (-1, 4)
    infer_error("ScatterND", [((3, 4), "float32"), ((2, 1), "int64"), ((2, 5), "float32")],
                match="updates must have shape")
    infer_error("ScatterND", [((3, 4), "float32"), ((2, 1), "int64"), ((2, 4), "float32")],
                {"reduction": "avg"}, match="reduction")
    infer_error("ScatterND", [((3, 4), "float32"), ((2, 1), "int64"), ((2, 4), "int32")], match="dtype")


# ---- TopK ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("largest", [None, 0, 1])
@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("k", [0, 1, 3])
def test_topk_matches_oracles(largest: int | None, axis: int, k: int) -> None:
    ties = RNG.integers(0, 4, size=(3, 4, 5)).astype(np.float32)  # equal values: lower index first
    attrs: dict[str, int] = {"axis": axis}
    if largest is not None:
        attrs["largest"] = largest
    _, indices = check("TopK", [ties, i64(k)], attrs, 11, n_outputs=2)
    assert indices.dtype == np.int64


def test_topk_unsigned_and_opset_1() -> None:
    x = RNG.integers(0, 2**40, size=(4, 6)).astype(np.uint64)
    check("TopK", [x, i64(3)], {}, 11, n_outputs=2, oracle="reference")
    check("TopK", [X], {"k": 2, "axis": 1}, 9, n_outputs=2)


def test_topk_infer() -> None:
    values, indices = infer("TopK", [((-1, 10), "float32"), ((1,), "int64")], {}, 11, n_outputs=2)
    assert values.shape == indices.shape == (-1, -1) and indices.dtype == "int64"
    values, _ = infer("TopK", [((-1, 10), "float32"), ((1,), "int64")], {}, 11, values=[None, i64(4)],
                      n_outputs=2)
    assert values.shape == (-1, 4)
    infer_error("TopK", [((2, 3), "float32"), ((1,), "int64")], {}, 11, values=[None, i64(4)], match="k=4")
    infer_error("TopK", [((2, 3), "float32"), ((1,), "int64")], {"axis": 2}, 11, match="out of range")


def test_topk_returns_sorted_stable_results() -> None:
    x = np.array([[1.0, 3.0, 3.0, 2.0, 3.0]], dtype=np.float32)
    values, indices = run_ge("TopK", [x, i64(4)], {}, 11, n_outputs=2)
    assert values.tolist() == [[3, 3, 3, 2]] and indices.tolist() == [[1, 2, 4, 3]]
    values, indices = run_ge("TopK", [x, i64(2)], {"largest": 0}, 11, n_outputs=2)
    assert values.tolist() == [[1, 2]] and indices.tolist() == [[0, 3]]


def test_categories() -> None:
    cats = {op.op_type: op.category for op in indexing.OPS}
    assert cats["Gather"] == cats["GatherElements"] == cats["GatherND"] == Category.INJECTIVE
    assert cats["ScatterND"] == cats["TopK"] == Category.OPAQUE


# ---- ONNX conformance ----------------------------------------------------------------------------
# Every case made of our ops passes: none is deliberately unsupported (conformance_cases' xfail).
@pytest.mark.parametrize("case", conformance_cases(indexing))
def test_conformance(case: TestCase) -> None:
    run_case(case)
