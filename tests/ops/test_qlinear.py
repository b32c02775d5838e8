"""MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv against ONNX Runtime and onnx.reference (per-tensor,
per-row/column and per-channel parameters, strides/pads/groups, bias), exact int32 accumulation, shape errors,
and whole quantized models as ONNX Runtime's quantizer exports them (QDQ around Conv, and QLinearConv)
compiled at O3 and simulated."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

import ge_core
from ge_core.hardware import profile_names
from ge_core.ops import REGISTRY
from ge_core.ops.registry import Category, Unit
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import infer, infer_error, onnxruntime, reference, run_ge

RNG = np.random.default_rng(9)

OPS = {"MatMulInteger", "QLinearMatMul", "ConvInteger", "QLinearConv"}


@functools.cache
def ort_saturates_u8s8() -> bool:
    """Whether this machine's ONNX Runtime saturates uint8 x int8 products: without AVX-VNNI its x86 kernels
    use vpmaddubsw, which adds each pair of products in int16 and clips (255*127 + 255*127 = 64770 becomes
    32767). ge_core computes the exact int32 sums the ONNX spec asks for, so on such a machine ORT is no
    oracle for those dtypes and onnx.reference (exact) is the one checked."""
    (got,) = onnxruntime("MatMulInteger", [np.full((1, 2), 255, np.uint8), np.full((2, 1), 127, np.int8)], None, 10)
    return int(got[0, 0]) != 2 * 255 * 127


def _u8s8(inputs: list[np.ndarray | None]) -> bool:
    dtypes = {x.dtype for x in inputs if x is not None}
    return np.dtype(np.uint8) in dtypes and np.dtype(np.int8) in dtypes


def _q(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)


def _zp(dtype: str, shape: tuple[int, ...] = ()) -> np.ndarray:
    return RNG.integers(0, 20, size=shape).astype(dtype) if dtype == "uint8" else \
        RNG.integers(-10, 10, size=shape).astype(dtype)


def _scale(shape: tuple[int, ...] = ()) -> np.ndarray:
    return np.asarray(RNG.random(shape) * 0.05 + 0.005, dtype=np.float32)


def _check(op: str, inputs: list[np.ndarray | None], attrs: dict[str, Any] | None = None, opset: int = 21,
           oracle: str = "both") -> np.ndarray:
    inputs = [None if x is None else np.asarray(x) for x in inputs]  # ORT takes arrays, not numpy scalars
    (got,) = run_ge(op, inputs, attrs, opset)
    oracles = {"reference": reference, "onnxruntime": onnxruntime}
    if oracle == "both" and _u8s8(inputs) and ort_saturates_u8s8():
        oracle = "reference"  # ORT clips u8 x s8 pair sums here (see ort_saturates_u8s8)
    for name in oracles if oracle == "both" else [oracle]:
        (want,) = oracles[name](op, inputs, attrs, opset)
        assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype, want.dtype, want.shape)
        np.testing.assert_array_equal(got, want, err_msg=name)
    return got


# ---- MatMulInteger / QLinearMatMul -----------------------------------------------------------------

@pytest.mark.parametrize(("ta", "tb"), [("uint8", "uint8"), ("uint8", "int8"), ("int8", "int8")])
@pytest.mark.parametrize(("sa", "sb"), [((4, 6), (6, 5)), ((2, 3, 4, 6), (6, 5)), ((3, 4, 6), (3, 6, 5)),
                                        ((6,), (6, 5))])
def test_matmul_integer(ta: str, tb: str, sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    y = _check("MatMulInteger", [_q(ta, sa), _q(tb, sb), _zp(ta), _zp(tb)], opset=10)
    assert y.dtype == np.int32


def test_matmul_integer_per_row_and_column_zero_points() -> None:
    a, b = _q("uint8", (4, 6)), _q("int8", (6, 5))
    a_zp, b_zp = _zp("uint8", (4,)), _zp("int8", (5,))
    (got,) = run_ge("MatMulInteger", [a, b, a_zp, b_zp], opset=10)
    want = (a.astype(np.int64) - a_zp[:, None]) @ (b.astype(np.int64) - b_zp)  # the spec's per-row A, per-column B
    np.testing.assert_array_equal(got, want)
    _check("MatMulInteger", [a, b, None, b_zp], opset=10)


def test_integer_accumulation_is_exact_for_long_rows() -> None:
    a, b = np.full((2, 40000), 255, np.uint8), np.full((40000, 3), 127, np.int8)
    (got,) = run_ge("MatMulInteger", [a, b], opset=10)
    assert got.dtype == np.int32 and (got == 255 * 127 * 40000).all()


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize(("sa", "sb"), [((4, 6), (6, 5)), ((2, 4, 6), (2, 6, 5)), ((2, 4, 6), (6, 5))])
def test_qlinear_matmul(dtype: str, sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    inputs = [_q(dtype, sa), _scale(), _zp(dtype), _q(dtype, sb), _scale(), _zp(dtype), _scale() * 20, _zp(dtype)]
    _check("QLinearMatMul", inputs, opset=21)
    _check("QLinearMatMul", inputs, opset=10, oracle="onnxruntime")


def test_qlinear_matmul_per_column_b_and_float16_scales() -> None:
    a, b = _q("uint8", (3, 4, 6)), _q("int8", (3, 6, 5))
    inputs = [a, _scale(), _zp("uint8"), b, _scale((3, 1, 5)), _zp("int8", (3, 1, 5)), _scale() * 20, _zp("uint8")]
    _check("QLinearMatMul", inputs, oracle="reference")
    half = [x.astype(np.float16) if x.dtype == np.float32 else x for x in inputs]
    _check("QLinearMatMul", [half[0], half[1], half[2], b, _scale().astype(np.float16), _zp("int8"), half[6],
                             half[7]], oracle="reference")


# ---- ConvInteger / QLinearConv ---------------------------------------------------------------------

CONV_ATTRS = [
    {},
    {"pads": [1, 1, 1, 1]},
    {"strides": [2, 1], "pads": [1, 0, 2, 1]},
    {"dilations": [2, 2], "pads": [2, 2, 2, 2]},
    {"group": 2, "auto_pad": "SAME_UPPER"},
]


@pytest.mark.parametrize("attrs", CONV_ATTRS, ids=str)
def test_conv_integer(attrs: dict[str, Any]) -> None:
    group = attrs.get("group", 1)
    x, w = _q("uint8", (2, 4, 7, 6)), _q("uint8", (6, 4 // group, 3, 3))
    _check("ConvInteger", [x, w, _zp("uint8")], attrs, opset=10)
    _check("ConvInteger", [x, w, _zp("uint8"), _zp("uint8")], attrs, opset=10)


def test_conv_integer_per_channel_weight_zero_point_and_int8() -> None:
    x, w = _q("int8", (1, 3, 6, 6)), _q("int8", (4, 3, 3, 3))
    _check("ConvInteger", [x, w, _zp("int8"), _zp("int8", (4,))], {"pads": [1, 1, 1, 1]}, opset=10,
           oracle="reference")


@pytest.mark.parametrize("attrs", CONV_ATTRS, ids=str)
@pytest.mark.parametrize(("tx", "tw"), [("uint8", "int8"), ("int8", "int8"), ("uint8", "uint8")])
def test_qlinear_conv(attrs: dict[str, Any], tx: str, tw: str) -> None:
    group = attrs.get("group", 1)
    x, w = _q(tx, (2, 4, 7, 6)), _q(tw, (6, 4 // group, 3, 3))
    bias = RNG.integers(-2000, 2000, size=(6,)).astype(np.int32)
    inputs = [x, _scale(), _zp(tx), w, _scale(), _zp(tw), _scale() * 40, _zp(tx)]
    _check("QLinearConv", inputs, attrs, opset=10)
    _check("QLinearConv", [*inputs, bias], attrs, opset=10)


def test_qlinear_conv_per_channel_weights_1d_and_3d() -> None:
    w = _q("int8", (6, 4, 3, 3))
    inputs = [_q("uint8", (1, 4, 8, 8)), _scale(), _zp("uint8"), w, _scale((6,)), np.zeros(6, np.int8),
              _scale() * 40, _zp("uint8"), RNG.integers(-500, 500, size=(6,)).astype(np.int32)]
    _check("QLinearConv", inputs, {"pads": [1, 1, 1, 1]}, opset=10)
    conv1d = [_q("uint8", (2, 4, 9)), _scale(), _zp("uint8"), _q("int8", (5, 4, 3)), _scale(), np.int8(0),
              _scale() * 40, _zp("uint8")]
    _check("QLinearConv", [np.asarray(a) for a in conv1d], {"strides": [2]}, opset=10)
    conv3d = [_q("uint8", (1, 2, 4, 5, 5)), _scale(), _zp("uint8"), _q("int8", (3, 2, 2, 3, 3)), _scale(),
              np.int8(0), _scale() * 40, _zp("uint8")]
    _check("QLinearConv", [np.asarray(a) for a in conv3d], {"pads": [0, 1, 1, 1, 1, 1]}, opset=10)


# ---- inference and errors --------------------------------------------------------------------------

def test_inference() -> None:
    (y,) = infer("MatMulInteger", [((-1, 4, 6), "uint8"), ((6, 5), "int8")], opset=10)
    assert y.shape == (-1, 4, 5) and y.dtype == "int32"
    f, u8, i8 = "float32", "uint8", "int8"
    descs = [((1, 3, 8, 8), u8), ((), f), ((), u8), ((16, 3, 3, 3), i8), ((16,), f), ((16,), i8), ((), f),
             ((), i8)]
    (y,) = infer("QLinearConv", descs, {"strides": [2, 2], "pads": [1, 1, 1, 1]}, opset=10)
    assert y.shape == (1, 16, 4, 4) and y.dtype == "int8"


_F, _U8, _I8 = "float32", "uint8", "int8"
_QCONV = [((1, 3, 8, 8), _U8), ((), _F), ((), _U8), ((16, 3, 3, 3), _I8), ((), _F), ((), _I8), ((), _F), ((), _U8)]


def _with(descs: list[Any], index: int, desc: Any) -> list[Any]:
    out = list(descs)
    out[index] = desc
    return out


@pytest.mark.parametrize(("op", "descs", "attrs", "match"), [
    ("MatMulInteger", [((4, 6), _U8), ((5, 3), _U8)], {}, "inner dimensions differ"),
    ("MatMulInteger", [((4, 6), _U8), ((6, 3), _U8), ((), _I8)], {}, "zero point 2 must have input 0's dtype"),
    ("MatMulInteger", [((4, 6), _F), ((6, 3), _U8)], {}, "input 0 must be one of"),
    ("MatMulInteger", [((4, 6), _U8), ((6, 3), _U8), ((6,), _U8)], {}, "per row of A"),
    ("QLinearMatMul", [((4, 6), _U8), ((), _F), ((), _U8), ((6, 3), _U8), ((4,), _F), ((4,), _U8), ((), _F),
                       ((), _U8)], {}, "per column of B"),
    ("QLinearConv", _with(_QCONV, 4, ((8,), _F)), {}, r"input 4 \[8\] must be a scalar or \[16\]"),
    ("QLinearConv", _with(_QCONV, 1, ((3,), _F)), {}, r"input 1 \[3\] must be a scalar"),
    ("QLinearConv", [*_QCONV, ((16,), _F)], {}, "the bias must be one of"),
    ("QLinearConv", _with(_QCONV, 0, ((3, 8), _U8)), {}, "rank >= 3"),
    ("QLinearConv", _with(_QCONV, 3, ((16, 2, 3, 3), _I8)), {}, "2 input channels per group"),
    ("QLinearConv", _QCONV, {"group": 2}, "group=2"),
    ("QLinearConv", _with(_QCONV, 6, ((), "float16")), {}, "scale 6 must be one of"),
    ("ConvInteger", [((1, 3, 8, 8), _U8), ((4, 3, 3, 3), _U8), ((), _U8), ((3,), _U8)], {},
     r"input 3 \[3\] must be a scalar or \[4\]"),
    ("ConvInteger", [((1, 3, 2, 2), _U8), ((4, 3, 3, 3), _U8)], {}, "kernel extent 3"),
])
def test_shape_errors_name_the_node(op: str, descs: list[Any], attrs: dict[str, Any], match: str) -> None:
    infer_error(op, descs, attrs, opset=10, match=match)


def test_facts_cube() -> None:
    for name in OPS:
        op = REGISTRY.get(name)
        assert op is not None and op.category == Category.CUBE and op.unit == Unit.CUBE and op.npu_layout is None


# ---- quantized models as ONNX Runtime's quantizer writes them -----------------------------------------

def _float_model() -> onnx.ModelProto:
    w1 = numpy_helper.from_array(RNG.standard_normal((8, 3, 3, 3)).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(RNG.standard_normal((8,)).astype(np.float32), "b1")
    w2 = numpy_helper.from_array(RNG.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.3, "w2")
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["y"])]  # (an Add would become com.microsoft's QLinearAdd)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])
    graph = helper.make_graph(nodes, "small_cnn", [x], [y], [w1, b1, w2])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


class _Calibration(CalibrationDataReader):
    def __init__(self) -> None:
        rng = np.random.default_rng(0)
        self._data = iter([{"x": rng.standard_normal((1, 3, 16, 16)).astype(np.float32)} for _ in range(8)])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self._data, None)


@pytest.fixture(scope="module", params=[QuantFormat.QDQ, QuantFormat.QOperator], ids=["qdq", "qoperator"])
def quantized(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    folder = tmp_path_factory.mktemp("quant")
    onnx.save(_float_model(), folder / "float.onnx")
    quantize_static(str(folder / "float.onnx"), str(folder / "q.onnx"), _Calibration(), quant_format=request.param,
                    per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return Path(folder / "q.onnx").read_bytes()


def test_quantized_model_compiled_at_o3_matches_onnxruntime(quantized: bytes) -> None:
    ops = {n.op_type for n in onnx.load_from_string(quantized).graph.node}
    assert ops & {"QLinearConv", "DequantizeLinear"}, ops  # the quantizer wrote what the test is about
    x = np.random.default_rng(3).standard_normal((1, 3, 16, 16)).astype(np.float32)
    if ort_saturates_u8s8():
        # This machine's ORT clips the model's u8 x s8 sums (ort_saturates_u8s8), so it is no oracle here: the
        # ops are checked exactly against onnx.reference above, and the model compiled at O3 must give what
        # its graph as loaded gives.
        want = ge_core.compile(quantized, opt_level="O0").run({"x": x})["y"]
    else:
        want = ort.InferenceSession(quantized, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    compiled = ge_core.compile(quantized, opt_level="O3", verify=True)
    got = compiled.run({"x": x})["y"]
    assert got.dtype == want.dtype and got.shape == want.shape
    # Identical integer arithmetic: every output is the same quantization step as ORT's.
    np.testing.assert_array_equal(got, want)
    assert np.std(want) > 0
    assert compiled.report["nodes"] < compiled.report["nodes_before"]  # weights' DequantizeLinear folded, fused


def test_quantized_model_simulates_on_every_profile(quantized: bytes) -> None:
    for name in profile_names():
        compiled = ge_core.compile(quantized, opt_level="O3", hardware=name)
        result = ge_core.simulate(compiled, name)
        assert result.total_us > 0 and result.ops


# ---- ONNX's conformance cases ----------------------------------------------------------------------

@pytest.mark.parametrize("case", cases_for(OPS), ids=lambda c: c.name)
def test_conformance(case: Any) -> None:
    run_case(case)
