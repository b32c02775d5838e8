"""Moves for the graph-fusion passes (ge_core/passes/fusion/): the primitive spellings exporters write.

Conv (+ bias Add) (+ residual Add) + activation, MatMul + bias Add (+ activation), LayerNorm in primitives,
GELU (Erf and tanh forms), HardSwish/HardSigmoid as Clip forms, and scaled dot-product attention. Each move
sometimes writes a near miss the pass must leave alone: a wrong constant, an epsilon that is not a scalar,
an intermediate read elsewhere (it is returned to the pool, so later moves or the outputs may read it), a
reduction or a Softmax over another axis, a bias that varies along the rows.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tests.passes.random_graphs.builder import Builder, Reject
from tests.passes.random_graphs.shapes import with_axes

NEAR_MISS = 0.15  # share of the fusion moves that write a near miss on purpose


def _clip(b: Builder, x: str, lo: float, hi: float) -> str:
    return b.op("Clip", [x, b.const(lo), b.const(hi)])


def _mul(b: Builder, x: str, c: str) -> str:
    """x * c, the operands in either order (the patterns take both)."""
    return b.op("Mul", [x, c] if b.chance(0.6) else [c, x])


def _add(b: Builder, x: str, c: str) -> str:
    return b.op("Add", [x, c] if b.chance(0.6) else [c, x])


def activation(b: Builder, x: str) -> str:
    """An activation a Conv or MatMul kernel can apply on its way out."""
    kind = b.choice(("Relu", "Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh"))
    if kind == "Clip":  # Relu6 mostly, sometimes other constant bounds
        return _clip(b, x, 0.0, 6.0) if b.chance(0.7) else _clip(b, x, -1.0, 1.0)
    if kind == "LeakyRelu":
        return b.op(kind, [x], {"alpha": b.choice((0.01, 0.1, 0.2))})
    if kind == "HardSigmoid" and b.chance(0.5):
        return b.op(kind, [x], {"alpha": 1 / 6, "beta": 0.5})
    return b.op(kind, [x])


# ---- Conv + activation --------------------------------------------------------------------------------

def conv_activation(b: Builder, x: str) -> list[str]:
    """Conv with constant W (and b), then an activation; or a bias Add or a residual Add before it."""
    c, spatial = b.shape(x)[1], b.shape(x)[2:]
    k = b.choice((1, 3))
    residual = b.chance(0.3)
    pad = k // 2 if residual or b.chance(0.7) else 0
    if min(spatial) + 2 * pad < k:
        raise Reject("input smaller than the kernel")
    cout = c if residual else b.choice((c, 2, 4, 8))
    w = b.const(b.normal((cout, c, *(k,) * len(spatial)), 1 / np.sqrt(c * k ** len(spatial))))
    bias = "add" if not residual and b.chance(0.25) else b.choice(("input", "input", "none"))
    inputs = [x, w, b.const(b.normal((cout,), 0.1))] if bias == "input" else [x, w]
    attrs: dict[str, Any] = {"pads": [pad] * (2 * len(spatial))} if pad or b.chance(0.3) else {}
    y = conv = b.op("Conv", inputs, attrs)
    if bias == "add":  # exporters without a Conv bias: Conv -> Add(bias [C, 1, 1]) -> activation
        y = _add(b, y, b.const(b.normal((cout, *(1,) * len(spatial)), 0.1)))
    if residual:
        y = _add(b, y, x)
    if not residual or b.chance(0.75):
        y = activation(b, y)
    if b.chance(NEAR_MISS):  # the Conv output is read elsewhere too: nothing to fuse
        return [y, conv]
    return [y]


# ---- MatMul + bias Add (+ activation) -----------------------------------------------------------------

def matmul_add(b: Builder, x: str) -> list[str]:
    """x @ W + b over the last axis (a linear layer), maybe an activation after it."""
    shape = b.shape(x)
    k, m = shape[-1], b.choice((2, 3, 4, 6, 8))
    mm = b.op("MatMul", [x, b.const(b.normal((k, m), 1 / np.sqrt(k)))])
    rows = len(shape) >= 2 and shape[-2] > 1
    if rows and b.chance(NEAR_MISS):  # a bias varying along the rows: not a linear layer's bias
        bias_shape: tuple[int, ...] = (shape[-2], 1 if b.chance(0.5) else m)
    else:
        bias_shape = b.choice(((m,), (m,), (1, m), (*(1,) * (len(shape) - 1), m), ()))
    y = _add(b, mm, b.const(b.normal(bias_shape, 0.1)))
    if b.chance(0.5):
        y = activation(b, y)
    if b.chance(0.1):  # the product is read elsewhere too
        return [y, mm]
    return [y]


# ---- LayerNorm in primitives --------------------------------------------------------------------------

def layer_norm(b: Builder, x: str) -> list[str]:
    """ReduceMean(last axis, keepdims), Sub, Pow 2 (or d*d), ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta."""
    shape = b.shape(x)
    rank, dim = len(shape), shape[-1]
    if dim < 2:
        raise Reject("nothing to normalize over")
    miss = b.choice(("eps_vector", "escape", "axis", "keepdims")) if b.chance(NEAR_MISS) else ""
    axis = b.choice((-1, rank - 1))
    if miss == "axis":
        others = [i for i in range(rank - 1) if shape[i] >= 2]
        if not others:
            raise Reject("no other axis to normalize over")
        axis = b.choice(others)
    mean = with_axes(b, "ReduceMean", x, [axis], {"keepdims": 1} if b.chance(0.3) else {})
    d = b.op("Sub", [x, mean])
    sq = b.op("Pow", [d, b.const(2.0)]) if b.chance(0.75) else b.op("Mul", [d, d])
    # near miss: keepdims=0 on the second mean (mostly rolled back: it rarely broadcasts back)
    var = with_axes(b, "ReduceMean", sq, [axis], {"keepdims": 0} if miss == "keepdims" else {})
    eps_value = b.choice((1e-5, 1e-5, 1e-3, 1e-6))
    eps = b.const(np.full((dim,), eps_value) if miss == "eps_vector" else eps_value)
    std = b.op("Sqrt", [_add(b, var, eps)])
    norm = b.op("Div", [d, std]) if b.chance(0.8) else _mul(b, d, b.op("Reciprocal", [std]))
    roll = b.rng.random()
    y = norm
    if roll < 0.85:
        y = _mul(b, y, b.const(b.uniform((dim,), 0.5, 1.5)))
    if roll < 0.7:
        y = _add(b, y, b.const(b.normal((dim,), 0.1)))
    return [y, d] if miss == "escape" else [y]


# ---- GELU ---------------------------------------------------------------------------------------------

def gelu(b: Builder, x: str) -> list[str]:
    """0.5 * x * (1 + Erf(x / sqrt 2)) (mostly), or 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 x^3)))."""
    miss = b.choice(("constant", "escape")) if b.chance(NEAR_MISS) else ""
    off = 1.25 if miss == "constant" else 1.0  # one constant off by 25%: not GELU
    wrong = b.choice(("inner", "one", "half")) if miss == "constant" else ""

    def c(value: float, name: str) -> str:
        return b.const(value * off if name == wrong else value)

    if b.chance(0.7):
        if b.chance(0.6):
            scaled = b.op("Div", [x, c(math.sqrt(2.0), "inner")])
        else:
            scaled = _mul(b, x, c(math.sqrt(0.5), "inner"))
        inner = b.op("Erf", [scaled])
    else:
        cube = b.op("Pow", [x, b.const(3.0)]) if b.chance(0.6) else b.op("Mul", [b.op("Mul", [x, x]), x])
        t = _add(b, x, _mul(b, cube, c(0.044715, "inner")))
        inner = b.op("Tanh", [_mul(b, t, b.const(math.sqrt(2.0 / math.pi)))])
    f = _add(b, inner, c(1.0, "one"))
    outer = b.choice(("x*f*0.5", "x*(0.5*f)", "(0.5*x)*f", "x*f/2"))
    if outer == "x*f*0.5":
        y = _mul(b, _mul(b, x, f), c(0.5, "half"))
    elif outer == "x*(0.5*f)":
        y = _mul(b, x, _mul(b, f, c(0.5, "half")))
    elif outer == "(0.5*x)*f":
        y = _mul(b, _mul(b, x, c(0.5, "half")), f)
    else:
        y = b.op("Div", [_mul(b, x, f), c(2.0 / off if wrong == "half" else 2.0, "")])
    return [y, inner] if miss == "escape" else [y]


# ---- HardSwish / HardSigmoid as Clip forms --------------------------------------------------------------

def hard_activation(b: Builder, x: str) -> list[str]:
    """x * Clip(x + 3, 0, 6) / 6 (HardSwish), Clip(x / 6 + 0.5, 0, 1) or Clip(x + 3, 0, 6) / 6 (HardSigmoid)."""
    miss = b.chance(NEAR_MISS)  # a bound off: Clip(., 0, 5) or Clip(., 0, 1.5)
    kind = b.choice(("hardswish", "hardswish", "hardsigmoid", "relu6_div"))
    if kind == "hardsigmoid":
        lin = b.op("Div", [x, b.const(6.0)]) if b.chance(0.5) else _mul(b, x, b.const(b.choice((1 / 6, 0.2))))
        return [_clip(b, _add(b, lin, b.const(0.5)), 0.0, 1.5 if miss else 1.0)]
    clip = _clip(b, _add(b, x, b.const(3.0)), 0.0, 5.0 if miss else 6.0)
    if kind == "relu6_div" or b.chance(0.2):  # Clip(x + 3, 0, 6) / 6: HardSigmoid (then x * that: HardSwish)
        y = b.op("Div", [clip, b.const(6.0)]) if b.chance(0.5) else _mul(b, clip, b.const(1 / 6))
        return [_mul(b, x, y)] if kind == "hardswish" else [y]
    xc = _mul(b, x, clip)
    return [b.op("Div", [xc, b.const(6.0)]) if b.chance(0.5) else _mul(b, xc, b.const(1 / 6))]


# ---- attention ----------------------------------------------------------------------------------------

def attention(b: Builder, x: str) -> list[str]:
    """Softmax(Q K^T * scale (+ mask)) V with Q, K, V projected from a 3-D/4-D activation [..., seq, dim]."""
    shape = b.shape(x)
    rank, seq, dim = len(shape), shape[-2], shape[-1]
    dk, dv = b.choice((2, 4, 8)), b.choice((2, 4))
    q, k, v = (b.op("MatMul", [x, b.const(b.normal((dim, n), 1 / np.sqrt(dim)))]) for n in (dk, dk, dv))
    kt = b.op("Transpose", [k], {"perm": [*range(rank - 2), rank - 1, rank - 2]})
    scaling = b.choice(("scores*s", "scores/s", "(q*s)K", "(q/s)K", "unscaled"))
    if scaling.startswith("(q"):
        q = _mul(b, q, b.const(1 / math.sqrt(dk))) if "*" in scaling else b.op("Div", [q, b.const(math.sqrt(dk))])
    scores = b.op("MatMul", [q, kt])
    if scaling == "scores*s":
        scores = _mul(b, scores, b.const(1 / math.sqrt(dk)))
    elif scaling == "scores/s":
        scores = b.op("Div", [scores, b.const(math.sqrt(dk))])
    if b.chance(0.4):  # an additive mask: causal (0 / -1e4) or a bounded bias, over [seq, seq] or [1, seq]
        if b.chance(0.5):
            mask = np.triu(np.full((seq, seq), -1e4, np.float32), 1)
        else:
            mask = b.normal(b.choice(((seq, seq), (1, seq))), 0.5)
        scores = _add(b, scores, b.const(mask))
    miss = b.choice(("axis", "escape")) if b.chance(NEAR_MISS) else ""
    axis = b.choice((-2, rank - 2)) if miss == "axis" else b.choice((-1, -1, rank - 1))
    probs = b.op("Softmax", [scores], {"axis": axis} if axis != -1 or b.opset < 13 or b.chance(0.3) else {})
    out = b.op("MatMul", [probs, v])
    return [out, probs] if miss == "escape" else [out]
