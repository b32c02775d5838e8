"""Moves with weights: MatMul/Gemm and Conv/ConvTranspose, then BatchNormalization and per-channel (foldable)
or spatially varying (near miss) scales and shifts."""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.passes.random_graphs.builder import Builder, Reject
from tests.passes.random_graphs.shapes import channel_shape, fits


def affine(b: Builder, y: str, axis: int) -> str:
    """Scale and/or shift by constants after a Conv (axis 1) or MatMul (axis -1).

    Per-channel constants fold into the weights; others (varying over space, batch or rows) must not.
    """
    shape = b.shape(y)
    if b.chance(0.55):
        c = b.const(b.scale(channel_shape(b, shape, axis, b.chance(0.7))))
        kind = b.choice(("Mul", "Mul", "Div"))
        y = b.op(kind, [c, y] if kind == "Mul" and b.chance(0.2) else [y, c])
    if b.chance(0.45):
        c = b.const(b.normal(channel_shape(b, shape, axis, b.chance(0.7)), 0.3))
        kind = b.choice(("Add", "Add", "Sub"))
        y = b.op(kind, [c, y] if b.chance(0.2) else [y, c])
    return y


def batchnorm(b: Builder, y: str) -> str:
    c = b.shape(y)[1]
    params = [b.scale((c,)), b.normal((c,), 0.1), b.normal((c,), 0.1), b.uniform((c,), 0.5, 1.5)]
    attrs = {"epsilon": b.choice((1e-5, 1e-3))} if b.chance(0.5) else {}
    return b.op("BatchNormalization", [y, *(b.const(p) for p in params)], attrs)


def batchnorm_alone(b: Builder, x: str) -> list[str]:
    """BatchNormalization after whatever x is (mostly not a Conv: nothing to fold into)."""
    return [batchnorm(b, x)]


def _gemm(b: Builder, x: str, m: int) -> str:
    rows, k = b.shape(x)
    trans_b = b.chance(0.5)
    attrs: dict[str, Any] = {"transB": 1} if trans_b else {}
    if b.chance(0.1):  # x read transposed
        attrs["transA"] = 1
        rows, k = k, rows
    if b.chance(0.3):
        attrs["alpha"] = b.choice((0.5, 2.0))
    inputs = [x, b.const(b.normal((m, k) if trans_b else (k, m), 1 / np.sqrt(k)))]
    activations = [t for t in b.pool if fits(b.shape(t), (rows, m))]
    if activations and b.chance(0.1):  # C is an activation: nothing can fold into it
        inputs.append(b.choice(activations))
    elif b.chance(0.6):
        inputs.append(b.const(b.normal(b.choice(((m,), (1, m), (), (rows, m))), 0.1)))
        if b.chance(0.2):
            attrs["beta"] = 0.5
    return b.op("Gemm", inputs, attrs)


def matmul(b: Builder, x: str) -> list[str]:
    shape = b.shape(x)
    m = b.choice((2, 3, 4, 6, 8))
    if len(shape) == 2 and b.chance(0.5):
        y = _gemm(b, x, m)
    elif len(shape) == 2 and b.chance(0.1):  # the constant on the left: its columns are x's
        y = b.op("MatMul", [b.const(b.normal((m, shape[0]), 1 / np.sqrt(shape[0]))), x])
    else:
        y = b.op("MatMul", [x, b.const(b.normal((shape[-1], m), 1 / np.sqrt(shape[-1])))])
    if len(b.shape(y)) == 2 and b.chance(0.2):
        y = batchnorm(b, y)
    return [affine(b, y, -1)]


def _conv_group(b: Builder, c: int) -> int:
    roll = b.rng.random()
    divisors = [g for g in range(2, c) if c % g == 0]
    if roll < 0.5 or (roll >= 0.75 and not divisors):
        return 1
    return c if roll < 0.75 else b.choice(divisors)


def conv(b: Builder, x: str) -> list[str]:
    """Conv (1-D/2-D; 1x1/3x3, strided, grouped, depthwise) or ConvTranspose with constant weights, then
    maybe a bias as its own Add, BatchNormalization, a scale/shift and a Relu."""
    c, spatial = b.shape(x)[1], b.shape(x)[2:]
    k, stride = b.choice((1, 3)), b.choice((1, 1, 2))
    pad = int(k == 3 and b.chance(0.7))
    if min(spatial) + 2 * pad < k:
        raise Reject("input smaller than the kernel")
    group = _conv_group(b, c)
    widths = [m for m in range(1, 9) if group * m <= max(12, group)]
    cout = c * b.choice((1, 1, 2)) if group == c else group * b.choice(widths)
    op = "ConvTranspose" if b.chance(0.12) else "Conv"
    kernel = (k,) * len(spatial)
    w_shape = (c, cout // group, *kernel) if op == "ConvTranspose" else (cout, c // group, *kernel)
    inputs = [x, b.const(b.normal(w_shape, 1 / np.sqrt(c // group * k ** len(spatial))))]
    bias_op = b.chance(0.15)  # exporters without a Conv bias write Conv -> Add(bias) -> BN
    if not bias_op and b.chance(0.6):
        inputs.append(b.const(b.normal((cout,), 0.1)))
    attrs: dict[str, Any] = {}
    if stride != 1 or b.chance(0.3):
        attrs["strides"] = [stride] * len(spatial)
    if pad or b.chance(0.3):
        attrs["pads"] = [pad] * (2 * len(spatial))
    if group != 1 or b.chance(0.2):
        attrs["group"] = group
    if b.chance(0.3):
        attrs["kernel_shape"] = list(kernel)
    y = b.op(op, inputs, attrs)
    if bias_op:
        y = b.op("Add", [y, b.const(b.normal((cout, *(1,) * len(spatial)), 0.1))])
    if b.chance(0.6):
        y = batchnorm(b, y)
    y = affine(b, y, 1)
    return [b.op("Relu", [y])] if b.chance(0.35) else [y]
