"""What a pass changed: nodes added, removed, and changed (op, attributes, inputs, shapes, dtypes, formats).

Nodes are matched by name, as GE's dumps are compared: passes keep the names of the nodes they edit and
give new nodes new names. A node counts as changed when its op, an attribute, the tensors it reads
(rewired inputs), its control inputs, one of its output TensorDescs (shape, dtype, format), the desc or
the values of a graph input or constant it reads, or its fused body differs. An input whose producer
changed shape is not flagged again on the reader: the producer's row already says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ir.text import format_attr, node_to_text

ADDED, REMOVED, CHANGED = "added", "removed", "changed"
MAX_TEXT = 160  # long attribute values (tensors, big lists) are cut in the table


@dataclass(frozen=True, slots=True)
class NodeChange:
    """One difference of one node: `kind` is op, attr, inputs, outputs, control, shape, dtype, format, desc,
    values (of a constant it reads) or body."""

    node: str
    kind: str
    what: str  # the attribute, tensor or slot concerned ("pads", "output 0 'y'")
    before: str
    after: str


@dataclass(frozen=True)
class GraphDiff:
    added: tuple[str, ...] = ()  # in the after graph's order
    removed: tuple[str, ...] = ()  # in the before graph's order
    changed: dict[str, tuple[NodeChange, ...]] = field(default_factory=dict)
    added_text: dict[str, str] = field(default_factory=dict)  # node -> its text form (for the table)
    removed_text: dict[str, str] = field(default_factory=dict)
    constants_added: int = 0
    constants_removed: int = 0
    outputs_before: tuple[str, ...] = ()
    outputs_after: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.constants_added
                    or self.constants_removed or self.outputs_before != self.outputs_after)

    def status(self, name: str) -> str:
        """"added", "removed", "changed" or "" for a top-level node name."""
        if name in self.changed:
            return CHANGED
        if name in self.added_text:
            return ADDED
        return REMOVED if name in self.removed_text else ""

    def summary(self) -> str:
        parts = [f"{len(self.added):,} added", f"{len(self.removed):,} removed", f"{len(self.changed):,} changed"]
        if self.constants_added or self.constants_removed:
            parts.append(f"constants +{self.constants_added:,} / -{self.constants_removed:,}")
        if self.outputs_before != self.outputs_after:
            parts.append("graph outputs renamed")
        return ", ".join(parts)

    def rows(self) -> list[dict[str, str]]:
        """The change table: one row per added or removed node and per difference of a changed node."""
        rows = [_row(n, ADDED, "", "", self.added_text[n]) for n in self.added]
        rows += [_row(n, REMOVED, "", self.removed_text[n], "") for n in self.removed]
        rows += [_row(c.node, c.kind, c.what, c.before, c.after) for cs in self.changed.values() for c in cs]
        return rows


def _row(node: str, change: str, what: str, before: str, after: str) -> dict[str, str]:
    return {"node": node, "change": change, "what": what, "before": before, "after": after}


def diff_graphs(before: Graph, after: Graph) -> GraphDiff:
    """The differences between two versions of one graph (the graph before and after a pass)."""
    old = {n.name: n for n in before.nodes}
    new = {n.name: n for n in after.nodes}
    added = tuple(n for n in new if n not in old)
    removed = tuple(n for n in old if n not in new)
    changed: dict[str, tuple[NodeChange, ...]] = {}
    for name, node in new.items():
        if name in old:
            diffs = node_changes(before, old[name], after, node)
            if diffs:
                changed[name] = diffs
    return GraphDiff(
        added, removed, changed,
        {n: node_to_text(after, new[n]) for n in added}, {n: node_to_text(before, old[n]) for n in removed},
        len(after.constants.keys() - before.constants.keys()), len(before.constants.keys() - after.constants.keys()),
        tuple(before.outputs), tuple(after.outputs))


def node_changes(g0: Graph, a: Node, g1: Graph, b: Node) -> tuple[NodeChange, ...]:
    """Every difference between node `a` of `g0` and node `b` of `g1` (the same node, two versions)."""
    out: list[NodeChange] = []
    if (a.domain, a.op_type) != (b.domain, b.op_type):
        out.append(NodeChange(b.name, "op", "op type", _qualified(a), _qualified(b)))
    out += _attr_changes(b.name, a.attrs, b.attrs)
    if a.inputs != b.inputs:
        out.append(NodeChange(b.name, "inputs", "inputs", _names(a.inputs), _names(b.inputs)))
    if a.control_inputs != b.control_inputs:
        out.append(NodeChange(b.name, "control", "control inputs", ", ".join(a.control_inputs),
                              ", ".join(b.control_inputs)))
    out += _desc_changes(b.name, g0, g1, _outer_inputs(g1, b), "input")
    out += _constant_changes(b.name, g0, g1, b)
    out += _output_changes(b.name, g0, a, g1, b)
    if not _same_body(a, b):
        out.append(NodeChange(b.name, "body", "fused body", _body_text(a), _body_text(b)))
    return tuple(out)


def _attr_changes(node: str, a: dict[str, Any], b: dict[str, Any]) -> list[NodeChange]:
    keys = sorted(a.keys() | b.keys())
    return [NodeChange(node, "attr", k, _attr_text(a, k), _attr_text(b, k))
            for k in keys if k not in a or k not in b or not same_value(a[k], b[k])]


def _outer_inputs(graph: Graph, node: Node) -> list[tuple[int, str]]:
    """Inputs fed by a graph input or a constant (a node-produced input is the producer's business)."""
    return [(i, t) for i, t in enumerate(node.inputs) if t and graph.producer(t) is None]


def _constant_changes(name: str, g0: Graph, g1: Graph, node: Node) -> list[NodeChange]:
    """Constants read under the same name whose values a pass replaced (BatchNorm folded into weights).
    Snapshots share unchanged arrays, so identity settles almost every case without comparing values."""
    out = []
    for i, t in enumerate(node.inputs):
        old, new = g0.constants.get(t), g1.constants.get(t)
        if old is None or new is None or old is new:
            continue
        if old.shape == new.shape and old.dtype == new.dtype and np.array_equal(old, new):
            continue
        after = _array_text(new) if new.size <= 8 else _array_text(new) + ", new values"
        out.append(NodeChange(name, "values", f"input {i} '{t}'", _array_text(old), after))
    return out


def _array_text(value: np.ndarray) -> str:
    return _cut(format_attr(value)) if value.size <= 8 else f"{value.dtype.name}{list(value.shape)}"


def _output_changes(name: str, g0: Graph, a: Node, g1: Graph, b: Node) -> list[NodeChange]:
    if a.outputs != b.outputs:
        return [NodeChange(name, "outputs", "outputs", _names(a.outputs), _names(b.outputs))]
    return _desc_changes(name, g0, g1, list(enumerate(b.outputs)), "output")


def _desc_changes(node: str, g0: Graph, g1: Graph, slots: Iterable[tuple[int, str]], role: str) -> list[NodeChange]:
    out = []
    for i, t in slots:
        d0, d1 = g0.descs.get(t), g1.descs.get(t)
        if d0 is None or d1 is None or d0 == d1:
            continue  # a tensor new to the after graph shows up as rewired inputs instead
        what = f"{role} {i} '{t}'"
        for kind, v0, v1 in _desc_fields(d0, d1):
            out.append(NodeChange(node, kind, what, v0, v1))
    return out


def _desc_fields(d0: TensorDesc, d1: TensorDesc) -> list[tuple[str, str, str]]:
    fields = []
    if d0.shape != d1.shape:
        fields.append(("shape", _dims(d0.shape), _dims(d1.shape)))
    if d0.dtype != d1.dtype:
        fields.append(("dtype", d0.dtype, d1.dtype))
    if d0.format != d1.format:
        fields.append(("format", d0.format, d1.format))
    if not fields:  # origin shape/format or shape range
        fields.append(("desc", str(d0.to_json()), str(d1.to_json())))
    return fields


def same_value(a: Any, b: Any) -> bool:
    """Attribute equality that copes with numpy arrays, nested lists and graphs (compared by identity)."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a_arr, b_arr = np.asarray(a), np.asarray(b)
        return a_arr.dtype == b_arr.dtype and a_arr.shape == b_arr.shape and bool(np.array_equal(a_arr, b_arr))
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Graph) or isinstance(b, Graph):
        return False
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # exotic values without a plain truth value
        return False


def _same_body(a: Node, b: Node) -> bool:
    if a.body is b.body:
        return True
    if a.body is None or b.body is None:
        return False
    return [(n.name, n.op_type) for n in a.body.nodes] == [(n.name, n.op_type) for n in b.body.nodes]


def _body_text(node: Node) -> str:
    if node.body is None:
        return "(none)"
    return _cut(" → ".join(f"{n.op_type} {n.name}" for n in node.body.nodes))


def _attr_text(attrs: dict[str, Any], key: str) -> str:
    return _cut(format_attr(attrs[key])) if key in attrs else "(absent)"


def _qualified(node: Node) -> str:
    return f"{node.domain}::{node.op_type}" if node.domain else node.op_type


def _names(tensors: tuple[str, ...]) -> str:
    return _cut(", ".join(t or "(none)" for t in tensors))


def _dims(shape: tuple[int, ...]) -> str:
    return "[" + ",".join("?" if d < 0 else str(d) for d in shape) + "]"


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 1] + "…"
