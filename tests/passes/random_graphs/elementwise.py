"""Elementwise moves: unary activations, binary ops between activations or with constants, Where."""

from __future__ import annotations

from tests.passes.random_graphs.builder import Builder
from tests.passes.random_graphs.shapes import broadcast_shape, fits, with_axes

UNARY = ("Relu", "Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip", "Exp", "Sqrt", "Abs", "Softsign", "Elu",
         "HardSigmoid", "Neg")


def apply_unary(b: Builder, kind: str, x: str) -> str:
    if kind == "LeakyRelu":
        return b.op(kind, [x], {"alpha": b.choice((0.01, 0.1, 0.2))})
    if kind == "Clip":
        lo, hi = b.const(-b.rng.uniform(0.5, 2.0)), b.const(b.rng.uniform(0.5, 2.0))
        return b.op(kind, b.choice(([x, lo, hi], [x, lo], [x, "", hi])))
    if kind == "Exp":  # of bounded values: e^[-1, 1]
        return b.op("Exp", [b.op("Tanh", [x])])
    if kind == "Sqrt":
        return b.op("Sqrt", [b.op("Abs", [x])])
    return b.op(kind, [x])


def unary(b: Builder, x: str) -> list[str]:
    return [apply_unary(b, b.choice(UNARY), x)]


def binary(b: Builder, x: str) -> list[str]:
    """x op y for another activation y broadcasting into x (or a gate computed from x, as in SE blocks)."""
    shape = b.shape(x)
    others = [y for y in b.pool if (y != x or b.chance(0.1)) and fits(b.shape(y), shape)]
    if others and b.chance(0.75):
        y = b.choice(others)
    else:
        axes = [i for i in range(len(shape)) if b.chance(0.5)] or [len(shape) - 1]
        y = b.op("Sigmoid", [with_axes(b, "ReduceMean", x, axes)])
    kind = b.choice(("Add", "Mul", "Max", "Min", "Div"))
    if kind == "Div":  # a safe denominator: |y| + 1
        return [b.op("Div", [x, b.op("Add", [b.op("Abs", [y]), b.const(1.0)])])]
    return [b.op(kind, [x, y] if b.chance(0.7) else [y, x])]


def const_binary(b: Builder, x: str) -> list[str]:
    kind = b.choice(("Add", "Sub", "Mul", "Div"))
    shape = broadcast_shape(b, b.shape(x))
    c = b.const(b.scale(shape) if kind in ("Mul", "Div") else b.normal(shape, 0.5))
    return [b.op(kind, [c, x] if kind != "Div" and b.chance(0.3) else [x, c])]


def where(b: Builder, x: str) -> list[str]:
    """Where with a condition read from graph inputs (exact, so rewrites upstream cannot flip it)."""
    shape = b.shape(x)
    sources = [t for t in b.graph.inputs if fits(b.shape(t), shape)]
    if sources:
        src = b.choice(sources)
        cond = (b.op("Equal", [b.op("Sign", [src]), b.const(1.0)]) if b.chance(0.5)
                else b.op("Greater", [src, b.const(0.0)]))
    else:  # a constant-only condition
        cond = b.op("Greater", [b.const(b.normal(broadcast_shape(b, shape))), b.const(0.0)])
    same = [y for y in b.pool if b.shape(y) == shape and y != x]
    other = b.choice(same) if same and b.chance(0.6) else b.const(b.normal(broadcast_shape(b, shape)))
    return [b.op("Where", [cond, x, other] if b.chance(0.5) else [cond, other, x])]
