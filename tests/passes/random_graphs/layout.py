"""Data-movement moves: Transpose pairs and triples, Reshape/Flatten/Squeeze/Unsqueeze chains, channel
shuffles and Reshape targets computed from Shape."""

from __future__ import annotations

import numpy as np

from tests.passes.random_graphs.builder import Builder, Reject
from tests.passes.random_graphs.shapes import factor_shape, inverse, random_perm, reshape, with_axes


def transpose_chain(b: Builder, x: str) -> list[str]:
    """Transpose pairs and triples: inverse (cancel), random (compose), or returning to x's layout."""
    p = random_perm(b, len(b.shape(x)))
    if b.chance(0.15):  # no perm attribute: the axes reversed
        p = list(range(len(p)))[::-1]
    y = b.op("Transpose", [x], {"perm": p} if p != list(range(len(p)))[::-1] or b.chance(0.5) else {})
    keep = [y] if b.chance(0.2) else []  # the middle tensor is read elsewhere too
    roll = b.rng.random()
    if roll < 0.45:
        z = b.op("Transpose", [y], {"perm": inverse(p)})
    elif roll < 0.75:
        z = b.op("Transpose", [y], {"perm": random_perm(b, len(p))})
    elif roll < 0.9:
        q = random_perm(b, len(p))
        z = b.op("Transpose", [b.op("Transpose", [y], {"perm": q})], {"perm": inverse([p[i] for i in q])})
    else:
        return [y]
    return [*keep, z]


def reshape_chain(b: Builder, x: str) -> list[str]:
    """Reshape/Flatten/Squeeze/Unsqueeze chains, many of them returning to x's shape."""
    src = b.shape(x)
    kind = b.choice(("roundtrip", "random", "flatten", "unsqueeze", "chain"))
    if kind == "unsqueeze":
        ones = [i for i, d in enumerate(src) if d == 1]
        if ones and b.chance(0.4):
            y = with_axes(b, "Squeeze", x, ones) if b.chance(0.7) else b.op("Squeeze", [x])
            return [with_axes(b, "Unsqueeze", y, ones)] if b.chance(0.7) else [y]
        axes = sorted({int(a) for a in b.rng.integers(0, len(src) + 1, size=int(b.rng.integers(1, 3)))})
        y = with_axes(b, "Unsqueeze", x, axes)
        return [with_axes(b, "Squeeze", y, axes)] if b.chance(0.7) else [y]
    if kind == "flatten":
        y = b.op("Flatten", [x], {"axis": int(b.rng.integers(0, len(src) + 1))})
    else:
        n = int(np.prod(src))
        y = reshape(b, x, factor_shape(b, n, int(b.rng.integers(1, 5))))
        if kind == "chain":
            y = reshape(b, y, factor_shape(b, n, int(b.rng.integers(1, 5))))
    back = b.chance(0.8) if kind in ("roundtrip", "flatten") else b.chance(0.3)
    return [reshape(b, y, src)] if back else [y]


def channel_shuffle(b: Builder, x: str) -> list[str]:
    """ShuffleNet's Reshape [N,g,C/g,H,W] -> Transpose(0,2,1,3,4) -> Reshape [N,C,H,W]."""
    n, c, h, w = b.shape(x)
    groups = [g for g in range(2, c) if c % g == 0]
    if not groups:
        raise Reject("channels do not split into groups")
    g = b.choice(groups)
    y = b.op("Transpose", [reshape(b, x, [n, g, c // g, h, w])], {"perm": [0, 2, 1, 3, 4]})
    return [reshape(b, y, [n, c, h, w])]


def shape_reshape(b: Builder, x: str) -> list[str]:
    """Reshape to [N, -1] with the target computed from Shape(x): Gather/Unsqueeze/Concat, all foldable."""
    src = b.shape(x)
    roll = b.rng.random()
    if roll < 0.5:
        lead = with_axes(b, "Unsqueeze", b.op("Gather", [b.op("Shape", [x]), b.const(0, np.int64)]), [0])
    elif roll < 0.75 or b.opset < 15:  # Shape's start/end came with opset 15
        lead = b.op("Gather", [b.op("Shape", [x]), b.ints(list(range(int(b.rng.integers(1, len(src))))))])
    else:
        lead = b.op("Shape", [x], {"start": 0, "end": int(b.rng.integers(1, len(src)))})
    y = b.op("Reshape", [x, b.op("Concat", [lead, b.ints([-1])], {"axis": 0})])
    return [reshape(b, y, src)] if b.chance(0.4) else [y]
