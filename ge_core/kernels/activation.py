"""Gelu (erf form) and Sigmoid on float32 as one compiled, threaded loop each (numba).

activation.py's float32 Gelu is 0.5 x erfc(-x / sqrt 2) with erf32.py's erfc: about 25 numpy passes. On a
transformer's (128, 128..3072) activations each pass costs more in call overhead than in arithmetic (a
small BERT's Gelu: 90 us for 16k elements). Here the same formula, Numerical Recipes' erfc fit
t exp(-z^2 + poly(t)), runs per element in one loop, the exp as exp32.py's vectorised polynomial. The
values agree with the numpy kernel's to a few float32 ulps (the exp and fused multiply-adds round
differently); NaN stays NaN, Gelu(inf) = inf.

Sigmoid is 1 / (1 + exp(-x)) in four numpy passes; here one, with e = exp(-|x|) so that exp never
overflows: 1 / (1 + e) for x >= 0, e / (1 + e) below (a select). Measured over 1M values: within 1.9e-7
relative of the exact sigmoid where it is a normal float32 (the numpy kernel: 2.3e-7), subnormal below
x = -87.3 as exp32's results are. (65k elements: 96 -> 27 us.)
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ge_core.ir.node import Node
from ge_core.kernels.exp32 import exp32
from ge_core.kernels.jit import compiled, frozen
from ge_core.kernels.registry import FastPath
from ge_core.ops.erf32 import ERFC_T

_C = tuple(np.float32(c) for c in ERFC_T)


def _gelu_erf32(x: np.ndarray, y: np.ndarray) -> None:
    """y = 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2), x and y flat float32."""
    c0, c1, c2, c3, c4, c5, c6, c7, c8, c9 = _C
    one, half, scale = np.float32(1.0), np.float32(0.5), np.float32(-1.0 / math.sqrt(2.0))
    for i in range(x.shape[0]):
        u = np.uint64(i)
        v = x[u]
        z = v * scale
        a = abs(z)
        t = one / (one + half * a)
        p = c9
        p = p * t + c8
        p = p * t + c7
        p = p * t + c6
        p = p * t + c5
        p = p * t + c4
        p = p * t + c3
        p = p * t + c2
        p = p * t + c1
        p = p * t + c0
        tail = t * exp32(p - a * a)  # erfc(|z|)
        erfc = tail if z >= 0 else np.float32(2.0) - tail
        y[u] = half * v * erfc


def _sigmoid32(x: np.ndarray, y: np.ndarray) -> None:
    """y = 1 / (1 + exp(-x)), x and y flat float32."""
    one = np.float32(1.0)
    for i in range(x.shape[0]):
        u = np.uint64(i)
        v = x[u]
        e = exp32(-abs(v))
        r = one / (one + e)
        y[u] = r if v >= 0 else e * r


gelu_erf32 = compiled(_gelu_erf32)
sigmoid32 = compiled(_sigmoid32)


# Arrays below this stay with numpy: its passes cost little there, and a value folded at import time (a
# small Sigmoid among a model's constants) need not load numba's machinery, whose first compiled call in a
# process imports scipy.linalg (seen in the traceback of a forked sweep task folding the synthetic model).
MIN_ELEMENTS = 4096


def takes(x: np.ndarray, kernel: Callable[..., None] | None) -> bool:
    """Whether `kernel` runs for x: float32, at least MIN_ELEMENTS, numba on."""
    return kernel is not None and x.dtype == np.float32 and x.size >= MIN_ELEMENTS


def gelu(x: np.ndarray) -> np.ndarray:
    """Gelu of a float32 array (any shape)."""
    assert gelu_erf32 is not None
    return _elementwise(gelu_erf32, x)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """Sigmoid of a float32 array (any shape)."""
    assert sigmoid32 is not None
    return _elementwise(sigmoid32, x)


def _elementwise(kernel: Callable[..., None], x: np.ndarray) -> np.ndarray:
    flat = np.ascontiguousarray(x).reshape(-1)
    y = np.empty_like(flat)
    kernel(frozen(flat), y)
    return y.reshape(x.shape)


def _gelu_path(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
    x = inputs[0]
    assert x is not None
    if node.attr("approximate", "none") != "none" or not takes(x, gelu_erf32):
        return None
    return [gelu(x)]


def _sigmoid_path(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
    x = inputs[0]
    assert x is not None
    return [sigmoid(x)] if takes(x, sigmoid32) else None


PATHS = [
    FastPath("Gelu.erf32", "Gelu", _gelu_path, "float32 Gelu (erf form) in one compiled loop, not ~25 numpy passes"),
    FastPath("Sigmoid.exp32", "Sigmoid", _sigmoid_path, "float32 Sigmoid in one compiled loop, not four passes"),
]
