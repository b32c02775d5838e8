"""Our graph as GE's ge_onnx dump text (an ONNX ModelProto with `ge:` op types, which Netron opens), streamed
node by node, as GE's OnnxUtils::ConvertGeModelToModelProto writes it (hicann/ge
graph_metadef/graph/utils/ge_ir_utils.cc): every desc flattened into `input_desc_<field>:<i>` attributes,
OpDef's fields and the op's attrs as attributes (strings and string lists only at DUMP_GE_GRAPH=1, tensor
attrs as `<name>_desc_*` plus `<name>_data` at level 1), attributes sorted by name; at level 3 no attribute
at all; node outputs `name:index` for each used output (`name:-1` when a control edge leaves it); the graph's
outputs as the NetOutput node; each subgraph as a node of type `subgraph` holding it in attribute `graph`.

`NodeText` keeps each node's attribute text by what it depends on (op_defs.op_key: not the node's name,
inputs or id), shared by the stages one writer writes: a Relu chain's 30,000 nodes print their attributes once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any, TextIO

import onnx
from google.protobuf import text_format
from onnx import AttributeProto, helper

from ge_core.frontend.ge.attrs import attr_value
from ge_core.frontend.ge.op_defs import (
    NET_OUTPUT_NAME,
    graph_op_defs,
    node_op_halves,
    op_key,
    subgraph_name,
    tensor_ref,
)
from ge_core.frontend.ge.proto_reader import OPDEF_FIELDS
from ge_core.frontend.ge.text_out import quoted
from ge_core.frontend.ge.vendor import ge_ir_pb2 as pb
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node

DESC_FIELDS = ("size", "weight_size", "reuse_input", "output_tensor", "device_type", "input_tensor", "real_dim_cnt",
               "data_offset", "cmps_size", "cmps_tab", "cmps_tab_offset")


class NodeText:
    """Each node's attribute text, split around its `id` attribute (the one that moves), by op_key and level."""

    SENTINEL = 7_340_033_331  # an id no graph has: where a node's own id goes in the cached text

    def __init__(self) -> None:
        self.cache: dict[tuple[Any, ...], tuple[str, str, bool]] = {}

    def node(self, graph: Graph, node: Node, op_id: int, used: dict[int, bool], level: int, indent: int) -> str:
        pad, inner = " " * indent, " " * (indent + 2)
        key = (op_key(graph, node), level, indent)
        halves = self.cache.get(key)
        if halves is None:
            head, tail = node_op_halves(graph, node)
            head.MergeFrom(tail)
            head.id = self.SENTINEL
            attrs = [] if level == 3 else sorted(_attributes(head, level), key=lambda a: a.name)
            text = "".join(f"{inner}attribute {{\n" + "\n".join(_attribute_lines(a, inner + "  ")) + f"\n{inner}}}\n"
                           for a in attrs)
            before, sep, after = text.partition(f"i: {self.SENTINEL}\n")
            halves = self.cache[key] = (before, after, bool(sep))
        refs = [*(tensor_ref(graph, t) if t else "" for t in node.inputs), *(f"{c}:-1" for c in node.control_inputs)]
        outputs = [f"{node.name}:{i}" for i in sorted(k for k in used if k >= 0)] + (
            [f"{node.name}:-1"] if -1 in used else [])
        lines = [f"{pad}node {{", *(f"{inner}input: {quoted(r)}" for r in refs),
                 *(f"{inner}output: {quoted(o)}" for o in outputs), f"{inner}name: {quoted(node.name)}",
                 f"{inner}op_type: {quoted('ge:' + node.op_type)}"]
        own_id = f"i: {op_id}\n" if halves[2] else ""
        return "\n".join(lines) + "\n" + halves[0] + own_id + halves[1] + f"{pad}}}\n"


def write_ge_onnx(graph: Graph, out: TextIO, *, level: int = 2, model_name: str = "GE",
                  nodes: NodeText | None = None) -> int:
    """Write `graph` to `out`; returns the number of nodes written (subgraph nodes included). Pass one `nodes`
    to every stage of a compile to reuse the text of nodes alike."""
    nodes = nodes or NodeText()
    out.write(f"ir_version: {onnx.IR_VERSION}\nproducer_name: {_quoted(model_name)}\ngraph {{\n")
    count = _write_graph(graph, graph.name, out, level, indent=2, nodes=nodes)
    for node in graph.nodes:
        for key, sub in node.subgraphs.items():
            name = subgraph_name(node, key)
            out.write(f"  node {{\n    name: {_quoted(name)}\n    op_type: \"subgraph\"\n    attribute {{\n"
                      f"      name: \"graph\"\n      type: GRAPH\n      g {{\n")
            count += _write_graph(sub, name, out, level, indent=8, nodes=nodes)
            out.write("      }\n    }\n  }\n")
    out.write("}\n")
    return count


