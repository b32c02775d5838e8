"""The graph canvas's data: a GE Graph as Model Explorer graph JSON, in plain dicts and lists.

Model Explorer (Google's graph viewer, embedded by the UI) draws a `Graph {id, nodes}` of `GraphNode`s
(model_explorer/graph_builder.py); ge_core never imports it (a UI dependency) and emits the same JSON,
checked against its dataclasses by tests/viz/test_canvas_format.py.

- One GraphNode per GE node, id = the node's name (two panes sync on ids; a click names the node), label =
  its op type; graph inputs and outputs are nodes too (`input:x`, `output:y`); constants are not nodes
  (a ResNet has hundreds): each consumer lists the constants it reads (`W (constant): w: f32[16,3,3,3]`).
- incomingEdges carry the producer's output index and the consumer's input index; outputsMetadata and
  inputsMetadata hold each tensor's name, shape, dtype, format (device shape once lowered) and its
  consumers or producer, under the keys Model Explorer itself reads (`tensor_name`, `__tensor_tag`).
- Layers (namespaces) follow canvas_hierarchy.py: never one flat layer.
- A fused node points at its body, an extra graph `"{graph_id}/{node}"` that `canvas_graphs` returns too;
  a control-flow node (If, Loop, Scan) at each of its subgraphs, `"{graph_id}/{node}.{attribute}"` (e.g.
  `.then_branch`), whose tensors read from the enclosing graph are `Captured` items.
- With a diff, each node carries its mark from the pass (attrs, and a border and fill from diff_style's
  palette); with decisions, the fusion decisions that took or refused it; with overlays, their values.
"""

from __future__ import annotations

import gc
from collections import ChainMap
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY, OpDef
from ge_core.passes.infra.base import FusionDecision
from ge_core.viz.canvas_hierarchy import MAX_LAYER, graph_hierarchy
from ge_core.viz.canvas_overlays import Overlay
from ge_core.viz.canvas_text import (
    DescCells,
    KeyValue,
    attr_text,
    body_text,
    change_attrs,
    constant_text,
    cut,
    decision_text,
    decisions_by_node,
    input_slots,
    kernel_text,
    kv,
    qualified,
)
from ge_core.viz.diff_style import DIFF_BORDER, DIFF_FILL, UNSUPPORTED_BORDER, UNSUPPORTED_FILL
from ge_core.viz.graph_diff import ADDED, REMOVED, GraphDiff

CanvasSide = Literal["before", "after"]
INPUT_LABEL, OUTPUT_LABEL, CAPTURED_LABEL = "Input", "Output", "Captured"


@dataclass(frozen=True)
class _Marks:
    """What is laid over every graph of one canvas: the pass's marks, decisions and overlays."""

    status: Mapping[str, str] = field(default_factory=dict)  # node -> added/removed/changed, this side
    diff: GraphDiff | None = None
    decisions: Mapping[str, list[FusionDecision]] = field(default_factory=dict)
    overlays: Mapping[str, Overlay] = field(default_factory=dict)


def canvas_graph(graph: Graph, graph_id: str, *, diff: GraphDiff | None = None, side: CanvasSide | None = None,
                 overlays: Mapping[str, Overlay] | None = None,
                 decisions: Sequence[FusionDecision] = ()) -> dict[str, Any]:
    """Model Explorer Graph JSON for `graph` (its fused nodes' bodies: `canvas_graphs`). A tensor's cells
    (shape, dtype...) are one list shared by every place showing it: read the JSON, never edit it."""
    with gc_paused():
        return _graph_json(graph, graph_id, _marks(diff, side, overlays, decisions), {})


