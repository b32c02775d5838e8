"""Conv and ConvTranspose: inference (shapes, unknown dims, every attribute error), kernels against ONNX
Runtime / onnx.reference over strides, dilations, pads, auto_pad, groups (incl. depthwise), 1-D/2-D/3-D,
the chunked im2col path, costs, speed, and ONNX's conformance cases."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest

from ge_core.ops import REGISTRY, conv
from ge_core.ops.common import make_desc
from ge_core.ops.registry import Category
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import check, infer, infer_error, run_ge

RNG = np.random.default_rng(0)
F32 = "float32"


def _rand(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


# ---- Conv inference ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("x", "w", "attrs", "want"), [
    ((1, 3, 224, 224), (64, 3, 7, 7), {"strides": [2, 2], "pads": [3, 3, 3, 3]}, (1, 64, 112, 112)),
    ((2, 8, 10, 11), (4, 8, 3, 3), {}, (2, 4, 8, 9)),
    ((2, 8, 10, 11), (4, 8, 3, 3), {"pads": [1, 0, 2, 1], "strides": [2, 3]}, (2, 4, 6, 4)),
    ((2, 8, 10, 11), (4, 2, 3, 3), {"group": 4, "dilations": [2, 3]}, (2, 4, 6, 5)),
    ((1, 8, 10, 11), (4, 8, 3, 3), {"auto_pad": "SAME_UPPER", "strides": [2, 3]}, (1, 4, 5, 4)),
    ((1, 8, 10, 11), (4, 8, 3, 3), {"auto_pad": "SAME_LOWER", "strides": [3, 2]}, (1, 4, 4, 6)),
    ((1, 8, 10, 11), (4, 8, 3, 3), {"auto_pad": "VALID", "pads": [5, 5, 5, 5]}, (1, 4, 8, 9)),
    ((1, 4, 20), (6, 4, 5), {"strides": [2]}, (1, 6, 8)),
    ((1, 4, 5, 6, 7), (6, 4, 3, 3, 3), {"pads": [1, 1, 1, 1, 1, 1]}, (1, 6, 5, 6, 7)),
    ((-1, 3, -1, -1), (16, 3, 3, 3), {"pads": [1, 1, 1, 1]}, (-1, 16, -1, -1)),
    ((1, -1, 32, -1), (16, 3, 3, 3), {"strides": [2, 2]}, (1, 16, 15, -1)),
    ((1, 3, -1, 32), (16, 3, 3, 3), {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, (1, 16, -1, 16)),
    ((1, 3, 8, 8), (16, 3, -1, -1), {}, (1, 16, -1, -1)),
])
def test_conv_infer_shapes(x: tuple[int, ...], w: tuple[int, ...], attrs: dict[str, Any],
                           want: tuple[int, ...]) -> None:
    (out,) = infer("Conv", [(x, F32), (w, F32)], attrs)
    assert out.shape == want and out.dtype == F32


def test_conv_infer_with_bias_and_dtypes() -> None:
    for dtype in ("float16", "float64"):
        (out,) = infer("Conv", [((1, 3, 8, 8), dtype), ((4, 3, 3, 3), dtype), ((4,), dtype)])
        assert out.shape == (1, 4, 6, 6) and out.dtype == dtype


@pytest.mark.parametrize(("x", "w", "attrs", "match"), [
    ((1, 3, 8, 8), (4, 3, 3, 3), {"pads": [1, 1, 1]}, "pads has 3 values"),
    ((1, 3, 8, 8), (4, 3, 3, 3), {"pads": [1, -1, 1, 1]}, "must be non-negative"),
    ((1, 3, 8, 8), (4, 3, 3, 3), {"strides": [0, 1]}, "'strides' values \\[0, 1\\] must all be >= 1"),
    ((1, 3, 8, 8), (4, 3, 3, 3), {"strides": [1, 1, 1]}, "'strides' has 3 values"),
    ((1, 3, 8, 8), (4, 3, 3, 3), {"dilations": [-1, 1]}, "'dilations' values"),
    ((1, 3, 2, 8), (4, 3, 3, 3), {}, "kernel extent 3 .* larger than the padded input 2"),
    ((1, 3, 8, 8), (4, 3, 3, 3), {"dilations": [4, 1]}, "kernel extent 9"),
    ((1, 6, 8, 8), (4, 3, 3, 3), {"group": 4}, "group=4 does not divide input channels \\(6\\)"),
    ((1, 6, 8, 8), (5, 3, 3, 3), {"group": 2}, "does not divide output channels"),
    ((1, 6, 8, 8), (4, 2, 3, 3), {"group": 2}, "weight has 2 input channels per group .* \\(expected 3\\)"),
    ((1, 6, 8, 8), (4, 6, 3, 3), {"group": 0}, "group=0 must be >= 1"),
    ((1, 3, 8, 8), (4, 3, 3), {}, "weight rank 3 must equal input rank 4"),
    ((1, 3), (4, 3), {}, "rank >= 3"),
    ((1, 3, 8, 8), (4, 3, 3, 3), {"kernel_shape": [3, 2]}, "kernel_shape \\[3, 2\\] does not match"),
    ((1, 3, 8, 8), (4, 3, 3, 3), {"auto_pad": "SAME"}, "auto_pad='SAME' is not one of"),
])
def test_conv_infer_errors(x: tuple[int, ...], w: tuple[int, ...], attrs: dict[str, Any], match: str) -> None:
    infer_error("Conv", [(x, F32), (w, F32)], attrs, match=match)


def test_conv_infer_bias_and_dtype_errors() -> None:
    x, w = ((1, 3, 8, 8), F32), ((4, 3, 3, 3), F32)
    infer_error("Conv", [x, w, ((5,), F32)], match="bias B must have shape \\[4\\]")
    infer_error("Conv", [x, w, ((4, 1), F32)], match="bias B must have shape")
    infer_error("Conv", [x, ((4, 3, 3, 3), "float16")], match="share one dtype")
    infer_error("Conv", [((1, 3, 8, 8), "int64"), ((4, 3, 3, 3), "int64")], match="got int64")
    infer_error("Conv", [x], match="expects 2 to 3 inputs")


# ---- Conv kernels ------------------------------------------------------------------------------------

CONV_CASES: list[tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]] = [
    ((2, 4, 9, 9), (6, 4, 3, 3), {}),
    ((1, 4, 10, 11), (6, 4, 3, 3), {"strides": [2, 2], "pads": [1, 0, 2, 1]}),
    ((2, 4, 9, 8), (6, 2, 3, 3), {"group": 2, "dilations": [2, 1], "pads": [1, 2, 0, 1]}),
    ((1, 4, 9, 8), (6, 4, 2, 4), {"auto_pad": "SAME_UPPER", "strides": [2, 3]}),
    ((1, 4, 9, 8), (6, 4, 4, 3), {"auto_pad": "SAME_LOWER", "strides": [3, 2]}),
    ((1, 4, 9, 8), (6, 4, 3, 3), {"auto_pad": "VALID", "strides": [2, 2]}),
    ((2, 8, 9, 8), (8, 1, 3, 3), {"group": 8, "pads": [1, 1, 1, 1]}),  # depthwise
    ((1, 4, 9, 8), (8, 1, 3, 3), {"group": 4, "auto_pad": "SAME_LOWER", "strides": [2, 2]}),  # multiplier 2
    ((1, 6, 12, 12), (6, 1, 5, 5), {"group": 6, "strides": [2, 2], "dilations": [2, 2], "pads": [4, 4, 4, 4]}),
    ((2, 8, 7, 6), (12, 8, 1, 1), {}),  # 1x1 fast path
    ((2, 8, 7, 6), (12, 4, 1, 1), {"group": 2}),
    ((1, 8, 7, 6), (12, 8, 1, 1), {"strides": [2, 2]}),
    ((1, 8, 7, 6), (12, 8, 1, 1), {"pads": [1, 0, 0, 1]}),
    ((1, 3, 20), (5, 3, 4), {"strides": [3], "pads": [2, 1]}),  # 1-D
    ((2, 4, 17), (4, 1, 3), {"group": 4, "dilations": [3]}),
    ((1, 2, 5, 6, 7), (3, 2, 2, 3, 2), {"pads": [1, 1, 1, 0, 0, 0]}),  # 3-D
    ((1, 4, 6, 6, 6), (4, 2, 3, 3, 3), {"group": 2, "strides": [2, 1, 2], "auto_pad": "SAME_UPPER"}),
    ((1, 3, 5, 5), (2, 3, 5, 5), {}),  # kernel covers the whole input
    ((1, 3, 4, 4), (2, 3, 3, 3), {"pads": [5, 5, 5, 5]}),  # pads larger than the kernel
]


def _id(case: tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]) -> str:
    x, w, attrs = case
    return f"x{list(x)}-w{list(w)}-" + ",".join(f"{k}={v}" for k, v in attrs.items())


@pytest.mark.parametrize("case", CONV_CASES, ids=_id)
@pytest.mark.parametrize("bias", [False, True])
def test_conv_matches_onnxruntime(case: tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]],
                                  bias: bool) -> None:
    xs, ws, attrs = case
    inputs = [_rand(*xs), _rand(*ws)] + ([_rand(ws[0])] if bias else [])
    check("Conv", inputs, attrs, opset=11, oracle="onnxruntime", rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("opset", [1, 11, 22])
def test_conv_opsets_match_reference(opset: int) -> None:
    inputs = [_rand(1, 4, 9, 8), _rand(6, 2, 3, 3), _rand(6)]
    check("Conv", inputs, {"group": 2, "strides": [2, 1], "pads": [1, 1, 0, 2]}, opset=opset,
          oracle="reference", rtol=1e-4, atol=1e-4)


def test_conv_dilation_with_same_padding_matches_reference() -> None:
    # ONNX Runtime refuses dilations with SAME_*; the spec (and onnx.reference) define it.
    for auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        check("Conv", [_rand(1, 2, 9, 8), _rand(3, 2, 3, 3)], {"auto_pad": auto_pad, "dilations": [2, 3]},
              oracle="reference", rtol=1e-4, atol=1e-4)


def test_conv_float16_and_float64() -> None:
    x, w, b = _rand(1, 4, 8, 8), _rand(6, 4, 3, 3), _rand(6)
    want = run_ge("Conv", [x.astype(np.float64), w.astype(np.float64), b.astype(np.float64)])[0]
    check("Conv", [x.astype(np.float64), w.astype(np.float64), b.astype(np.float64)],
          oracle="reference", rtol=1e-12, atol=1e-12)
    (half,) = run_ge("Conv", [x.astype(np.float16), w.astype(np.float16), b.astype(np.float16)])
    assert half.dtype == np.float16
    np.testing.assert_allclose(half, want, rtol=2e-2, atol=2e-2)


def test_conv_chunked_im2col_matches_single_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    cases: list[tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]] = [
        ((2, 3, 23, 9), (4, 3, 3, 3), {"strides": [2, 1], "pads": [1, 1, 2, 0]}),
        ((1, 4, 11, 6, 5), (2, 2, 3, 2, 2), {"group": 2, "dilations": [2, 1, 1]})]
    for xs, ws, attrs in cases:
        inputs = [_rand(*xs), _rand(*ws)]
        whole = run_ge("Conv", inputs, attrs)[0]
        monkeypatch.setattr(conv, "IM2COL_BUDGET_BYTES", 1024)  # a few output rows per slab
        chunked = run_ge("Conv", inputs, attrs)[0]
        monkeypatch.undo()
        np.testing.assert_allclose(chunked, whole, rtol=1e-6, atol=1e-6)


def test_conv_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 64->64 3x3 conv at 112x112 needs little beyond its input and output: with a 4 MiB budget the im2col
    path builds its ~29 MiB column buffer in slabs (the compiled im2col of ge_core/kernels declines such a
    buffer and leaves it to the reference)."""
    x, w = _rand(1, 64, 112, 112), _rand(64, 64, 3, 3)
    monkeypatch.setattr(conv, "IM2COL_BUDGET_BYTES", 4 << 20)
    run_ge("Conv", [x, w], {"pads": [1, 1, 1, 1]})  # compiled kernels loaded before counting
    tracemalloc.start()
    (y,) = run_ge("Conv", [x, w], {"pads": [1, 1, 1, 1]})
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    io = x.nbytes * 3 + y.nbytes * 2  # the read-only input copies, padded input, output and one slab result
    assert peak < io + (8 << 20), peak
    monkeypatch.undo()
    np.testing.assert_allclose(y, run_ge("Conv", [x, w], {"pads": [1, 1, 1, 1]})[0], rtol=1e-5, atol=1e-4)


