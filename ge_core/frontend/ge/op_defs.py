"""Our graph's pieces as GE OpDefs: graph inputs as Data ops, constants as Const ops, nodes as their ops,
graph outputs as one NetOutput op (named Node_Output, GE's NODE_NAME_NET_OUTPUT), as GE's ModelSerializeImp
writes them (hicann/ge graph_metadef/graph/serialization/model_serialize.cc): inputs `src:index`, control
edges `src:-1`, one input/output desc per anchor, a fused node's original ops in `_datadump_original_op_names`.

`OpText` caches the text of an op's attrs and of its fields after `id` by what they depend on (`op_key`: its
type, attrs and descs, not its name, inputs or id), so ops alike (a Relu chain's, a repeated block's) and the
ops a stage did not change are printed once; each op's name, type and inputs are written around that text.
Printing goes through text_out.message_text (text_format's output, several times faster).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ge_core.frontend.ge.attrs import set_attr
from ge_core.frontend.ge.descs import desc_to_proto, split_extras, tensor_from_array
from ge_core.frontend.ge.text_out import message_text, quoted
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
        """(name, type, inputs and attrs; the fields after id) as text_format prints them."""
        pad = " " * INDENT
        refs = [*(tensor_ref(graph, t) if t else "" for t in node.inputs), *(f"{c}:-1" for c in node.control_inputs)]
        own = f"{pad}name: {quoted(node.name)}\n{pad}type: {quoted(node.op_type)}\n" + "".join(
            f"{pad}input: {quoted(r)}\n" for r in refs)
        key = op_key(graph, node)
        text = self.cache.get(key)
        if text is None:
            head, tail = node_op_halves(graph, node)
            head.ClearField("name")
            head.ClearField("type")
            head.ClearField("input")  # written per op above: only the attrs are shared
            text = self.cache[key] = (message_text(head, INDENT), message_text(tail, INDENT))
        return own + text[0], text[1]


def op_key(graph: Graph, node: Node) -> tuple[Any, ...]:
    """What an op's text other than its name, inputs and id depends on (ops with equal keys print alike)."""
    in_descs = tuple(graph.descs.get(t) if t else None for t in node.inputs)
    out_descs = tuple(graph.descs.get(t) for t in node.outputs)
    named = node.name if node.subgraphs else ""  # subgraph names are made from the node's
    return (node.op_type, in_descs, out_descs, _frozen(node.attrs), id(node.body) if node.body is not None else 0,
            tuple(node.subgraphs), named)


def _frozen(value: Any) -> Any:
    """A hashable stand-in for an attr value: containers by content, arrays and other unhashables by identity
    (a compile's snapshots keep them alive while its dumps are written)."""
    if isinstance(value, dict):
        return tuple((k, _frozen(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, np.ndarray):
        return ("array", id(value))
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return value


def graph_op_defs(graph: Graph, weights: bool, nodes: bool = True) -> Iterator[pb.OpDef]:
    """The OpDefs of `graph` in GE's order (Data, Const, nodes, NetOutput), ids numbered from 0; without the
    nodes' own when `nodes` is False (NetOutput's id still counts them)."""
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
    for op_id, node in enumerate(graph.nodes if nodes else (), start=len(ops)):
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
    head.input.extend(tensor_ref(graph, t) if t else "" for t in node.inputs)
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


def tensor_ref(graph: Graph, tensor: str) -> str:
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
        op.input.append(tensor_ref(graph, tensor))
        desc_to_proto(graph.desc(tensor), op.input_desc.add())
    return op


def _block(op: pb.OpDef, op_id: int) -> str:
    op.id = op_id
    return f"  op {{\n{message_text(op, INDENT)}  }}\n"
