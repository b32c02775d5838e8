"""ScatterElements / Scatter, ReverseSequence, OneHot and CenterCropPad: kernels against onnx.reference and
ONNX Runtime, inference with and without the deciding values, errors, and ONNX's conformance cases."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ge_core.errors import ExecutionError
from ge_core.ops import REGISTRY, Category
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import infer, infer_error
from tests.ops.shape_oracle import check, i64, run_ge

RNG = np.random.default_rng(11)
DATA = RNG.standard_normal((4, 5, 3)).astype(np.float32)


def _indices(shape: tuple[int, ...], dim: int, negative: bool = False) -> np.ndarray:
    idx = RNG.integers(0, dim, shape).astype(np.int64)
    return idx - dim if negative else idx


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements(axis: int, reduction: str) -> None:
    shape = [3, 4, 2]
    idx = _indices(tuple(shape), DATA.shape[axis], negative=axis == 1)
    if reduction == "none":  # unique targets along the axis, so the result does not depend on write order
        idx = np.argsort(RNG.random((*shape[:axis % 3], DATA.shape[axis], *shape[axis % 3 + 1:])), axis=axis)
        idx = np.take(idx, np.arange(shape[axis % 3]), axis=axis).astype(np.int64)
    updates = RNG.standard_normal(idx.shape).astype(np.float32)
    check("ScatterElements", [DATA, idx, updates], {"axis": axis, "reduction": reduction}, opset=18, known=[])


def test_scatter_old_name_and_int_data() -> None:
    data = np.arange(12, dtype=np.int32).reshape(3, 4)
    idx = np.array([[1, 0, 2, 0]], dtype=np.int64)
    check("Scatter", [data, idx, np.full((1, 4), -7, np.int32)], {"axis": 0}, opset=9, known=[],
          oracle="onnxruntime")  # onnx.reference has no Scatter
    check("ScatterElements", [data, idx.astype(np.int32), np.full((1, 4), -7, np.int32)], {"axis": 0}, opset=13,
          known=[])


def test_scatter_out_of_range_is_an_execution_error() -> None:
    with pytest.raises(ExecutionError, match="index 5 is out of range for axis 0 of size 4"):
        run_ge("ScatterElements", [DATA, np.full((1, 5, 3), 5, np.int64), np.zeros((1, 5, 3), np.float32)],
               known=[])


@pytest.mark.parametrize(("time_axis", "batch_axis"), [(0, 1), (1, 0)])
def test_reverse_sequence(time_axis: int, batch_axis: int) -> None:
    x = RNG.standard_normal((4, 4, 3)).astype(np.float32)
    lens = np.array([4, 1, 0, 3], dtype=np.int64)
    check("ReverseSequence", [x, lens], {"time_axis": time_axis, "batch_axis": batch_axis}, opset=10,
          oracle="reference")
    lens[2] = 2  # ORT refuses a length of 0
    check("ReverseSequence", [x, lens], {"time_axis": time_axis, "batch_axis": batch_axis}, opset=10)


@pytest.mark.parametrize("axis", [-1, 0, 1, -3])
def test_one_hot(axis: int) -> None:
    indices = np.array([[0, 3, -1], [7, -4, 2]], dtype=np.int64)  # 7 and -4 with depth 4: out of range, all off
    values = np.array([-2, 5], dtype=np.float32)
    check("OneHot", [indices, np.array(4, dtype=np.int64), values], {"axis": axis}, opset=11)
    # float indices and depth, int values (ORT has no kernel for this combination)
    check("OneHot", [indices.astype(np.float32), np.array(4.0, np.float32), values.astype(np.int32)], {"axis": axis},
          opset=11, oracle="reference")


@pytest.mark.parametrize(("shape", "axes"), [((3, 8, 5), None), ((7, 2), [0, 1]), ((5, 9), [-1, 0]), ((4,), [1])])
def test_center_crop_pad(shape: tuple[int, ...], axes: list[int] | None) -> None:
    x = RNG.standard_normal((6, 6, 6)).astype(np.float32)
    attrs = {} if axes is None else {"axes": axes}
    check("CenterCropPad", [x, i64(*shape)], attrs, opset=18, oracle="reference")


def test_infer_with_unknown_values() -> None:
    y = infer("OneHot", [((2, 3), "int64"), ((), "int64"), ((2,), "float32")], {"axis": 1})[0]
    assert y.shape == (2, -1, 3) and y.dtype == "float32"
    y = infer("CenterCropPad", [((6, 7, 3), "float32"), ((2,), "int64")], {"axes": [0, 1]})[0]
    assert y.shape == (-1, -1, 3)


def test_infer_errors() -> None:
    f32 = ((4, 5), "float32")
    infer_error("ScatterElements", [f32, ((4, 5), "float32"), f32], match="indices must be int32 or int64")
    infer_error("ScatterElements", [f32, ((2, 5), "int64"), ((2, 4), "float32")], match="must have the indices' shape")
    infer_error("ScatterElements", [f32, ((4,), "int64"), ((4,), "float32")], match="must have data's rank")
    infer_error("ScatterElements", [f32, ((2, 5), "int64"), ((2, 5), "float32")], {"reduction": "sub"},
                opset=18, match="reduction 'sub'")
    infer_error("ReverseSequence", [f32, ((3,), "int64")], match="sequence_lens has 3 values for a batch of 5")
    infer_error("ReverseSequence", [f32, ((5,), "int64")], {"time_axis": 1, "batch_axis": 1},
                match="must be 0 and 1")
    infer_error("OneHot", [((2,), "int64"), ((), "int64"), ((3,), "float32")], match=r"values must be \[off_value")
    infer_error("OneHot", [((2,), "int64"), ((), "int64"), ((2,), "float32")], {"axis": 2}, match="axis=2 is out")
    infer_error("OneHot", [((2,), "int64"), ((), "int64"), ((2,), "float32")], values=[None, np.array(0), None],
                match="depth must be >= 1")
    infer_error("CenterCropPad", [f32, ((3,), "int64")], match="shape has 3 values for 2 axes")
    infer_error("CenterCropPad", [f32, ((2,), "float32")], match="1-D int32/int64")


def test_categories() -> None:
    expected = {"ScatterElements": Category.OPAQUE, "Scatter": Category.OPAQUE, "ReverseSequence": Category.INJECTIVE,
                "OneHot": Category.INJECTIVE, "CenterCropPad": Category.INJECTIVE}
    for op, category in expected.items():
        opdef = REGISTRY.get(op)
        assert opdef is not None and opdef.category == category, op


OPS = {"ScatterElements", "Scatter", "ReverseSequence", "OneHot", "CenterCropPad"}


@pytest.mark.parametrize("case", cases_for(OPS), ids=lambda c: c.name)
def test_conformance(case: Any) -> None:
    run_case(case)
