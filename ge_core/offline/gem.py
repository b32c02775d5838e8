"""The offline model (`.gem`): a compiled model in one file, GE's `.om` for the workbench.

A zip holding:

    manifest.json   {"format": "ge-workbench-offline-model", "format_version": 1 (one model) or 2 (a model with
                     gears: gem_gears.py), "ge_core_version",
                     "content_sha256": sha256 of model.json's bytes, a NUL, then arrays.npz's bytes,
                     "snapshots_sha256": the same of the two snapshot members, when they are there}
    model.json      the CompileConfig, the final and the imported graph (ge_core/ir/serialize.py), the memory
                    plan, every pass record (without snapshots), compile seconds, report extras
    arrays.npz      constants and array attributes, each a .npy member (numpy's format, never pickled),
                    stored 64-byte aligned so loading reads them once (ge_core/offline/stored_npz.py)
    snapshots.json, snapshot_arrays.npz
                    (compile cache entries) the graph after each pass and the arrays only those graphs
                    hold: members of their own, so a load that does not want them neither hashes nor parses
                    them (54 of synthetic_10k's 57 MB of JSON, 41 of inception_v2's 81 MB of arrays)

A cache entry names the imported graph "known" instead of storing it: its key pins the model's content,
so the graph being compiled is that graph (and its constants are the entry's "known:" arrays).

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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ge_core.config import CompileConfig
from ge_core.errors import ModelError, quote
from ge_core.ir.graph import Graph
from ge_core.ir.limits import MAX_MODEL_BYTES
from ge_core.ir.serialize import graph_from_record, graphs_to_records, known_arrays
from ge_core.memory.plan import MemoryPlan, plan_from_json
from ge_core.offline.stored_npz import StoredMemberError, aligned_npz_bytes, npz_arrays, read_member
from ge_core.passes.infra.base import FusionDecision, Stage
from ge_core.passes.infra.instruments import PassRecord
from ge_core.version import __version__

FORMAT = "ge-workbench-offline-model"
FORMAT_VERSION = 1  # one model
GEARS_FORMAT_VERSION = 2  # one model per gear (gem_gears.py)
MANIFEST, MODEL, ARRAYS = "manifest.json", "model.json", "arrays.npz"
SNAPSHOTS, SNAPSHOT_ARRAYS = "snapshots.json", "snapshot_arrays.npz"
KNOWN_GRAPH = "known"  # model.json's input_graph when it is the `known` graph the entry was written with
HINT = "Compile the model again (python -m ge_core compile MODEL --output M.gem) with this version."


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
    return write_members(path, FORMAT_VERSION, _members(contents, snapshots, known), cache_key)


def write_members(path: str | os.PathLike[str], version: int, members: Mapping[str, bytes],
                  cache_key: str | None) -> Path:
    """The zip of `members` (model.json, arrays.npz and maybe the snapshot pair) with its manifest, written
    atomically: a temporary file renamed into place."""
    manifest = {"format": FORMAT, "format_version": version, "ge_core_version": __version__,
                "content_sha256": _digest(members[MODEL], members[ARRAYS]), "cache_key": cache_key}
    if SNAPSHOTS in members:
        manifest["snapshots_sha256"] = _digest(members[SNAPSHOTS], members[SNAPSHOT_ARRAYS])
    target = Path(path)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(MANIFEST, json.dumps(manifest, indent=2))
        for name, data in members.items():  # weights barely compress: arrays are stored, never inflated
            archive.writestr(name, data, compress_type=zipfile.ZIP_STORED if name.endswith(".npz") else None)
    os.replace(partial, target)
    return target


def read_gem(path: str | os.PathLike[str], *, expect_key: str | None = None, known: Graph | None = None,
             snapshots: bool = True) -> Contents:
    """What `path` holds; refused cleanly if it is not an offline model this version wrote intact (or, with
    `expect_key`, not the cache entry of that key). `known`: the graph it was written with, if any.
    `snapshots=False` leaves the stored graphs after each pass unread (records without snapshots)."""
    where = quote(os.fspath(path))
    version, model, arrays, stored_snapshots = read_members(path, where, expect_key, snapshots)
    if version != FORMAT_VERSION:
        raise ModelError(f"{where} holds a model with gears, not one model.",
                         hint="Load it with ge_core.load_compiled(path, shapes=...) or GearedModel.load(path).")
    if known is not None:
        arrays.update(known_arrays(known))
    return contents_from(model, arrays, stored_snapshots if snapshots else None, known)


def read_members(path: str | os.PathLike[str], where: str, expect_key: str | None = None, snapshots: bool = False
                 ) -> tuple[int, dict[str, Any], dict[str, np.ndarray], Any]:
    """The format version, model.json parsed, the arrays and (with `snapshots`, when stored) the snapshot
    records of an intact offline model; each part parsed only after its bytes match the manifest's hash."""
    stored_snapshots = None
    try:  # one open file throughout: a rename over `path` meanwhile is harmless
        with open(path, "rb") as file, zipfile.ZipFile(file) as archive:
            manifest = _manifest(archive, where)
            _check_sizes(archive, where)
            if expect_key is not None and manifest.get("cache_key") != expect_key:
                raise ModelError(f"{where} is not the cache entry it is named after.", hint=HINT)
            model, arrays = _read_part(file, archive, (MODEL, ARRAYS), manifest.get("content_sha256"), where)
            if snapshots and SNAPSHOTS in archive.namelist():
                text, more = _read_part(file, archive, (SNAPSHOTS, SNAPSHOT_ARRAYS),
                                        manifest.get("snapshots_sha256"), where)
                stored_snapshots = json.loads(text)
                arrays.update(more)
        parsed = json.loads(model)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, KeyError) as exc:
        raise ModelError(f"{where} is not a readable offline model ({type(exc).__name__}: {exc}).",
                         hint=HINT) from None
    if not isinstance(parsed, dict):
        raise ModelError(f"{where}: its model.json is not an object.", hint=HINT)
    return int(manifest["format_version"]), parsed, arrays, stored_snapshots


