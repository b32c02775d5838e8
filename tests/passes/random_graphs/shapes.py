"""Shape helpers the moves share: broadcastable and per-channel constant shapes, Reshape specs, perms."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tests.passes.random_graphs.builder import Builder


def broadcast_shape(b: Builder, shape: Sequence[int]) -> tuple[int, ...]:
    """A random shape that broadcasts into `shape` without growing it (scalar, per-axis, full...)."""
    roll = b.rng.random()
    if roll < 0.2 or not shape:
        return ()
    if roll < 0.3:
        return (1,)
    dims = [d if b.chance(0.5) else 1 for d in shape]
    while dims and dims[0] == 1 and b.chance(0.5):
        dims.pop(0)
    return tuple(dims)


def channel_shape(b: Builder, shape: Sequence[int], axis: int, per_channel: bool) -> tuple[int, ...]:
    """A constant shape for a scale/shift after Conv (axis 1) or MatMul (axis -1).

    per_channel: one value per channel (or a scalar) — foldable into the weights. Otherwise the constant
    varies along another axis (space, batch, rows) — a near miss that must not fold.
    """
    rank, a = len(shape), axis % len(shape)
    full = [1] * rank
    if per_channel:
        if b.chance(0.2):
            return b.choice([(), (1,)])
        full[a] = shape[a]
        return tuple(full[int(b.rng.integers(0, a + 1)):])
    others = [i for i in range(rank) if i != a and shape[i] > 1]
    if not others:  # nothing but the channel can vary: per channel it is
        return channel_shape(b, shape, axis, True)
    for i in others:
        if b.chance(0.5):
            full[i] = shape[i]
    keep = b.choice(others)
    full[keep] = shape[keep]
    if b.chance(0.5):
        full[a] = shape[a]
    first = next(i for i, d in enumerate(full) if d > 1)
    return tuple(full[int(b.rng.integers(0, first + 1)):])


def factor_shape(b: Builder, n: int, rank: int) -> list[int]:
    """Spread the prime factors of n over `rank` dims at random."""
    dims, p, rest = [1] * rank, 2, n
    while rest > 1:
        while rest % p == 0:
            dims[int(b.rng.integers(rank))] *= p
            rest //= p
        p += 1
    return dims


def reshape_spec(b: Builder, src: Sequence[int], dst: Sequence[int]) -> list[int]:
    """Reshape's shape input for dst: sometimes with a -1, or a 0 copying an input dim."""
    spec = list(dst)
    if spec and b.chance(0.25):
        spec[int(b.rng.integers(len(spec)))] = -1
    for i in range(min(len(spec), len(src))):
        if spec[i] == src[i] and b.chance(0.15):
            spec[i] = 0
    return spec


def reshape(b: Builder, x: str, dst: Sequence[int]) -> str:
    spec = reshape_spec(b, b.shape(x), dst)
    allowzero = b.opset >= 14 and 0 not in spec and b.chance(0.1)
    return b.op("Reshape", [x, b.ints(spec)], {"allowzero": 1} if allowzero else {})


def with_axes(b: Builder, op_type: str, x: str, axes: Sequence[int], attrs: dict[str, Any] | None = None) -> str:
    """Squeeze/Unsqueeze/Reduce*: axes as an input from the opset that made them one, else an attribute."""
    since = {"Squeeze": 13, "Unsqueeze": 13, "ReduceSum": 13}.get(op_type, 18)
    if b.opset >= since:
        return b.op(op_type, [x, b.ints(axes)], attrs)
    return b.op(op_type, [x], {**(attrs or {}), "axes": list(axes)})


def inverse(perm: Sequence[int]) -> list[int]:
    return [int(i) for i in np.argsort(perm)]


def random_perm(b: Builder, rank: int) -> list[int]:
    return [int(i) for i in b.rng.permutation(rank)]


def fits(small: Sequence[int], big: Sequence[int]) -> bool:
    """True when `small` broadcasts into `big` without growing it."""
    try:
        return np.broadcast_shapes(tuple(small), tuple(big)) == tuple(big)
    except ValueError:
        return False
