"""Graph JSON files Model Explorer opens: "Download graph JSON" / "Open in Model Explorer", and the dumps.

A file is one GraphCollection `{"label", "graphs": [...]}`, the form Model Explorer's built-in JSON
adapter reads from a `.json` file (a collection is recognised by its `label` and `graphs` keys; the
graph, then its fused bodies). Node data cannot ride inside a graph file, so the overlays come along
under one more key, `ge_overlays`: `{overlay name: {graph id: GraphNodeData}}`, each entry a node data
file of its own for Model Explorer's "add per-node data"; its JSON loader ignores the key. The side panel
shows every overlay's value in the node's attributes anyway.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ge_core.compiler import CompiledModel
from ge_core.errors import UsageError
from ge_core.ir.graph import Graph
from ge_core.passes.infra.base import FusionDecision, snake_name
from ge_core.passes.infra.instruments import PassRecord
from ge_core.sim.simulator import SimResult
from ge_core.viz.canvas import canvas_collection, canvas_graphs, gc_paused
from ge_core.viz.canvas_overlays import (
    Overlay,
    category_overlay,
    change_overlay,
    fusion_group_overlay,
    latency_overlay,
    memory_overlay,
    node_data,
)
from ge_core.viz.graph_diff import diff_graphs
from ge_core.viz.pass_steps import graphs_around

OVERLAYS_KEY = "ge_overlays"
FINAL_ID = "final"


def canvas_json(compiled: CompiledModel, record_index: int | None = None, *,
                sim: SimResult | None = None) -> dict[str, Any]:
    """The graph after pass `record_index` (a position in `compiled.records`; None: the final graph) as a
    file Model Explorer opens, marked with what that pass did and its fusion decisions, with overlays:
    op category, fusion group, the pass's changes; for the final graph memory and lifetime (when there is
    a memory plan) and simulated latency (given `sim`). The final graph lists every pass's decisions."""
    records = compiled.records
    decisions = [d for r in records for d in r.decisions]
    if record_index is None:
        graph = compiled.graph
        overlays = _final_overlays(compiled, graph, sim)
        return snapshot_json(graph, FINAL_ID, f"{graph.name}: compiled", decisions=decisions,
                             overlays=overlays, groups=decisions)
    if not 0 <= record_index < len(records):
        raise UsageError(f"there is no pass record {record_index}: this compile has {len(records)} "
                         f"(0 to {len(records) - 1}), or None for the final graph.")
    before, after = graphs_around(compiled.input_graph, records, record_index)
    record = records[record_index]
    final = record_index == len(records) - 1  # its snapshot is the final graph (a copy): the plan's nodes
    overlays = _final_overlays(compiled, after, sim) if final else {}
    done = [d for r in records[:record_index + 1] for d in r.decisions]
    return snapshot_json(after, record_stem(record), f"{after.name}: after {record.name}", before=before,
                         decisions=record.decisions, overlays=overlays, groups=done)


def record_stem(record: PassRecord) -> str:
    """`003_OptimizeOriginalGraph_cse`: the record's dump name, and its graph id on the canvas."""
    return f"{record.index:03d}_{record.stage}_{snake_name(record.name)}"


def snapshot_json(graph: Graph, graph_id: str, label: str, *, before: Graph | None = None,
                  decisions: Sequence[FusionDecision] = (), overlays: Mapping[str, Overlay] | None = None,
                  groups: Sequence[FusionDecision] = ()) -> dict[str, Any]:
    """One graph (with its fused bodies) as a Model Explorer collection file plus `ge_overlays`. With
    `before`, nodes carry what changed since; `groups` are the decisions the fusion groups come from."""
    with gc_paused():  # the diff and the overlays too allocate per node
        return _snapshot_json(graph, graph_id, label, before, decisions, overlays, groups)


def _snapshot_json(graph: Graph, graph_id: str, label: str, before: Graph | None,
                   decisions: Sequence[FusionDecision], overlays: Mapping[str, Overlay] | None,
                   groups: Sequence[FusionDecision]) -> dict[str, Any]:
    diff = diff_graphs(before, graph) if before is not None and before is not graph else None
    shown = {"fusion_group": fusion_group_overlay(graph, groups), **(overlays or {})}
    layers = {"category": category_overlay(graph), **shown}  # nodes list their category already
    if diff is not None:
        layers["change"] = change_overlay(diff, "after")  # and their change
    graphs = canvas_graphs(graph, graph_id, diff=diff, side="after" if diff is not None else None,
                           overlays=shown, decisions=decisions)
    collection = canvas_collection(label, graphs)
    collection[OVERLAYS_KEY] = {o.name: node_data(o, graph_id) for o in layers.values() if o.values}
    return collection


def _final_overlays(compiled: CompiledModel, graph: Graph, sim: SimResult | None) -> dict[str, Overlay]:
    """What only the final graph has: its memory plan, and a simulation of it."""
    out: dict[str, Overlay] = {}
    if compiled.memory is not None:
        out["memory"] = memory_overlay(graph, compiled.memory)
        out["lifetime"] = memory_overlay(graph, compiled.memory, "steps")
    if sim is not None:
        out["latency"] = latency_overlay(sim)
    return out