def _read_part(file: io.BufferedIOBase, archive: zipfile.ZipFile, names: tuple[str, str], expected: object,
               where: str) -> tuple[bytes, dict[str, np.ndarray]]:
    """A JSON member and its arrays, neither parsed before the bytes read match the manifest's hash."""
    text, info = archive.read(names[0]), archive.getinfo(names[1])
    digest = hashlib.sha256(text)
    digest.update(b"\0")
    try:
        if info.compress_type != zipfile.ZIP_STORED:  # written before arrays were stored: the slow way
            data = archive.read(names[1])
            digest.update(data)
            _check_digest(digest.hexdigest(), expected, names[0], where)
            return text, _arrays(data, where)
        buffer = read_member(file, info, digest)
        _check_digest(digest.hexdigest(), expected, names[0], where)
        return text, npz_arrays(buffer)
    except StoredMemberError as exc:
        raise ModelError(f"{where}: its arrays cannot be read ({exc}).", hint=HINT) from None


def _check_digest(actual: str, expected: object, name: str, where: str) -> None:
    if actual != expected:
        raise ModelError(f"{where} is corrupted: its {name} does not match the hash in its manifest.", hint=HINT)


# -- writing -------------------------------------------------------------------------------------------

def _members(compiled: Contents, snapshots: bool, known: Graph | None) -> dict[str, bytes]:
    """The file's members but the manifest: model.json and arrays.npz, and with `snapshots` the graphs
    after each pass and the arrays only they hold (a load without them reads neither)."""
    graphs = {"graph": compiled.graph}
    if known is not compiled.input_graph:
        graphs["input"] = compiled.input_graph
    records, arrays = graphs_to_records(graphs, known)
    kept: dict[int, str] = {}  # snapshot graph id -> its record key (unchanged passes share one snapshot)
    taken: dict[str, Graph] = {}
    for r in compiled.records if snapshots else ():
        if r.snapshot is not None and id(r.snapshot) not in kept:
            kept[id(r.snapshot)] = f"s{len(kept)}"
            taken[kept[id(r.snapshot)]] = r.snapshot
    model = model_json(compiled, records["graph"], records.get("input", KNOWN_GRAPH), kept)
    members = {MODEL: json_bytes(model), ARRAYS: aligned_npz_bytes(arrays)}
    if snapshots:
        stored, only_theirs = graphs_to_records(taken, known, stored=arrays)
        members.update({SNAPSHOTS: json_bytes(stored), SNAPSHOT_ARRAYS: aligned_npz_bytes(only_theirs)})
    return members


