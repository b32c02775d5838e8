"""Graph dumps per pass, like GE's DUMP_GE_GRAPH: readable text, JSON, (standard graphs) ONNX and Model
Explorer's graph JSON per step.

    000_PreRunBegin_input.txt / .json / .onnx / .me.json
    001_AfterInfershape_infer_shape.txt / .json / .onnx / .me.json
    002_OptimizeOriginalGraph_constant_folding.txt / .json / .onnx / .me.json
    ...

Which steps: `stages`, as GE's DUMP_GRAPH_LEVEL (ge_stages.wanted): "1" every pass (the default here, and the
Passes page's zip), "2" GE's default (the graph as imported, the end of AfterInfershape and of
OptimizeOriginalGraph, and Build, the final graph), "3" Build only, "4" PreRunBegin only, or "A|B" for the
steps whose GE stage names contain A or B. The text and JSON files are streamed a node at a time (the JSON one
node a line, each encoded by json's C encoder).

The .onnx file is written only while every node is a standard ONNX op (`is_standard`); it opens in
Netron or ONNX Runtime. The text header says whether it was written and, if not, why. The .me.json file
opens in Model Explorer (`model-explorer 003_....me.json`, or its "Select models" button): the graph after
the step with its fused bodies, what the step changed and its fusion decisions marked on the nodes
(ge_core.viz.canvas_json); its `ge_overlays` entries are node data files for the same graph.
"""

from __future__ import annotations

import io
import json
import shutil
import tempfile
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path

from ge_core.compiler import CompiledModel
from ge_core.debugging.ge_stages import points
from ge_core.errors import GEError
from ge_core.frontend.onnx_export import is_standard, nonstandard_nodes, to_onnx
from ge_core.ir.graph import Graph
from ge_core.ir.text import graph_json_chunks, graph_text_lines
from ge_core.passes.infra.base import Stage
from ge_core.passes.infra.instruments import PassRecord
from ge_core.passes.infra.pipeline import all_passes
from ge_core.viz.canvas_export import canvas_json, record_stem, snapshot_json

CANVAS_SUFFIX = ".me.json"  # Model Explorer's graph JSON (a GraphCollection)


def write_dumps(compiled: CompiledModel, directory: str | Path, *, onnx: bool = True,
                canvas: bool = True, stages: str = "1") -> list[Path]:
    """Write the input graph and the graph after each pass `stages` selects (every pass by default); returns
    the files written, in order.

    `onnx=False` leaves out the .onnx files: each holds the model's weights, too big to zip per pass for
    a large model. `canvas=False` leaves out the Model Explorer files."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    # Unchanged passes share one snapshot: its files are written once, then copied. onnx False: no ONNX files.
    done: dict[int, _Files] = {}
    plain: dict[tuple[int, int], tuple[Path, str, str]] = {}  # a snapshot's unmarked Model Explorer file
    written: list[Path] = []
    for point in points(compiled):
        if stages.strip() != "1" and not point.wanted(stages):
            continue
        if point.record < 0:
            stem = f"000_{Stage.PRE_RUN_BEGIN}_input"
            header = [f"# stage {Stage.PRE_RUN_BEGIN}: the graph as imported", f"# nodes {len(point.graph)}"]
        else:
            stem = record_stem(compiled.records[point.record])
            header = [*_header(compiled.records[point.record]), f"# GE stage names: {', '.join(point.names)}"]
        written += _write(folder, stem, point.graph, header, done, onnx)
        if canvas:
            written.append(_canvas_file(compiled, point.record, point.graph, folder / f"{stem}{CANVAS_SUFFIX}",
                                        plain))
    if any(r.decisions for r in compiled.records):
        path = folder / "fusion_result.json"
        path.write_text(fusion_result_text(compiled.records), encoding="utf-8")
        written.append(path)
    return written


def _canvas_file(compiled: CompiledModel, index: int, graph: Graph, path: Path,
                 plain: dict[tuple[int, int], tuple[Path, str, str]]) -> Path:
    """The step's Model Explorer file. A step that left the graph as it was and decided nothing marks nothing:
    its file is the graph's earlier unmarked one under the step's own id and label (a 30,000-node file costs
    seconds to build and encode, a copy a fraction of one)."""
    records = compiled.records
    record = records[index] if index >= 0 else None
    unmarked = record is None or (not record.changed and not record.decisions and index < len(records) - 1)
    stem = path.name.removesuffix(CANVAS_SUFFIX)
    label = f"{stem}: as imported" if record is None else f"{graph.name}: after {record.name}"
    key = (id(graph), sum(len(r.decisions) for r in records[:index + 1]))  # the fusion groups so far
    if unmarked and key in plain:
        earlier, old_stem, old_label = plain[key]
        data = earlier.read_bytes().replace(json.dumps(old_label).encode(), json.dumps(label).encode())
        data = data.replace(f'"{old_stem}"'.encode(), f'"{stem}"'.encode())
        path.write_bytes(data.replace(f'"{old_stem}/'.encode(), f'"{stem}/'.encode()))
        return path
    collection = snapshot_json(graph, stem, label) if record is None else canvas_json(compiled, index)
    if unmarked:
        plain[key] = (path, stem, label)
    return _write_canvas(path, collection)


def _write_canvas(path: Path, collection: dict[str, object]) -> Path:
    path.write_text(json.dumps(collection, separators=(",", ":")), encoding="utf-8")  # compact: 10k nodes ~10 MB
    return path


def dump_zip(compiled: CompiledModel, folder_name: str = "dumps", *, onnx: bool = True) -> bytes:
    """The dumps of `write_dumps` plus the compile report, as one zip built in a private temporary folder
    (never a path a user chose); every entry sits under `folder_name/`."""
    with tempfile.TemporaryDirectory(prefix="ge_dump_") as tmp:
        files = write_dumps(compiled, tmp, onnx=onnx, stages="1")
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in files:
                archive.write(path, f"{folder_name}/{path.name}")
            archive.writestr(f"{folder_name}/report.json", json.dumps(compiled.report, indent=2) + "\n")
    return buffer.getvalue()


def fusion_result(records: list[PassRecord]) -> dict[str, dict[str, dict[str, dict[str, str]]]]:
    """GE's fusion_result.json as GE's writer lays it out (hicann/ge, compiler/engines/nn_engine/fusion/common/
    fusion_statistic/fusion_statistic_writer.cc): per fusion pass, how often a pattern matched and how often
    the fusion took effect, as strings; a UB pass also has repository_hit_times (we have no UB knowledge
    repository: "0"); a section only when it has passes, nothing at all when no fusion pass decided anything.
    `fusion_result_text` gives the file's bytes."""
    kinds = {p.name: getattr(p, "fusion_kind", "graph") for p in all_passes()}
    counts: dict[str, dict[str, list[int]]] = {}
    for record in records:
        if not record.decisions:
            continue
        section = counts.setdefault("ub_fusion" if kinds.get(record.name) == "ub" else "graph_fusion", {})
        entry = section.setdefault(record.name, [0, 0])
        entry[0] += len(record.decisions)
        entry[1] += sum(d.accepted for d in record.decisions)
    if not counts:
        return {}
    result = {name: {pass_name: _fusion_entry(name, match, effect) for pass_name, (match, effect) in passes.items()}
              for name, passes in counts.items()}
    return {"session_and_graph_id_0_0": result}


