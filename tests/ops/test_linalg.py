"""Einsum and Det against onnx.reference and ONNX Runtime: contractions, transposes, traces, diagonals,
broadcast ellipses, implicit outputs, three operands; equation and shape errors; costs; conformance."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ge_core.ops import REGISTRY, Category
from ge_core.ops.common import make_desc
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import check, infer, infer_error, make_node

RNG = np.random.default_rng(17)


def _r(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


EINSUM_CASES: list[tuple[str, list[tuple[int, ...]]]] = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),  # attention scores
    ("ij->ji", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),  # implicit: trace
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (1, 3, 4, 5)]),  # broadcast ellipsis
    ("ij,jk", [(3, 4), (4, 5)]),  # implicit output ik
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),  # bilinear
    ("...ii->...i", [(2, 3, 3)]),
    ("Ab,bC->AC", [(2, 3), (3, 4)]),  # upper-case labels
]


@pytest.mark.parametrize(("equation", "shapes"), EINSUM_CASES, ids=[e for e, _ in EINSUM_CASES])
def test_einsum_matches_oracles(equation: str, shapes: list[tuple[int, ...]]) -> None:
    check("Einsum", [_r(*s) for s in shapes], {"equation": equation}, opset=12, rtol=1e-5, atol=1e-5)


def test_einsum_dtypes() -> None:
    a, b = RNG.integers(-5, 5, (3, 4)).astype(np.int64), RNG.integers(-5, 5, (4, 2)).astype(np.int64)
    check("Einsum", [a, b], {"equation": "ij,jk->ik"}, opset=12)
    check("Einsum", [_r(3, 4).astype(np.float64), _r(4, 2).astype(np.float64)], {"equation": "ij,jk->ik"}, opset=12,
          rtol=1e-12)
    check("Einsum", [_r(3, 4).astype(np.float16), _r(4, 2).astype(np.float16)], {"equation": "ij,jk->ik"}, opset=12,
          oracle="onnxruntime", rtol=2e-3, atol=2e-3)


def test_einsum_infer_with_unknown_dims() -> None:
    y = infer("Einsum", [((-1, 3, 4), "float32"), ((-1, 4, 5), "float32")], {"equation": "bij,bjk->bik"})[0]
    assert y.shape == (-1, 3, 5)
    y = infer("Einsum", [((2, -1, 4), "float32"), ((-1, 6), "float32")], {"equation": "...j,jk->...k"})[0]
    assert y.shape == (2, -1, 6)
    y = infer("Einsum", [((2, 1, 3), "float32"), ((5, 3), "float32")], {"equation": "...j,...j->..."})[0]
    assert y.shape == (2, 5)  # ellipses broadcast


@pytest.mark.parametrize(("equation", "descs", "match"), [
    ("ij,jk->ik", [((3, 4), "float32"), ((5, 2), "float32")], "label 'j' is 4 in one input and 5 in input 1"),
    ("ij,jk->ik", [((3, 4), "float32")], "names 2 operands, the node has 1 inputs"),
    ("ij->ik", [((3, 4), "float32")], r"output labels \['k'\] appear in no input"),
    ("ijk->ik", [((3, 4), "float32")], "input 0 has rank 2, term 'ijk' needs 3"),
    ("i1->i", [((3, 4), "float32")], "is not letters"),
    ("ij,jk->ik", [((3, 4), "float32"), ((4, 2), "float64")], "inputs must share one dtype"),
    ("i->...i", [((3,), "float32")], "the output has '...' but no input does"),
])
def test_einsum_errors(equation: str, descs: list[Any], match: str) -> None:
    infer_error("Einsum", descs, {"equation": equation}, match=match)


def test_einsum_cost_is_a_matmuls_count() -> None:
    op = REGISTRY.get("Einsum")
    assert op is not None and op.category == Category.CUBE
    descs = [make_desc((2, 3, 4), "float32"), make_desc((2, 4, 5), "float32")]
    node = make_node("Einsum", [True, True], {"equation": "bij,bjk->bik"})
    cost = op.cost(node, descs, [make_desc((2, 3, 5), "float32")])
    assert cost.flops == 2 * 2 * 3 * 4 * 5


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 2, 1, 1)])
def test_det(shape: tuple[int, ...]) -> None:
    check("Det", [_r(*shape)], opset=11, rtol=1e-5, atol=1e-5)
    check("Det", [_r(*shape).astype(np.float64)], opset=22, oracle="reference", rtol=1e-10)


def test_det_errors_and_facts() -> None:
    infer_error("Det", [((3, 4), "float32")], match="square matrices, got 3 x 4")
    infer_error("Det", [((3,), "float32")], match="rank >= 2")
    infer_error("Det", [((3, 3), "int32")], match="must be one of")
    assert infer("Det", [((-1, 3, 3), "float32")])[0].shape == (-1,)
    det = REGISTRY.get("Det")
    assert det is not None and det.category == Category.OPAQUE


@pytest.mark.parametrize("case", cases_for({"Einsum", "Det"}), ids=lambda c: c.name)
def test_conformance(case: Any) -> None:
    run_case(case)
