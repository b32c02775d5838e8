"""A GE dump folder (DUMP_GRAPH_PATH/pid_<pid>_deviceid_<id>/) or a zip of it: its files found, named,
grouped by graph and ordered by sequence number, each stage read into a GE Graph.

GE names its files (hicann/ge graph_metadef/graph/utils/graph_utils.cc, GenDumpTxtFileName and
GenDumpOnnxFileName): `ge_proto_<8-digit seq>_[aclop_]graph_<graph id>_<stage>.txt` and
`ge_onnx_<8-digit seq>[_aclop]_graph_<graph id>_<stage>.pbtxt`, each kind with its own counter. When a
stage was dumped in both forms the ge_proto file is read (it holds more: strings, named attrs, weights).

Safety: a folder is walked without following links and only two levels deep; a zip's members are read into
memory one at a time, never extracted to disk by name, after their declared sizes, count and compression
ratio are checked (and the bytes read are bounded by the declared size, which a zip can lie about).
"""

from __future__ import annotations

import io
import os
import re
import stat
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ge_core.errors import ModelError, ResourceLimitError, quote
from ge_core.frontend.ge.reader import read_ge_text
from ge_core.frontend.ge.text_input import Kind, check_size, decode, max_dump_bytes, read_file_bytes
from ge_core.frontend.onnx import ImportResult
from ge_core.ir.limits import human_bytes

_PROTO = re.compile(r"^ge_proto_(\d+)_(?:aclop_)?(?:graph_(\d+)_)?(.+)\.txt$")
_ONNX = re.compile(r"^ge_onnx_(\d+)(?:_aclop)?(?:_graph_(\d+))?_(.+)\.pbtxt$")
MAX_FILES = 10_000  # dump files in one folder or zip
MAX_ZIP_RATIO = 200  # uncompressed / compressed bytes of a member: more is a zip bomb, not protobuf text
MAX_TOTAL_BYTES = 8 << 30  # every dump file of one folder or zip together, uncompressed


@dataclass(frozen=True)
class DumpFile:
    """One dump file: where it is, its kind, sequence number, graph id and stage (GE's suffix)."""

    name: str  # the file's name (no folder)
    kind: Kind
    seq: int
    graph_id: int
    stage: str
    location: str  # the path, or the member name inside a zip
    size: int


ReadFn = Callable[["DumpFile"], bytes]


@dataclass
class DumpStage:
    file: DumpFile
    result: ImportResult

    @property
    def stage(self) -> str:
        return self.file.stage


@dataclass
class GeDump:
    """Every stage read, by graph id, each list in GE's order (sequence numbers)."""

    source: str
    graphs: dict[int, list[DumpStage]] = field(default_factory=dict)

    def stages(self, graph_id: int | None = None) -> list[DumpStage]:
        """The stages of one graph (the one with the most stages when not given)."""
        if not self.graphs:
            return []
        key = graph_id if graph_id is not None else max(self.graphs, key=lambda g: (len(self.graphs[g]), -g))
        return self.graphs.get(key, [])


def parse_name(name: str) -> tuple[Kind, int, int, str] | None:
    """(kind, seq, graph id, stage) for a name GE gives its dump files, else None."""
    for kind, pattern in (("ge_proto", _PROTO), ("ge_onnx", _ONNX)):
        match = pattern.match(name)
        if match:
            return kind, int(match.group(1)), int(match.group(2) or 0), match.group(3)  # type: ignore[return-value]
    return None


def read_dump(source: str | os.PathLike[str] | bytes, name: str = "") -> GeDump:
    """A dump folder, a zip of one (path or bytes) or one dump file: every stage read, grouped and ordered."""
    what = name or (os.fspath(source) if not isinstance(source, bytes) else "<upload>")
    if isinstance(source, bytes):
        if zipfile.is_zipfile(io.BytesIO(source)):
            return _read_all(what, *_zip_listing(zipfile.ZipFile(io.BytesIO(source)), what))
        return _single(what, source)
    path = Path(source)
    if path.is_dir():
        return _read_all(what, *_folder_listing(path))
    if zipfile.is_zipfile(path):
        check_size(what, path.stat().st_size, MAX_TOTAL_BYTES)
        return _read_all(what, *_zip_listing(zipfile.ZipFile(path), what))
    return _single(what, read_file_bytes(path))


def _single(what: str, data: bytes) -> GeDump:
    base = PurePosixPath(what.replace("\\", "/")).name
    parsed = parse_name(base)
    kind, seq, graph_id, stage = parsed if parsed else ("ge_onnx" if base.endswith(".pbtxt") else "ge_proto",
                                                        0, 0, base)
    file = DumpFile(base, kind, seq, graph_id, stage, what, len(data))
    return GeDump(what, {graph_id: [DumpStage(file, read_ge_text(decode(data, what), what, kind))]})


