"""The kernel geometry memo (ops/kernel_memo.py): a hit only for the same op, attributes and input shapes,
so edited attributes and new shapes are recomputed and bad ones still raise the full checks' errors."""

from __future__ import annotations

import numpy as np
import pytest

from ge_core.errors import GEError
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY


def _conv(node: Node, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.asarray(REGISTRY.lookup(node).kernel(node, [x, w])[0])


def test_an_edited_attribute_is_not_served_the_old_window() -> None:
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 2, 9, 9)).astype(np.float32), rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    node = Node("c", "Conv", ("x", "w"), ("y",), {"strides": [1, 1]})
    assert _conv(node, x, w).shape == (1, 3, 7, 7)
    node.attrs["strides"] = [2, 2]
    assert _conv(node, x, w).shape == (1, 3, 4, 4)
    node.attrs["pads"] = [1, 1, 1, 1]
    assert _conv(node, x, w).shape == (1, 3, 5, 5)


def test_a_new_shape_is_checked_again_after_a_hit() -> None:
    rng = np.random.default_rng(1)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    node = Node("c", "Conv", ("x", "w"), ("y",), {})
    for _ in range(2):
        assert _conv(node, rng.standard_normal((1, 2, 5, 5)).astype(np.float32), w).shape == (1, 3, 3, 3)
    with pytest.raises(GEError, match="channels"):
        _conv(node, rng.standard_normal((1, 4, 5, 5)).astype(np.float32), w)


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pools_follow_edited_kernel_shapes(op: str) -> None:
    x = np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)
    node = Node("p", op, ("x",), ("y",), {"kernel_shape": [2, 2], "strides": [2, 2]})
    kernel = REGISTRY.lookup(node).kernel
    assert kernel(node, [x])[0].shape == (1, 1, 3, 3)
    node.attrs["kernel_shape"] = [3, 3]
    node.attrs["strides"] = [3, 3]
    got = kernel(node, [x])[0]
    assert got.shape == (1, 1, 2, 2)
    assert got[0, 0, 0, 0] == (14.0 if op == "MaxPool" else 7.0)


def test_reshape_follows_its_target_values_not_only_their_shape() -> None:
    x = np.arange(12, dtype=np.float32)
    node = Node("r", "Reshape", ("x", "s"), ("y",), {}, opset=14)
    kernel = REGISTRY.lookup(node).kernel
    assert kernel(node, [x, np.array([3, 4])])[0].shape == (3, 4)
    assert kernel(node, [x, np.array([4, 3])])[0].shape == (4, 3)
    assert kernel(node, [x, np.array([-1, 6])])[0].shape == (2, 6)
    with pytest.raises(GEError):
        kernel(node, [x, np.array([5, 3])])