def model_json(compiled: Contents, graph: Any, input_graph: Any, kept: Mapping[int, str] | None = None
               ) -> dict[str, Any]:
    """One model's model.json: `graph` and `input_graph` as records (or KNOWN_GRAPH), `kept` the snapshot
    graph ids -> their keys in the snapshot member, if stored."""
    kept = kept or {}
    return {"config": compiled.config.to_json(), "graph": graph, "input_graph": input_graph,
            "memory": compiled.memory.to_json() if compiled.memory is not None else None,
            "records": [_record_json(r, kept.get(id(r.snapshot))) for r in compiled.records],
            "compile_seconds": compiled.compile_seconds, "extra_report": compiled.extra_report}


def json_bytes(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


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
                         hint=HINT)
    if archive.getinfo(MANIFEST).file_size > 1 << 16:
        raise ModelError(f"{where}: its manifest is implausibly large.", hint=HINT)
    manifest = json.loads(archive.read(MANIFEST))
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelError(f"{where} is not a GE Workbench offline model.", hint=HINT)
    if manifest.get("format_version") not in (FORMAT_VERSION, GEARS_FORMAT_VERSION):
        raise ModelError(f"{where} was written by ge_core {manifest.get('ge_core_version', '?')} in offline-model "
                         f"format {manifest.get('format_version')!r}; this version reads format {FORMAT_VERSION} "
                         f"(one model) and format {GEARS_FORMAT_VERSION} (a model with gears).", hint=HINT)
    return manifest


def _check_sizes(archive: zipfile.ZipFile, where: str) -> None:
    """The members' declared sizes, checked before a byte is decompressed."""
    names = set(archive.namelist())
    total = sum(archive.getinfo(n).file_size for n in (MODEL, ARRAYS, SNAPSHOTS, SNAPSHOT_ARRAYS) if n in names)
    if total > MAX_MODEL_BYTES:
        raise ModelError(f"{where} unpacks to {total} bytes, over the {MAX_MODEL_BYTES}-byte limit.", hint=HINT)


def _arrays(data: bytes, where: str) -> dict[str, np.ndarray]:
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        raise ModelError(f"{where}: its arrays cannot be read ({exc}).", hint=HINT) from None


def contents_from(model: Mapping[str, Any], arrays: Mapping[str, np.ndarray], stored: Any = None,
                  known: Graph | None = None) -> Contents:
    """`stored`: the snapshot records (None: leave them unbuilt); `known`: the graph the file names."""
    try:
        config = CompileConfig.from_json(model["config"])
        graph = graph_from_record(model["graph"], arrays)
        input_graph = _input_graph(model["input_graph"], arrays, known)
        memory = plan_from_json(model["memory"]) if model["memory"] is not None else None
        snapshots = {k: graph_from_record(g, arrays) for k, g in (stored or {}).items()}
        records = [_record(r, snapshots.get(r.get("snapshot") or "")) for r in model["records"]]
        seconds, extra = float(model["compile_seconds"]), dict(model["extra_report"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"the offline model's content is malformed ({type(exc).__name__}: {exc}).",
                         hint=HINT) from None
    return Contents(config, graph, input_graph, memory, records, seconds, extra)


def _input_graph(record: Any, arrays: Mapping[str, np.ndarray], known: Graph | None) -> Graph:
    if record != KNOWN_GRAPH:
        return graph_from_record(record, arrays)
    if known is None:
        raise ValueError("the file names the graph it was compiled from, and none was given")
    return known


def _record(data: Mapping[str, Any], snapshot: Graph | None) -> PassRecord:
    decisions = tuple(FusionDecision(d["pass"], d["pattern"], tuple(d["nodes"]), bool(d["accepted"]), d["reason"],
                                     d["fused_node"]) for d in data["decisions"])
    return PassRecord(int(data["index"]), data["name"], Stage(data["stage"]), data["description"],
                      bool(data["changed"]), int(data["nodes_before"]), int(data["nodes_after"]),
                      float(data["seconds"]), tuple(data["notes"]), snapshot, data.get("verified"),
                      data.get("max_error"), decisions, {k: tuple(v) for k, v in data["report"].items()})
