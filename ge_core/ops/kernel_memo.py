"""A memo of kernel geometry: what a kernel derives from a node's attributes and its input shapes, once.

Conv and the pools re-validate their attributes on every call (the same checks inference runs, so that a
kernel called alone still names the node in its errors): ~60 µs of Python per Conv, as much as a small
conv's arithmetic. The result depends only on the op, the attributes and the input shapes/dtypes, so it
is kept under exactly that key. The key is taken afresh on every call, so a node whose attributes are
edited (passes do) misses instead of reading a stale window; a call that raises stores nothing, so errors
are still raised by the full checks.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

import numpy as np

from ge_core.ir.node import Node

T = TypeVar("T")
MAX_ENTRIES = 4096  # distinct (attributes, shapes) seen; cleared when full (models have a few hundred)

_MEMO: dict[Hashable, Any] = {}


def memoized(node: Node, inputs: Sequence[np.ndarray | None], compute: Callable[[], T],
             values: tuple[Hashable, ...] = ()) -> T:
    """compute(), or its result from an earlier call with the same op, attributes and input shapes/dtypes
    (and the same `values`: what else the result depends on, e.g. Reshape's target dims)."""
    key = _key(node, inputs)
    if key is not None:
        key = (key, values)
    if key is None:
        return compute()
    if key in _MEMO:
        known: T = _MEMO[key]
        return known
    value = compute()
    if len(_MEMO) >= MAX_ENTRIES:
        _MEMO.clear()
    _MEMO[key] = value
    return value


def _key(node: Node, inputs: Sequence[np.ndarray | None]) -> Hashable | None:
    """(op, opset, attributes, input shapes and dtypes), or None when an attribute is not hashable."""
    attrs = []
    for name, value in node.attrs.items():
        if isinstance(value, list):
            value = tuple(value)
        elif not isinstance(value, int | float | str | bytes | tuple):
            return None  # tensors, graphs: not memoized
        attrs.append((name, value))
    shapes = tuple(None if a is None else (a.shape, a.dtype) for a in inputs)
    key = (node.op_type, node.domain, node.opset, tuple(attrs), shapes)
    try:
        hash(key)
    except TypeError:  # a tuple attribute holding something unhashable
        return None
    return key