def canvas_graphs(graph: Graph, graph_id: str, *, diff: GraphDiff | None = None, side: CanvasSide | None = None,
                  overlays: Mapping[str, Overlay] | None = None,
                  decisions: Sequence[FusionDecision] = ()) -> list[dict[str, Any]]:
    """The graph, then one graph per fused node's body (nested bodies too): what a collection holds.
    Bodies carry the decisions and overlays, not the diff (a pass marks top-level nodes)."""
    marks = _marks(diff, side, overlays, decisions)
    out: list[dict[str, Any]] = []
    with gc_paused():
        _collect(graph, graph_id, marks, {}, out)
    return out


def canvas_collection(label: str, graphs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A Model Explorer GraphCollection: what its JSON loader opens from a file."""
    return {"label": label, "graphs": list(graphs)}


def subgraph_id(graph_id: str, node: str) -> str:
    return f"{graph_id}/{node}"


def branch_id(graph_id: str, node: str, attribute: str) -> str:
    """A control-flow node's subgraph (`then_branch`, `body`...)."""
    return f"{graph_id}/{node}.{attribute}"


def _subgraph_ids(graph_id: str, node: Node) -> list[str]:
    ids = [subgraph_id(graph_id, node.name)] if node.body is not None else []
    return ids + [branch_id(graph_id, node.name, attr) for attr in sorted(node.subgraphs)]


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a canvas is built. Its ~20 small dicts a node set the collector
    off again and again, and each run walks every object the process holds (a Streamlit server keeps
    compiled models and earlier canvases): 2-4x the build's own time on a 10k-node graph. The JSON holds
    no cycles, so there is nothing for the collector to find; it is switched back on after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _marks(diff: GraphDiff | None, side: CanvasSide | None, overlays: Mapping[str, Overlay] | None,
           decisions: Sequence[FusionDecision]) -> _Marks:
    if (diff is None) != (side is None):
        raise ValueError("canvas_graph: give both diff and side (\"before\" or \"after\"), or neither")
    status: dict[str, str] = {}
    if diff is not None:
        hidden = ADDED if side == "before" else REMOVED  # the other side's nodes are not in this graph
        names = diff.removed if side == "before" else diff.added
        status = {n: diff.status(n) for n in [*names, *diff.changed] if diff.status(n) != hidden}
    return _Marks(status, diff, decisions_by_node(decisions), dict(overlays or {}))


def _collect(graph: Graph, graph_id: str, marks: _Marks, outer: MutableMapping[str, np.ndarray],
             out: list[dict[str, Any]]) -> None:
    out.append(_graph_json(graph, graph_id, marks, outer))
    inner = _Marks(decisions=marks.decisions, overlays=marks.overlays)
    constants = ChainMap(graph.constants, outer)  # a body reads its fused node's constants as body inputs
    for node in graph.nodes:
        if node.body is not None:
            _collect(node.body, subgraph_id(graph_id, node.name), inner, constants, out)
        for attr, sub in sorted(node.subgraphs.items()):
            _collect(sub, branch_id(graph_id, node.name, attr), inner, constants, out)


@dataclass
class _Build:
    """One graph being written: its constants (a body's include the graphs around it) and item ids."""

    graph: Graph
    graph_id: str
    marks: _Marks
    constants: Mapping[str, np.ndarray]
    cells: DescCells
    input_ids: dict[str, str]
    output_ids: dict[str, str]
    constant_texts: dict[str, str] = field(default_factory=dict)  # shared constants are written once

    def constant(self, tensor: str) -> str:
        text = self.constant_texts.get(tensor)
        if text is None:
            text = self.constant_texts[tensor] = constant_text(self.graph, self.constants, tensor)
        return text


def _graph_json(graph: Graph, graph_id: str, marks: _Marks, outer: MutableMapping[str, np.ndarray]) -> dict[str, Any]:
    constants: Mapping[str, np.ndarray] = ChainMap(graph.constants, outer) if outer else graph.constants
    names = {n.name for n in graph.nodes}
    inputs = {t: _free_id("input", t, names) for t in graph.inputs if t not in constants}
    captured = {t: _free_id("captured", t, names) for t in graph.captures if t not in constants and t not in inputs}
    outputs = {t: _free_id("output", t, names) for t in dict.fromkeys(graph.outputs)}
    build = _Build(graph, graph_id, marks, constants, DescCells(graph), {**inputs, **captured}, outputs)
    hierarchy = graph_hierarchy(graph, build.input_ids, outputs)
    ns = hierarchy.namespaces
    nodes = [_input_node(build, t, ns[i]) for t, i in build.input_ids.items()]
    nodes += [_op_node(build, n, ns[n.name]) for n in graph.nodes]
    nodes += [_output_node(build, t, ns[i]) for t, i in outputs.items()]
    about = {"graph": graph.name, "nodes": f"{len(graph):,}", "inputs": ", ".join(inputs) or "(none)",
             "outputs": ", ".join(outputs) or "(none)",
             "layers": f"{hierarchy.rule}, then chunks of at most {MAX_LAYER} items a layer"}
    if marks.diff is not None:
        about["change"] = marks.diff.summary()
    return {"id": graph_id, "nodes": nodes, "groupNodeAttributes": {"": about, **hierarchy.layers}}


def _free_id(kind: str, tensor: str, names: set[str]) -> str:
    """`input:x`, prefixed again in the unlikely case a node already has that name."""
    item = f"{kind}:{tensor}"
    while item in names:
        item = f"{kind}:{item}"
    return item


def _op_node(b: _Build, node: Node, namespace: str) -> dict[str, Any]:
    op = REGISTRY.for_node(node)
    slots = input_slots(node)
    item: dict[str, Any] = {
        "id": node.name, "label": node.op_type, "namespace": namespace,
        "subgraphIds": _subgraph_ids(b.graph_id, node),
        "attrs": _node_attrs(b, node, op, slots), "incomingEdges": _edges(b, node),
        "outputsMetadata": [_output_meta(b, i, t) for i, t in enumerate(node.outputs)],
        "inputsMetadata": _inputs_meta(b, node, slots)}
    state = b.marks.status.get(node.name, "")
    if state:
        item["style"] = {"backgroundColor": DIFF_FILL[state], "borderColor": DIFF_BORDER[state],
                         "hoveredBorderColor": DIFF_BORDER[state]}
    elif op is None:
        item["style"] = {"backgroundColor": UNSUPPORTED_FILL, "borderColor": UNSUPPORTED_BORDER,
                         "hoveredBorderColor": UNSUPPORTED_BORDER}
    return item


def _node_attrs(b: _Build, node: Node, op: OpDef | None, slots: Sequence[str]) -> list[KeyValue]:
    attrs = [kv("op", qualified(node)), kv("name", node.name), kv("domain", node.domain or "ai.onnx"),
             kv("category", op.category.value if op is not None else "unsupported"), kv("kernel", kernel_text(op))]
    taken = {"op", "name", "domain", "category", "kernel"}
    attrs += [kv(f"attr {k}" if k in taken else k, attr_text(v)) for k, v in sorted(node.attrs.items())]
    attrs += [kv(f"{slots[i]} (constant)", b.constant(t)) for i, t in enumerate(node.inputs) if t and t in b.constants]
    if node.control_inputs:
        attrs.append(kv("control inputs", {"type": "node_ids", "nodeIds": list(node.control_inputs)}))
    if node.body is not None:
        attrs += [kv("fused ops", f"{len(node.body)}: open the body with the subgraph button"),
                  kv("body", body_text(node.body))]
    for attr, sub in sorted(node.subgraphs.items()):
        attrs.append(kv(f"subgraph {attr}", f"{len(sub)} nodes: open it with the subgraph button"))
    if node.captures:
        attrs.append(kv("captured", cut(", ".join(node.captures))))
    state = b.marks.status.get(node.name, "")
    if state and b.marks.diff is not None:
        attrs += change_attrs(state, b.marks.diff.changed.get(node.name, ()))
    for i, d in enumerate(b.marks.decisions.get(node.name, ()), 1):
        attrs.append(kv("fusion" if i == 1 else f"fusion {i}", decision_text(d, node.name)))
    for overlay in b.marks.overlays.values():
        text = overlay.text(node.name)
        if text is not None:
            attrs.append(kv(overlay.name, text))
    return attrs


def _edges(b: _Build, node: Node) -> list[dict[str, str]]:
    edges = []
    for i, t in enumerate(node.inputs):
        if not t or t in b.constants:
            continue
        source = _source(b, t)
        if source is not None:
            edges.append({"sourceNodeId": source[0], "sourceNodeOutputId": source[1], "targetNodeInputId": str(i)})
    return edges


def _source(b: _Build, tensor: str) -> tuple[str, str] | None:
    """(node id, output id) of the item producing `tensor`: a node, or a graph input item."""
    producer = b.graph.producer(tensor)
    if producer is not None:
        return producer.name, str(producer.outputs.index(tensor))
    item = b.input_ids.get(tensor)
    return (item, "0") if item is not None else None


def _output_meta(b: _Build, index: int, tensor: str) -> dict[str, Any]:
    readers = ", ".join(u.name for u in b.graph.users(tensor))
    attrs = [kv("tensor_name", tensor), *b.cells(tensor), kv("consumers", cut(readers) or "(none)")]
    if b.graph.is_output(tensor):
        attrs.append(kv("graph output", "yes"))
    return {"id": str(index), "attrs": attrs}


def _inputs_meta(b: _Build, node: Node, slots: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for i, t in enumerate(node.inputs):
        if not t:
            attrs = [kv("__tensor_tag", slots[i]), kv("tensor_name", "(absent: optional input)")]
        else:
            attrs = [kv("__tensor_tag", slots[i]), kv("tensor_name", t), *b.cells(t), kv("producer", _origin(b, t))]
        out.append({"id": str(i), "attrs": attrs})
    return out


def _origin(b: _Build, tensor: str) -> str:
    if tensor in b.constants:
        return "constant"
    producer = b.graph.producer(tensor)
    if producer is not None:
        return producer.name
    return "graph input" if tensor in b.input_ids else "(none: no node makes it)"


def _input_node(b: _Build, tensor: str, namespace: str) -> dict[str, Any]:
    readers = ", ".join(u.name for u in b.graph.users(tensor))
    meta = [kv("tensor_name", tensor), *b.cells(tensor), kv("consumers", cut(readers) or "(none)")]
    captured = tensor not in b.graph.inputs
    role = "read from the enclosing graph" if captured else "graph input"
    return {"id": b.input_ids[tensor], "label": CAPTURED_LABEL if captured else INPUT_LABEL, "namespace": namespace,
            "subgraphIds": [], "attrs": [kv("name", tensor), kv("role", role), *b.cells(tensor)], "incomingEdges": [],
            "outputsMetadata": [{"id": "0", "attrs": meta}], "inputsMetadata": []}


def _output_node(b: _Build, tensor: str, namespace: str) -> dict[str, Any]:
    source = None if tensor in b.constants else _source(b, tensor)
    edges = [] if source is None else [{"sourceNodeId": source[0], "sourceNodeOutputId": source[1],
                                        "targetNodeInputId": "0"}]
    meta = [kv("__tensor_tag", "output"), kv("tensor_name", tensor), *b.cells(tensor),
            kv("producer", _origin(b, tensor))]
    return {"id": b.output_ids[tensor], "label": OUTPUT_LABEL, "namespace": namespace, "subgraphIds": [],
            "attrs": [kv("name", tensor), kv("role", "graph output"), *b.cells(tensor)], "incomingEdges": edges,
            "outputsMetadata": [], "inputsMetadata": [{"id": "0", "attrs": meta}]}
