"""Checking feeds against a graph's inputs, and making seeded random ones."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ge_core.errors import UsageError
from ge_core.ir.graph import Graph
from ge_core.ir.limits import check_tensor_size


def check_feeds(graph: Graph, feeds: Mapping[str, object]) -> dict[str, np.ndarray]:
    """Every input fed exactly once, with the declared dtype and a shape matching its static dims."""
    unknown = sorted(set(feeds) - set(graph.inputs))
    if unknown:
        raise UsageError(f"feeds {unknown} are not inputs of graph '{graph.name}'.",
                         hint=f"Its inputs are: {', '.join(graph.inputs) or '(none)'}.")
    missing = [t for t in graph.inputs if t not in feeds]
    if missing:
        raise UsageError(f"graph '{graph.name}' needs inputs {missing}, which were not fed.",
                         hint="Feed every input (or omit --inputs to use seeded random inputs).")
    checked: dict[str, np.ndarray] = {}
    for name in graph.inputs:
        value = np.asarray(feeds[name])
        desc = graph.desc(name)
        have = "str" if value.dtype.kind in "OUS" else value.dtype.name
        if have != desc.dtype:
            raise UsageError(f"input '{name}' is fed {have} but the model expects {desc.dtype}.",
                             hint=f"Cast it, e.g. x.astype('{desc.dtype}').")
        if value.ndim != desc.rank or any(d >= 0 and d != v for d, v in zip(desc.shape, value.shape, strict=True)):
            raise UsageError(f"input '{name}' is fed shape {list(value.shape)} but the model expects "
                             f"{desc.text()} (? = any size).")
        checked[name] = value
    return checked


def random_feeds(graph: Graph, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded random inputs for static input shapes: floats ~ N(0,1), ints in {0, 1}, bools 50/50.

    Ints stay in {0, 1} because int inputs are usually ids, masks or token types: 0 and 1 are valid for
    all of them, where larger values would index past small embedding tables."""
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    for name in graph.inputs:
        desc = graph.desc(name)
        if not desc.is_static:
            dims = graph.input_dims_text(name)
            example = ",".join("1" if d == "?" or not d.isdigit() else d for d in dims)
            raise UsageError(f"input '{name}' has symbolic dims [{', '.join(dims)}]; random inputs need "
                             "concrete sizes.", hint=f'Pass --input-shape "{name}:{example}" (or feed --inputs).')
        check_tensor_size(f"input '{name}'", desc.shape, desc.dtype)
        feeds[name] = _random(rng, desc.shape, desc.dtype)
    return feeds


def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    kind = np.dtype(dtype).kind
    if kind == "f":
        return rng.standard_normal(size=shape).astype(dtype)
    if kind in "iu":
        return rng.integers(0, 2, size=shape).astype(dtype)
    raise UsageError(f"cannot make random inputs of dtype {dtype}; feed them with --inputs.")
