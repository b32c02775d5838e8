"""Constant-only subgraphs (constant folding's food) and duplicated computations (CSE's), with near misses."""

from __future__ import annotations

import numpy as np

from tests.passes.random_graphs.builder import Builder
from tests.passes.random_graphs.shapes import broadcast_shape


def const_subgraph(b: Builder, x: str) -> list[str]:
    """A value computed from constants only (Add/Mul, Concat, Reshape, a Constant node), then used on x."""
    shape = broadcast_shape(b, b.shape(x))
    kind = b.choice(("arith", "concat", "reshape", "constant"))
    wide = [i for i, d in enumerate(shape) if d >= 2]
    if kind == "concat" and wide:
        axis = b.choice(wide)
        cut = int(b.rng.integers(1, shape[axis]))
        parts = [[*shape[:axis], m, *shape[axis + 1:]] for m in (cut, shape[axis] - cut)]
        v = b.op("Concat", [b.const(b.uniform(p, 0.5, 1.5)) for p in parts], {"axis": axis})
    elif kind == "reshape":
        v = b.op("Reshape", [b.const(b.uniform([int(np.prod(shape))], 0.5, 1.5)), b.ints(shape)])
    elif kind == "constant":
        v = b.op("Mul", [b.op("Constant", [], {"value": b.uniform(shape, 0.5, 1.5)}), b.const(b.scale(shape))])
    else:
        v = b.op("Add", [b.const(b.uniform(shape, 0.25, 0.75)), b.const(b.uniform(shape, 0.25, 0.75))])
        v = b.op("Mul", [v, b.const(b.uniform(shape, 0.8, 1.2))])
    return [b.op(b.choice(("Mul", "Add")), [x, v])]


def duplicate(b: Builder, x: str) -> list[str]:
    """The same computation twice (CSE's food), or twice with a small difference (must not merge)."""
    kind = b.choice(("unary", "const", "weights", "near_attr", "near_const", "commuted", "constant_node"))
    if kind == "constant_node":  # two Constant nodes holding the same value
        value = b.scale(broadcast_shape(b, b.shape(x)))
        y1, y2 = (b.op("Mul", [x, b.op("Constant", [], {"value": value.copy()})]) for _ in range(2))
    elif kind in ("unary", "near_attr"):
        op = b.choice(("Relu", "Sigmoid", "Tanh", "LeakyRelu", "Transpose"))
        attrs = [{"alpha": 0.1}, {"alpha": 0.1 if kind == "unary" else 0.2}] if op == "LeakyRelu" else [{}, {}]
        y1, y2 = (b.op(op, [x], a) for a in attrs)
    elif kind in ("const", "near_const"):
        c = b.scale(broadcast_shape(b, b.shape(x)))
        c2 = c.copy()
        if kind == "near_const":
            c2.reshape(-1)[0] += 0.25
        y1, y2 = b.op("Mul", [x, b.const(c)]), b.op("Mul", [x, b.const(c2)])
    elif kind == "weights":
        k = b.shape(x)[-1]
        w = b.normal((k, b.choice((2, 4))), 1 / np.sqrt(k))
        w1 = b.const(w)
        y1, y2 = b.op("MatMul", [x, w1]), b.op("MatMul", [x, w1 if b.chance(0.5) else b.const(w.copy())])
    else:
        same = [y for y in b.pool if b.shape(y) == b.shape(x)]
        y = b.choice(same)
        op = b.choice(("Add", "Mul", "Max"))
        y1, y2 = b.op(op, [x, y]), b.op(op, [y, x])
    return [b.op("Add", [y1, y2])] if b.chance(0.5) else [y1, y2]