# ---- ConvTranspose -----------------------------------------------------------------------------------

TRANSPOSE_CASES: list[tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]] = [
    ((2, 4, 5, 5), (4, 3, 3, 3), {}),
    ((1, 4, 5, 6), (4, 3, 3, 3), {"strides": [2, 2], "pads": [1, 0, 2, 1]}),
    ((2, 4, 5, 4), (4, 3, 3, 3), {"group": 2, "strides": [2, 3], "auto_pad": "SAME_UPPER"}),
    ((1, 4, 5, 4), (4, 1, 3, 3), {"group": 4, "strides": [2, 2], "auto_pad": "SAME_LOWER"}),
    ((1, 2, 4, 4), (2, 3, 3, 3), {"strides": [3, 2], "output_padding": [1, 1]}),
    ((1, 2, 4, 4), (2, 3, 3, 3), {"strides": [3, 2], "output_shape": [14, 10]}),  # beyond the natural size
    ((1, 2, 4, 4), (2, 3, 3, 3), {"strides": [3, 2], "output_shape": [10, 8]}),
    ((1, 2, 4, 5), (2, 3, 2, 3), {"dilations": [2, 3], "pads": [1, 1, 0, 2]}),
    ((1, 2, 4, 5), (2, 3, 3, 3), {"auto_pad": "VALID", "strides": [2, 2]}),
    ((1, 3, 20), (3, 5, 4), {"strides": [3]}),
    ((1, 2, 5, 6, 7), (2, 3, 2, 3, 2), {"pads": [1, 1, 1, 0, 0, 0], "strides": [1, 2, 1]}),
]


