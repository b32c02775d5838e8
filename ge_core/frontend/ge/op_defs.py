"""Our graph's pieces as GE OpDefs: graph inputs as Data ops, constants as Const ops, nodes as their ops,
graph outputs as one NetOutput op (named Node_Output, GE's NODE_NAME_NET_OUTPUT), as GE's ModelSerializeImp
writes them (hicann/ge graph_metadef/graph/serialization/model_serialize.cc): inputs `src:index`, control
edges `src:-1`, one input/output desc per anchor, a fused node's original ops in `_datadump_original_op_names`.

`OpText` caches each op's text in two halves around its `id` (the only field that moves when nodes are
inserted), keyed by what the text depends on, so a stage that changed a few nodes re-prints only those.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from google.protobuf import text_format

from ge_core.frontend.ge.attrs import set_attr
from ge_core.frontend.ge.descs import desc_to_proto, split_extras, tensor_from_array
from ge_core.frontend.ge.vendor import ge_ir_pb2 as pb
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc

NET_OUTPUT_NAME = "Node_Output"
ORIGINAL_NAMES = "_datadump_original_op_names"
OPDEF_LIST_FIELDS = frozenset({"input_name", "src_name", "src_index", "dst_name", "dst_index", "input_i",
                               "output_i", "workspace", "workspace_bytes", "is_input_const"})
INDENT = 4  # ops sit inside `graph { op { ... } }`


class OpText:
    """The text of each op of a graph, cached across the stages one writer writes."""

    def __init__(self, weights: bool) -> None:
        self.weights = weights
        self.cache: dict[tuple[Any, ...], tuple[str, str]] = {}

    def graph_ops(self, graph: Graph) -> Iterator[str]:
        """`op { ... }` blocks: Data ops, Const ops, the nodes in order, NetOutput; ids numbered from 0."""
        op_id = 0
        for index, name in enumerate(graph.inputs):
            yield _block(_data_op(name, graph.desc(name), index), op_id)
            op_id += 1
        for name, array in graph.constants.items():
            yield self._const(name, array, graph.desc(name), op_id)
            op_id += 1
        for node in graph.nodes:
            head, tail = self._node_text(graph, node)
            yield f"  op {{\n{head}{' ' * INDENT}id: {op_id}\n{tail}  }}\n"
            op_id += 1
        yield _block(_net_output(graph), op_id)

    def _const(self, name: str, array: np.ndarray, desc: TensorDesc, op_id: int) -> str:
        op = pb.OpDef(name=name, type="Const")
        desc_to_proto(desc, op.output_desc.add())
        if self.weights:
            tensor_from_array(array, desc, op.attr["value"].t)
        return _block(op, op_id)

    def _node_text(self, graph: Graph, node: Node) -> tuple[str, str]:
        in_descs = tuple(graph.descs.get(t) if t else None for t in node.inputs)
        out_descs = tuple(graph.descs.get(t) for t in node.outputs)
        key = (node.name, node.op_type, node.inputs, node.outputs, node.control_inputs, in_descs, out_descs,
               tuple((k, id(v)) for k, v in node.attrs.items()), id(node.body), tuple(node.subgraphs),
               tuple(_ref(graph, t) for t in node.inputs))
        text = self.cache.get(key)
        if text is None:
            head, tail = node_op_halves(graph, node)
            text = self.cache[key] = (text_format.MessageToString(head, indent=INDENT),
                                      text_format.MessageToString(tail, indent=INDENT))
        return text


def graph_op_defs(graph: Graph, weights: bool) -> Iterator[pb.OpDef]:
    """The OpDefs of `graph` in GE's order (Data, Const, nodes, NetOutput), ids numbered from 0."""
    ops: list[pb.OpDef] = []
    for index, name in enumerate(graph.inputs):
        ops.append(_data_op(name, graph.desc(name), index))
    for name, array in graph.constants.items():
        op = pb.OpDef(name=name, type="Const")
        desc_to_proto(graph.desc(name), op.output_desc.add())
        if weights:
            tensor_from_array(array, graph.desc(name), op.attr["value"].t)
        ops.append(op)
    yield from _numbered(ops, 0)
    for op_id, node in enumerate(graph.nodes, start=len(ops)):
        head, tail = node_op_halves(graph, node)
        head.MergeFrom(tail)
        head.id = op_id
        yield head
    net_output = _net_output(graph)
    net_output.id = len(ops) + len(graph)
    yield net_output


def _numbered(ops: list[pb.OpDef], start: int) -> Iterator[pb.OpDef]:
    for i, op in enumerate(ops, start=start):
        op.id = i
        yield op


def node_op_halves(graph: Graph, node: Node) -> tuple[pb.OpDef, pb.OpDef]:
    """A node's OpDef in two parts: the fields before `id` (name, type, input, attr), those after it."""
    in_descs = tuple(graph.descs.get(t) if t else None for t in node.inputs)
    out_descs = tuple(graph.descs.get(t) for t in node.outputs)
    head = pb.OpDef(name=node.name, type=node.op_type)
    head.input.extend(_ref(graph, t) if t else "" for t in node.inputs)
    head.input.extend(f"{c}:-1" for c in node.control_inputs)
    attrs, extras = split_extras(node.attrs)
    tail = pb.OpDef()
    for key, value in attrs.items():
        if key in ("id", "stream_id"):
            if key == "stream_id" and value:
                tail.stream_id = int(value)
        elif key in OPDEF_LIST_FIELDS and isinstance(value, list):
            getattr(tail, key).extend(value)
        elif not set_attr(head.attr[key], value):
            del head.attr[key]
    if node.body is not None and ORIGINAL_NAMES not in attrs:
        set_attr(head.attr[ORIGINAL_NAMES], [n.name for n in node.body.nodes])
    for i, desc in enumerate(in_descs):
        _desc(tail.input_desc.add(), desc, extras.get(("input", i)))
    for i, desc in enumerate(out_descs):
        _desc(tail.output_desc.add(), desc, extras.get(("output", i)))
    tail.subgraph_name.extend(subgraph_name(node, key) for key in node.subgraphs)
    return head, tail


def subgraph_name(node: Node, key: str) -> str:
    return f"{node.name}_{key}"


def _desc(proto: pb.TensorDescriptor, desc: TensorDesc | None, extras: dict[str, Any] | None) -> None:
    if desc is not None:
        desc_to_proto(desc, proto, extras)


def _ref(graph: Graph, tensor: str) -> str:
    """GE's `op:index` for a tensor: a graph input or constant is output 0 of its Data/Const op."""
    producer = graph.producer(tensor)
    if producer is None:
        return f"{tensor}:0"
    return f"{producer.name}:{producer.outputs.index(tensor)}"


def _data_op(name: str, desc: TensorDesc, index: int) -> pb.OpDef:
    op = pb.OpDef(name=name, type="Data")
    op.attr["index"].i = index
    desc_to_proto(desc, op.input_desc.add())
    desc_to_proto(desc, op.output_desc.add())
    return op


def _net_output(graph: Graph) -> pb.OpDef:
    op = pb.OpDef(name=NET_OUTPUT_NAME, type="NetOutput")
    for tensor in graph.outputs:
        op.input.append(_ref(graph, tensor))
        desc_to_proto(graph.desc(tensor), op.input_desc.add())
    return op


def _block(op: pb.OpDef, op_id: int) -> str:
    op.id = op_id
    return f"  op {{\n{text_format.MessageToString(op, indent=INDENT)}  }}\n"
