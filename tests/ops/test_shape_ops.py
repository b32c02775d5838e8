"""Shape ops: Reshape, Flatten, Squeeze, Unsqueeze, Shape, Size, Expand. Inference (value-dependent
shapes with and without known values, unknown dims, errors), kernels against onnx.reference and ONNX
Runtime, value propagation through Shape -> Gather -> Concat -> Reshape chains, conformance cases."""

from __future__ import annotations

import numpy as np
import pytest
from onnx.backend.test.case.test_case import TestCase

from ge_core.errors import ResourceLimitError
from ge_core.ir.graph import Graph
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY, infer_graph, shape_ops
from ge_core.ops.registry import Category
from tests.ops.conformance import run_case
from tests.ops.elementwise_oracle import infer, infer_error, make_node
from tests.ops.shape_oracle import check, conformance_cases, i64, run_ge

RNG = np.random.default_rng(3)
X = RNG.standard_normal((2, 3, 4)).astype(np.float32)


# ---- Reshape -------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", [(4, 6), (-1,), (0, -1), (2, 0, 2, 2), (-1, 4, 1), (24,), (1, 2, 3, 4)],
                         ids=str)
def test_reshape_matches_oracles(target: tuple[int, ...]) -> None:
    check("Reshape", [X, i64(*target)], opset=13)


def test_reshape_allowzero() -> None:
    empty = np.zeros((0, 3), dtype=np.float32)
    (y,) = check("Reshape", [empty, i64(3, 0)], {"allowzero": 1}, 14)
    assert y.shape == (3, 0)
    (y,) = check("Reshape", [X, i64(0, 12)], {"allowzero": 0}, 14)
    assert y.shape == (2, 12)
    # before opset 14 there is no allowzero: 0 always copies
    (y,) = run_ge("Reshape", [X, i64(0, 12)], {"allowzero": 1}, 13)
    assert y.shape == (2, 12)


def test_reshape_infer_unknown() -> None:
    (y,) = infer("Reshape", [((-1, 3, 4), "float32"), ((2,), "int64")], values=[None, i64(0, -1)])
    assert y.shape == (-1, 12)
    (y,) = infer("Reshape", [((-1, 3, 4), "float32"), ((2,), "int64")], values=[None, i64(-1, 6)])
    assert y.shape == (-1, 6)
    (y,) = infer("Reshape", [((-1, 3, 4), "float32"), ((3,), "int64")], values=[None, i64(0, 0, -1)])
    assert y.shape == (-1, 3, 4)
    (y,) = infer("Reshape", [((-1, 3, 4), "float32"), ((2,), "int64")], values=[None, i64(-1, 2)])
    assert y.shape == (-1, 2)
    (y,) = infer("Reshape", [((2, 3, 4), "float32"), ((3,), "int64")])  # target value unknown
    assert y.shape == (-1, -1, -1)
    infer_error("Reshape", [((2, 3), "float32"), ((-1,), "int64")], match="output rank")


@pytest.mark.parametrize("target,match", [((5, -1), "cannot reshape 24"), ((-1, -1), "more than one -1"),
                                          ((7, 3), "cannot reshape 24"), ((2, -2, 6), "below -1"),
                                          ((0, 0, 0, 0), "copies dim 3")])
def test_reshape_errors(target: tuple[int, ...], match: str) -> None:
    infer_error("Reshape", [((2, 3, 4), "float32"), ((len(target),), "int64")], values=[None, i64(*target)],
                match=match)


def test_reshape_allowzero_with_minus_one_is_refused() -> None:
    infer_error("Reshape", [((0, 3), "float32"), ((2,), "int64")], {"allowzero": 1}, 14,
                values=[None, i64(0, -1)], match="allowzero")


def test_reshape_returns_a_view_and_kernel_checks_too() -> None:
    node = make_node("Reshape", [True, True])
    op = REGISTRY.get("Reshape")
    assert op is not None
    (y,) = op.kernel(node, [X, i64(6, 4)])
    assert np.shares_memory(y, X)
    with pytest.raises(Exception, match="cannot reshape"):
        op.kernel(node, [X, i64(5, 5)])


# ---- Flatten -------------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [None, 0, 1, 2, 3, -1, -3])
def test_flatten_matches_oracles(axis: int | None) -> None:
    check("Flatten", [X], {} if axis is None else {"axis": axis}, 13)


