"""Compress, Unique and NonMaxSuppression: outputs whose size depends on values. Kernels against
onnx.reference and ONNX Runtime; inference gives -1 for the data-dependent dims (exact when the deciding
input is a constant); errors; facts; and ONNX's conformance cases."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ge_core
from ge_core.ops import REGISTRY, Category
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import infer, infer_error
from tests.ops.shape_oracle import check

RNG = np.random.default_rng(13)
X = RNG.standard_normal((4, 6, 3)).astype(np.float32)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_compress(axis: int | None) -> None:
    n = X.size if axis is None else X.shape[axis]
    cond = RNG.random(n - 1) > 0.4  # shorter than the axis: the rest is dropped
    attrs = {} if axis is None else {"axis": axis}
    check("Compress", [X, cond], attrs, opset=11, known=[], exact=False)
    check("Compress", [X, cond], attrs, opset=11, known=[1])  # condition known: the exact shape


def test_compress_infers_unknown_dims_unless_condition_is_known() -> None:
    assert infer("Compress", [((4, 6), "float32"), ((6,), "bool")], {"axis": 1})[0].shape == (4, -1)
    assert infer("Compress", [((4, 6), "float32"), ((6,), "bool")])[0].shape == (-1,)
    cond = np.array([True, False, True])
    assert infer("Compress", [((4, 6), "float32"), ((3,), "bool")], {"axis": 1}, values=[None, cond])[0].shape == (4, 2)
    infer_error("Compress", [((4, 6), "float32"), ((7,), "bool")], {"axis": 1}, match="condition has 7 values")
    infer_error("Compress", [((4, 6), "float32"), ((6,), "int64")], match="1-D bool tensor")


UNIQUE_X = np.array([[2, 1, 1], [3, 4, 3], [2, 1, 1], [0, 0, 5]], dtype=np.float32)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("sorted_", [1, 0])
def test_unique(axis: int | None, sorted_: int) -> None:
    attrs: dict[str, Any] = {"sorted": sorted_}
    if axis is not None:
        attrs["axis"] = axis
    # onnx.reference reorders unsorted results along axis 0 of the input whatever the axis: ORT is the oracle
    oracle = "both" if sorted_ else "onnxruntime"
    check("Unique", [UNIQUE_X], attrs, opset=11, n_outputs=4, known=[], exact=False, oracle=oracle)
    check("Unique", [UNIQUE_X.astype(np.int64)], attrs, opset=11, n_outputs=4, known=[0], oracle=oracle)


def test_unique_infer() -> None:
    y, idx, inverse, counts = infer("Unique", [((4, 3), "float32")], {"axis": 0}, n_outputs=4)
    assert y.shape == (-1, 3) and idx.shape == counts.shape == (-1,) and inverse.shape == (4,)
    y, _, inverse, _ = infer("Unique", [((4, 3), "int32")], n_outputs=4)
    assert y.shape == (-1,) and inverse.shape == (12,)
    infer_error("Unique", [((4, 3), "float32")], {"axis": 2}, match="axis=2 is out of range")


def _boxes(n: int, batches: int = 2) -> np.ndarray:
    corner = RNG.random((batches, n, 2)) * 10
    size = RNG.random((batches, n, 2)) * 4 + 0.5
    return np.concatenate([corner, corner + size], axis=-1).astype(np.float32)


@pytest.mark.parametrize(("limit", "iou", "score"), [(3, 0.5, None), (10, 0.3, 0.4), (0, 0.5, None), (20, 0.0, 0.0)])
@pytest.mark.parametrize("center", [0, 1])
def test_nms_matches_oracles(limit: int, iou: float, score: float | None, center: int) -> None:
    boxes = _boxes(30)
    if center:  # (x_center, y_center, width, height)
        boxes = np.concatenate([boxes[..., :2] + boxes[..., 2:] / 2, boxes[..., 2:] - boxes[..., :2]], axis=-1)
    scores = RNG.random((2, 3, 30)).astype(np.float32)
    scores[0, 0, 5] = scores[0, 0, 6]  # a tie: the lower index first
    ins: list[np.ndarray | None] = [boxes, scores, np.array([limit], np.int64), np.array([iou], np.float32)]
    if score is not None:
        ins.append(np.array([score], np.float32))
    check("NonMaxSuppression", ins, {"center_point_box": center}, opset=11, known=[], exact=False)


def test_nms_flipped_corners_and_absent_limit() -> None:
    boxes = _boxes(10, 1)
    boxes[0, ::2] = boxes[0, ::2][:, [2, 3, 0, 1]]  # max before min: same boxes
    scores = RNG.random((1, 1, 10)).astype(np.float32)
    check("NonMaxSuppression", [boxes, scores, np.array([5], np.int64), np.array([0.2], np.float32)], opset=11,
          known=[], exact=False)
    (none,) = check("NonMaxSuppression", [boxes, scores], opset=11, known=[], exact=False, oracle="onnxruntime")
    assert none.shape == (0, 3)


def test_nms_infer_errors() -> None:
    f32 = "float32"
    assert infer("NonMaxSuppression", [((1, 5, 4), f32), ((1, 2, 5), f32)])[0].shape == (-1, 3)
    infer_error("NonMaxSuppression", [((1, 5, 3), f32), ((1, 2, 5), f32)], match=r"boxes must be \[batch, boxes, 4\]")
    infer_error("NonMaxSuppression", [((1, 5, 4), f32), ((1, 2, 6), f32)], match="disagree on the box count")
    infer_error("NonMaxSuppression", [((1, 5, 4), f32), ((1, 2, 5), f32), ((1,), "int32")],
                match="input 2 must be a int64 scalar")
    infer_error("NonMaxSuppression", [((1, 5, 4), f32), ((1, 2, 5), f32)], {"center_point_box": 2},
                match="center_point_box must be 0")


def test_facts_and_folding_of_constants() -> None:
    for op in ("Compress", "Unique", "NonMaxSuppression"):
        opdef = REGISTRY.get(op)
        assert opdef is not None and opdef.category == Category.OPAQUE and opdef.deterministic
    # a constant input folds: inference knows the exact output
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph([helper.make_node("Unique", ["c"], ["u"]), helper.make_node("Add", ["u", "x"], ["y"])],
                              "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array([3, 1, 3, 2], np.float32), "c")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    g = ge_core.load_onnx(model.SerializeToString())
    assert g.desc("u").shape == (3,)
    out = ge_core.execute(g, {"x": np.zeros(3, np.float32)})["y"]
    np.testing.assert_array_equal(out, [1, 2, 3])


OPS = {"Compress", "Unique", "NonMaxSuppression"}


@pytest.mark.parametrize("case", cases_for(OPS), ids=lambda c: c.name)
def test_conformance(case: Any) -> None:
    run_case(case)
