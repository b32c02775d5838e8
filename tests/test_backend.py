"""GEBackend drives ge_core through ONNX's backend API (the conformance runner's entry point)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from ge_core.runtime.backend import GEBackend
from tests.bad_models import good_relu, unknown_ops


def test_prepare_and_run_a_model() -> None:
    rep = GEBackend.prepare(onnx.load_from_string(good_relu()))
    x = np.array([[-1, 2, -3, 4]], np.float32)
    (y,) = rep.run([x])
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_run_node() -> None:
    node = helper.make_node("Add", ["a", "b"], ["c"])
    a, b = np.ones((2, 3), np.float32), np.arange(3, dtype=np.float32)
    (c,) = GEBackend.run_node(node, [a, b])
    np.testing.assert_array_equal(c, a + b)


def test_is_compatible_says_no_to_unsupported_ops() -> None:
    assert GEBackend.is_compatible(onnx.load_from_string(good_relu()))
    assert not GEBackend.is_compatible(onnx.load_from_string(unknown_ops()))
    assert GEBackend.supports_device("CPU") and not GEBackend.supports_device("CUDA")