def test_flatten_infer() -> None:
    (y,) = infer("Flatten", [((-1, 3, 4), "float32")], {"axis": 1})
    assert y.shape == (-1, 12)
    (y,) = infer("Flatten", [((-1, 3, 4), "float32")], {"axis": 0})
    assert y.shape == (1, -1)
    infer_error("Flatten", [((2, 3), "float32")], {"axis": 3}, match="out of range")
    infer_error("Flatten", [((2, 3), "float32")], {"axis": -3}, match="out of range")


# ---- Squeeze / Unsqueeze -------------------------------------------------------------------------
Y1 = RNG.standard_normal((1, 3, 1, 4)).astype(np.float32)


@pytest.mark.parametrize("axes", [None, [0], [2], [0, 2], [-2], [-4, 2]], ids=str)
@pytest.mark.parametrize("opset", [11, 13])
def test_squeeze_matches_oracles(axes: list[int] | None, opset: int) -> None:
    if opset < 13:
        # onnx.reference's Squeeze-11 squeezes axis by axis (shifting the rest): ORT only for several
        oracle = "onnxruntime" if axes and len(axes) > 1 else "both"
        check("Squeeze", [Y1], {} if axes is None else {"axes": axes}, opset, oracle=oracle)
    else:
        check("Squeeze", [Y1, None if axes is None else i64(*axes)], {}, opset)


def test_squeeze_infer() -> None:
    (y,) = infer("Squeeze", [((1, -1, 1), "float32"), ((1,), "int64")], {}, 13, values=[None, i64(0)])
    assert y.shape == (-1, 1)
    (y,) = infer("Squeeze", [((1, -1, 1), "float32")], {}, 13)  # unknown dims are assumed not 1
    assert y.shape == (-1,)
    (y,) = infer("Squeeze", [((1, 5, 1), "float32"), ((2,), "int64")], {}, 13)  # axes value unknown
    assert y.shape == (-1,)
    err = infer_error("Squeeze", [((1, 3), "float32")], {"axes": [1]}, 11, match="not 1")
    assert "[1,3]" in str(err)
    infer_error("Squeeze", [((1, 3), "float32"), ((1,), "int64")], {}, 13, values=[None, i64(2)],
                match="out of range")


@pytest.mark.parametrize("axes", [[0], [1], [3], [-1], [0, 4], [4, 0], [1, 3, 5]], ids=str)
@pytest.mark.parametrize("opset", [11, 13])
def test_unsqueeze_matches_oracles(axes: list[int], opset: int) -> None:
    if opset < 13:
        # onnx.reference's Unsqueeze-11 inserts axes in the given order: ORT only for unsorted axes
        oracle = "onnxruntime" if axes != sorted(axes) else "both"
        check("Unsqueeze", [X], {"axes": axes}, opset, oracle=oracle)
    else:
        check("Unsqueeze", [X, i64(*axes)], {}, opset)


def test_unsqueeze_infer() -> None:
    (y,) = infer("Unsqueeze", [((-1, 3), "float32"), ((2,), "int64")], {}, 13, values=[None, i64(0, -1)])
    assert y.shape == (1, -1, 3, 1)
    (y,) = infer("Unsqueeze", [((-1, 3), "float32"), ((2,), "int64")], {}, 13)
    assert y.shape == (-1, -1, -1, -1)
    infer_error("Unsqueeze", [((2, 3), "float32")], {"axes": [0, 0]}, 11, match="twice")
    infer_error("Unsqueeze", [((2, 3), "float32")], {"axes": [3]}, 11, match="out of range")
    infer_error("Unsqueeze", [((2, 3), "float32")], {}, 11, match="required")


# ---- Shape / Size --------------------------------------------------------------------------------
@pytest.mark.parametrize("start,end", [(None, None), (1, None), (None, -1), (-2, None), (1, 2), (-10, 10),
                                       (2, 1)])
def test_shape_matches_oracles(start: int | None, end: int | None) -> None:
    attrs = {k: v for k, v in (("start", start), ("end", end)) if v is not None}
    (y,) = check("Shape", [X], attrs, 15)
    assert y.dtype == np.int64


