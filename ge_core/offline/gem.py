"""The offline model (`.gem`): a compiled model in one file, GE's `.om` for the workbench.

A zip holding:

    manifest.json   {"format": "ge-workbench-offline-model", "format_version": 1 or 2, "ge_core_version",
                     "content_sha256": sha256 of model.json's bytes then arrays.npz's bytes}
    model.json      format 1, one model: the CompileConfig, the final and the imported graph
                    (ge_core/ir/serialize.py), the memory plan, every pass record (without snapshots), compile
                    seconds, report extras.
                    format 2, a model with gears (as ATC's .om compiled with --dynamic_dims or
                    --dynamic_batch_size holds every gear): {"gears": the GearSet (ge_core/offline/gears.py),
                    "models": one format-1 model per gear, "aliases": array keys stored once under another key}
    arrays.npz      constants and array attributes, each a .npy member (numpy's format, never pickled); in
                    format 2 an array equal in every gear (the weights) is stored once

Loading checks the format and version first, then sizes against the memory budget, then the hash over
the bytes actually read, and only then parses: a file from another version, truncated, corrupted or
tampered with is refused with a ModelError (exit 3 on the CLI). Nothing is ever unpickled.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ge_core.config import CompileConfig
from ge_core.errors import ModelError, UsageError, quote
from ge_core.ir.graph import Graph
from ge_core.ir.limits import MAX_MODEL_BYTES
from ge_core.ir.serialize import graph_from_record, graphs_to_records, known_arrays
from ge_core.memory.plan import MemoryPlan, plan_from_json
from ge_core.offline.gears import GearSet
from ge_core.offline.stored_npz import StoredMemberError, mapped, read_stored_npz, stored_member
from ge_core.passes.infra.base import FusionDecision, Stage
from ge_core.passes.infra.instruments import PassRecord
from ge_core.runtime.npz import npz_bytes
from ge_core.version import __version__

FORMAT = "ge-workbench-offline-model"
FORMAT_VERSION = 1  # one model
GEARS_FORMAT_VERSION = 2  # one model per gear
MANIFEST, MODEL, ARRAYS = "manifest.json", "model.json", "arrays.npz"
_HINT = "Compile the model again (python -m ge_core compile MODEL --output M.gem) with this version."


@dataclass(frozen=True)
class Contents:
    """What an offline model holds: everything a CompiledModel is made of but its graph snapshots
    (ge_core.compiler builds the CompiledModel from it: the compiler sits above this module)."""

    config: CompileConfig
    graph: Graph
    input_graph: Graph
    memory: MemoryPlan | None
    records: list[PassRecord]
    compile_seconds: float
    extra_report: dict[str, Any]


def write_gem(contents: Contents, path: str | os.PathLike[str], *, cache_key: str | None = None,
              snapshots: bool = False, known: Graph | None = None) -> Path:
    """Write `contents` to `path` atomically (a temporary file renamed into place). `snapshots` also stores
    the graph after every pass (the compile cache keeps them for the web page's pass stepper); `cache_key`
    is recorded in the manifest, so a cache entry cannot pass for another. Constants of `known` are named,
    not stored (the cache: its key pins the model's content, so the caller's graph holds them); reading
    such a file needs the same graph."""
    model, arrays = _model_bytes(contents, snapshots, known)
    return _write(path, FORMAT_VERSION, model, arrays, cache_key)


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
             "models": [_model_json(c, records[f"{i}.graph"], records[f"{i}.input"]) for i, c in enumerate(models)]}
    return _write(path, GEARS_FORMAT_VERSION, json.dumps(model, separators=(",", ":")).encode("utf-8"),
                  npz_bytes(unique), None)


def _write(path: str | os.PathLike[str], version: int, model: bytes, arrays: bytes, cache_key: str | None) -> Path:
    manifest = {"format": FORMAT, "format_version": version, "ge_core_version": __version__,
                "content_sha256": _digest(model, arrays), "cache_key": cache_key}
    target = Path(path)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(MANIFEST, json.dumps(manifest, indent=2))
        archive.writestr(MODEL, model)
        archive.writestr(ARRAYS, arrays, compress_type=zipfile.ZIP_STORED)  # weights barely compress: no inflating
    os.replace(partial, target)
    return target


def read_gem(path: str | os.PathLike[str], *, expect_key: str | None = None, known: Graph | None = None,
             snapshots: bool = True) -> Contents:
    """The one model `path` holds; refused cleanly if it is not an offline model of one model this version
    wrote intact (or, with `expect_key`, not the cache entry of that key). `known`: the graph it was written
    with, if any. `snapshots=False` leaves the stored graphs after each pass unbuilt (records without
    snapshots)."""
    where = quote(os.fspath(path))
    version, model, arrays = _read(path, where, expect_key)
    if version != FORMAT_VERSION:
        raise ModelError(f"{where} holds a model with gears, not one model.",
                         hint="Load it with ge_core.load_compiled(path, shapes=...) or GearedModel.load(path).")
    if known is not None:
        arrays.update(known_arrays(known))
    return _contents(model, arrays, snapshots)


def read_gem_gears(path: str | os.PathLike[str], pick: Callable[[GearSet], int] | None = None
                   ) -> tuple[GearSet | None, dict[int, Contents]]:
    """What `path` holds, either format: (None, {0: the model}) for one model, else (its gears, {gear index:
    model}) for every gear, or only for the gear `pick(gears)` chooses (the others' graphs are not built).
    Refused as read_gem refuses."""
    where = quote(os.fspath(path))
    version, model, arrays = _read(path, where, None)
    if version == FORMAT_VERSION:
        return None, {0: _contents(model, arrays)}
    try:
        gears = GearSet.from_json(model["gears"])
        models = model["models"]
        if not isinstance(models, list) or len(models) != len(gears.shapes):
            raise ValueError(f"{len(gears.shapes)} gears but {len(models)} models")
        arrays.update(_aliased(model["aliases"], arrays))
    except (KeyError, TypeError, ValueError, UsageError) as exc:
        raise ModelError(f"{where}: its gears are malformed ({type(exc).__name__}: {exc}).", hint=_HINT) from None
    chosen = range(len(models)) if pick is None else [pick(gears)]
    return gears, {i: _contents(models[i], arrays, False) for i in chosen}


def _read(path: str | os.PathLike[str], where: str, expect_key: str | None
          ) -> tuple[int, dict[str, Any], dict[str, np.ndarray]]:
    """The format version, the parsed model.json and the arrays of an intact offline model."""
    try:  # one open file for the directory and the mapped bytes: a rename over `path` meanwhile is harmless
        with open(path, "rb") as file, zipfile.ZipFile(file) as archive:
            manifest = _manifest(archive, where)
            _check_sizes(archive, where)
            model, info = archive.read(MODEL), archive.getinfo(ARRAYS)
            if info.compress_type != zipfile.ZIP_STORED:  # written before arrays were stored: the slow way
                arrays_bytes = archive.read(ARRAYS)
                _check_digest(manifest, model, arrays_bytes, where, expect_key)
                arrays = _arrays(arrays_bytes, where)
            else:
                with mapped(file) as data:
                    arrays = _mapped_arrays(data, info, manifest, model, where, expect_key)
        parsed = json.loads(model)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise ModelError(f"{where} is not a readable offline model ({type(exc).__name__}: {exc}).",
                         hint=_HINT) from None
    if not isinstance(parsed, dict):
        raise ModelError(f"{where}: its model.json is not an object.", hint=_HINT)
    return int(manifest["format_version"]), parsed, arrays


def _mapped_arrays(data: memoryview, info: zipfile.ZipInfo, manifest: Mapping[str, Any], model: bytes, where: str,
                   expect_key: str | None) -> dict[str, np.ndarray]:
    member = stored_member(data, info)
    try:
        _check_digest(manifest, model, member, where, expect_key)
        return read_stored_npz(member)
    except StoredMemberError as exc:
        problem = str(exc)
    finally:
        member.release()
    raise ModelError(f"{where}: its arrays cannot be read ({problem}).", hint=_HINT)


def _check_digest(manifest: Mapping[str, Any], model: bytes, arrays: bytes | memoryview, where: str,
                  expect_key: str | None) -> None:
    """Nothing is parsed before the bytes read are the bytes the manifest's hash names."""
    if manifest.get("content_sha256") != _digest(model, arrays):
        raise ModelError(f"{where} is corrupted: its content does not match the hash in its manifest.", hint=_HINT)
    if expect_key is not None and manifest.get("cache_key") != expect_key:
        raise ModelError(f"{where} is not the cache entry it is named after.", hint=_HINT)


# -- writing -------------------------------------------------------------------------------------------

def _model_bytes(compiled: Contents, snapshots: bool, known: Graph | None) -> tuple[bytes, bytes]:
    kept: dict[int, str] = {}  # snapshot graph id -> its record key (unchanged passes share one snapshot)
    graphs = {"graph": compiled.graph, "input": compiled.input_graph}
    for r in compiled.records if snapshots else ():
        if r.snapshot is not None and id(r.snapshot) not in kept:
            kept[id(r.snapshot)] = f"s{len(kept)}"
            graphs[kept[id(r.snapshot)]] = r.snapshot
    records, arrays = graphs_to_records(graphs, known)
    model = _model_json(compiled, records["graph"], records["input"], kept, records)
    return json.dumps(model, separators=(",", ":")).encode("utf-8"), npz_bytes(arrays)


def _model_json(compiled: Contents, graph: dict[str, Any], input_graph: dict[str, Any],
                kept: Mapping[int, str] | None = None, snapshots: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One model's model.json; `kept`: snapshot graph id -> its key in `snapshots` (records), if stored."""
    kept, snapshots = kept or {}, snapshots or {}
    return {"config": compiled.config.to_json(), "graph": graph, "input_graph": input_graph,
            "memory": compiled.memory.to_json() if compiled.memory is not None else None,
            "records": [_record_json(r, kept.get(id(r.snapshot))) for r in compiled.records],
            "snapshots": {key: snapshots[key] for key in kept.values()},
            "compile_seconds": compiled.compile_seconds, "extra_report": compiled.extra_report}


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


def _record_json(record: PassRecord, snapshot: str | None) -> dict[str, Any]:
    return {**record.to_json(), "index": record.index, "description": record.description,
            "notes": list(record.notes), "decisions": [d.to_json() for d in record.decisions],
            "report": {k: list(v) for k, v in record.report.items()}, "snapshot": snapshot}


def _digest(model: bytes, arrays: bytes | memoryview) -> str:
    digest = hashlib.sha256(model)
    digest.update(b"\0")
    digest.update(arrays)
    return digest.hexdigest()


# -- reading -------------------------------------------------------------------------------------------

def _manifest(archive: zipfile.ZipFile, where: str) -> dict[str, Any]:
    names = set(archive.namelist())
    if not {MANIFEST, MODEL, ARRAYS} <= names:
        raise ModelError(f"{where} is not an offline model: it lacks {sorted({MANIFEST, MODEL, ARRAYS} - names)}.",
                         hint=_HINT)
    if archive.getinfo(MANIFEST).file_size > 1 << 16:
        raise ModelError(f"{where}: its manifest is implausibly large.", hint=_HINT)
    manifest = json.loads(archive.read(MANIFEST))
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelError(f"{where} is not a GE Workbench offline model.", hint=_HINT)
    if manifest.get("format_version") not in (FORMAT_VERSION, GEARS_FORMAT_VERSION):
        raise ModelError(f"{where} was written by ge_core {manifest.get('ge_core_version', '?')} in offline-model "
                         f"format {manifest.get('format_version')!r}; this version reads format {FORMAT_VERSION} "
                         f"(one model) and format {GEARS_FORMAT_VERSION} (a model with gears).", hint=_HINT)
    return manifest


def _check_sizes(archive: zipfile.ZipFile, where: str) -> None:
    """model.json's and arrays.npz's declared sizes, checked before a byte is decompressed."""
    total = archive.getinfo(MODEL).file_size + archive.getinfo(ARRAYS).file_size
    if total > MAX_MODEL_BYTES:
        raise ModelError(f"{where} unpacks to {total} bytes, over the {MAX_MODEL_BYTES}-byte limit.", hint=_HINT)


def _arrays(data: bytes, where: str) -> dict[str, np.ndarray]:
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        raise ModelError(f"{where}: its arrays cannot be read ({exc}).", hint=_HINT) from None


def _contents(model: Mapping[str, Any], arrays: Mapping[str, np.ndarray], with_snapshots: bool = True) -> Contents:
    try:
        config = CompileConfig.from_json(model["config"])
        graph = graph_from_record(model["graph"], arrays)
        input_graph = graph_from_record(model["input_graph"], arrays)
        memory = plan_from_json(model["memory"]) if model["memory"] is not None else None
        stored = model.get("snapshots", {}) if with_snapshots else {}
        snapshots = {k: graph_from_record(g, arrays) for k, g in stored.items()}
        records = [_record(r, snapshots.get(r.get("snapshot") or "")) for r in model["records"]]
        seconds, extra = float(model["compile_seconds"]), dict(model["extra_report"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"the offline model's content is malformed ({type(exc).__name__}: {exc}).",
                         hint=_HINT) from None
    return Contents(config, graph, input_graph, memory, records, seconds, extra)


def _record(data: Mapping[str, Any], snapshot: Graph | None) -> PassRecord:
    decisions = tuple(FusionDecision(d["pass"], d["pattern"], tuple(d["nodes"]), bool(d["accepted"]), d["reason"],
                                     d["fused_node"]) for d in data["decisions"])
    return PassRecord(int(data["index"]), data["name"], Stage(data["stage"]), data["description"],
                      bool(data["changed"]), int(data["nodes_before"]), int(data["nodes_after"]),
                      float(data["seconds"]), tuple(data["notes"]), snapshot, data.get("verified"),
                      data.get("max_error"), decisions, {k: tuple(v) for k, v in data["report"].items()})
