"""GridSample, AffineGrid, RoiAlign and DeformConv against onnx.reference and ONNX Runtime: every mode,
padding mode and align_corners setting in 2-D and 3-D, points far outside the image, regions in both
coordinate conventions, deformable convolutions with groups, offset groups, masks, pads, strides and
dilations; shape errors; costs; conformance."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ge_core.ops import REGISTRY, Category
from ge_core.ops.common import make_desc
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import infer, infer_error, make_node
from tests.ops.shape_oracle import check, i64, run_ge

RNG = np.random.default_rng(23)


def _r(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _grid(*shape: int) -> np.ndarray:
    return RNG.uniform(-1.6, 1.6, shape).astype(np.float32)  # some points outside [-1, 1]


GS = [(mode, padding, align) for mode in ("linear", "nearest", "cubic") for padding in ("zeros", "border", "reflection")
      for align in (0, 1)]


@pytest.mark.parametrize(("mode", "padding", "align"), GS)
def test_grid_sample_2d(mode: str, padding: str, align: int) -> None:
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": align}
    # cubic + border: a point outside on one axis only is clamped on that axis (the reference), on both (ORT)
    oracle = "reference" if (mode, padding) == ("cubic", "border") else "both"
    check("GridSample", [_r(2, 3, 5, 6), _grid(2, 4, 7, 2)], attrs, opset=20, known=[], oracle=oracle, rtol=1e-5,
          atol=1e-5)


@pytest.mark.parametrize(("mode", "padding", "align"), [g for g in GS if g[0] != "cubic"])
def test_grid_sample_3d(mode: str, padding: str, align: int) -> None:
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": align}
    check("GridSample", [_r(1, 2, 3, 4, 5), _grid(1, 2, 3, 4, 3)], attrs, opset=20, known=[], oracle="reference",
          rtol=1e-5, atol=1e-5)


def test_grid_sample_opset_16_mode_names_and_far_points() -> None:
    grid = _grid(1, 3, 3, 2) * 4  # several reflections away
    for mode in ("bilinear", "bicubic", "nearest"):
        check("GridSample", [_r(1, 2, 4, 4), grid], {"mode": mode, "padding_mode": "reflection"}, opset=16,
              known=[], oracle="onnxruntime", rtol=1e-5, atol=1e-5)  # onnx.reference knows only opset 20's names


AG = [((2, 3, 4, 5), 0), ((2, 3, 4, 5), 1), ((1, 1, 3, 4, 2), 0), ((1, 1, 3, 4, 2), 1)]


@pytest.mark.parametrize(("size", "align"), AG)
def test_affine_grid(size: tuple[int, ...], align: int) -> None:
    n = len(size) - 2
    theta = _r(size[0], n, n + 1)
    check("AffineGrid", [theta, i64(*size)], {"align_corners": align}, opset=20, oracle="reference", rtol=1e-5,
          atol=1e-6)


def test_affine_grid_then_grid_sample_is_identity_for_the_identity_transform() -> None:
    theta = np.array([[[1, 0, 0], [0, 1, 0]]], dtype=np.float32)
    (grid,) = run_ge("AffineGrid", [theta, i64(1, 1, 4, 5)], {"align_corners": 1}, opset=20)
    x = _r(1, 1, 4, 5)
    (y,) = run_ge("GridSample", [x, grid], {"align_corners": 1}, opset=20, known=[])
    np.testing.assert_allclose(y, x, rtol=1e-5, atol=1e-6)


ROIS = np.array([[0.5, 0.5, 6.2, 5.5], [2.0, 1.0, 3.0, 7.5], [-2.0, -1.0, 9.5, 12.0], [3, 3, 3, 3]], np.float32)


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("transform", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("ratio", [0, 2])
def test_roi_align(mode: str, transform: str, ratio: int) -> None:
    attrs = {"mode": mode, "coordinate_transformation_mode": transform, "sampling_ratio": ratio,
             "output_height": 3, "output_width": 2, "spatial_scale": 0.8}
    ins = [_r(2, 3, 8, 9), ROIS, np.array([0, 1, 1, 0], np.int64)]
    check("RoiAlign", ins, attrs, opset=16, known=[], rtol=1e-5, atol=1e-5)


DEFORM = [
    ({}, 1, 1, False, False),
    ({"pads": [1, 1, 1, 1]}, 1, 1, True, True),
    ({"strides": [2, 1], "dilations": [1, 2], "pads": [1, 2, 0, 1]}, 1, 1, True, False),
    ({"group": 2}, 2, 1, False, True),
    ({"offset_group": 2}, 1, 2, True, True),
    ({"group": 2, "offset_group": 2, "pads": [1, 1, 1, 1]}, 2, 2, True, True),
]


@pytest.mark.parametrize(("attrs", "group", "offset_group", "bias", "mask"), DEFORM)
def test_deform_conv(attrs: dict[str, Any], group: int, offset_group: int, bias: bool, mask: bool) -> None:
    c, oc, k = 4, 6, (2, 3)
    x = _r(2, c, 6, 7)
    strides, dil = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
    pads = attrs.get("pads", [0, 0, 0, 0])
    out = [(x.shape[2 + a] + pads[a] + pads[a + 2] - dil[a] * (k[a] - 1) - 1) // strides[a] + 1 for a in range(2)]
    ins: list[np.ndarray | None] = [x, _r(oc, c // group, *k), _r(2, offset_group * 6 * 2, *out, scale=1.5),
                                    _r(oc) if bias else None,
                                    RNG.random((2, offset_group * 6, *out)).astype(np.float32) if mask else None]
    check("DeformConv", ins, {"kernel_shape": list(k), **attrs}, opset=19, known=[], oracle="reference", rtol=1e-4,
          atol=1e-4)


def test_deform_conv_with_zero_offsets_is_a_conv() -> None:
    from tests.ops.elementwise_oracle import run_ge as run_plain

    x, w = _r(1, 4, 6, 6), _r(2, 2, 3, 3)
    attrs = {"group": 2, "pads": [1, 1, 1, 1], "strides": [2, 2]}
    (deformed,) = run_plain("DeformConv", [x, w, np.zeros((1, 18, 3, 3), np.float32)], attrs, opset=19)
    (conv,) = run_plain("Conv", [x, w], attrs, opset=11)
    np.testing.assert_allclose(deformed, conv, rtol=1e-5, atol=1e-5)


def test_infer_errors() -> None:
    f32 = "float32"
    infer_error("GridSample", [((1, 2, 4, 4), f32), ((1, 3, 3, 3), f32)],
                match=r"grid must be \[N, out dims \(2\), 2\]")
    infer_error("GridSample", [((1, 2, 4, 4), f32), ((2, 3, 3, 2), f32)], match="disagree on the batch")
    infer_error("GridSample", [((1, 2, 4, 4), f32), ((1, 3, 3, 2), f32)], {"mode": "area"}, match="mode 'area'")
    infer_error("AffineGrid", [((1, 3, 3), f32), ((4,), "int64")], match=r"theta must be \[N, 2, 3\]")
    infer_error("RoiAlign", [((1, 2, 4, 4), f32), ((3, 5), f32), ((3,), "int64")],
                match=r"rois must be \[num_rois, 4\]")
    infer_error("RoiAlign", [((1, 2, 4, 4), f32), ((3, 4), f32), ((2,), "int64")], match="batch_indices must be int64")
    x, w = ((1, 4, 6, 6), f32), ((2, 4, 3, 3), f32)
    infer_error("DeformConv", [x, w, ((1, 17, 4, 4), f32)], match="offset must have offset_group")
    infer_error("DeformConv", [x, w, ((1, 18, 5, 4), f32)], match="must be the output's")
    infer_error("DeformConv", [x, ((2, 3, 3, 3), f32), ((1, 18, 4, 4), f32)], match="W needs C/group")
    assert infer("DeformConv", [((-1, 4, 6, 6), f32), w, ((-1, 18, 4, 4), f32)])[0].shape == (-1, 2, 4, 4)
    assert infer("AffineGrid", [((2, 2, 3), f32), ((4,), "int64")])[0].shape == (2, -1, -1, 2)


def test_facts_and_costs() -> None:
    expected = {"GridSample": Category.OPAQUE, "AffineGrid": Category.OPAQUE, "RoiAlign": Category.OPAQUE,
                "DeformConv": Category.CUBE}
    for op, category in expected.items():
        opdef = REGISTRY.get(op)
        assert opdef is not None and opdef.category == category, op
    deform = REGISTRY.get("DeformConv")
    assert deform is not None
    descs = [make_desc((1, 4, 6, 6), "float32"), make_desc((2, 4, 3, 3), "float32"),
             make_desc((1, 18, 4, 4), "float32")]
    cost = deform.cost(make_node("DeformConv", [True] * 3), descs, [make_desc((1, 2, 4, 4), "float32")])
    assert cost.flops >= 2 * 2 * 16 * 4 * 9  # at least the GEMM's multiply-adds


OPS = {"GridSample", "AffineGrid", "RoiAlign", "DeformConv"}


@pytest.mark.parametrize("case", cases_for(OPS), ids=lambda c: c.name)
def test_conformance(case: Any) -> None:
    run_case(case)
