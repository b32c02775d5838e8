"""ONNX nodes -> GE Graph nodes, in one scope: the main graph or a control-flow subgraph.

ScopeBuilder converts the nodes of one GraphProto: their attributes (tensors decoded, schemas checked),
Constant nodes folded into graph constants, topological order, unsupported ops listed. A GRAPH attribute
(If's then_branch/else_branch, Loop's and Scan's body) becomes a subgraph built by a ScopeBuilder of its
own, which sees every name of the scopes around it: a name a subgraph reads but does not define is one of
its captures, and the control-flow node takes it as a trailing input (Node.num_captures). Problems found
inside a subgraph name it: "then_branch of node 'if1': node 'add' (Add) ...".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import onnx

from ge_core.errors import quote
from ge_core.frontend.onnx_reader import decoded, tensor_dtype_name
from ge_core.frontend.onnx_schema import attribute_problems
from ge_core.frontend.onnx_tensors import tensor_to_array
from ge_core.frontend.toposort import topo_order
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.registry import OpRegistry

UNDEFINED = TensorDesc((), "undefined")  # desc of a tensor whose producer could not be inferred
_GRAPH_KINDS = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


class ScopeBuilder:
    """Builds `self.graph` from the nodes of `proto`; `outer` holds the names visible around it."""

    def __init__(self, proto: onnx.GraphProto, opset: dict[str, int], registry: OpRegistry,
                 outer: frozenset[str] = frozenset()) -> None:
        self.proto = proto
        self.opset = opset
        self.registry = registry
        self.outer = outer
        self.graph = Graph(proto.name or "main", opset)
        self.problems: list[str] = []
        self.unsupported: list[tuple[str, str]] = []  # (node name, op type)

    # ---- nodes -------------------------------------------------------------------------------------
    def build_nodes(self) -> None:
        """Convert, capture outer names, order and add every node (inputs and constants already added)."""
        nodes = self._convert_nodes()
        self._add_captures(t for n in nodes for t in n.inputs)
        self._add_nodes(nodes)

    def local_names(self) -> set[str]:
        """Every name this scope defines: inputs, initializers and node outputs."""
        names = {v.name for v in self.proto.input} | {i.name for i in self.proto.initializer}
        return names | {t for n in self.proto.node for t in n.output if t}

    def _convert_nodes(self) -> list[Node]:
        nodes: list[Node] = []
        names: set[str] = set()
        visible = self.outer | frozenset(self.local_names())
        for index, proto in enumerate(self.proto.node):
            name = proto.name or f"{proto.op_type}_{index}"
            while name in names:
                name = f"{name}_{index}"
            names.add(name)
            self.problems += attribute_problems(proto, self.opset.get(proto.domain or "", 0), name)
            attrs = self._attrs(proto, name)
            outputs = tuple(t if t else f"{name}:unused{i}" for i, t in enumerate(proto.output))
            while outputs and outputs[-1].startswith(f"{name}:unused"):
                outputs = outputs[:-1]
            domain = "" if proto.domain in ("", "ai.onnx") else proto.domain
            if domain not in self.opset:
                self.problems.append(f"node {quote(name)} ({proto.op_type}) uses domain {quote(domain or 'ai.onnx')}, "
                                     "for which the model imports no opset")
            node = Node(name, proto.op_type, tuple(proto.input), outputs, attrs, (), domain, self.opset.get(domain, 0))
            self._subgraphs(proto, node, visible)
            nodes.append(node)
        return nodes

    def _attrs(self, proto: onnx.NodeProto, node_name: str) -> dict[str, Any]:
        attrs: dict[str, Any] = {}
        for attr in proto.attribute:
            what = f"attribute '{attr.name}' of node '{node_name}'"
            if attr.type in _GRAPH_KINDS and not attr.ref_attr_name:
                continue  # subgraphs: built by _subgraphs
            if attr.type == onnx.AttributeProto.TENSOR:
                attrs[attr.name] = tensor_to_array(attr.t, what)
            elif attr.type == onnx.AttributeProto.TENSORS:
                attrs[attr.name] = [tensor_to_array(t, what) for t in attr.tensors]
            elif attr.ref_attr_name:
                self.problems.append(f"{what} refers to a function attribute, which is not supported")
            else:
                value = onnx.helper.get_attribute_value(attr)
                attrs[attr.name] = decoded(value)
        return attrs

    def _subgraphs(self, proto: onnx.NodeProto, node: Node, visible: frozenset[str]) -> None:
        """Build the node's GRAPH attributes as subgraphs; their captures become its trailing inputs."""
        for attr in proto.attribute:
            if attr.type == onnx.AttributeProto.GRAPHS:
                self.problems.append(f"attribute '{attr.name}' of node '{node.name}' holds a list of graphs, "
                                     "which is not supported")
            if attr.type != onnx.AttributeProto.GRAPH or attr.ref_attr_name:
                continue
            inner = ScopeBuilder(attr.g, self.opset, self.registry, visible)
            inner.build_subgraph()
            where = f"{attr.name} of node {quote(node.name)}"
            self.problems += [f"{where}: {p}" for p in inner.problems]
            self.unsupported += [(f"{n} (in {where})", op) for n, op in inner.unsupported]
            node.subgraphs[attr.name] = inner.graph
        captured = list(dict.fromkeys(t for _, g in sorted(node.subgraphs.items()) for t in g.captures))
        explicit = list(node.inputs)
        while captured and explicit and not explicit[-1]:
            explicit.pop()  # trailing omitted inputs: the captured ones follow the last given one
        node.inputs = (*explicit, *captured)
        node.num_captures = len(captured)

    def _add_captures(self, reads: Iterable[str]) -> None:
        """Names read here but defined only in an enclosing scope are this (sub)graph's captures."""
        local = self.local_names()
        for t in dict.fromkeys(reads):
            if t and t not in local and t in self.outer:
                self.graph.add_capture(t, UNDEFINED)

    def _add_nodes(self, nodes: list[Node]) -> None:
        graph = self.graph
        available = set(graph.inputs) | set(graph.constants) | set(graph.captures)
        order, problems = topo_order(nodes, available)
        self.problems += problems
        for node in order:
            if node.op_type == "Constant" and not node.domain and self._fold_constant(node):
                continue
            if not self.registry.supports(node):
                qualified = f"{node.domain}::{node.op_type}" if node.domain else node.op_type
                self.unsupported.append((node.name, qualified))
            graph.add_node(node.op_type, node.explicit_inputs, node.outputs, node.attrs, name=node.name,
                           domain=node.domain, opset=node.opset, subgraphs=node.subgraphs, captures=node.captures)

    def _fold_constant(self, node: Node) -> bool:
        """Constant nodes become graph constants (GE's Const); their value is decoded by the op's kernel."""
        op = self.registry.get("Constant")
        if op is None or len(node.outputs) != 1:
            return False
        try:
            (value,) = op.kernel(node, [])[:1]
        except Exception as exc:
            self.problems.append(f"node '{node.name}' (Constant): cannot decode its value ({exc})")
            return False
        self.graph.add_constant(node.outputs[0], np.asarray(value))
        return True

    # ---- a subgraph ----------------------------------------------------------------------------------
    def build_subgraph(self) -> None:
        """A control-flow subgraph: formal inputs (their descs come from the node at inference), its own
        initializers and Constant nodes, its nodes, and outputs that may name outer tensors."""
        graph = self.graph
        for init in self.proto.initializer:
            if init.name and init.name not in graph.descs:
                graph.add_constant(init.name, tensor_to_array(init, f"initializer '{init.name}'"))
        for value in self.proto.input:
            if value.name in graph.descs or not value.name:
                self.problems.append(f"input {quote(value.name)} is declared twice or has no name")
                continue
            graph.add_input(value.name, _declared_desc(value))
        self._add_captures(v.name for v in self.proto.output)
        self.build_nodes()
        missing = [v.name for v in self.proto.output if not graph.has_tensor(v.name)]
        self.problems += [f"output {quote(t)} is not produced by any node, input or outer tensor" for t in missing]
        graph.set_outputs([v.name for v in self.proto.output if graph.has_tensor(v.name)])


def fill_undefined(graph: Graph) -> None:
    """Tensors left without a desc (unsupported or failed upstream) get UNDEFINED, subgraphs' too."""
    for node in graph.nodes:
        for t in node.outputs:
            if t not in graph.descs:
                graph.set_desc(t, UNDEFINED)
        for sub in node.subgraphs.values():
            fill_undefined(sub)


def _declared_desc(value: onnx.ValueInfoProto) -> TensorDesc:
    """A subgraph input as declared (often without a shape: the node's operands decide at inference)."""
    ttype = value.type.tensor_type
    dtype = tensor_dtype_name(ttype.elem_type) or "undefined" if value.type.HasField("tensor_type") else "undefined"
    if not ttype.HasField("shape"):
        return TensorDesc((), dtype)
    dims = tuple(int(d.dim_value) if d.HasField("dim_value") and d.dim_value > 0 else -1 for d in ttype.shape.dim)
    return TensorDesc(dims, dtype)