def _fusion_entry(section: str, match: int, effect: int) -> dict[str, str]:
    entry = {"effect_times": str(effect), "match_times": str(match)}
    if section == "ub_fusion":
        entry["repository_hit_times"] = "0"
    return entry


def fusion_result_text(records: list[PassRecord]) -> str:
    """fusion_result.json's text as GE writes it: nlohmann::json's dump(4), whose objects are sorted maps."""
    return json.dumps(fusion_result(records), indent=4, sort_keys=True, ensure_ascii=False)


def _header(record: PassRecord) -> list[str]:
    lines = [f"# pass {record.name} (stage {record.stage}), step {record.index}",
             f"# changed {record.changed}; nodes {record.nodes_before} -> {record.nodes_after}; "
             f"{record.seconds * 1e3:.2f} ms"]
    lines += [f"# {note}" for note in record.notes]
    lines += [f"# | {line}" if line else "# |" for line in record.description.splitlines()]
    return lines


@dataclass(frozen=True)
class _Files:
    """A snapshot's files written once: its text (the graph from byte `body` on), JSON, ONNX (or why none)."""

    text: Path
    body: int
    json: Path
    onnx: Path | str


def _write(folder: Path, stem: str, graph: Graph, header: list[str], done: dict[int, _Files],
           onnx: bool) -> list[Path]:
    text_path, json_path, onnx_path = folder / f"{stem}.txt", folder / f"{stem}.json", folder / f"{stem}.onnx"
    first = done.get(id(graph))
    if first is None:
        model = _onnx_bytes(graph) if onnx else "not asked for in this dump"
        if isinstance(model, bytes):
            onnx_path.write_bytes(model)
        first = _Files(text_path, 0, json_path, onnx_path if isinstance(model, bytes) else model)
    elif isinstance(first.onnx, Path):
        shutil.copyfile(first.onnx, onnx_path)
    note = f"# onnx {onnx_path.name}" if isinstance(first.onnx, Path) else f"# onnx not written: {first.onnx}"
    head = ("\n".join([*header, note]) + "\n").encode("utf-8")
    with text_path.open("wb", buffering=1 << 20) as out:
        out.write(head)
        if id(graph) in done:  # the same snapshot as an earlier step: its graph text, copied
            with first.text.open("rb") as earlier:
                earlier.seek(first.body)
                shutil.copyfileobj(earlier, out)
        else:
            first = replace(first, body=len(head))
            out.writelines(f"{line}\n".encode() for line in graph_text_lines(graph))
    if id(graph) in done:
        shutil.copyfile(first.json, json_path)
    else:
        with json_path.open("w", encoding="utf-8", buffering=1 << 20) as out:
            out.writelines(graph_json_chunks(graph))
        done[id(graph)] = first
    return [text_path, json_path, *([onnx_path] if isinstance(first.onnx, Path) else [])]


def _onnx_bytes(graph: Graph) -> bytes | str:
    """The serialized ONNX model, or why there is none (a non-standard op, or something ONNX cannot hold)."""
    if not is_standard(graph):
        odd = nonstandard_nodes(graph)
        shown = ", ".join(f"'{n.name}' ({f'{n.domain}::' if n.domain else ''}{n.op_type})" for n in odd[:3])
        return f"{len(odd)} node(s) are not standard ONNX ops: {shown}{' ...' if len(odd) > 3 else ''}"
    try:
        return to_onnx(graph).SerializeToString()
    except GEError as err:
        return str(err)
