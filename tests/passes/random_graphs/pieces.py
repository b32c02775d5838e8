"""Variety moves: reductions and Softmax, Concat/Split/Slice/Gather."""

from __future__ import annotations

import numpy as np

from tests.passes.random_graphs.builder import INT64_MAX, Builder, Reject
from tests.passes.random_graphs.elementwise import apply_unary
from tests.passes.random_graphs.shapes import with_axes


def reduce(b: Builder, x: str) -> list[str]:
    rank = len(b.shape(x))
    kind = b.choice(("ReduceMean", "ReduceMean", "ReduceMax", "ReduceSum", "Softmax", "LogSoftmax"))
    if kind.endswith("Softmax"):
        return [b.op(kind, [x], {"axis": int(b.rng.integers(-rank, rank))})]
    axes = [i for i in range(rank) if b.chance(0.4)][: rank - 1] or [rank - 1]  # keep an axis: no lone mean
    axes = [a - rank if b.chance(0.3) else a for a in axes]
    return [with_axes(b, kind, x, axes, {"keepdims": 0} if b.chance(0.4) else {})]


def _concat(b: Builder, x: str) -> list[str]:
    shape, axis = b.shape(x), int(b.rng.integers(len(b.shape(x))))
    others = [y for y in b.pool if len(b.shape(y)) == len(shape)
              and all(d == e for i, (d, e) in enumerate(zip(b.shape(y), shape, strict=True)) if i != axis)]
    if others and b.chance(0.7):
        y = b.choice(others)
    else:
        y = apply_unary(b, b.choice(("Relu", "Tanh")), x) if b.chance(0.6) else b.const(b.normal(shape))
    parts = [x, y] if b.chance(0.5) else [y, x]
    if b.chance(0.2):
        parts.append(x)
    return [b.op("Concat", parts, {"axis": axis - len(shape) if b.chance(0.3) else axis})]


def _split(b: Builder, x: str) -> list[str]:
    shape = b.shape(x)
    axis = b.choice([i for i, d in enumerate(shape) if d >= 2] or [-1])
    if axis < 0:
        raise Reject("nothing to split")
    d = shape[axis]
    parts = b.choice((2, 3)) if d >= 3 else 2
    if b.chance(0.5):
        cuts = sorted(int(v) for v in b.rng.choice(np.arange(1, d), parts - 1, replace=False))
        sizes = np.diff([0, *cuts, d]).tolist()
        if b.opset < 13:  # split sizes were an attribute
            return b.ops("Split", [x], {"axis": axis, "split": sizes}, n_out=parts)
        return b.ops("Split", [x, b.ints(sizes)], {"axis": axis}, n_out=parts)
    attrs = {"axis": axis, "num_outputs": parts} if b.opset >= 18 else {"axis": axis}  # equal parts before 18
    return b.ops("Split", [x], attrs, n_out=parts)


def _slice(b: Builder, x: str) -> list[str]:
    shape = b.shape(x)
    axes = [i for i, d in enumerate(shape) if d >= 2 and b.chance(0.6)] or [len(shape) - 1]
    starts, ends, steps = [], [], []
    for a in axes:
        d, step = shape[a], b.choice((1, 1, 1, 2, -1))
        if step < 0:
            start, end = b.choice((d - 1, -1)), -(d + 1)
        else:
            start = int(b.rng.integers(0, max(d - 1, 1)))
            end = int(b.rng.integers(start + 1, d + 1))
            start, end = (start - d if b.chance(0.2) else start), (INT64_MAX if end == d and b.chance(0.3) else end)
        starts, ends, steps = [*starts, start], [*ends, end], [*steps, step]
    inputs = [x, b.ints(starts), b.ints(ends), b.ints(axes)]
    return [b.op("Slice", inputs + ([b.ints(steps)] if any(s != 1 for s in steps) or b.chance(0.3) else []))]


def _gather(b: Builder, x: str) -> list[str]:
    shape = b.shape(x)
    axis = int(b.rng.integers(len(shape)))
    d = shape[axis]
    if b.chance(0.3):
        index = b.const(int(b.rng.integers(-d, d)), np.int64)
    else:
        index = b.ints(b.rng.integers(-d, d, size=int(b.rng.integers(1, d + 1))).tolist())
    return [b.op("Gather", [x, index], {"axis": axis})]


def pieces(b: Builder, x: str) -> list[str]:
    return b.choice((_concat, _split, _slice, _gather))(b, x)
