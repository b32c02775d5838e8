"""The words on the graph canvas's side panel: attribute values, TensorDesc cells, pass changes, fusion
decisions, as Model Explorer key/value pairs (`{"key": ..., "value": ...}`).

Values are compact text: long ones (big lists, tensors) are cut, arrays show their dtype and shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import SHORT_DTYPE, TensorDesc
from ge_core.ir.text import format_attr
from ge_core.ops import OpDef
from ge_core.passes.infra.base import FusionDecision
from ge_core.viz.graph_diff import ADDED, REMOVED, NodeChange
from ge_core.viz.inspector import input_names

MAX_VALUE = 300  # characters of one value in the side panel
MAX_CHANGES = 12  # differences listed per changed node (the pass table lists them all)
UNKNOWN = "?"

KeyValue = dict[str, Any]


def kv(key: str, value: Any) -> KeyValue:
    return {"key": key, "value": value}


def cut(text: str, limit: int = MAX_VALUE) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def attr_text(value: Any) -> str:
    """An attribute's value: `[1, 1, 1, 1]`, `tensor<float32[64]>`; a graph by its name and size."""
    if isinstance(value, Graph):  # control flow branches: never their whole text
        return f"graph '{value.name}' ({len(value)} nodes)"
    return cut(format_attr(value))


def qualified(node: Node) -> str:
    return f"{node.domain}::{node.op_type}" if node.domain else node.op_type


def kernel_text(op: OpDef | None) -> str:
    if op is None:
        return "none: ge_core has no kernel for this op"
    if op.view:
        return "none: a view (its output is input 0's bytes under another shape)"
    return f"{op.unit} unit"


def shape_text(desc: TensorDesc | None) -> str:
    if desc is None or desc.dtype == "undefined":
        return UNKNOWN
    return "[" + ",".join(UNKNOWN if d < 0 else str(d) for d in desc.shape) + "]"


class DescCells:
    """Per tensor of one graph: its shape, dtype and format cells, worked out once (a tensor shows as
    its producer's output and again as each consumer's input)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._cells: dict[str, list[KeyValue]] = {}

    def __call__(self, tensor: str) -> list[KeyValue]:
        cells = self._cells.get(tensor)
        if cells is None:
            cells = self._cells[tensor] = self._make(tensor)
        return cells

    def _make(self, tensor: str) -> list[KeyValue]:
        desc = self.graph.descs.get(tensor)
        if desc is None or desc.dtype == "undefined":
            return [kv("shape", UNKNOWN), kv("dtype", UNKNOWN)]
        shape = shape_text(desc)
        if tensor in self.graph.input_dim_params:  # symbolic dims keep their names
            shape = "[" + ",".join(self.graph.input_dims_text(tensor)) + "]"
        cells = [kv("shape", shape), kv("dtype", desc.dtype), kv("format", desc.format)]
        device = desc.device_shape
        if device != desc.shape:  # lowered to a device format (NC1HWC0 pads C to 16)
            cells.append(kv("device shape", "[" + ",".join(str(d) for d in device) + "]"))
        moved = (desc.origin_format not in (None, desc.format)
                 or desc.origin_shape not in (None, desc.shape))
        if moved:  # the format pass changed the layout: what the model had
            origin = "" if desc.origin_shape is None else shape_text(TensorDesc(desc.origin_shape, desc.dtype))
            cells.append(kv("origin", f"{desc.origin_format or ''} {origin}".strip()))
        return cells


def input_slots(node: Node) -> tuple[str, ...]:
    """ONNX's names for the node's inputs (Conv: X, W, B). A fused node has no schema: each input takes
    the name the first body op reading it gives it (FusedConv: X, W, B from its Conv)."""
    if node.body is None:
        return input_names(node.op_type, node.domain, node.opset, len(node.inputs))
    slots = []
    for i, t in enumerate(node.inputs):
        readers = node.body.users(t) if t else []
        if readers:
            inner = readers[0]
            inner_slots = input_slots(inner)
            slots.append(inner_slots[inner.inputs.index(t)])
        else:
            slots.append(f"in{i}")
    return tuple(slots)


def constant_text(graph: Graph, constants: Mapping[str, np.ndarray], tensor: str) -> str:
    """`conv1.weight: f32[16,3,3,3]`, with the value of a scalar (`eps: f32[] = 1e-05`)."""
    value = constants[tensor]
    desc = graph.descs.get(tensor)  # a body's outer constants have their desc in the graph around it
    if desc is not None:
        text = desc.text()
    else:
        name = value.dtype.name
        text = f"{SHORT_DTYPE.get(name, name)}[{','.join(str(d) for d in value.shape)}]"
    if value.size == 1 and value.dtype.kind in "biuf":
        text += f" = {value.reshape(-1)[0].item():g}"
    return f"{tensor}: {text}"


def change_attrs(status: str, changes: Sequence[NodeChange]) -> list[KeyValue]:
    """The node's mark from the pass: what happened and, for a changed node, each difference."""
    if status in (ADDED, REMOVED):
        return [kv("change", f"{status} by this pass")]
    kinds = ", ".join(dict.fromkeys(c.kind for c in changes))
    rows = [kv("change", f"changed: {kinds}")]
    for i, c in enumerate(changes[:MAX_CHANGES], 1):
        rows.append(kv(f"change {i}", cut(f"{c.kind} {c.what}: {c.before or '(none)'} → {c.after or '(none)'}")))
    if len(changes) > MAX_CHANGES:
        rows.append(kv(f"change {MAX_CHANGES + 1}", f"… {len(changes) - MAX_CHANGES} more in the pass table"))
    return rows


def decision_text(d: FusionDecision, node: str) -> str:
    """`accepted by ConvActivationFusionPass (pattern Conv+Activation) into relu1: Conv + Relu into one
    kernel`, or `refused by UbFusionPass (pattern A+B, with n2): <the reason in full>`."""
    others = [n for n in d.nodes if n != node]
    with_ = f", with {', '.join(others)}" if others else ""
    if d.accepted:
        into = f" into {d.fused_node}" if d.fused_node else ""
        return f"accepted by {d.pass_name} (pattern {d.pattern}{with_}){into}: {d.reason}"
    return f"refused by {d.pass_name} (pattern {d.pattern}{with_}): {d.reason}"


def decisions_by_node(decisions: Sequence[FusionDecision]) -> dict[str, list[FusionDecision]]:
    """Node name -> the decisions that took or refused it (as a candidate, or as the fused node made)."""
    out: dict[str, list[FusionDecision]] = {}
    for d in decisions:
        for name in dict.fromkeys([*d.nodes, *([d.fused_node] if d.fused_node else [])]):
            out.setdefault(name, []).append(d)
    return out


def body_text(body: Graph) -> str:
    """`Conv conv1 → Relu relu1`: the ops a fused node runs, in order."""
    return cut(" → ".join(f"{n.op_type} {n.name}" for n in body.nodes), 2 * MAX_VALUE)
