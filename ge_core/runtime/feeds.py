"""Checking feeds against a graph's inputs, and making seeded random ones."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ge_core.errors import UsageError
from ge_core.ir.dtypes import dtype_info, is_extension, name_of, numpy_dtype
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
        desc = graph.desc(name)
        value = _typed(np.asarray(feeds[name]), desc.dtype)
        have = name_of(value.dtype)
        if have != desc.dtype:
            raise UsageError(f"input '{name}' is fed {have} but the model expects {desc.dtype}.",
                             hint=f"Cast it, e.g. x.astype('{desc.dtype}').")
        if value.ndim != desc.rank or any(d >= 0 and d != v for d, v in zip(desc.shape, value.shape, strict=True)):
            raise UsageError(f"input '{name}' is fed shape {list(value.shape)} but the model expects "
                             f"{desc.text()} (? = any size).")
        checked[name] = value
    return checked


def _typed(value: np.ndarray, dtype: str) -> np.ndarray:
    """An .npz file stores ml_dtypes arrays (bfloat16, float8, int4...) as raw bytes (void `V2`, `V1`):
    those bytes are read as the dtype the input declares when the widths agree."""
    want = numpy_dtype(dtype)
    if value.dtype.kind == "V" and value.dtype.names is None and want is not None and is_extension(want) \
            and value.dtype.itemsize == want.itemsize:
        return value.view(want)
    return value


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
    info = dtype_info(dtype)
    kind = info.kind if info is not None else ""
    if kind == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if kind == "float":  # bfloat16 and float8 too, rounded from float32 (E8M0 holds no negative numbers)
        values = rng.standard_normal(size=shape).astype(np.float32)
        return (np.abs(values) if dtype == "float8_e8m0fnu" else values).astype(dtype)
    if kind in ("int", "uint"):
        return rng.integers(0, 2, size=shape).astype(dtype)
    raise UsageError(f"cannot make random inputs of dtype {dtype}; feed them with --inputs.")
