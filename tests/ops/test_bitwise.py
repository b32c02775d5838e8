"""BitwiseAnd/Or/Xor/Not and BitShift over every integer type with broadcasting, against onnx.reference and
ONNX Runtime; BitShift's signed types (opset 28), overflow and out-of-range amounts; errors; conformance."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ge_core.ops import REGISTRY
from ge_core.ops.registry import Category
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import check, infer, infer_error, run_ge

RNG = np.random.default_rng(3)
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
UNSIGNED = [t for t in INTS if t.startswith("u")]
BROADCASTS = [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3))]


def _ints(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
def test_binary_bitwise(op: str, dtype: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    check(op, [_ints(shapes[0], dtype), _ints(shapes[1], dtype)], opset=18, oracle="reference")


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"])
@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64"])
def test_bitwise_against_onnxruntime(op: str, dtype: str) -> None:
    inputs = [_ints((2, 3, 4), dtype)] + ([_ints((4,), dtype)] if op != "BitwiseNot" else [])
    check(op, inputs, opset=18)


@pytest.mark.parametrize("dtype", INTS)
def test_bitwise_not(dtype: str) -> None:
    check("BitwiseNot", [_ints((2, 5), dtype)], opset=18, oracle="reference")


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", UNSIGNED)
def test_bitshift_unsigned(direction: str, dtype: str) -> None:
    bits = np.iinfo(dtype).bits
    x = _ints((3, 4), dtype)
    y = RNG.integers(0, bits, size=(4,)).astype(dtype)
    oracle = "both" if dtype in ("uint8", "uint32", "uint64") else "reference"  # ORT has no uint16 BitShift
    check("BitShift", [x, y], {"direction": direction}, opset=11, oracle=oracle)


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", INTS)
def test_bitshift_every_amount_opset_28(direction: str, dtype: str) -> None:
    """Amounts from -2 to bits + 2: negative and too-large ones give the sign fill (or 0)."""
    bits = np.iinfo(dtype).bits
    x = _ints((bits + 5, 1), dtype)
    amounts = np.arange(-2, bits + 3)
    y = (amounts if dtype.startswith("i") else np.clip(amounts, 0, None)).astype(dtype)
    check("BitShift", [x, y], {"direction": direction}, opset=28, oracle="reference")


def test_bitshift_signed_semantics() -> None:
    x = np.array([-8, -1, 64, 1, -128, 5], np.int8)
    (right,) = run_ge("BitShift", [x, np.array([1, 3, 7, 8, 9, -1], np.int8)], {"direction": "RIGHT"}, opset=28)
    assert right.tolist() == [-4, -1, 0, 0, -1, 0]  # arithmetic; out of range: -1 for negatives, else 0
    (left,) = run_ge("BitShift", [x, np.array([1, 1, 1, 7, 1, 8], np.int8)], {"direction": "LEFT"}, opset=28)
    assert left.tolist() == [-16, -2, -128, -128, 0, 0]  # bits past the sign are dropped


def test_inference_and_errors() -> None:
    (y,) = infer("BitShift", [((2, 1, 4), "uint8"), ((3, 1), "uint8")], {"direction": "LEFT"}, opset=11)
    assert y.shape == (2, 3, 4) and y.dtype == "uint8"
    (y,) = infer("BitwiseAnd", [((-1, 4), "int16"), ((4,), "int16")], opset=18)
    assert y.shape == (-1, 4)
    infer_error("BitwiseAnd", [((2,), "float32"), ((2,), "float32")], opset=18, match="must be one of")
    infer_error("BitwiseOr", [((2,), "int32"), ((2,), "int64")], opset=18, match="share one dtype")
    infer_error("BitwiseXor", [((2, 3), "int32"), ((4,), "int32")], opset=18, match="cannot broadcast")
    infer_error("BitwiseNot", [((2,), "bool")], opset=18, match="must be one of")
    infer_error("BitShift", [((2,), "int8"), ((2,), "int8")], {"direction": "LEFT"}, opset=11,
                match="must be one of")  # signed types need opset 28
    infer_error("BitShift", [((2,), "uint8"), ((2,), "uint8")], {"direction": "UP"}, opset=11, match="direction")


def test_facts() -> None:
    for name in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
        op = REGISTRY.get(name)
        assert op is not None and op.commutative and op.category == Category.BROADCAST
    shift, bit_not = REGISTRY.get("BitShift"), REGISTRY.get("BitwiseNot")
    assert shift is not None and not shift.commutative and shift.category == Category.BROADCAST
    assert bit_not is not None and bit_not.category == Category.ELEMENTWISE


@pytest.mark.parametrize("case", cases_for({"BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"}),
                         ids=lambda c: c.name)
def test_conformance(case: Any) -> None:
    run_case(case)
