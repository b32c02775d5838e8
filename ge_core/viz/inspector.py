"""The node inspector: everything about one node as tables (op, attributes, input and output TensorDescs,
producers, consumers, and for a fused node its body).

Works for body nodes too: a body's inputs are its fused node's inputs, so a body node's producer outside
the body is found in the graph holding the fused node (and likewise for consumers).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import onnx

from ge_core.ir.graph import Graph
from ge_core.ir.tensor import TensorDesc
from ge_core.ir.text import format_attr, node_to_text
from ge_core.ops import REGISTRY
from ge_core.viz.node_index import Located, body_ref, index_nodes

MAX_VALUE = 200  # characters of an attribute value shown


@dataclass(frozen=True)
class NodeDetails:
    ref: str
    name: str
    op_type: str
    domain: str
    category: str  # fusion category, or "unsupported"
    parent: str | None  # the fused node holding it
    text: str  # the node's line in the text form
    attrs: list[dict[str, str]] = field(default_factory=list)
    inputs: list[dict[str, str]] = field(default_factory=list)
    outputs: list[dict[str, str]] = field(default_factory=list)
    producers: list[str] = field(default_factory=list)  # references, in input order
    consumers: list[str] = field(default_factory=list)
    body: list[dict[str, str]] = field(default_factory=list)  # fused nodes: one row per body node
    launches_kernel: bool = True

    @property
    def fused(self) -> bool:
        return bool(self.body)


def node_details(graph: Graph | dict[str, Located], ref: str) -> NodeDetails:
    """The inspector's contents for node `ref` (a name, or `fused › name`); KeyError if there is none."""
    index = index_nodes(graph) if isinstance(graph, Graph) else graph
    loc = index[ref]
    node, g = loc.node, loc.graph
    op = REGISTRY.for_node(node)
    inputs, producers = _inputs(index, loc)
    outputs, consumers = _outputs(index, loc)
    body = [] if node.body is None else [_body_row(node.body, n.name) for n in node.body.nodes]
    return NodeDetails(
        ref, node.name, node.op_type, node.domain, op.category.value if op is not None else "unsupported",
        loc.parent, node_to_text(g, node),
        [{"attribute": k, "value": _cut(format_attr(v))} for k, v in sorted(node.attrs.items())],
        inputs, outputs, producers, consumers, body, not (op is not None and op.view))


def _inputs(index: dict[str, Located], loc: Located) -> tuple[list[dict[str, str]], list[str]]:
    node, g = loc.node, loc.graph
    formal = input_names(node.op_type, node.domain, node.opset, len(node.inputs))
    rows, producers = [], []
    for i, t in enumerate(node.inputs):
        source = producer_ref(index, loc, t) if t else None
        if source is not None and source not in producers:
            producers.append(source)
        rows.append({"#": str(i), "slot": formal[i], "tensor": t or "(absent)", "kind": _kind(index, loc, t),
                     **_desc_cells(g.descs.get(t) if t else None), "producer": source or ""})
    for name in node.control_inputs:
        ref = name if loc.parent is None else body_ref(loc.parent, name)
        if ref in index and ref not in producers:
            producers.append(ref)
    return rows, producers


def _outputs(index: dict[str, Located], loc: Located) -> tuple[list[dict[str, str]], list[str]]:
    node, g = loc.node, loc.graph
    rows, consumers = [], []
    for i, t in enumerate(node.outputs):
        readers = consumer_refs(index, loc, t)
        consumers += [r for r in readers if r not in consumers]
        rows.append({"#": str(i), "tensor": t, **_desc_cells(g.descs.get(t)), "consumers": ", ".join(readers),
                     "graph output": "yes" if _is_output(index, loc, t) else ""})
    return rows, consumers


def producer_ref(index: dict[str, Located], loc: Located, tensor: str) -> str | None:
    """The reference of the node producing `tensor` as `loc` sees it (None: a graph input or constant)."""
    graph, parent = loc.graph, loc.parent
    while True:
        p = graph.producer(tensor)
        if p is not None:
            return p.name if parent is None else body_ref(parent, p.name)
        if parent is None:
            return None
        outer = index[parent]  # a body input is the fused node's input in the graph around it
        graph, parent = outer.graph, outer.parent


def consumer_refs(index: dict[str, Located], loc: Located, tensor: str) -> list[str]:
    """References of the nodes reading `tensor`, inside the body and, for a body output, outside it."""
    graph, parent = loc.graph, loc.parent
    refs: list[str] = []
    while True:
        refs += [u.name if parent is None else body_ref(parent, u.name) for u in graph.users(tensor)]
        if parent is None or not graph.is_output(tensor):
            return refs
        outer = index[parent]
        graph, parent = outer.graph, outer.parent


def _is_output(index: dict[str, Located], loc: Located, tensor: str) -> bool:
    graph, parent = loc.graph, loc.parent
    while parent is not None and graph.is_output(tensor):
        outer = index[parent]
        graph, parent = outer.graph, outer.parent
    return graph.is_output(tensor)


def _kind(index: dict[str, Located], loc: Located, tensor: str) -> str:
    """constant, graph input or activation, looking through fused bodies (whose inputs are the fused
    node's inputs, constants included)."""
    if not tensor:
        return "absent (optional)"
    graph, parent = loc.graph, loc.parent
    while True:
        if graph.is_constant(tensor):
            return "constant"
        if graph.producer(tensor) is not None:
            return "activation"
        if parent is None:
            return "graph input"
        outer = index[parent]
        graph, parent = outer.graph, outer.parent


def _desc_cells(desc: TensorDesc | None) -> dict[str, str]:
    if desc is None or desc.dtype == "undefined":
        return {"shape": "?", "dtype": "?", "format": "?", "origin": ""}
    shape = "[" + ", ".join("?" if d < 0 else str(d) for d in desc.shape) + "]"
    origin = ""
    if desc.origin_format is not None or desc.origin_shape is not None:
        dims = "" if desc.origin_shape is None else str(list(desc.origin_shape))
        origin = f"{desc.origin_format or ''} {dims}".strip()
    return {"shape": shape, "dtype": desc.dtype, "format": desc.format, "origin": origin}


def _body_row(body: Graph, name: str) -> dict[str, str]:
    node = body.node(name)
    outs = ", ".join(body.descs[t].text() if t in body.descs else "?" for t in node.outputs)
    return {"node": name, "op": node.op_type, "outputs": outs, "fused body": "yes" if node.body else ""}


def _cut(text: str) -> str:
    return text if len(text) <= MAX_VALUE else text[:MAX_VALUE - 1] + "…"


@functools.lru_cache(maxsize=512)
def input_names(op_type: str, domain: str, opset: int, count: int) -> tuple[str, ...]:
    """ONNX's names for an op's inputs (Conv: X, W, B); `in2` style when the schema is unknown."""
    try:
        formal = [p.name for p in onnx.defs.get_schema(op_type, opset, domain).inputs]
    except Exception:  # unknown op or domain (custom and fused ops): positional names
        formal = []
    if formal:
        formal += [formal[-1]] * max(0, count - len(formal))  # variadic last input (Concat, Sum)
    return tuple(formal[i] if i < len(formal) else f"in{i}" for i in range(count))
