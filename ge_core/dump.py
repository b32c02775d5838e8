"""Graph dumps per pass, like GE's DUMP_GE_GRAPH: one readable text file and one JSON file per step.

    000_PreRunBegin_input.txt / .json
    001_AfterInfershape_infer_shape.txt / .json
    002_OptimizeOriginalGraph_constant_folding.txt / .json
    ...
"""

from __future__ import annotations

import json
from pathlib import Path

from ge_core.compiler import CompiledModel
from ge_core.ir.graph import Graph
from ge_core.passes.base import Stage, snake_name
from ge_core.passes.instruments import PassRecord


def write_dumps(compiled: CompiledModel, directory: str | Path) -> list[Path]:
    """Write the input graph and the graph after every pass; returns the files written, in order."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    written = _write(folder, f"000_{Stage.PRE_RUN_BEGIN}_input", compiled.input_graph,
                     [f"# stage {Stage.PRE_RUN_BEGIN}: the graph as imported", f"# nodes {len(compiled.input_graph)}"])
    for record in compiled.records:
        graph = record.snapshot if record.snapshot is not None else compiled.graph
        stem = f"{record.index:03d}_{record.stage}_{snake_name(record.name)}"
        written += _write(folder, stem, graph, _header(record))
    return written


def _header(record: PassRecord) -> list[str]:
    lines = [f"# pass {record.name} (stage {record.stage}), step {record.index}",
             f"# changed {record.changed}; nodes {record.nodes_before} -> {record.nodes_after}; "
             f"{record.seconds * 1e3:.2f} ms"]
    lines += [f"# {note}" for note in record.notes]
    lines += [f"# | {line}" if line else "# |" for line in record.description.splitlines()]
    return lines


def _write(folder: Path, stem: str, graph: Graph, header: list[str]) -> list[Path]:
    text_path, json_path = folder / f"{stem}.txt", folder / f"{stem}.json"
    text_path.write_text("\n".join(header) + "\n" + graph.to_text() + "\n", encoding="utf-8")
    json_path.write_text(json.dumps(graph.to_json(), indent=1), encoding="utf-8")
    return [text_path, json_path]
