"""Pad (constant/reflect/edge/wrap, negative pads, axes, the opset < 11 attribute form) and Tile:
inference, the tensor budget, and kernels against onnx.reference and ONNX Runtime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx.backend.test.case.test_case import TestCase

from ge_core.errors import ResourceLimitError
from ge_core.ops import REGISTRY, pad
from ge_core.ops.registry import Category
from tests.ops.conformance import run_case
from tests.ops.elementwise_oracle import infer, infer_error, make_node
from tests.ops.shape_oracle import check, conformance_cases, i64

RNG = np.random.default_rng(9)
X = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)

PADS = [(0, 0, 1, 2, 0, 0, 2, 1), (1, 0, 0, 0, 0, 1, 0, 3), (0, 0, 0, 0, 0, 0, 0, 0), (0, 1, 2, 3, 1, 2, 3, 4)]


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("pads", PADS, ids=str)
def test_pad_matches_oracles(mode: str, pads: tuple[int, ...]) -> None:
    value = np.array(1.5, dtype=np.float32)
    check("Pad", [X, i64(*pads), value if mode == "constant" else None], {"mode": mode}, 13)
    check("Pad", [X], {"mode": mode, "pads": list(pads), "value": 1.5}, 9)  # attribute form


def test_pad_wrap_axes_and_negative_pads() -> None:
    check("Pad", [X, i64(1, 2, 3, 4, 0, 1, 2, 3)], {"mode": "wrap"}, 19)
    # negative pads crop; onnx.reference (np.pad) cannot, ORT can
    (y,) = check("Pad", [X, i64(0, 1, -1, 0, 0, -1, 2, -2)], {"mode": "constant"}, 18, oracle="onnxruntime")
    assert y.shape == (2, 3, 5, 3)
    (y,) = check("Pad", [X, i64(2, 1), None, i64(-1)], {"mode": "reflect"}, 18)
    assert y.shape == (2, 3, 4, 8)
    (y,) = check("Pad", [X, i64(0, 2, 0, 1), np.array(7.0, np.float32), i64(1, -2)], {}, 18)
    assert y.shape == (2, 3, 7, 5)


def test_pad_integer_data() -> None:
    x = RNG.integers(-5, 5, size=(3, 4)).astype(np.int32)
    check("Pad", [x, i64(1, 2, 0, 1), np.array(9, np.int32)], {}, 13)
    check("Pad", [x, i64(1, 2, 0, 1)], {"mode": "edge"}, 13)


def test_pad_infer() -> None:
    (y,) = infer("Pad", [((-1, 3), "float32"), ((4,), "int64")], {}, 13, values=[None, i64(1, 1, 1, 1)])
    assert y.shape == (-1, 5)
    (y,) = infer("Pad", [((2, 3), "float32"), ((4,), "int64")], {}, 13)
    assert y.shape == (-1, -1)
    (y,) = infer("Pad", [((2, 3), "float32")], {"pads": [0, -1, 1, 0]}, 9)
    assert y.shape == (3, 2)
    infer_error("Pad", [((2, 3), "float32"), ((2,), "int64")], {}, 13, values=[None, i64(1, 1)],
                match="2 x 2")
    infer_error("Pad", [((2, 3), "float32"), ((4,), "int64")], {}, 13, values=[None, i64(0, -3, 0, -1)],
                match="below zero")
    infer_error("Pad", [((2, 3), "float32"), ((4,), "int64")], {"mode": "wrap"}, 18, match="mode 'wrap'")
    infer_error("Pad", [((2, 3), "float32")], {}, 9, match="pads attribute")
    infer_error("Pad", [((2, 3), "float32"), ((4,), "int64"), None, ((2,), "int64")], {}, 18,
                values=[None, i64(0, 0, 0, 0), None, i64(1, 1)], match="repeat")


def test_pad_refuses_huge_before_allocating() -> None:
    op = REGISTRY.get("Pad")
    assert op is not None
    with pytest.raises(ResourceLimitError, match="node 'n0'"):
        op.kernel(make_node("Pad", [True, True], opset=13), [np.ones((1, 1), np.float32),
                                                             i64(0, 0, 100000, 100000)])


# ---- Tile ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("repeats", [(1, 1, 1, 1), (2, 1, 3, 1), (1, 0, 1, 2)], ids=str)
def test_tile_matches_oracles(repeats: tuple[int, ...]) -> None:
    check("Tile", [X, i64(*repeats)], {}, 13)


def test_tile_infer_and_limits() -> None:
    (y,) = infer("Tile", [((-1, 3), "float32"), ((2,), "int64")], values=[None, i64(2, 2)])
    assert y.shape == (-1, 6)
    (y,) = infer("Tile", [((4, 3), "float32"), ((2,), "int64")])
    assert y.shape == (-1, -1)
    infer_error("Tile", [((4, 3), "float32"), ((3,), "int64")], values=[None, i64(1, 2, 3)], match="2 non-neg")
    infer_error("Tile", [((4, 3), "float32"), ((2,), "int64")], values=[None, i64(1, -2)], match="2 non-neg")
    op = REGISTRY.get("Tile")
    assert op is not None
    with pytest.raises(ResourceLimitError, match="node 'n0'"):
        op.kernel(make_node("Tile", [True, True]), [np.ones((4, 4), np.float32), i64(100000, 100000)])


def test_categories() -> None:
    assert all(op.category == Category.INJECTIVE for op in pad.OPS)


# ---- ONNX conformance ----------------------------------------------------------------------------
# Every case made of our ops passes: none is deliberately unsupported (conformance_cases' xfail).
@pytest.mark.parametrize("case", conformance_cases(pad))
def test_conformance(case: TestCase) -> None:
    run_case(case)
