"""Resize (opsets 10, 11, 13, 18, 19) and Upsample (opsets 7, 9): every mode, nearest_mode and
coordinate_transformation_mode, scales and sizes, axes, keep_aspect_ratio_policy, antialias, against
onnx.reference and ONNX Runtime; inference with unknown values and dims; errors; the tensor budget."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx.backend.test.case.test_case import TestCase

from ge_core.errors import ResourceLimitError
from ge_core.kernels import resize as resize_jit
from ge_core.ops import REGISTRY, resize
from ge_core.ops.registry import Category
from tests.ops.conformance import run_case
from tests.ops.elementwise_oracle import infer, infer_error, make_node
from tests.ops.shape_oracle import check, conformance_cases, i64, run_ge

RNG = np.random.default_rng(17)
X = RNG.standard_normal((1, 2, 4, 6)).astype(np.float32)
EMPTY = np.zeros(0, dtype=np.float32)
COORDS = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric"]
# integral output lengths (4 x 1.5 = 6, 6 x 0.5 = 3 ...), where ORT and onnx.reference agree exactly
SCALES = [(1.0, 1.0, 1.5, 0.5), (1.0, 1.0, 2.0, 3.0), (1.0, 1.0, 0.5, 1.0), (1.0, 1.0, 0.75, 2.5)]


def _f32(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def _resize(x: np.ndarray, attrs: dict[str, Any], *, scales: tuple[float, ...] | None = None,
            sizes: tuple[int, ...] | None = None, roi: np.ndarray | None = None, opset: int = 19,
            oracle: str = "both", rtol: float = 1e-5) -> np.ndarray:
    inputs = [x, roi if roi is not None else None if opset >= 13 else EMPTY,
              None if scales is None else _f32(*scales), None if sizes is None else i64(*sizes)]
    if opset < 13 and scales is None:
        inputs[2] = EMPTY
    (y,) = check("Resize", inputs, attrs, opset, oracle=oracle, rtol=rtol, atol=1e-5)
    return y


@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
@pytest.mark.parametrize("coord", COORDS)
@pytest.mark.parametrize("scales", SCALES, ids=str)
def test_nearest(nearest_mode: str, coord: str, scales: tuple[float, ...]) -> None:
    attrs = {"mode": "nearest", "nearest_mode": nearest_mode, "coordinate_transformation_mode": coord}
    y = _resize(X, attrs, scales=scales)
    assert set(np.unique(y)) <= set(np.unique(X))  # nearest only copies


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("coord", COORDS)
@pytest.mark.parametrize("scales", SCALES, ids=str)
def test_linear_and_cubic_scales(mode: str, coord: str, scales: tuple[float, ...]) -> None:
    _resize(X, {"mode": mode, "coordinate_transformation_mode": coord}, scales=scales)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("coord", COORDS)
@pytest.mark.parametrize("sizes", [(1, 2, 7, 3), (1, 2, 1, 9), (1, 2, 3, 1)], ids=str)
def test_sizes(mode: str, coord: str, sizes: tuple[int, ...]) -> None:
    # pytorch_half_pixel onto a length of 1: the spec (and ORT) sample at 0, onnx.reference at -0.5,
    # which only cubic's wider kernel can tell apart
    oracle = "onnxruntime" if coord == "pytorch_half_pixel" and mode == "cubic" and 1 in sizes else "both"
    _resize(X, {"mode": mode, "coordinate_transformation_mode": coord}, sizes=sizes, oracle=oracle)


@pytest.mark.parametrize("a,exclude", [(-0.5, 1), (-0.75, 0), (-0.75, 1), (-0.6, 0)])
def test_cubic_coefficient_and_exclude_outside(a: float, exclude: int) -> None:
    attrs = {"mode": "cubic", "cubic_coeff_a": a, "exclude_outside": exclude}
    _resize(X, attrs, scales=(1.0, 1.0, 2.0, 0.5))
    _resize(X, attrs, sizes=(1, 2, 3, 11))


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("extrapolation", [None, 10.0])
def test_tf_crop_and_resize(mode: str, extrapolation: float | None) -> None:
    attrs: dict[str, Any] = {"mode": mode, "coordinate_transformation_mode": "tf_crop_and_resize"}
    if extrapolation is not None:
        attrs["extrapolation_value"] = extrapolation
    roi = _f32(0, 0, 0.2, -0.3, 1, 1, 0.9, 1.2)
    _resize(X, attrs, sizes=(1, 2, 5, 7), roi=roi)
    _resize(X, attrs, sizes=(1, 2, 1, 4), roi=roi)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("target", [(1, 2, 2, 3), (1, 2, 3, 2), (1, 2, 8, 4)], ids=str)
def test_antialias(mode: str, target: tuple[int, ...]) -> None:
    _resize(X, {"mode": mode, "antialias": 1}, sizes=target)
    _resize(X, {"mode": mode, "antialias": 1}, scales=(1.0, 1.0, 0.5, 0.5))


@pytest.mark.parametrize("policy", ["stretch", "not_larger", "not_smaller"])
@pytest.mark.parametrize("axes", [[2, 3], [3, 2]], ids=str)
def test_axes_and_keep_aspect_ratio(policy: str, axes: list[int]) -> None:
    attrs = {"mode": "linear", "axes": axes, "keep_aspect_ratio_policy": policy}
    y = _resize(X, attrs, sizes=(5, 9))
    if policy == "stretch":
        assert y.shape[2:] == ((5, 9) if axes[0] == 2 else (9, 5))
    _resize(X, {"mode": "nearest", "axes": axes}, scales=(2.0, 0.5))
    # negative axes: onnx.reference fails on them and ORT ignores them with a keep_aspect_ratio_policy,
    # so they are checked against the same resize with the axes written positively
    negative = {**attrs, "axes": [a - 4 for a in axes]}
    (same,) = run_ge("Resize", [X, None, None, i64(5, 9)], negative, 19)
    np.testing.assert_array_equal(same, y)


def test_three_d_and_integer_data() -> None:
    x3 = RNG.standard_normal((2, 3, 5)).astype(np.float32)
    _resize(x3, {"mode": "linear"}, scales=(1.0, 2.0, 0.6), oracle="reference")
    u8 = RNG.integers(0, 256, size=(1, 1, 4, 4)).astype(np.uint8)
    y = _resize(u8, {"mode": "nearest"}, scales=(1.0, 1.0, 2.0, 2.0))
    assert y.dtype == np.uint8


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_older_opsets(opset: int, mode: str) -> None:
    _resize(X, {"mode": mode, "coordinate_transformation_mode": "align_corners"}, scales=(1, 1, 2, 0.5),
            opset=opset)
    _resize(X, {"mode": mode}, sizes=(1, 2, 5, 5), opset=opset)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", [(1.0, 1.0, 2.0, 3.0), (1.0, 1.0, 1.5, 0.5), (1.0, 1.0, 0.5, 0.7)],
                         ids=str)
def test_resize_opset_10(mode: str, scales: tuple[float, ...]) -> None:
    # asymmetric coordinates and ORT's legacy nearest rounding: onnx.reference has no Resize-10
    (y,) = check("Resize", [X, _f32(*scales)], {"mode": mode}, 10, oracle="onnxruntime", rtol=1e-5)
    assert y.shape == (1, 2, int(4 * scales[2]), int(6 * scales[3]))


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", [(1.0, 1.0, 2.0, 3.0), (1.0, 1.0, 1.5, 2.5), (1.0, 2.0, 1.0, 1.0)],
                         ids=str)
def test_upsample(mode: str, scales: tuple[float, ...]) -> None:
    check("Upsample", [X, _f32(*scales)], {"mode": mode}, 9, oracle="onnxruntime", rtol=1e-5)
    check("Upsample", [X], {"mode": mode, "scales": list(scales)}, 7, oracle="onnxruntime", rtol=1e-5)


def test_upsample_nearest_integer_scales_match_reference() -> None:
    check("Upsample", [X, _f32(1, 1, 2, 3)], {"mode": "nearest"}, 9)


# ---- inference -----------------------------------------------------------------------------------
def test_resize_infer() -> None:
    x = ((-1, 3, 8, 8), "float32")
    scales = ((4,), "float32")
    sizes = ((4,), "int64")
    (y,) = infer("Resize", [x, None, scales], {}, 13, values=[None, None, _f32(1, 1, 2, 0.5)])
    assert y.shape == (-1, 3, 16, 4)
    (y,) = infer("Resize", [x, None, None, sizes], {}, 13, values=[None, None, None, i64(1, 3, 5, 5)])
    assert y.shape == (1, 3, 5, 5)
    (y,) = infer("Resize", [x, ((8,), "float32"), scales], {}, 13, values=[None, None, _f32(1, 1, 2, 0.5)])
    assert y.shape == (-1, 3, 16, 4)  # an unknown roi does not matter for the shape
    (y,) = infer("Resize", [x, None, scales], {}, 13)  # scales not known yet
    assert y.shape == (-1, -1, -1, -1)
    (y,) = infer("Resize", [x, None, None, ((2,), "int64")], {"axes": [2, 3]}, 18)
    assert y.shape == (-1, 3, -1, -1)
    (y,) = infer("Resize", [x, None, None, ((2,), "int64")], {"axes": [2, 3], "keep_aspect_ratio_policy":
                                                             "not_larger"}, 18, values=[None, None, None, i64(4, 6)])
    assert y.shape == (-1, 3, 4, 4)
    (y,) = infer("Upsample", [((2, 3, 4), "float32")], {"scales": [1.0, 2.0, 2.0]}, 7)
    assert y.shape == (2, 6, 8)


@pytest.mark.parametrize("attrs,values,match", [
    ({"mode": "area"}, [None, None, _f32(1, 1, 2, 2)], "mode 'area'"),
    ({"coordinate_transformation_mode": "weird"}, [None, None, _f32(1, 1, 2, 2)], "coordinate"),
    ({"nearest_mode": "up"}, [None, None, _f32(1, 1, 2, 2)], "nearest_mode"),
    ({}, [None, None, _f32(1, 2, 2)], "3 values for 4 axes"),
    ({}, [None, None, _f32(1, 1, -2, 2)], "positive"),
    ({}, [None, None, None], "exactly one of scales and sizes"),
    ({"coordinate_transformation_mode": "tf_crop_and_resize"}, [None, None, _f32(1, 1, 2, 2)], "roi"),
    ({"axes": [2, 2]}, [None, None, _f32(2, 2)], "repeat"),
])
def test_resize_errors(attrs: dict[str, Any], values: list[np.ndarray | None], match: str) -> None:
    descs = [((1, 3, 8, 8), "float32"), None, None if values[2] is None else ((len(values[2]),), "float32")]
    infer_error("Resize", descs, attrs, 19, values=values, match=match)


def test_upsample_errors() -> None:
    infer_error("Upsample", [((1, 3, 8, 8), "float32"), ((4,), "float32")], {}, 9,
                values=[None, _f32(1, 1, 0.5, 2)], match=">= 1")
    infer_error("Upsample", [((1, 3, 8, 8), "float32")], {"mode": "cubic", "scales": [1.0, 1, 2, 2]}, 7,
                match="mode 'cubic'")
    infer_error("Upsample", [((1, 3, 8, 8), "float32")], {}, 7, match="scales attribute")


def test_resize_refuses_huge_before_allocating() -> None:
    op = REGISTRY.get("Resize")
    assert op is not None
    node = make_node("Resize", [True, False, False, True], {}, 13)
    with pytest.raises(ResourceLimitError, match="node 'n0'"):
        op.kernel(node, [X, None, None, i64(1000, 2, 100000, 100000)])


def test_categories() -> None:
    assert all(op.category == Category.INJECTIVE for op in resize.OPS)


# ---- ONNX conformance ----------------------------------------------------------------------------
# Every case made of our ops passes. Note: for align_corners and tf_crop_and_resize the conformance data
# divide by the fractional resized length (scale x input length), which ORT does not (it uses the integer
# length); we follow ONNX (see ge_core/ops/resize_kernels.py).
@pytest.mark.parametrize("case", conformance_cases(resize))
def test_conformance(case: TestCase) -> None:
    run_case(case)


@pytest.mark.parametrize("coord", COORDS)
@pytest.mark.parametrize("nearest_mode", ["floor", "round_prefer_floor", "round_prefer_ceil", "ceil"])
@pytest.mark.parametrize("scales", [(1.0, 1.0, 2.0, 2.0), (1.0, 1.0, 4.0, 3.0), (1.0, 2.0, 1.0, 8.0)])
def test_integer_nearest_upsampling_takes_the_repeat_path(coord: str, nearest_mode: str,
                                                           scales: tuple[float, ...]) -> None:
    """Where every output element of an integer upsampling reads input element i // k (as the taps say),
    the kernel repeats elements in one copy: the result is the oracles' either way, and the plan says which
    path it took (only the modes that really are repeats take it)."""
    attrs = {"mode": "nearest", "coordinate_transformation_mode": coord, "nearest_mode": nearest_mode}
    y = _resize(X, attrs, scales=scales)
    node = make_node("Resize", [True, False, True, False], attrs, opset=19)
    inputs = [X, None, _f32(*scales), None]
    plan = resize._plan(node, inputs)
    repeats = tuple(round(s) for s in scales)
    index_is_floor = all(np.array_equal(t.index[:, 0], np.arange(X.shape[a] * repeats[a]) // repeats[a])
                         for a, t in plan.taps)
    assert (plan.repeats == repeats) == index_is_floor
    if (coord, nearest_mode) in (("asymmetric", "floor"), ("half_pixel", "round_prefer_floor")):
        assert plan.repeats == repeats  # the exporters' two spellings of nearest upsampling
    if plan.repeats is not None:
        np.testing.assert_array_equal(resize._repeat(X, plan.repeats), y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64, np.uint8, np.bool_])
@pytest.mark.parametrize("factors", [(1, 1, 2, 2), (1, 1, 4, 4), (1, 1, 3, 1), (1, 1, 1, 5), (1, 1, 8, 8)])
def test_compiled_upsampling_is_the_repeat(dtype: type, factors: tuple[int, ...]) -> None:
    """The compiled nearest upsampling (kernels/resize.py) gives the numpy repeat exactly."""
    if not resize_jit.supports(np.zeros((1, 1, 1, 1), dtype), factors):
        pytest.skip("numba is off (GE_NO_JIT=1)")
    x = (np.random.default_rng(3).standard_normal((2, 40, 37, 29)) * 50).astype(dtype)
    want = resize._repeat(x, factors)
    np.testing.assert_array_equal(resize_jit.upsample(x, factors), want)
    kernel = resize_jit.upsample_kernel
    assert kernel is not None
    bits = np.dtype(f"u{x.itemsize}")
    y = np.zeros_like(want)
    kernel(x.view(bits), factors[2], factors[3], y.view(bits))
    np.testing.assert_array_equal(y, want)
