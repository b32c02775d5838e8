"""QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear: per-tensor, per-axis and blocked parameters over
int8/uint8/int16/uint16 (and the float8/int4 types through ml_dtypes) against onnx.reference and ONNX
Runtime; rounding half to even, saturation, output_dtype/precision; shape errors; ONNX's conformance cases."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from ge_core.ops import REGISTRY
from ge_core.ops.registry import Category
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import decoded, infer, infer_error, onnxruntime, reference, run_ge

RNG = np.random.default_rng(5)
INT_TYPES = ["uint8", "int8", "uint16", "int16"]
QUANT_OPS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"}


def _same(got: np.ndarray, want: np.ndarray, name: str, rtol: float = 0.0) -> None:
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    if got.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want, err_msg=name)
    else:  # floats, and ml_dtypes floats compared by value
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=0,
                                   equal_nan=True, err_msg=name)


def _check(op: str, inputs: list[np.ndarray | None], attrs: dict[str, Any] | None = None, opset: int = 21,
           oracle: str = "both", n_outputs: int = 1) -> list[np.ndarray]:
    inputs = [None if x is None else np.asarray(x) for x in inputs]  # ORT takes arrays, not numpy scalars
    got = run_ge(op, inputs, attrs, opset, n_outputs)
    oracles = {"reference": reference, "onnxruntime": onnxruntime}
    for name in oracles if oracle == "both" else [oracle]:
        for g, w in zip(got, oracles[name](op, inputs, attrs, opset, n_outputs), strict=True):
            _same(g, w, name)
    return got


def _zp(dtype: str, shape: tuple[int, ...] = ()) -> np.ndarray:
    lo, hi = (0, 20) if dtype.startswith("u") else (-10, 10)
    return RNG.integers(lo, hi, size=shape).astype(dtype)


def _scale(shape: tuple[int, ...] = (), dtype: str = "float32") -> np.ndarray:
    return (RNG.random(shape) * 0.2 + 0.01).astype(dtype)


# ---- QuantizeLinear --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", INT_TYPES)
def test_quantize_per_tensor(dtype: str) -> None:
    x = (RNG.standard_normal((2, 3, 4)) * 20).astype(np.float32)  # saturates at both ends too
    _check("QuantizeLinear", [x, _scale(), _zp(dtype)])


@pytest.mark.parametrize("dtype", INT_TYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_quantize_per_axis(dtype: str, axis: int) -> None:
    x = (RNG.standard_normal((3, 4, 5)) * 5).astype(np.float32)
    n = x.shape[axis]
    _check("QuantizeLinear", [x, _scale((n,)), _zp(dtype, (n,))], {"axis": axis})


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16"])
@pytest.mark.parametrize(("axis", "block"), [(0, 2), (1, 3), (-1, 4)])
def test_quantize_blocked(dtype: str, axis: int, block: int) -> None:
    x = (RNG.standard_normal((4, 6, 7)) * 5).astype(np.float32)
    shape = list(x.shape)
    shape[axis] = -(-shape[axis] // block)  # the last block may be partial (7 = 4 + 3)
    _check("QuantizeLinear", [x, _scale(tuple(shape)), _zp(dtype, tuple(shape))],
           {"axis": axis, "block_size": block}, oracle="reference")


def test_quantize_rounds_half_to_even_then_saturates() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 300.0, -300.0], np.float32)
    (y,) = _check("QuantizeLinear", [x, np.float32(1), np.int8(0)])
    assert y.tolist() == [0, 2, 2, 0, -2, -2, 127, -128]
    (u,) = _check("QuantizeLinear", [x, np.float32(1), np.uint8(1)])  # rounds first, then adds the zero point
    assert u.tolist() == [1, 3, 3, 1, 0, 0, 255, 0]


def test_quantize_defaults_to_uint8_and_takes_output_dtype() -> None:
    x = (RNG.standard_normal((3, 4)) * 3).astype(np.float32)
    (y,) = _check("QuantizeLinear", [x, _scale()])
    assert y.dtype == np.uint8
    (y,) = _check("QuantizeLinear", [x, _scale()], {"output_dtype": 5}, oracle="reference")  # INT16
    assert y.dtype == np.int16


def test_quantize_float16_and_int32_inputs_and_precision() -> None:
    x16 = (RNG.standard_normal((3, 4)) * 3).astype(np.float16)
    _check("QuantizeLinear", [x16, _scale(dtype="float16"), _zp("int8")])
    x32 = RNG.integers(-500, 500, size=(3, 4)).astype(np.int32)
    _check("QuantizeLinear", [x32, np.float32(3.0), _zp("int8")], oracle="reference")
    _check("QuantizeLinear", [x16, _scale(), _zp("uint8")], {"precision": 1}, opset=25, oracle="reference")


@pytest.mark.parametrize("dtype", ["int4", "uint4", "float8_e4m3fn", "float8_e5m2"])
def test_quantize_to_low_precision_types(dtype: str) -> None:
    """Generic paths: numpy casts to the ml_dtypes types (float8 saturates by default, not with saturate=0)."""
    x = (RNG.standard_normal((3, 8)) * 4).astype(np.float32)
    zp = np.zeros((), dtype=getattr(ml_dtypes, dtype))
    _check("QuantizeLinear", [x, np.float32(0.5), zp], oracle="reference")
    if dtype.startswith("float8"):
        big = np.array([1e6, -1e6, 1.0], np.float32)
        _check("QuantizeLinear", [big, np.float32(1), zp], {"saturate": 0}, oracle="reference")


# ---- DequantizeLinear ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [*INT_TYPES, "int32"])
def test_dequantize_per_tensor(dtype: str) -> None:
    x = _zp(dtype, (2, 3, 4)) if dtype != "int32" else RNG.integers(-1000, 1000, (2, 3, 4)).astype(np.int32)
    zp = None if dtype == "int32" else _zp(dtype)
    _check("DequantizeLinear", [x, _scale(), zp])


@pytest.mark.parametrize("dtype", INT_TYPES)
@pytest.mark.parametrize("axis", [0, 2, -2])
def test_dequantize_per_axis(dtype: str, axis: int) -> None:
    x = _zp(dtype, (3, 4, 5))
    n = x.shape[axis]
    _check("DequantizeLinear", [x, _scale((n,)), _zp(dtype, (n,))], {"axis": axis})


@pytest.mark.parametrize(("axis", "block"), [(0, 3), (1, 2), (-1, 5)])
def test_dequantize_blocked(axis: int, block: int) -> None:
    x = _zp("int8", (5, 4, 6))
    shape = list(x.shape)
    shape[axis] = -(-shape[axis] // block)
    _check("DequantizeLinear", [x, _scale(tuple(shape)), _zp("int8", tuple(shape))],
           {"axis": axis, "block_size": block}, oracle="reference")


def test_dequantize_float16_scale_and_output_dtype() -> None:
    x = _zp("uint8", (4, 4))
    (y,) = _check("DequantizeLinear", [x, _scale(dtype="float16"), _zp("uint8")])
    assert y.dtype == np.float16
    (y,) = _check("DequantizeLinear", [x, _scale(), _zp("uint8")], {"output_dtype": 10}, opset=23,
                  oracle="reference")
    assert y.dtype == np.float16


@pytest.mark.parametrize("dtype", ["int4", "uint4", "float8_e4m3fn", "float8_e5m2"])
def test_dequantize_low_precision_types(dtype: str) -> None:
    low = 0 if dtype.startswith("u") else -7
    x = np.clip(np.rint(RNG.standard_normal((3, 8)) * 3), low, 7).astype(getattr(ml_dtypes, dtype))
    _check("DequantizeLinear", [x, np.float32(0.25), np.zeros((), dtype=x.dtype)], oracle="reference")


def test_quantize_dequantize_round_trip_is_within_half_a_step() -> None:
    x = RNG.uniform(-1, 1, (64,)).astype(np.float32)
    scale, zp = np.float32(2 / 255), np.uint8(128)
    (q,) = run_ge("QuantizeLinear", [x, scale, zp])
    (back,) = run_ge("DequantizeLinear", [q, scale, zp])
    assert np.abs(back - x).max() <= scale / 2 + 1e-7


# ---- DynamicQuantizeLinear -------------------------------------------------------------------------

@pytest.mark.parametrize("data", ["mixed", "positive", "negative", "zeros"])
def test_dynamic_quantize(data: str) -> None:
    x = RNG.standard_normal((3, 5)).astype(np.float32) * 4
    x = {"mixed": x, "positive": np.abs(x), "negative": -np.abs(x), "zeros": np.zeros_like(x)}[data]
    # All zeros: onnx.reference's scale is 1/255, ORT's 1.0 (both quantize every 0 to the zero point 0).
    y, scale, zp = _check("DynamicQuantizeLinear", [x], opset=11, n_outputs=3,
                          oracle="reference" if data == "zeros" else "both")
    assert y.dtype == np.uint8 and scale.shape == () and zp.dtype == np.uint8
    if data == "zeros":
        (want, _, _) = onnxruntime("DynamicQuantizeLinear", [x], None, 11, 3)
        _same(y, want, "onnxruntime")


# ---- inference and errors --------------------------------------------------------------------------

def test_inference_keeps_the_shape_and_takes_the_quantized_type() -> None:
    (y,) = infer("QuantizeLinear", [((2, -1, 4), "float32"), ((), "float32"), ((), "int8")])
    assert y.shape == (2, -1, 4) and y.dtype == "int8"
    (y,) = infer("DequantizeLinear", [((2, 3), "uint8"), ((3,), "float16"), ((3,), "uint8")], {"axis": 1})
    assert y.shape == (2, 3) and y.dtype == "float16"
    outs = infer("DynamicQuantizeLinear", [((4, 5), "float32")], n_outputs=3)
    assert [(d.shape, d.dtype) for d in outs] == [((4, 5), "uint8"), ((), "float32"), ((), "uint8")]


@pytest.mark.parametrize(("op", "descs", "attrs", "match"), [
    ("QuantizeLinear", [((2, 3), "float32"), ((3,), "float32"), ((2,), "int8")], {}, "zero point"),
    ("QuantizeLinear", [((2, 3), "float32"), ((4,), "float32")], {"axis": 1}, "per-axis scale has 4"),
    ("QuantizeLinear", [((2, 3), "float32"), ((3,), "float32")], {"axis": 2}, "axis=2 is out of range"),
    ("QuantizeLinear", [((2, 3), "float32"), ((2, 3), "float32")], {}, "scalar or 1-D"),
    ("QuantizeLinear", [((4, 6), "float32"), ((4, 3), "float32")], {"axis": 1, "block_size": 4}, "2 blocks"),
    ("QuantizeLinear", [((4, 6), "float32"), ((3, 2), "float32")], {"axis": 1, "block_size": 3},
     "except on axis 1"),
    ("QuantizeLinear", [((4, 6), "float32"), ((), "float32")], {"block_size": -1}, "block_size=-1"),
    ("QuantizeLinear", [((2,), "float64"), ((), "float32")], {}, "the input must be one of"),
    ("QuantizeLinear", [((2,), "float32"), ((), "float32"), ((), "int8")], {"output_dtype": 2}, "differs"),
    ("QuantizeLinear", [((2,), "float32"), ((), "float32"), ((), "int32")], {}, "quantized type"),
    ("DequantizeLinear", [((2,), "int8"), ((), "float32"), ((), "uint8")], {}, "input's dtype"),
    ("DequantizeLinear", [((2,), "float32"), ((), "float32")], {}, "the input must be one of"),
    ("DequantizeLinear", [((2,), "int8"), ((), "int32")], {}, "the scale must be one of"),
    ("DynamicQuantizeLinear", [((2,), "float16")], {}, "the input must be one of"),
])
def test_shape_errors_name_the_node(op: str, descs: list[Any], attrs: dict[str, Any], match: str) -> None:
    infer_error(op, descs, attrs, match=match)


def test_facts() -> None:
    for name in ("QuantizeLinear", "DequantizeLinear"):
        op = REGISTRY.get(name)
        assert op is not None and op.category == Category.BROADCAST and op.deterministic and op.foldable
    dynamic = REGISTRY.get("DynamicQuantizeLinear")
    assert dynamic is not None and dynamic.category == Category.OPAQUE  # reduces the whole input first


# ---- ONNX's conformance cases ----------------------------------------------------------------------

@pytest.mark.parametrize("case", cases_for(QUANT_OPS), ids=lambda c: c.name)
def test_conformance(case: Any) -> None:
    run_case(decoded(case))
