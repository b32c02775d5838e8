"""A GE dump's stages as the pass records the Graph page steps through: each stage a record whose snapshot is
the graph after it, so the stepper, the diff colouring and node correspondence by name work unchanged; a node
GE fused (it carries `_datadump_original_op_names` or `_original_op_names`) becomes a fusion decision naming
the original ops that went into it, as our own fusions are shown."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ge_core.frontend.ge.attrs import original_names
from ge_core.frontend.ge.dump_files import DumpStage, GeDump
from ge_core.ir.graph import Graph
from ge_core.passes.infra.base import FusionDecision
from ge_core.passes.infra.instruments import PassRecord


def dump_records(dump: GeDump, graph_id: int | None = None) -> tuple[Graph, list[PassRecord]]:
    """(the first stage's graph, one record per later stage) for one graph of the dump."""
    stages = dump.stages(graph_id)
    if not stages:
        return Graph("empty"), []
    first = stages[0].result.graph
    return first, records_of(stages)


def records_of(stages: Sequence[DumpStage]) -> list[PassRecord]:
    records = []
    before = stages[0].result.graph
    for index, stage in enumerate(stages[1:], start=1):
        after = stage.result.graph
        record = PassRecord(index, stage.stage, stage.stage, f"GE's {stage.stage} dump ({stage.file.name})",
                            changed=_shape(before) != _shape(after), nodes_before=len(before),
                            nodes_after=len(after), notes=tuple(stage.result.problems), snapshot=after,
                            decisions=fusions(stage.stage, before, after))
        records.append(record)
        before = after
    return records


def fusions(stage: str, before: Graph, after: Graph) -> tuple[FusionDecision, ...]:
    """The ops new in `after` that name the original ops GE fused into them."""
    out = []
    for node in after.nodes:
        originals = original_names(node.attrs)
        earlier = original_names(before.node(node.name).attrs) if before.has_node(node.name) else []
        if originals and originals != earlier:
            out.append(FusionDecision(stage, node.op_type, tuple(originals), True,
                                      f"GE fused {len(originals)} op(s) into {node.op_type} {node.name!r}",
                                      node.name))
    return tuple(out)


def _shape(graph: Graph) -> tuple[Any, ...]:
    return (tuple((n.name, n.op_type, n.inputs) for n in graph.nodes), tuple(graph.outputs), len(graph.constants))
