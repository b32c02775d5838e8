"""Offline models with gears (`.gem` format 2), as ATC's `.om` compiled with --dynamic_dims or
--dynamic_batch_size holds every gear: one model per gear in one file.

model.json is {"gears": the GearSet (gears.py), "models": one format-1 model.json per gear, "aliases": array keys
stored once under another key}; arrays.npz holds the arrays of every gear, an array equal in several gears (the
weights, folded ones too) stored once. The manifest, hashes, size checks and the refusal of anything tampered
with are gem.py's.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ge_core.errors import ModelError, UsageError, quote
from ge_core.ir.serialize import graphs_to_records
from ge_core.offline.gears import GearSet
from ge_core.offline.gem import (
    ARRAYS,
    FORMAT_VERSION,
    GEARS_FORMAT_VERSION,
    HINT,
    MODEL,
    Contents,
    contents_from,
    json_bytes,
    model_json,
    read_members,
    write_members,
)
from ge_core.offline.stored_npz import aligned_npz_bytes


def write_gem_gears(gears: GearSet, models: Sequence[Contents], path: str | os.PathLike[str]) -> Path:
    """Write one model per gear (`models[i]` compiled for `gears.shapes[i]`) to `path`, atomically; arrays
    equal in several gears (the weights, folded ones too) are stored once."""
    if len(models) != len(gears.shapes):
        raise ValueError(f"{len(models)} models for {len(gears.shapes)} gears")
    graphs = {f"{i}.{part}": graph for i, c in enumerate(models)
              for part, graph in (("graph", c.graph), ("input", c.input_graph))}
    records, arrays = graphs_to_records(graphs)  # one array object shared by gears is stored once here
    unique, aliases = _dedupe(arrays)  # and equal arrays of distinct objects here
    model = {"gears": gears.to_json(), "aliases": aliases,
             "models": [model_json(c, records[f"{i}.graph"], records[f"{i}.input"]) for i, c in enumerate(models)]}
    return write_members(path, GEARS_FORMAT_VERSION, {MODEL: json_bytes(model), ARRAYS: aligned_npz_bytes(unique)},
                         None)


def read_gem_gears(path: str | os.PathLike[str], pick: Callable[[GearSet], int] | None = None
                   ) -> tuple[GearSet | None, dict[int, Contents]]:
    """What `path` holds, either format: (None, {0: the model}) for one model, else (its gears, {gear index:
    model}) for every gear, or only for the gear `pick(gears)` chooses (the others' graphs are not built).
    Refused as gem.read_gem refuses."""
    where = quote(os.fspath(path))
    version, model, arrays, _ = read_members(path, where)
    if version == FORMAT_VERSION:
        return None, {0: contents_from(model, arrays)}
    try:
        gears = GearSet.from_json(model["gears"])
        models = model["models"]
        if not isinstance(models, list) or len(models) != len(gears.shapes):
            raise ValueError(f"{len(gears.shapes)} gears but {len(models)} models")
        arrays.update(_aliased(model["aliases"], arrays))
    except (KeyError, TypeError, ValueError, UsageError) as exc:
        raise ModelError(f"{where}: its gears are malformed ({type(exc).__name__}: {exc}).", hint=HINT) from None
    chosen = range(len(models)) if pick is None else [pick(gears)]
    return gears, {i: contents_from(models[i], arrays) for i in chosen}


def _dedupe(arrays: Mapping[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The arrays with equal ones (same dtype, shape and bytes) kept once, and {dropped key: kept key}.
    Only arrays sharing a dtype and shape are hashed."""
    groups: dict[tuple[np.dtype[Any], tuple[int, ...]], list[str]] = {}
    for key, value in arrays.items():
        groups.setdefault((value.dtype, value.shape), []).append(key)
    unique, aliases = dict(arrays), {}
    for keys in groups.values():
        first_by_digest: dict[str, str] = {}
        for key in keys if len(keys) > 1 else ():
            flat = np.ascontiguousarray(arrays[key]).reshape(-1).view(np.uint8)
            kept = first_by_digest.setdefault(hashlib.sha256(flat.data).hexdigest(), key)
            if kept != key:
                aliases[key] = kept
                del unique[key]
    return unique, aliases


def _aliased(aliases: Mapping[str, str], arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The arrays stored once under another key, by the keys the graphs use (one shared object each)."""
    if not isinstance(aliases, Mapping):
        raise TypeError("aliases is not an object")
    missing = sorted(k for k, v in aliases.items() if v not in arrays or k in arrays)
    if missing:
        raise ValueError(f"array aliases {missing[:3]} name no stored array, or a stored one")
    return {key: arrays[kept] for key, kept in aliases.items()}