def _write_graph(graph: Graph, name: str, out: TextIO, level: int, indent: int, nodes: NodeText) -> int:
    pad = " " * indent
    out.write(f"{pad}name: {_quoted(name)}\n")
    users = _users(graph)
    count = 0
    ops = graph_op_defs(graph, weights=level == 1, nodes=False)  # Data and Const ops, then NetOutput
    for op in ops:
        if op.type == "NetOutput":
            for op_id, node in enumerate(graph.nodes, start=count):
                out.write(nodes.node(graph, node, op_id, users.get(node.name, {}), level, indent))
            count += len(graph)
            op.id = count
        out.write(node_text(node_proto(op, level, users.get(op.name, {})), indent))
        count += 1
    value = onnx.ValueInfoProto(name=NET_OUTPUT_NAME)
    out.write(f"{pad}output {{\n{text_format.MessageToString(value, indent=indent + 2)}{pad}}}\n")
    return count


def _users(graph: Graph) -> dict[str, dict[int, bool]]:
    """op name -> {output index (-1: control): True} for every output some op (or NetOutput) reads."""
    used: dict[str, dict[int, bool]] = defaultdict(dict)
    for tensor in [t for n in graph.nodes for t in n.inputs if t] + graph.outputs:
        producer = graph.producer(tensor)
        if producer is None:
            used[tensor][0] = True
        else:
            used[producer.name][producer.outputs.index(tensor)] = True
    for node in graph.nodes:
        for source in node.control_inputs:
            used[source][-1] = True
    return used


def node_proto(op: pb.OpDef, level: int, used: dict[int, bool]) -> onnx.NodeProto:
    node = onnx.NodeProto(name=op.name, op_type=f"ge:{op.type}")
    node.input.extend(op.input)
    node.output.extend(f"{op.name}:{i}" for i in sorted(k for k in used if k >= 0))
    if -1 in used:
        node.output.append(f"{op.name}:-1")
    if level != 3:
        node.attribute.extend(sorted(_attributes(op, level), key=lambda a: a.name))
    return node


def _attributes(op: pb.OpDef, level: int) -> Iterator[AttributeProto]:
    for prefix, descs in (("input", op.input_desc), ("output", op.output_desc)):
        yield helper.make_attribute(f"{prefix}_desc_nums", len(descs))
        for i, desc in enumerate(descs):
            yield from _desc_attributes(desc, prefix, i, level)
    for name in OPDEF_FIELDS:
        value = getattr(op, name)
        if isinstance(value, int):
            yield helper.make_attribute(name, value)
        elif len(value):
            yield _list(name, [int(v) if isinstance(v, bool) else v for v in value])
    if len(op.subgraph_name):
        yield _list("subgraph_name", list(op.subgraph_name))
    for key in sorted(op.attr):
        yield from _op_attribute(key, op.attr[key], level, "", "")


def node_text(node: onnx.NodeProto, indent: int) -> str:
    """`node { ... }` as text_format prints it (fields in number order), written here without text_format's
    per-field Python walk: 30k nodes of ~40 attributes each would take minutes that way."""
    pad, inner = " " * indent, " " * (indent + 2)
    lines = [f"{pad}node {{"]
    lines += [f"{inner}input: {_escaped(t)}" for t in node.input]
    lines += [f"{inner}output: {_escaped(t)}" for t in node.output]
    lines += [f"{inner}name: {_escaped(node.name)}", f"{inner}op_type: {_escaped(node.op_type)}"]
    for attr in node.attribute:
        lines.append(f"{inner}attribute {{")
        lines += _attribute_lines(attr, inner + "  ")
        lines.append(f"{inner}}}")
    lines.append(f"{pad}}}\n")
    return "\n".join(lines)


def _attribute_lines(attr: AttributeProto, pad: str) -> list[str]:
    lines = [f"{pad}name: {_escaped(attr.name)}"]
    kind = attr.type
    if kind == AttributeProto.FLOAT:
        lines.append(f"{pad}f: {attr.f!r}")
    elif kind == AttributeProto.INT:
        lines.append(f"{pad}i: {attr.i}")
    elif kind == AttributeProto.STRING:
        lines.append(f"{pad}s: {_escaped(attr.s)}")
    elif kind == AttributeProto.FLOATS:
        lines += [f"{pad}floats: {v!r}" for v in attr.floats]
    elif kind == AttributeProto.INTS:
        lines += [f"{pad}ints: {v}" for v in attr.ints]
    elif kind == AttributeProto.STRINGS:
        lines += [f"{pad}strings: {_escaped(v)}" for v in attr.strings]
    lines.append(f"{pad}type: {AttributeProto.AttributeType.Name(kind)}")
    return lines