def _read_all(what: str, files: list[DumpFile], read: ReadFn) -> GeDump:
    if not files:
        raise ModelError(f"{quote(what)} holds no GE graph dump (ge_proto_*.txt or ge_onnx_*.pbtxt).",
                         hint="Set DUMP_GE_GRAPH=1|2|3 (and DUMP_GRAPH_PATH) before running GE; its files are "
                              "written to DUMP_GRAPH_PATH/pid_<pid>_deviceid_<id>/.")
    dump = GeDump(what)
    for file in _prefer_proto(files):
        text = decode(read(file), file.location)
        stage = DumpStage(file, read_ge_text(text, file.location, file.kind))
        dump.graphs.setdefault(file.graph_id, []).append(stage)
    for stages in dump.graphs.values():
        stages.sort(key=lambda s: (s.file.seq, s.file.name))
    return dump


def _prefer_proto(files: list[DumpFile]) -> list[DumpFile]:
    """One file per (graph, stage occurrence): the ge_proto one when both forms were written."""
    proto_keys = _occurrences(f for f in files if f.kind == "ge_proto")
    kept = [f for f in files if f.kind == "ge_proto"]
    seen: dict[tuple[int, str], int] = {}
    for f in sorted((f for f in files if f.kind == "ge_onnx"), key=lambda f: f.seq):
        key = (f.graph_id, f.stage)
        seen[key] = seen.get(key, 0) + 1
        if (key, seen[key]) not in proto_keys:
            kept.append(f)
    return kept


def _occurrences(files: Iterator[DumpFile]) -> set[tuple[tuple[int, str], int]]:
    counts: dict[tuple[int, str], int] = {}
    out = set()
    for f in sorted(files, key=lambda f: f.seq):
        key = (f.graph_id, f.stage)
        counts[key] = counts.get(key, 0) + 1
        out.add((key, counts[key]))
    return out


def _folder_listing(root: Path) -> tuple[list[DumpFile], ReadFn]:
    files: list[DumpFile] = []
    for path in _walk(root, depth=2):
        parsed = parse_name(path.name)
        if parsed:
            kind, seq, graph_id, stage = parsed
            files.append(DumpFile(path.name, kind, seq, graph_id, stage, str(path), path.lstat().st_size))
    _check_totals(str(root), files)
    return files, lambda f: read_file_bytes(f.location)


def _walk(folder: Path, depth: int) -> Iterator[Path]:
    """Regular files of `folder` and of its subfolders `depth` levels down; links are not followed."""
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISREG(mode):
            yield Path(entry.path)
        elif stat.S_ISDIR(mode) and depth > 0:
            yield from _walk(Path(entry.path), depth - 1)


def _zip_listing(archive: zipfile.ZipFile, what: str) -> tuple[list[DumpFile], ReadFn]:
    members = [m for m in archive.infolist() if not m.is_dir()]
    if len(members) > MAX_FILES:
        raise ResourceLimitError(f"zip {quote(what)} holds {len(members)} files, over the {MAX_FILES} limit.",
                                 hint="Zip only the dump folder (pid_<pid>_deviceid_<id>).")
    files = []
    for member in members:
        base = PurePosixPath(member.filename.replace("\\", "/")).name
        parsed = parse_name(base)
        if parsed is None or "__MACOSX" in member.filename:
            continue
        kind, seq, graph_id, stage = parsed
        if member.compress_size and member.file_size / member.compress_size > MAX_ZIP_RATIO:
            raise ResourceLimitError(f"zip {quote(what)}: member {quote(member.filename)} expands "
                                     f"{member.file_size // max(member.compress_size, 1)}x "
                                     f"({human_bytes(member.file_size)}); refused as a zip bomb.",
                                     hint="Zip the dump folder again with an ordinary zip tool.")
        files.append(DumpFile(base, kind, seq, graph_id, stage, member.filename, member.file_size))
    _check_totals(what, files)
    return files, lambda f: _read_member(archive, f)


def _read_member(archive: zipfile.ZipFile, file: DumpFile) -> bytes:
    check_size(file.location, file.size)
    with archive.open(file.location) as handle:
        data = handle.read(file.size + 1)  # never more than declared (+1 to catch a lying header)
    if len(data) > file.size:
        raise ResourceLimitError(f"zip member {quote(file.location)} holds more than the {file.size} bytes its "
                                 "header declares; refused.", hint="Zip the dump folder again.")
    return data


def _check_totals(what: str, files: list[DumpFile]) -> None:
    for f in files:
        check_size(f.location, f.size, max_dump_bytes())
    total = sum(f.size for f in files)
    if total > MAX_TOTAL_BYTES:
        raise ResourceLimitError(f"dump {quote(what)} holds {human_bytes(total)} of dump files, over the "
                                 f"{human_bytes(MAX_TOTAL_BYTES)} limit.",
                                 hint="Dump fewer stages: DUMP_GRAPH_LEVEL=2 (the main stages) or 3 (Build only).")


def import_ge_dump(source: str | os.PathLike[str] | bytes, name: str = "") -> ImportResult:
    """What `inspect` shows of a dump: a single file's graph, or the last stage of a folder's or zip's main
    graph (usually Build)."""
    stages = read_dump(source, name).stages()
    return stages[-1].result


def looks_like_ge_dump(path: str) -> bool:
    """A GE dump file by its name, or a folder or zip (the dump readers say what they find in it)."""
    base = os.path.basename(path.rstrip("/"))
    return parse_name(base) is not None or base.startswith(("ge_proto", "ge_onnx")) or Path(path).is_dir() \
        or path.endswith(".zip")