@pytest.mark.parametrize("case", TRANSPOSE_CASES, ids=_id)
def test_conv_transpose_matches_onnxruntime(case: tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]
                                            ) -> None:
    xs, ws, attrs = case
    cout = ws[1] * attrs.get("group", 1)
    check("ConvTranspose", [_rand(*xs), _rand(*ws), _rand(cout)], attrs, opset=11, oracle="onnxruntime",
          rtol=1e-4, atol=1e-4)
    check("ConvTranspose", [_rand(*xs), _rand(*ws)], attrs, opset=22, oracle="onnxruntime",
          rtol=1e-4, atol=1e-4)


def test_conv_transpose_output_shape_with_batch_and_channels() -> None:
    """Some exporters write output_shape as N, C, spatial...; ONNX's checker refuses it, ORT's kernel takes
    the trailing dims, and so do we."""
    x, w = _rand(1, 2, 4, 4), _rand(2, 3, 3, 3)
    full = run_ge("ConvTranspose", [x, w], {"strides": [2, 2], "output_shape": [1, 3, 8, 9]})[0]
    spatial = run_ge("ConvTranspose", [x, w], {"strides": [2, 2], "output_shape": [8, 9]})[0]
    np.testing.assert_array_equal(full, spatial)


@pytest.mark.parametrize(("x", "w", "attrs", "want"), [
    ((1, 4, 5, 5), (4, 3, 3, 3), {"strides": [2, 2]}, (1, 3, 11, 11)),
    ((1, 4, 5, 5), (4, 3, 3, 3), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}, (1, 3, 10, 10)),
    ((1, 4, 5, 5), (4, 3, 3, 3), {"strides": [2, 2], "output_padding": [1, 0], "pads": [1, 1, 1, 1]},
     (1, 3, 10, 9)),
    ((1, 4, 5, 5), (4, 2, 3, 3), {"group": 2}, (1, 4, 7, 7)),
    ((-1, 4, -1, 5), (4, 3, 3, 3), {}, (-1, 3, -1, 7)),
    ((-1, 4, -1, 5), (4, 3, 3, 3), {"output_shape": [9, 9]}, (-1, 3, 9, 9)),
    ((1, -1, 5, 5), (4, -1, 3, 3), {}, (1, -1, 7, 7)),
])
def test_conv_transpose_infer(x: tuple[int, ...], w: tuple[int, ...], attrs: dict[str, Any],
                              want: tuple[int, ...]) -> None:
    (out,) = infer("ConvTranspose", [(x, F32), (w, F32)], attrs)
    assert out.shape == want