def _escaped(value: str | bytes) -> str:
    return quoted(value)


def _desc_attributes(desc: pb.TensorDescriptor, prefix: str, i: int, level: int) -> Iterator[AttributeProto]:
    p, s = f"{prefix}_desc_", f":{i}"
    yield helper.make_attribute(f"{p}dtype{s}", pb.DataType.Name(desc.dtype))
    yield _list(f"{p}shape{s}", list(desc.shape.dim))
    yield helper.make_attribute(f"{p}layout{s}", desc.layout)
    origin = desc.attr["origin_format"].s.decode() if "origin_format" in desc.attr else desc.layout
    yield helper.make_attribute(f"{p}origin_layout{s}", origin)
    origin_shape = list(desc.attr["origin_shape"].list.i) if "origin_shape" in desc.attr else []
    yield _list(f"{p}origin_shape{s}", origin_shape)
    for name in DESC_FIELDS:
        value = getattr(desc, name)
        yield helper.make_attribute(f"{p}{name}{s}", int(value) if isinstance(value, bool) else value)
    for key in sorted(desc.attr):
        yield from _op_attribute(key, desc.attr[key], level, f"{p}attr_", s)


def _op_attribute(key: str, attr: pb.AttrDef, level: int, prefix: str, suffix: str) -> Iterator[AttributeProto]:
    """GE's AddAttrProtoForAttrsFromAttrMap: which AttrDef kinds reach the ONNX form, and under what name."""
    kind = attr.WhichOneof("value")
    name = f"{prefix}{key}{suffix}"
    if kind == "t":
        d = attr.t.desc
        yield helper.make_attribute(f"{prefix}{key}_desc_dtype{suffix}", pb.DataType.Name(d.dtype))
        yield _list(f"{prefix}{key}_desc_shape{suffix}", list(d.shape.dim))
        yield helper.make_attribute(f"{prefix}{key}_desc_layout{suffix}", d.layout)
        yield helper.make_attribute(f"{prefix}{key}_desc_device_type{suffix}", d.device_type)
        if level == 1:
            yield helper.make_attribute(f"{prefix}{key}_data{suffix}", attr.t.data)
    elif kind in ("s",) and level == 1:
        yield helper.make_attribute(name, attr.s)
    elif kind in ("i", "f"):
        yield helper.make_attribute(name, getattr(attr, kind))
    elif kind == "b":
        yield helper.make_attribute(name, int(attr.b))
    elif kind == "list":
        yield from _list_attribute(name, attr, level)
    elif kind == "list_list_int":
        for k, ints in enumerate(attr_value(attr)):
            yield _list(f"{name}_{k}", ints)


def _list_attribute(name: str, attr: pb.AttrDef, level: int) -> Iterator[AttributeProto]:
    kind = pb.AttrDef.ListValue.ListValueType.Name(attr.list.val_type)
    if kind == "VT_LIST_STRING" and level == 1:
        yield _list(name, list(attr.list.s), AttributeProto.STRINGS)
    elif kind == "VT_LIST_FLOAT":
        yield _list(name, list(attr.list.f), AttributeProto.FLOATS)
    elif kind == "VT_LIST_INT":
        yield _list(name, list(attr.list.i))
    elif kind == "VT_LIST_BOOL":
        yield _list(name, [int(b) for b in attr.list.b])


def _list(name: str, values: list[Any], kind: int = AttributeProto.INTS) -> AttributeProto:
    """A list attribute of a fixed type (make_attribute cannot tell the type of an empty list)."""
    if kind == AttributeProto.INTS and values and isinstance(values[0], (str, bytes)):
        kind = AttributeProto.STRINGS
    attr = AttributeProto(name=name)
    attr.type = kind  # type: ignore[assignment]
    if kind == AttributeProto.INTS:
        attr.ints.extend(int(v) for v in values)
    elif kind == AttributeProto.FLOATS:
        attr.floats.extend(float(v) for v in values)
    else:
        attr.strings.extend(v if isinstance(v, bytes) else str(v).encode() for v in values)
    return attr


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