def test_shape_and_size_values_at_inference() -> None:
    op, size = REGISTRY.get("Shape"), REGISTRY.get("Size")
    assert op is not None and size is not None and op.value is not None and size.value is not None
    from ge_core.ops.registry import Operand
    static = Operand(TensorDesc((2, 3, 4), "float32"))
    dynamic = Operand(TensorDesc((-1, 3, 4), "float32"))
    node = make_node("Shape", [True], {"start": 1}, 15)
    assert np.array_equal(op.value(node, [static])[0], [3, 4])  # type: ignore[arg-type]
    assert np.array_equal(op.value(node, [dynamic])[0], [3, 4])  # type: ignore[arg-type]  # static range
    assert op.value(make_node("Shape", [True], {}, 15), [dynamic]) == [None]
    assert op.value(make_node("Shape", [True], {"start": 1}, 13), [dynamic]) == [None]  # no slicing < 15
    assert size.value(make_node("Size", [True]), [static])[0] == 24
    assert size.value(make_node("Size", [True]), [dynamic]) == [None]
    (y,) = infer("Shape", [((-1, 3, 4), "float32")], {"end": -1}, 15)
    assert y.shape == (2,) and y.dtype == "int64"


def test_size_matches_oracles() -> None:
    (y,) = check("Size", [X], {}, 13)
    assert y.dtype == np.int64 and y.shape == ()
    (desc,) = infer("Size", [((-1, 2), "float32")])
    assert desc.shape == ()


def test_reshape_target_from_shape_gather_concat_resolves() -> None:
    """The pattern exporters emit for x.view(x.size(0), -1): static shapes flow through as values."""
    g = Graph("chain", {"": 13})
    g.add_input("x", TensorDesc((2, 3, 4), "float32"))
    g.add_constant("zero", np.array(0, dtype=np.int64))
    g.add_constant("minus_one", i64(-1))
    g.add_constant("ax0", i64(0))
    g.add_node("Shape", ["x"], ["shape"])
    g.add_node("Gather", ["shape", "zero"], ["batch"], {"axis": 0})
    g.add_node("Unsqueeze", ["batch", "ax0"], ["batch1"])
    g.add_node("Concat", ["batch1", "minus_one"], ["target"], {"axis": 0})
    g.add_node("Reshape", ["x", "target"], ["y"])
    g.set_outputs(["y"])
    result = infer_graph(g, REGISTRY)
    assert result.problems == []
    assert result.values["target"].tolist() == [2, -1]
    assert g.desc("y").shape == (2, 12)


# ---- Expand --------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 1), (2, 3, 4), (1, 1), (2, 1, 6), (4, 2, 1, 1)], ids=str)
def test_expand_matches_oracles(shape: tuple[int, ...]) -> None:
    x = RNG.standard_normal((3, 1)).astype(np.float32)
    if shape == (2, 3, 4):
        x = RNG.standard_normal((3, 1)).astype(np.float32)
    check("Expand", [x, i64(*shape)], {}, 13)


def test_expand_infer() -> None:
    (y,) = infer("Expand", [((-1, 1), "float32"), ((2,), "int64")], values=[None, i64(1, 5)])
    assert y.shape == (-1, 5)
    (y,) = infer("Expand", [((-1, 1), "float32"), ((2,), "int64")], values=[None, i64(3, 5)])
    assert y.shape == (3, 5)
    (y,) = infer("Expand", [((4, 1), "float32"), ((3,), "int64")])  # target unknown
    assert y.shape == (-1, 4, -1)
    infer_error("Expand", [((3, 2), "float32"), ((2,), "int64")], values=[None, i64(3, 4)],
                match="cannot expand")
    infer_error("Expand", [((3, 1), "float32"), ((2,), "int64")], values=[None, i64(3, -2)],
                match="negative")


def test_expand_refuses_a_huge_output_before_allocating() -> None:
    op = REGISTRY.get("Expand")
    assert op is not None
    with pytest.raises(ResourceLimitError, match="node 'n0'"):
        op.kernel(make_node("Expand", [True, True]), [np.ones((1,), np.float32), i64(100000, 100000, 64)])


def test_categories() -> None:
    cats = {op.op_type: op.category for op in shape_ops.OPS}
    for op in ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Expand"):
        assert cats[op] == Category.INJECTIVE
    assert cats["Shape"] == cats["Size"] == Category.OPAQUE


# ---- ONNX conformance ----------------------------------------------------------------------------
# Every case made of our ops passes: none is deliberately unsupported (conformance_cases' xfail).
@pytest.mark.parametrize("case", conformance_cases(shape_ops))
def test_conformance(case: TestCase) -> None:
    run_case(case)