@pytest.mark.parametrize(("x", "w", "attrs", "match"), [
    ((1, 4, 5, 5), (3, 3, 3, 3), {}, "weight dim 0 \\(3\\) must equal the input channels \\(4\\)"),
    ((1, 4, 5, 5), (4, 3, 3, 3), {"group": 3}, "group=3 does not divide input channels"),
    ((1, 4, 5, 5), (4, 3, 3, 3), {"output_shape": [9]}, "output_shape \\[9\\] must give 2"),
    ((1, 4, 5, 5), (4, 3, 3, 3), {"output_padding": [1]}, "'output_padding' has 1 values"),
    ((1, 4, 5, 5), (4, 3, 3, 3), {"pads": [4, 4, 4, 4]}, "pads 4\\+4 remove the whole output"),
    ((1, 4, 5, 5), (4, 3, 3, 3), {"strides": [1, 0]}, "'strides' values"),
])
def test_conv_transpose_infer_errors(x: tuple[int, ...], w: tuple[int, ...], attrs: dict[str, Any],
                                     match: str) -> None:
    infer_error("ConvTranspose", [(x, F32), (w, F32)], attrs, match=match)
    infer_error("ConvTranspose", [((1, 4, 5, 5), F32), ((4, 3, 3, 3), F32), ((4,), F32)],
                match="bias B must have shape \\[3\\]")


