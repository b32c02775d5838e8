"""What the embedded canvas is handed: Model Explorer JSON text built from canvas.py's graph data.

The embedded canvas draws the graph; the workbench's inspector beside it shows everything about the
selected node. Model Explorer's worker reads every attribute of every node before it draws anything, so
a big graph goes to the embedded canvas lean: each node keeps its id, op, layer, edges, fused body,
style and the few attributes that name it, and each output its tensor name, shape and dtype. Graphs of
up to LEAN_ABOVE nodes keep every detail; "Download graph JSON" and "Open in Model Explorer" always do
(canvas_json).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ge_core.compiler import CompiledModel
from ge_core.ir.graph import Graph
from ge_core.passes.infra.base import FusionDecision
from ge_core.passes.infra.instruments import PassRecord
from ge_core.viz.canvas import canvas_collection, canvas_graphs, gc_paused
from ge_core.viz.canvas_export import canvas_json, record_stem
from ge_core.viz.canvas_overlays import Overlay, node_data
from ge_core.viz.diff_style import UNSUPPORTED_FILL

INPUT_ID = "input"
LEAN_ABOVE = 2000  # nodes (all graphs of a collection together)
LEAN_OPTIONAL_KEYS = ("incomingEdges", "subgraphIds", "style", "config")
LEAN_ATTRS = frozenset({"op", "name", "category", "fused ops"})
LEAN_TENSOR_ATTRS = frozenset({"tensor_name", "shape", "dtype", "__tensor_tag"})


def pane_json(graph: Graph, graph_id: str, *, decisions: Sequence[FusionDecision] = (),
              lean_above: int = LEAN_ABOVE) -> str:
    """`{"graphs": [graph, fused bodies...]}` as compact JSON text (lean past `lean_above` nodes)."""
    return pane_json_and_layers(graph, graph_id, decisions=decisions, lean_above=lean_above)[0]


def pane_json_and_layers(graph: Graph, graph_id: str, *, decisions: Sequence[FusionDecision] = (),
                         lean_above: int = LEAN_ABOVE) -> tuple[str, dict[str, str]]:
    """pane_json's text and the layer (namespace) of each node of the graph in it: where the canvas
    opens a pane on a node (canvas_focus)."""
    with gc_paused():
        graphs = canvas_graphs(graph, graph_id, decisions=decisions)
        layers = {n["id"]: n.get("namespace", "") for n in graphs[0]["nodes"]} if graphs else {}
        if sum(len(g["nodes"]) for g in graphs) > lean_above:
            graphs = [lean_graph(g) for g in graphs]
        return json.dumps({"graphs": graphs}, separators=(",", ":"), ensure_ascii=False), layers


def overlay_json(overlay: Overlay) -> str:
    """An overlay as Model Explorer node data (GraphNodeData) JSON text."""
    return json.dumps(node_data(overlay), separators=(",", ":"), ensure_ascii=False)


def lean_graph(graph: dict[str, Any]) -> dict[str, Any]:
    """A canvas graph without what only the inspector shows (see the module docstring)."""
    return {"id": graph["id"], "nodes": [_lean_node(n) for n in graph["nodes"]],
            **{k: v for k, v in graph.items() if k not in ("id", "nodes")}}


def _lean_node(node: dict[str, Any]) -> dict[str, Any]:
    out = {"id": node["id"], "label": node["label"], "namespace": node.get("namespace", "")}
    out.update((k, node[k]) for k in LEAN_OPTIONAL_KEYS if node.get(k))
    out["attrs"] = [a for a in node.get("attrs", ()) if a["key"] in LEAN_ATTRS]
    out["outputsMetadata"] = [_lean_meta(m) for m in node.get("outputsMetadata", ())]
    return out


def _lean_meta(meta: dict[str, Any]) -> dict[str, Any]:
    return {"id": meta["id"], "attrs": [a for a in meta.get("attrs", ()) if a["key"] in LEAN_TENSOR_ATTRS]}


def snapshot_id(record: PassRecord | None) -> str:
    """A snapshot's graph id on the canvas: `input` for the graph as imported, else the record's dump name
    (`003_OptimizeOriginalGraph_cse`, as canvas_json and the dumps name it)."""
    return INPUT_ID if record is None else record_stem(record)


def explorer_graphs(compiled: CompiledModel, record_index: int | None = None) -> str:
    """The graphs of `canvas_json(compiled, record_index)` (every detail, the pass's marks and decisions)
    as `{"graphs": [...]}` JSON text, for a Model Explorer tab of its own."""
    collection = canvas_json(compiled, record_index)
    return json.dumps({"graphs": collection["graphs"]}, separators=(",", ":"), ensure_ascii=False)


def graph_file(graph: Graph, graph_id: str, label: str) -> str:
    """A graph as imported (no pass ran) as the JSON file Model Explorer opens: one collection."""
    with gc_paused():
        collection = canvas_collection(label, canvas_graphs(graph, graph_id))
        return json.dumps(collection, separators=(",", ":"), ensure_ascii=False)


def marked_overlay(name: str, nodes: Iterable[str], value: str, colour: str = UNSUPPORTED_FILL) -> Overlay:
    """An overlay giving `nodes` one value in one colour (e.g. the nodes a failure concerns, in red)."""
    return Overlay(name, dict.fromkeys(nodes, value), colours={value: colour},
                   description=f"{value}: the nodes named")
