"""Our compile's stages in GE's own dump forms (ge_proto_*.txt, ge_onnx_*.pbtxt), chosen as GE chooses them.

GE's switches, mirrored (hicann/ge docs/zh/user_guides/env_vars/DUMP_GE_GRAPH.md, DUMP_GRAPH_LEVEL.md,
DUMP_GRAPH_FORMAT.md; the filter is GraphUtils::NoNeedDumpGraphBySuffix in graph_metadef/graph/utils/
graph_utils.cc, the whitelist ge_dump_graph_whitelist.h):
- content (DUMP_GE_GRAPH): 1 with weights, 2 without, 3 structure only (ge_proto is the same at 2 and 3);
- stages (DUMP_GRAPH_LEVEL): 1 every stage (subgraph dumps excepted), 2 the whitelisted ones (GE's default),
  3 only Build, 4 only PreRunBegin, or "A|B": the stages whose name contains A or B;
- formats (DUMP_GRAPH_FORMAT): "ge_proto|onnx" (GE's default).
Our dump points: PreRunBegin (the graph as imported), one per pass (`<stage>_<pass>`), one at the end of each
of our stages under GE's name for it (AfterInfershape, PreRunAfterOptimizeOriginalGraph, ...), and Build (the
final graph, as GE always dumps it). Each file is written as the stage is, streamed, never held whole in memory.
The workbench form (dump.py) takes the same selection.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ge_core.compiler import CompiledModel
from ge_core.errors import UsageError
from ge_core.frontend.ge.onnx_writer import write_ge_onnx
from ge_core.frontend.ge.op_defs import OpText
from ge_core.frontend.ge.proto_writer import write_ge_proto
from ge_core.ir.graph import Graph
from ge_core.passes.infra.base import Stage

WHITELIST = frozenset({"PreRunBegin", "PreRunAfterNormalizeGraph", "AfterInfershape", "PreRunAfterPrepare",
                       "PreRunAfterOptimizeOriginalGraph", "PreRunAfterOptimizeAfterStage1",
                       "PreRunAfterOptimizeSubgraph", "PreRunAfterOptimizeGraphBeforeBuild", "Build",
                       "ComputeGraphBeforeLowering", "ExeGraphBeforeOptimize", "ExecuteGraphAfterSplit"})
WHITELIST_KEYS = ("AutoFuseBeforeOptimize", "AutoFuseAfterOptimize", "RunCustomPass")
SUBGRAPH_MARKS = ("partition", "OptimizeSubGraph", "Aicpu", "sub_graph")
# the GE stage that ends where each of our stages ends
STAGE_EXIT = {Stage.AFTER_INFERSHAPE: "AfterInfershape",
              Stage.OPTIMIZE_ORIGINAL_GRAPH: "PreRunAfterOptimizeOriginalGraph",
              Stage.OPTIMIZE_STAGE1: "PreRunAfterOptimize1", Stage.PRE_RUN_AFTER_OPTIMIZE2: "PreRunAfterOptimize2",
              Stage.BUILD: "Build"}
FORMATS = ("ge_proto", "onnx")
GRAPH_ID = 1


@dataclass(frozen=True)
class GeDumpOptions:
    """DUMP_GE_GRAPH (content), DUMP_GRAPH_LEVEL (stages) and DUMP_GRAPH_FORMAT, as GE spells them."""

    content: int = 2
    stages: str = "2"
    formats: tuple[str, ...] = FORMATS

    def __post_init__(self) -> None:
        if self.content not in (1, 2, 3):
            raise UsageError(f"--dump-ge-graph {self.content}: GE's DUMP_GE_GRAPH takes 1 (with weights), 2 (without) "
                             "or 3 (structure only).")
        odd = [f for f in self.formats if f not in FORMATS]
        if odd:
            raise UsageError(f"dump format(s) {odd} unknown: GE's forms are {'|'.join(FORMATS)}.")
        if not self.stages.strip():
            raise UsageError("--dump-graph-level is empty: give 1, 2, 3, 4 or stage names like 'PreRunBegin|Build'.")


def wanted(stage: str, level: str) -> bool:
    """GE's NoNeedDumpGraphBySuffix, negated: is stage `stage` dumped at DUMP_GRAPH_LEVEL `level`?"""
    if not stage or stage.isdigit():
        return False
    level = level.strip()
    if not level.isdigit():
        return any(key and key in stage for key in level.split("|"))
    whole = not any(mark in stage for mark in SUBGRAPH_MARKS)
    return {1: whole, 2: whole and (stage in WHITELIST or any(k in stage for k in WHITELIST_KEYS)),
            3: stage == "Build", 4: stage == "PreRunBegin"}.get(int(level), False)


@dataclass(frozen=True)
class DumpPoint:
    """A graph a dump may write: as imported (record -1) or after pass record `record`, under the GE stage
    names it answers to (a pass's `<stage>_<pass>`; a stage's end when it is the stage's last pass; Build
    for the final graph)."""

    names: tuple[str, ...]
    graph: Graph
    record: int

    def wanted(self, level: str) -> bool:
        return any(wanted(name, level) for name in self.names)


def points(compiled: CompiledModel) -> list[DumpPoint]:
    """Every dump point in compile order; the last one is also GE's Build (the final graph)."""
    out = [DumpPoint(("PreRunBegin",), compiled.input_graph, -1)]
    graph = compiled.input_graph
    records = compiled.records
    for i, record in enumerate(records):
        graph = record.snapshot if record.snapshot is not None else graph
        names = [f"{record.stage}_{record.name}"]
        last_of_stage = i + 1 == len(records) or records[i + 1].stage != record.stage
        if last_of_stage and record.stage in STAGE_EXIT:
            names.append(STAGE_EXIT[Stage(record.stage)])
        out.append(DumpPoint(tuple(names), graph, i))
    if "Build" not in out[-1].names:  # no Build stage of ours ran (no hardware target): the final graph is it
        out[-1] = DumpPoint((*out[-1].names, "Build"), out[-1].graph, out[-1].record)
    return out


def dump_points(compiled: CompiledModel) -> Iterator[tuple[str, Graph]]:
    """(GE stage name, graph after it) in compile order."""
    for point in points(compiled):
        for name in point.names:
            yield name, point.graph


def write_ge_dumps(compiled: CompiledModel, directory: str | Path, options: GeDumpOptions) -> list[Path]:
    """The chosen stages in the chosen forms, numbered as GE numbers them (one counter per form)."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    ops = OpText(weights=options.content == 1)  # shared: unchanged ops are printed once for all stages
    written: list[Path] = []
    seq = 0
    for stage, graph in dump_points(compiled):
        if not wanted(stage, options.stages):
            continue
        name = f"graph_{GRAPH_ID}_{_sanitized(stage)}"
        if "ge_proto" in options.formats:
            path = folder / f"ge_proto_{seq:08d}_{name}.txt"
            with path.open("w", encoding="utf-8", buffering=1 << 20) as out:
                write_ge_proto(graph, out, level=options.content, model_name=compiled.graph.name, ops=ops)
            written.append(path)
        if "onnx" in options.formats:
            path = folder / f"ge_onnx_{seq:08d}_{name}.pbtxt"
            with path.open("w", encoding="utf-8", buffering=1 << 20) as out:
                write_ge_onnx(graph, out, level=options.content)
            written.append(path)
        seq += 1
    return written


def _sanitized(stage: str) -> str:
    """GE's GetSanitizedName: a file name part without path separators."""
    return "".join(c if c.isalnum() or c in "_-." else "_" for c in stage)