# ---- registry facts ----------------------------------------------------------------------------------

def test_categories_and_costs() -> None:
    assert all(op.category == Category.CUBE for op in conv.OPS)
    op = REGISTRY.get("Conv")
    assert op is not None
    x, w, b = ((2, 4, 8, 8), F32), ((6, 2, 3, 3), F32), ((6,), F32)
    (y,) = infer("Conv", [x, w, b], {"group": 2})
    descs = [make_desc(*x), make_desc(*w), make_desc(*b)]
    cost = op.cost(None, descs, [y])  # type: ignore[arg-type]
    assert y.shape == (2, 6, 6, 6)
    assert cost.flops == 2 * 2 * 6 * 36 * 2 * 9 + 2 * 6 * 36
    assert cost.bytes_read == 4 * (2 * 4 * 64 + 6 * 2 * 9 + 6) and cost.bytes_written == 4 * 2 * 6 * 36
    top = REGISTRY.get("ConvTranspose")
    assert top is not None
    (yt,) = infer("ConvTranspose", [x, ((4, 3, 3, 3), F32)], {"group": 2})
    tcost = top.cost(None, [make_desc(*x), make_desc((4, 3, 3, 3), F32)], [yt])  # type: ignore[arg-type]
    assert tcost.flops == 2 * (2 * 4 * 64) * (3 * 9)


# ---- speed -------------------------------------------------------------------------------------------

# ---- conformance -------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", cases_for({"Conv", "ConvTranspose"}), ids=lambda c: c.name)
def test_conformance(case: Any) -> None:
    run_case(case)
