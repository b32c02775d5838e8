"""DFT, STFT, the window generators and MelWeightMatrix against onnx.reference and ONNX Runtime: real and
complex signals, every axis, onesided (RFFT) and inverse (IFFT, IRFFT), dft_length padding and truncation,
the axis attribute (opset 17) and input (opset 20); shapes from known and unknown values; errors; conformance."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper

import ge_core
from ge_core.ops import REGISTRY
from ge_core.ops.registry import Category
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import infer, infer_error
from tests.ops.shape_oracle import check, run_ge

RNG = np.random.default_rng(21)
SIGNAL_OPS = {"DFT", "STFT", "BlackmanWindow", "HammingWindow", "HannWindow", "MelWeightMatrix"}


def _signal(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def _scalar(value: int) -> np.ndarray:
    return np.array(value, dtype=np.int64)


DFT_MODES = [
    ({}, 1), ({}, 2), ({"onesided": 1}, 1), ({"inverse": 1}, 2), ({"inverse": 1}, 1),
    ({"inverse": 1, "onesided": 1}, 2),
]


@pytest.mark.parametrize(("attrs", "last"), DFT_MODES, ids=str)
@pytest.mark.parametrize("axis", [1, 2, -2, -3])
@pytest.mark.parametrize("length", [None, 6, 11])
def test_dft_opset20(attrs: dict[str, Any], last: int, axis: int, length: int | None) -> None:
    x = _signal(2, 7, 8, last)
    dft_length = None if length is None else _scalar(length)
    # An IRFFT given its length reads the first length // 2 + 1 bins (numpy's irfft, onnx.reference); ORT
    # reads them differently, so there only the reference is the oracle.
    oracle = "reference" if attrs.get("onesided") and attrs.get("inverse") and length else "both"
    check("DFT", [x, dft_length, _scalar(axis)], attrs, opset=20, rtol=1e-4, atol=1e-4, oracle=oracle)


@pytest.mark.parametrize(("attrs", "last"), DFT_MODES, ids=str)
@pytest.mark.parametrize("axis", [0, 1, -2])
def test_dft_opset17_axis_attribute(attrs: dict[str, Any], last: int, axis: int) -> None:
    x = _signal(6, 5, last)
    check("DFT", [x], {**attrs, "axis": axis}, opset=17, rtol=1e-4, atol=1e-4)
    check("DFT", [x, _scalar(8)], {**attrs, "axis": axis}, opset=17, rtol=1e-4, atol=1e-4)


def test_dft_float64_and_float16() -> None:
    check("DFT", [_signal(3, 16, 2, dtype=np.float64)], {"axis": 1}, opset=17, rtol=1e-10, atol=1e-10)
    check("DFT", [_signal(3, 8, 1, dtype=np.float16)], {"axis": 1, "onesided": 1}, opset=17,
          oracle="reference", rtol=1e-2, atol=1e-2)


def test_dft_round_trip() -> None:
    x = _signal(4, 10, 2)
    (spectrum,) = run_ge("DFT", [x, None, _scalar(1)], {}, opset=20)
    (back,) = run_ge("DFT", [spectrum, None, _scalar(1)], {"inverse": 1}, opset=20)
    np.testing.assert_allclose(back, x, atol=1e-5)


@pytest.mark.parametrize("onesided", [0, 1])
@pytest.mark.parametrize(("length", "step", "window"), [(8, 4, True), (16, 3, False), (5, 5, True), (10, 2, False)])
def test_stft(onesided: int, length: int, step: int, window: bool) -> None:
    x = _signal(2, 40, 1)
    w = np.hanning(length).astype(np.float32) if window else None
    frame_length = None if window and length % 2 else _scalar(length)  # frame_length from the window alone too
    check("STFT", [x, _scalar(step), w, frame_length], {"onesided": onesided}, opset=17, rtol=1e-4, atol=1e-4)


def test_stft_complex_signal_two_sided() -> None:
    check("STFT", [_signal(1, 30, 2), _scalar(4), None, _scalar(8)], {"onesided": 0}, opset=17, rtol=1e-4,
          atol=1e-4)


@pytest.mark.parametrize("op", ["BlackmanWindow", "HammingWindow", "HannWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
@pytest.mark.parametrize("dtype", [1, 11, 10, 7])  # float, double, float16, int64
def test_windows(op: str, periodic: int, dtype: int) -> None:
    for size in (1, 2, 10, 33):
        if size == 1 and not periodic:
            continue  # a symmetric window of one point divides by zero (NaN in the reference)
        # float16 is computed in float64 and rounded once, as ORT does; onnx.reference computes in float16
        # (n * pi loses digits: a few ulps off), so ORT alone is the oracle there.
        check(op, [_scalar(size)], {"periodic": periodic, "output_datatype": dtype}, opset=17,
              rtol=1e-3 if dtype == 10 else 1e-6, atol=1e-7, known=[0],
              oracle="onnxruntime" if dtype == 10 else "both")


@pytest.mark.parametrize(("mel", "dft", "rate", "low", "high"), [
    (8, 16, 8192, 0.0, 4096.0), (20, 512, 16000, 20.0, 8000.0), (40, 400, 16000, 125.0, 7600.0),
])
def test_mel_weight_matrix(mel: int, dft: int, rate: int, low: float, high: float) -> None:
    inputs = [_scalar(mel), _scalar(dft), _scalar(rate), np.array(low, np.float32), np.array(high, np.float32)]
    check("MelWeightMatrix", inputs, opset=17, known=[0, 1, 2, 3, 4], rtol=1e-6, atol=1e-7)
    check("MelWeightMatrix", inputs, {"output_datatype": 11}, opset=17, known=[0, 1, 2, 3, 4], oracle="reference")


# ---- inference and errors --------------------------------------------------------------------------

def test_inference_with_unknown_values() -> None:
    (y,) = infer("DFT", [((2, 7, 8, 1), "float32"), ((), "int64"), ((), "int64")], opset=20)
    assert y.shape == (-1, -1, -1, 2)  # neither the axis nor the length is known
    (y,) = infer("DFT", [((2, 7, 8, 1), "float32")], {"onesided": 1}, opset=20)
    assert y.shape == (2, 7, 5, 2)  # default axis -2
    (y,) = infer("DFT", [((2, 7, 8, 2), "float32"), ((), "int64")], {"axis": 1}, opset=17)
    assert y.shape == (2, -1, 8, 2)
    (y,) = infer("DFT", [((2, 7, 2), "float32")], {"axis": 1, "inverse": 1, "onesided": 1}, opset=17)
    assert y.shape == (2, 12, 1)  # IRFFT: 2 * (7 - 1) real samples
    (y,) = infer("STFT", [((1, 100, 1), "float32"), ((), "int64"), ((16,), "float32")], opset=17)
    assert y.shape == (1, -1, 9, 2)
    (y,) = infer("HannWindow", [((), "int64")], opset=17)
    assert y.shape == (-1,) and y.dtype == "float32"
    (y,) = infer("MelWeightMatrix", [((), "int32")] * 3 + [((), "float32")] * 2, {"output_datatype": 11}, opset=17)
    assert y.shape == (-1, -1) and y.dtype == "float64"


@pytest.mark.parametrize(("op", "descs", "attrs", "values", "opset", "match"), [
    ("DFT", [((2, 8, 1), "float32")], {"axis": 2}, None, 17, "last"),
    ("DFT", [((2, 8, 1), "float32")], {"axis": 3}, None, 17, "out of range"),
    ("DFT", [((2, 8, 3), "float32")], {}, None, 20, r"\[\.\.\., 1\] \(real\)"),
    ("DFT", [((2, 8, 1), "float32")], {"inverse": 1, "onesided": 1}, None, 20, "IRFFT"),
    ("DFT", [((2, 8, 1), "int32")], {}, None, 20, "must be one of"),
    ("DFT", [((2, 8, 1), "float32"), ((), "int64")], {}, [None, _scalar(0)], 20, "dft_length=0"),
    ("DFT", [((2, 8, 1), "float32"), ((2,), "int64")], {}, None, 20, "must be a scalar"),
    ("STFT", [((1, 10, 1), "float32"), ((), "int64"), None, ((), "int64")], {}, [None, _scalar(2), None,
                                                                                  _scalar(16)], 17, "longer"),
    ("STFT", [((1, 30, 1), "float32"), ((), "int64"), ((8,), "float32"), ((), "int64")], {},
     [None, _scalar(2), None, _scalar(16)], 17, "window has 8 values"),
    ("STFT", [((30, 1), "float32"), ((), "int64")], {}, None, 17, "batch, length"),
    ("HannWindow", [((), "int64")], {}, [_scalar(-1)], 17, "size=-1"),
    ("HammingWindow", [((), "int64")], {"output_datatype": 9}, None, 17, "output_datatype must be one of"),
    ("MelWeightMatrix", [((), "int64")] * 3 + [((), "float32")] * 2, {},
     [_scalar(0), _scalar(16), _scalar(100), None, None], 17, "must be >= 1"),
])
def test_errors_name_the_node(op: str, descs: list[Any], attrs: dict[str, Any], values: list[Any] | None,
                              opset: int, match: str) -> None:
    infer_error(op, descs, attrs, opset=opset, values=values, match=match)


def test_facts() -> None:
    for name in SIGNAL_OPS:
        op = REGISTRY.get(name)
        assert op is not None and op.category == Category.OPAQUE and op.foldable, name


def test_a_constant_window_is_folded_at_inference() -> None:
    nodes = [helper.make_node("HannWindow", ["n"], ["w"]), helper.make_node("Mul", ["x", "w"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16])],
                              [helper.make_tensor("n", TensorProto.INT64, [], [16])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    g = ge_core.load_onnx(model.SerializeToString())
    assert g.descs["w"].shape == (16,)
    x = _signal(16)
    out = ge_core.execute(g, {"x": x})["y"]
    np.testing.assert_allclose(out, x * np.hanning(17)[:16].astype(np.float32), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", cases_for(SIGNAL_OPS), ids=lambda c: c.name)
def test_conformance(case: Any) -> None:
    run_case(case)
