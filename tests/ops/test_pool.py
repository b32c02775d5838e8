"""MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool: inference (ceil_mode, auto_pad, unknown dims,
errors), kernels against ONNX Runtime over pads/strides/dilations/ceil_mode/count_include_pad in 1-D/2-D/
3-D, the Indices output, integer MaxPool, and ONNX's conformance cases."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ge_core.ops import REGISTRY, pool
from ge_core.ops.common import make_desc
from ge_core.ops.registry import Category
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import check, infer, infer_error, make_node, onnxruntime, run_ge

RNG = np.random.default_rng(0)
F32 = "float32"

def _rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


# ---- inference ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("x", "attrs", "want"), [
    ((1, 64, 112, 112), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, (1, 64, 56, 56)),
    ((1, 3, 9, 10), {"kernel_shape": [3, 2], "strides": [2, 2]}, (1, 3, 4, 5)),
    ((1, 3, 10, 9), {"kernel_shape": [3, 2], "strides": [2, 2]}, (1, 3, 4, 4)),
    ((1, 3, 10, 9), {"kernel_shape": [3, 2], "strides": [2, 2], "ceil_mode": 1}, (1, 3, 5, 5)),
    # ceil_mode drops a last window that would start in the end padding
    ((1, 3, 9, 10), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 0, 2, 1], "ceil_mode": 1},
     (1, 3, 5, 5)),
    ((1, 3, 9, 10), {"kernel_shape": [3, 3], "strides": [2, 1], "auto_pad": "SAME_UPPER"}, (1, 3, 5, 10)),
    ((1, 3, 9, 10), {"kernel_shape": [3, 3], "strides": [3, 3], "auto_pad": "SAME_LOWER"}, (1, 3, 3, 4)),
    ((1, 3, 9, 10), {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "VALID"}, (1, 3, 4, 4)),
    ((1, 3, 9, 10), {"kernel_shape": [3, 3], "dilations": [2, 3]}, (1, 3, 5, 4)),
    ((2, 3, 17), {"kernel_shape": [4], "strides": [3]}, (2, 3, 5)),
    ((2, 3, 5, 6, 7), {"kernel_shape": [2, 2, 2]}, (2, 3, 4, 5, 6)),
    ((-1, 3, -1, 10), {"kernel_shape": [3, 3], "strides": [2, 2]}, (-1, 3, -1, 4)),
])
def test_pool_infer_shapes(x: tuple[int, ...], attrs: dict[str, Any], want: tuple[int, ...]) -> None:
    y, indices = infer("MaxPool", [(x, F32)], attrs, n_outputs=2)
    assert y.shape == want and y.dtype == F32
    assert indices.shape == want and indices.dtype == "int64"
    (avg,) = infer("AveragePool", [(x, F32)], attrs, opset=19)
    assert avg.shape == want


def test_average_pool_dilations_only_from_opset_19() -> None:
    attrs = {"kernel_shape": [3, 3], "dilations": [2, 2]}
    assert infer("AveragePool", [((1, 1, 9, 9), F32)], attrs, opset=19)[0].shape == (1, 1, 5, 5)
    assert infer("AveragePool", [((1, 1, 9, 9), F32)], attrs, opset=11)[0].shape == (1, 1, 7, 7)


@pytest.mark.parametrize(("op", "x", "attrs", "match"), [
    ("MaxPool", (1, 3, 8, 8), {}, "attribute 'kernel_shape' is required"),
    ("MaxPool", (1, 3, 8, 8), {"kernel_shape": [3]}, "'kernel_shape' has 1 values"),
    ("MaxPool", (1, 3, 8, 8), {"kernel_shape": [0, 3]}, "'kernel_shape' values"),
    ("MaxPool", (1, 3, 8, 8), {"kernel_shape": [3, 3], "strides": [0, 1]}, "'strides' values"),
    ("MaxPool", (1, 3, 8, 8), {"kernel_shape": [3, 3], "pads": [1, 1]}, "pads has 2 values"),
    ("MaxPool", (1, 3, 8, 8), {"kernel_shape": [3, 3], "storage_order": 2}, "storage_order=2"),
    ("MaxPool", (1, 3, 2, 8), {"kernel_shape": [3, 3]}, "kernel extent 3 .* padded input 2"),
    ("MaxPool", (1, 3, 8, 8), {"kernel_shape": [3, 3], "auto_pad": "FULL"}, "auto_pad='FULL'"),
    ("AveragePool", (1, 3, 8, 8), {"kernel_shape": [9, 1]}, "kernel extent 9"),
    ("AveragePool", (1, 3, 8, 8), {"kernel_shape": [3, 3], "pads": [0, 3, 0, 0]}, "pads 3,0 on spatial axis 1 "
     "must be smaller than the kernel \\(3\\)"),
    ("MaxPool", (1, 3, 8, 8), {"kernel_shape": [2, 2], "pads": [0, 0, 2, 0]}, "pads 0,2 on spatial axis 0"),
    ("AveragePool", (1, 8), {"kernel_shape": [2]}, "rank >= 3"),
    ("GlobalMaxPool", (8,), {}, "rank >= 3"),
])
def test_pool_infer_errors(op: str, x: tuple[int, ...], attrs: dict[str, Any], match: str) -> None:
    infer_error(op, [(x, F32)], attrs, match=match)


def test_pool_dtype_errors() -> None:
    infer_error("AveragePool", [((1, 3, 8, 8), "int32")], {"kernel_shape": [2, 2]}, match="got int32")
    infer_error("MaxPool", [((1, 3, 8, 8), "int64")], {"kernel_shape": [2, 2]}, match="got int64")
    infer_error("GlobalAveragePool", [((1, 3, 8, 8), "uint8")], match="got uint8")
    assert infer("MaxPool", [((1, 3, 8, 8), "uint8")], {"kernel_shape": [2, 2]})[0].dtype == "uint8"


def test_global_pool_infer() -> None:
    for op in ("GlobalAveragePool", "GlobalMaxPool"):
        assert infer(op, [((-1, 3, -1, 7), F32)])[0].shape == (-1, 3, 1, 1)
        assert infer(op, [((2, 3, 4, 5, 6), "float16")])[0].shape == (2, 3, 1, 1, 1)
        assert infer(op, [((2, 3, 4), F32)])[0].shape == (2, 3, 1)


# ---- kernels -----------------------------------------------------------------------------------------

POOL_CASES: list[tuple[tuple[int, ...], dict[str, Any]]] = [
    ((2, 3, 9, 10), {"kernel_shape": [3, 3]}),
    ((2, 3, 9, 10), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((2, 3, 9, 10), {"kernel_shape": [3, 2], "strides": [2, 2], "ceil_mode": 1}),
    ((2, 3, 9, 10), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 0, 2, 1], "ceil_mode": 1}),
    ((1, 2, 8, 7), {"kernel_shape": [2, 2], "strides": [3, 3], "pads": [1, 1, 1, 1], "ceil_mode": 1}),
    ((2, 3, 9, 10), {"kernel_shape": [3, 3], "strides": [2, 1], "auto_pad": "SAME_UPPER"}),
    ((2, 3, 9, 10), {"kernel_shape": [2, 4], "strides": [2, 3], "auto_pad": "SAME_LOWER"}),
    ((2, 3, 9, 10), {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "VALID"}),
    ((2, 3, 9, 10), {"kernel_shape": [3, 3], "dilations": [2, 2], "pads": [1, 2, 1, 0]}),
    ((1, 2, 8, 7), {"kernel_shape": [2, 3], "dilations": [2, 1], "strides": [2, 2], "ceil_mode": 1,
                    "pads": [1, 1, 1, 1]}),
    ((2, 3, 17), {"kernel_shape": [4], "strides": [3], "pads": [1, 2]}),  # 1-D
    ((2, 3, 17), {"kernel_shape": [3], "strides": [2], "ceil_mode": 1}),
    ((1, 2, 5, 6, 7), {"kernel_shape": [2, 3, 2], "strides": [2, 2, 1], "pads": [1, 1, 0, 0, 1, 1]}),  # 3-D
    ((1, 2, 5, 6, 7), {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2], "ceil_mode": 1}),
]


def _id(case: tuple[tuple[int, ...], dict[str, Any]]) -> str:
    x, attrs = case
    return f"x{list(x)}-" + ",".join(f"{k}={v}" for k, v in attrs.items())


@pytest.mark.parametrize("case", POOL_CASES, ids=_id)
def test_max_pool_matches_onnxruntime(case: tuple[tuple[int, ...], dict[str, Any]]) -> None:
    xs, attrs = case
    x = _rand(*xs)
    check("MaxPool", [x], attrs, opset=12, oracle="onnxruntime", rtol=0, atol=0)
    check("MaxPool", [x], attrs, opset=22, oracle="onnxruntime", rtol=0, atol=0)


@pytest.mark.parametrize("case", POOL_CASES, ids=_id)
@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_average_pool_matches_onnxruntime(case: tuple[tuple[int, ...], dict[str, Any]],
                                          count_include_pad: int) -> None:
    xs, attrs = case
    attrs = {**attrs, "count_include_pad": count_include_pad}
    check("AveragePool", [_rand(*xs)], attrs, opset=19, oracle="onnxruntime", rtol=1e-5, atol=1e-6)
    if "dilations" not in attrs:
        check("AveragePool", [_rand(*xs)], attrs, opset=11, oracle="onnxruntime", rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opset", [7, 10])
def test_average_pool_old_opsets(opset: int) -> None:
    attrs: dict[str, Any] = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 0, 0],
                             "count_include_pad": 1}
    check("AveragePool", [_rand(1, 2, 7, 8)], attrs, opset=opset, oracle="onnxruntime", rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", POOL_CASES[:10], ids=_id)
@pytest.mark.parametrize("storage_order", [0, 1])
def test_max_pool_indices_match_onnxruntime(case: tuple[tuple[int, ...], dict[str, Any]],
                                            storage_order: int) -> None:
    xs, attrs = case
    attrs = {**attrs, "storage_order": storage_order}
    check("MaxPool", [_rand(*xs)], attrs, opset=12, oracle="onnxruntime", rtol=0, atol=0, n_outputs=2)


def test_max_pool_indices_ties_and_3d() -> None:
    x = np.zeros((1, 1, 4, 4), np.float32)  # all ties: the first tap in scan order wins
    _, idx = run_ge("MaxPool", [x], {"kernel_shape": [2, 2], "strides": [2, 2]}, n_outputs=2)
    np.testing.assert_array_equal(idx[0, 0], [[0, 2], [8, 10]])
    check("MaxPool", [_rand(2, 2, 4, 5, 6)], {"kernel_shape": [2, 2, 2], "pads": [1, 0, 1, 0, 1, 1]},
          opset=12, oracle="onnxruntime", rtol=0, atol=0, n_outputs=2)


def test_max_pool_integers_and_float16() -> None:
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
    for dtype in (np.uint8, np.int8):
        x = RNG.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (1, 2, 7, 8), endpoint=True).astype(dtype)
        x[0, 0, 0, :] = np.iinfo(dtype).min  # the dtype minimum still beats padding for Indices
        check("MaxPool", [x], attrs, opset=12, oracle="onnxruntime", rtol=0, atol=0)
        (_, idx) = run_ge("MaxPool", [x], attrs, n_outputs=2)
        assert idx.min() >= 0 and idx.max() < x.size
    x16 = _rand(1, 2, 7, 8).astype(np.float16)
    check("MaxPool", [x16], attrs, opset=12, oracle="onnxruntime", rtol=0, atol=0)
    (avg,) = run_ge("AveragePool", [x16], attrs, opset=19)
    (want,) = onnxruntime("AveragePool", [x16.astype(np.float32)], attrs, opset=19)
    assert avg.dtype == np.float16
    np.testing.assert_allclose(avg, want, rtol=1e-3, atol=1e-3)


def test_max_pool_ignores_nan_like_onnxruntime() -> None:
    x = _rand(1, 1, 4, 4)
    x[0, 0, 1, 1] = np.nan
    (y,) = run_ge("MaxPool", [x], {"kernel_shape": [2, 2], "strides": [2, 2]})
    assert y[0, 0, 0, 0] == np.nanmax(x[0, 0, :2, :2])


@pytest.mark.parametrize("shape", [(2, 3, 7), (2, 3, 5, 6), (1, 2, 3, 4, 5)])
@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pools_match_onnxruntime(op: str, shape: tuple[int, ...]) -> None:
    check(op, [_rand(*shape)], opset=22, oracle="onnxruntime", rtol=1e-5, atol=1e-6)
    x64 = _rand(*shape).astype(np.float64)  # ONNX Runtime has no float64 global pools
    (got,) = run_ge(op, [x64])
    fn = np.mean if op == "GlobalAveragePool" else np.max
    np.testing.assert_allclose(got, fn(x64, axis=tuple(range(2, x64.ndim)), keepdims=True), rtol=1e-14)
    (half,) = run_ge(op, [_rand(*shape).astype(np.float16)])
    assert half.dtype == np.float16


# ---- registry facts ----------------------------------------------------------------------------------

def test_categories_and_costs() -> None:
    cats = {op.op_type: op.category for op in pool.OPS}
    assert cats == {"MaxPool": Category.OPAQUE, "AveragePool": Category.OPAQUE,
                    "GlobalAveragePool": Category.REDUCE, "GlobalMaxPool": Category.REDUCE}
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2]}
    y = infer("MaxPool", [((1, 4, 9, 9), F32)], attrs)[0]
    node = make_node("MaxPool", [True], attrs)
    op = REGISTRY.get("MaxPool")
    assert op is not None
    cost = op.cost(node, [make_desc((1, 4, 9, 9), F32)], [y])
    assert cost.flops == 9 * 4 * 16 and cost.bytes_read == 4 * 4 * 81 and cost.bytes_written == 4 * 4 * 16


# ---- conformance -------------------------------------------------------------------------------------

POOL_OPS = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"}


@pytest.mark.parametrize("case", cases_for(POOL_OPS), ids=lambda c: c.name)
def test_conformance(case: Any) -> None:
    run_case(case)


def test_ceil_mode_with_count_include_pad_matches_onnxruntime() -> None:
    """Taps that exist only because of ceil_mode are not counted, even with count_include_pad=1 (onnx
    1.23.0's expected output for this conformance case counted them; 1.23.2 and ONNX Runtime do not)."""
    attrs = {"kernel_shape": [5, 5, 5], "strides": [3, 3, 3], "dilations": [2, 2, 2], "ceil_mode": 1,
             "count_include_pad": 1}
    check("AveragePool", [_rand(1, 1, 32, 32, 32)], attrs, opset=22, oracle="onnxruntime", rtol=1e-5,
          atol=1e-6)
