"""Arrays that do not fit a node are refused before compiled code indexes them (kernels/checks.py): an error
naming the node, never a read or write past a buffer. Each case hands a fast path arrays inference would
never promise; a missing check would crash the test process instead of raising."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from ge_core.errors import GEError
from ge_core.ir.node import Node
from ge_core.kernels import conv, epilogue, jit
from ge_core.kernels.conv import conv_transpose_with_epilogue, conv_with_epilogue
from ge_core.kernels.registry import FastPath
from ge_core.ops.epilogue import NO_ACTIVATION

pytestmark = pytest.mark.skipif(not jit.ENABLED, reason="numba is off: no compiled code to protect")

F32 = np.float32


def _arr(*shape: int) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(shape).astype(F32)


def _conv_node(**attrs: object) -> Node:
    return Node("the_conv", "Conv", ("x", "w", "b"), ("y",), dict(attrs))


def _path(name: str) -> FastPath:
    (path,) = [p for p in conv.PATHS if p.name == name]
    return path


CASES: dict[str, Callable[[], object]] = {
    # a residual of another shape than the conv's output, handed to the fused epilogue
    "conv epilogue residual": lambda: conv_with_epilogue(
        _conv_node(pads=[1, 1, 1, 1]), [_arr(1, 8, 9, 9), _arr(16, 8, 3, 3), None], _arr(1, 16, 4, 4), None,
        NO_ACTIVATION),
    # a bias with fewer values than output channels
    "conv epilogue bias": lambda: conv_with_epilogue(
        _conv_node(), [_arr(1, 8, 9, 9), _arr(16, 8, 3, 3), None], None, _arr(3), NO_ACTIVATION),
    "conv transpose residual": lambda: conv_transpose_with_epilogue(
        Node("up", "ConvTranspose", ("x", "w"), ("y",), {"strides": [2, 2]}), [_arr(1, 4, 5, 5), _arr(4, 2, 2, 2)],
        _arr(1, 2, 3, 3), None, NO_ACTIVATION),
    # weights whose kernel disagrees with kernel_shape, and a depthwise bias too short
    "depthwise kernel_shape": lambda: _path("Conv.depthwise").run(
        _conv_node(group=8, kernel_shape=[5, 5]), [_arr(1, 8, 9, 9), _arr(8, 1, 3, 3), None]),
    "depthwise bias": lambda: _path("Conv.depthwise").run(
        _conv_node(group=8), [_arr(1, 8, 9, 9), _arr(8, 1, 3, 3), _arr(2)]),
    "im2col channels": lambda: _path("Conv.im2col").run(_conv_node(), [_arr(1, 8, 9, 9), _arr(16, 4, 3, 3), None]),
    # the epilogue pass itself: a bias of the wrong length, a residual of the wrong size
    "epilogue bias": lambda: epilogue.apply(_arr(1, 16, 5, 5), _arr(4), None, NO_ACTIVATION),
    "epilogue residual": lambda: epilogue.apply(_arr(1, 16, 5, 5), None, _arr(1, 16, 5, 4), NO_ACTIVATION),
    "epilogue scale": lambda: epilogue.scaled(_arr(1, 16, 5, 5), _arr(3), _arr(16), None, NO_ACTIVATION),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_arrays_that_do_not_fit_are_refused(case: str) -> None:
    with pytest.raises((GEError, ValueError)) as caught:
        CASES[case]()
    if isinstance(caught.value, GEError):
        assert "the_conv" in str(caught.value) or "up" in str(caught.value)
