"""Data movement: Transpose, Concat, Split, Slice, DepthToSpace, SpaceToDepth, Trilu. Inference
(unknown dims and values, opset forms, errors) and kernels against onnx.reference and ONNX Runtime."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx.backend.test.case.test_case import TestCase

from ge_core.errors import ShapeError
from ge_core.ops import REGISTRY, movement
from ge_core.ops.common import make_desc
from ge_core.ops.registry import Category, Operand
from tests.ops.conformance import run_case
from tests.ops.elementwise_oracle import infer, infer_error, make_node
from tests.ops.shape_oracle import check, conformance_cases, i64, run_ge

RNG = np.random.default_rng(5)
X = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
INT64_MAX, INT64_MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min


# ---- Transpose -----------------------------------------------------------------------------------
@pytest.mark.parametrize("perm", [None, [0, 1, 2, 3], [3, 2, 1, 0], [0, 2, 3, 1], [1, 0, 3, 2]], ids=str)
def test_transpose_matches_oracles(perm: list[int] | None) -> None:
    check("Transpose", [X], {} if perm is None else {"perm": perm}, 13)
    check("Transpose", [X.astype(np.int8)], {} if perm is None else {"perm": perm}, 13)


def test_transpose_infer() -> None:
    (y,) = infer("Transpose", [((-1, 3, 4), "float16")], {"perm": [2, 0, 1]})
    assert y.shape == (4, -1, 3) and y.dtype == "float16"
    for bad in ([0, 1], [0, 1, 1], [0, 1, 3]):
        infer_error("Transpose", [((2, 3, 4), "float32")], {"perm": bad}, match="not a permutation")


# ---- Concat --------------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, -1, -4])
def test_concat_matches_oracles(axis: int) -> None:
    parts = []
    for size in (1, 3, 0):
        shape = list(X.shape)
        shape[axis] = size
        parts.append(RNG.standard_normal(shape).astype(np.float32))
    check("Concat", parts, {"axis": axis}, 13)


def test_concat_infer() -> None:
    (y,) = infer("Concat", [((-1, 3), "float32"), ((2, -1), "float32")], {"axis": 0})
    assert y.shape == (-1, 3)
    (y,) = infer("Concat", [((4, 3), "float32"), ((2, -1), "float32")], {"axis": 0})
    assert y.shape == (6, 3)
    infer_error("Concat", [((2, 3), "float32"), ((2, 4), "float32")], {"axis": 0}, match="dims on axis 1")
    infer_error("Concat", [((2, 3), "float32"), ((2, 3, 1), "float32")], {"axis": 0}, match="rank")
    infer_error("Concat", [((2, 3), "float32"), ((2, 3), "int64")], {"axis": 0}, match="dtype")
    infer_error("Concat", [((2, 3), "float32")], {"axis": 2}, match="out of range")
    infer_error("Concat", [((2, 3), "float32")], {}, match="axis attribute")


# ---- Split ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("axis,split,outputs", [(0, None, 2), (1, None, 3), (-1, None, 5), (3, [1, 4], 2),
                                                (1, [0, 2, 1], 3), (2, [4], 1)], ids=str)
def test_split_matches_oracles(opset: int, axis: int, split: list[int] | None, outputs: int) -> None:
    attrs: dict[str, object] = {"axis": axis}
    inputs: list[np.ndarray | None] = [X]
    if split is not None and opset < 13:
        attrs["split"] = split
    elif split is not None:
        inputs.append(i64(*split))
    elif opset >= 18:
        attrs["num_outputs"] = outputs
    check("Split", inputs, attrs, opset, n_outputs=outputs)


def test_split_uneven_since_opset_18() -> None:
    x = np.arange(7, dtype=np.float32)
    outs = check("Split", [x], {"num_outputs": 3}, 18, n_outputs=3)
    assert [o.tolist() for o in outs] == [[0, 1, 2], [3, 4, 5], [6]]


def test_split_infer() -> None:
    outs = infer("Split", [((-1, 6), "float32")], {"axis": 0}, 13, n_outputs=2)
    assert [o.shape for o in outs] == [(-1, 6), (-1, 6)]
    outs = infer("Split", [((4, 6), "float32"), ((2,), "int64")], {"axis": 1}, 13, n_outputs=2)
    assert [o.shape for o in outs] == [(4, -1), (4, -1)]  # split sizes not known yet
    outs = infer("Split", [((4, -1), "float32"), ((2,), "int64")], {"axis": 1}, 13, values=[None, i64(2, 5)],
                 n_outputs=2)
    assert [o.shape for o in outs] == [(4, 2), (4, 5)]


@pytest.mark.parametrize("attrs,opset,n,values,match", [
    ({"split": [2, 2]}, 11, 2, None, "sums to 4, not to the dim 6"),
    ({"split": [2, 4]}, 11, 3, None, "must hold 3"),
    ({}, 13, 4, None, "4 equal parts"),
    ({"num_outputs": 3}, 18, 2, None, "num_outputs=3"),
    ({}, 13, 2, [1, 2], "sums to 3"),
    ({"axis": 2}, 13, 2, None, "out of range"),
])
def test_split_errors(attrs: dict[str, object], opset: int, n: int, values: list[int] | None,
                      match: str) -> None:
    operands = [Operand(make_desc((4, 6), "float32"))]
    if values is not None:
        operands.append(Operand(make_desc((len(values),), "int64"), i64(*values)))
    node = make_node("Split", [True] * len(operands), {"axis": 1, **attrs}, opset, n)
    op = REGISTRY.get("Split")
    assert op is not None
    with pytest.raises(ShapeError, match=match) as info:
        op.infer(node, list(operands))
    assert "node 'n0' (Split)" in str(info.value)


# ---- Slice ---------------------------------------------------------------------------------------
SLICES = [
    ([0], [2], None, None),
    ([1, 0], [3, -1], [1, 3], None),
    ([-1], [INT64_MIN], [2], [-1]),
    ([3, 10], [0, -100], [3, 1], [-2, -1]),
    ([0, 1], [INT64_MAX, 1000], [-1, 0], [2, 1]),
    ([-100], [100], [2], None),
    ([2], [1], [1], None),
    ([4], [8], [3], [1]),
]


@pytest.mark.parametrize("starts,ends,axes,steps", SLICES, ids=str)
def test_slice_matches_oracles(starts: list[int], ends: list[int], axes: list[int] | None,
                               steps: list[int] | None) -> None:
    inputs = [X, i64(*starts), i64(*ends), None if axes is None else i64(*axes),
              None if steps is None else i64(*steps)]
    check("Slice", inputs, {}, 13)


BOUNDS = st.integers(-7, 7) | st.sampled_from([int(INT64_MAX), int(INT64_MIN)])
SLICE_SPECS = st.lists(st.tuples(st.integers(-4, 3), BOUNDS, BOUNDS, st.sampled_from([-3, -2, -1, 1, 2, 3])),
                       min_size=1, max_size=4, unique_by=lambda spec: spec[0] % 4)


@settings(max_examples=80, deadline=None)
@given(SLICE_SPECS)
def test_slice_clamping_property(specs: list[tuple[int, int, int, int]]) -> None:
    """Any starts/ends (far out of range too), negative axes and steps: same as onnx.reference."""
    axes, starts, ends, steps = (i64(*column) for column in zip(*specs, strict=True))
    check("Slice", [X, starts, ends, axes, steps], {}, 13, oracle="reference")


def test_slice_opset_1_attributes() -> None:
    attrs = {"starts": [1, 0], "ends": [3, -1], "axes": [1, 3]}
    (y,) = check("Slice", [X], attrs, 9)
    np.testing.assert_array_equal(y, X[:, 1:3, :, 0:-1])


def test_slice_infer() -> None:
    data = ((2, -1, 6), "float32")
    vec = ((1,), "int64")
    (y,) = infer("Slice", [data, vec, vec, vec], {}, 13, values=[None, i64(1), i64(5), i64(2)])
    assert y.shape == (2, -1, 4)
    (y,) = infer("Slice", [data, vec, vec, vec], {}, 13, values=[None, i64(0), i64(1), i64(1)])
    assert y.shape == (2, -1, 6)  # the sliced dim is unknown
    (y,) = infer("Slice", [data, vec, vec], {}, 13)  # values unknown: rank only
    assert y.shape == (-1, -1, -1)
    infer_error("Slice", [data, vec, vec, vec, vec], {}, 13,
                values=[None, i64(0), i64(1), i64(0), i64(0)], match="steps must not be 0")
    infer_error("Slice", [data, ((2,), "int64"), ((2,), "int64"), ((2,), "int64")], {}, 13,
                values=[None, i64(0, 0), i64(1, 1), i64(0, 0)], match="repeat")
    infer_error("Slice", [data, vec, ((2,), "int64")], {}, 13, values=[None, i64(0), i64(1, 1)],
                match="same length")
    infer_error("Slice", [data, vec, vec, vec], {}, 13, values=[None, i64(0), i64(1), i64(3)],
                match="out of range")


# ---- DepthToSpace / SpaceToDepth -----------------------------------------------------------------
@pytest.mark.parametrize("mode", [None, "DCR", "CRD"])
@pytest.mark.parametrize("blocksize", [1, 2, 3])
def test_depth_to_space_matches_oracles(mode: str | None, blocksize: int) -> None:
    x = RNG.standard_normal((2, 36, 3, 4)).astype(np.float32)  # 36 = 4 x 9 = 36 x 1
    attrs: dict[str, object] = {"blocksize": blocksize}
    if mode is not None:
        attrs["mode"] = mode
    check("DepthToSpace", [x], attrs, 13)


@pytest.mark.parametrize("blocksize", [1, 2, 3])
def test_space_to_depth_matches_oracles_and_inverts(blocksize: int) -> None:
    x = RNG.standard_normal((2, 3, 6, 12)).astype(np.float32)
    (y,) = check("SpaceToDepth", [x], {"blocksize": blocksize}, 13)
    (back,) = run_ge("DepthToSpace", [y], {"blocksize": blocksize})
    np.testing.assert_array_equal(back, x)
    (crd,) = run_ge("SpaceToDepth", [x], {"blocksize": blocksize, "mode": "CRD"})
    (back,) = run_ge("DepthToSpace", [crd], {"blocksize": blocksize, "mode": "CRD"})
    np.testing.assert_array_equal(back, x)


def test_depth_space_infer() -> None:
    (y,) = infer("DepthToSpace", [((-1, 8, -1, 3), "float32")], {"blocksize": 2})
    assert y.shape == (-1, 2, -1, 6)
    (y,) = infer("SpaceToDepth", [((1, 3, 4, -1), "float32")], {"blocksize": 2})
    assert y.shape == (1, 12, 2, -1)
    infer_error("DepthToSpace", [((1, 6, 2, 2), "float32")], {"blocksize": 2}, match="divisible")
    infer_error("SpaceToDepth", [((1, 3, 5, 4), "float32")], {"blocksize": 2}, match="divisible")
    infer_error("DepthToSpace", [((1, 8, 2), "float32")], {"blocksize": 2}, match="4-D")
    infer_error("DepthToSpace", [((1, 8, 2, 2), "float32")], {}, match="blocksize")
    infer_error("DepthToSpace", [((1, 8, 2, 2), "float32")], {"blocksize": 2, "mode": "XYZ"}, match="mode")


# ---- Trilu ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("upper", [None, 0, 1])
@pytest.mark.parametrize("k", [None, 0, 2, -1, 9, -9])
def test_trilu_matches_oracles(upper: int | None, k: int | None) -> None:
    x = RNG.integers(-9, 9, size=(2, 4, 5)).astype(np.int64)
    attrs = {} if upper is None else {"upper": upper}
    check("Trilu", [x, None if k is None else np.array(k, dtype=np.int64)], attrs, 14)


def test_trilu_infer() -> None:
    (y,) = infer("Trilu", [((-1, 3, 3), "float32")])
    assert y.shape == (-1, 3, 3)
    infer_error("Trilu", [((3,), "float32")], match="rank >= 2")
    infer_error("Trilu", [((3, 3), "float32"), ((2,), "int64")], match="scalar")


def test_categories() -> None:
    assert all(op.category == Category.INJECTIVE for op in movement.OPS)


# ---- ONNX conformance ----------------------------------------------------------------------------
# Every case made of our ops passes: none is deliberately unsupported (conformance_cases' xfail).
@pytest.mark.parametrize("case", conformance_cases(movement))
def test_conformance(case: TestCase) -> None:
    run_case(case)
