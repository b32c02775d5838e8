"""GE's ONNX dump form (ge_onnx_*.pbtxt) -> GE's ModelDef, so one reader (proto_reader.py) builds the graph.

GE's OnnxUtils (hicann/ge graph_metadef/graph/utils/ge_ir_utils.cc) writes each node as `op_type: "ge:<type>"`
with its descs flattened into attributes `input_desc_<field>:<i>` / `output_desc_<field>:<i>` (dtype, shape,
layout, origin_shape, origin_layout, size ...; a desc's own attrs as `<prefix>_desc_attr_<name>:<i>`), or, for
an op of 20 descs or more, one JSON string `input_desc_<i>`; OpDef's fields (id, stream_id, ...) and the op's
attrs by name (tensor attrs as `<name>_desc_*` / `<name>_data`); subgraphs as nodes of type `subgraph` whose
attribute `graph` holds them. This module inverts that. What the ONNX form loses, stays lost: attrs GE did not
write (strings below DUMP_GE_GRAPH=1, named attrs, data types), bools written as ints, list-of-list ints split
into `<name>_<k>` attributes; at DUMP_GE_GRAPH=3 every attribute, so descs too.
"""

from __future__ import annotations

import json
import re
from typing import Any

import onnx
from onnx import AttributeProto

from ge_core.errors import ModelError, quote
from ge_core.frontend.ge.attrs import set_attr
from ge_core.frontend.ge.ge_types import format_number
from ge_core.frontend.ge.proto_reader import OPDEF_FIELDS
from ge_core.frontend.ge.vendor import ge_ir_pb2 as pb
from ge_core.frontend.onnx_reader import decoded

GE_PREFIX = "ge:"
SUBGRAPH_TYPE = "subgraph"
_DESC_KEY = re.compile(r"^(input|output)_desc_(.+):(\d+)$")
_DESC_JSON = re.compile(r"^(input|output)_desc_(\d+)$")
_MAX_DESCS = 1 << 16
_DTYPE_NAMES = frozenset(pb.DataType.keys())


def model_def_from_onnx(model: onnx.ModelProto, what: str) -> pb.ModelDef:
    out = pb.ModelDef(name=model.producer_name)
    _add_graph(model.graph, out, what, depth=0)
    return out


def _add_graph(graph: onnx.GraphProto, model: pb.ModelDef, what: str, depth: int) -> None:
    if depth > 16:
        raise ModelError(f"dump file {quote(what)}: subgraphs nest deeper than 16.")
    proto = model.graph.add(name=graph.name)
    proto.output.extend(f"{v.name}:0" for v in graph.output)
    for node in graph.node:
        if node.op_type == SUBGRAPH_TYPE:
            for attr in node.attribute:
                if attr.type == AttributeProto.GRAPH:
                    _add_graph(attr.g, model, what, depth + 1)
            continue
        if not node.op_type.startswith(GE_PREFIX):
            raise ModelError(f"dump file {quote(what)}: node {quote(node.name)} has op_type {quote(node.op_type)}, "
                             "without GE's 'ge:' prefix: this is not a ge_onnx dump.",
                             hint="Open a plain ONNX model as an .onnx file instead.")
        _op(node, proto.op.add(), what)


def _op(node: onnx.NodeProto, op: pb.OpDef, what: str) -> None:
    op.name = node.name
    op.type = node.op_type.removeprefix(GE_PREFIX)
    op.input.extend(node.input)
    attrs = {a.name: a for a in node.attribute}
    counts = {k: _count(attrs, f"{k}_desc_nums", what, node.name) for k in ("input", "output")}
    descs = {"input": [pb.TensorDescriptor() for _ in range(counts["input"])],
             "output": [pb.TensorDescriptor() for _ in range(counts["output"])]}
    tensors = _tensor_attrs(attrs, op)
    for name, attr in attrs.items():
        if name in ("input_desc_nums", "output_desc_nums") or name in tensors:
            continue
        value = onnx.helper.get_attribute_value(attr)
        if name in OPDEF_FIELDS:
            _set_field(op, name, value)
        elif name == "subgraph_name":  # our writer links subgraphs so (GE's ONNX dump does not link them)
            op.subgraph_name.extend(decoded(value))
        elif (match := _DESC_KEY.match(name)) and int(match.group(3)) < len(descs[match.group(1)]):
            _set_desc_field(descs[match.group(1)][int(match.group(3))], match.group(2), attr)
        elif (match := _DESC_JSON.match(name)) and int(match.group(2)) < len(descs[match.group(1)]):
            _set_desc_json(descs[match.group(1)][int(match.group(2))], value)
        else:
            set_attr(op.attr[name], decoded(value))
    op.input_desc.extend(descs["input"])
    op.output_desc.extend(descs["output"])


_TENSOR_PARTS = ("_desc_dtype", "_desc_shape", "_desc_layout", "_desc_device_type", "_data")


def _tensor_attrs(attrs: dict[str, AttributeProto], op: pb.OpDef) -> set[str]:
    """GE writes a tensor attr `k` as `k_desc_dtype`, `k_desc_shape`, `k_desc_layout`, `k_desc_device_type` and
    (level 1) `k_data`: rebuild its TensorDef; returns the attribute names used."""
    used: set[str] = set()
    for name in attrs:
        if not name.endswith("_desc_dtype") or _DESC_KEY.match(name):
            continue
        base = name.removesuffix("_desc_dtype")
        tensor = op.attr[base].t
        value = {part: attrs[base + part] for part in _TENSOR_PARTS if base + part in attrs}
        dtype = decoded(onnx.helper.get_attribute_value(value["_desc_dtype"]))
        tensor.desc.dtype = pb.DataType.Value(dtype) if dtype in _DTYPE_NAMES else pb.DT_UNDEFINED
        if "_desc_shape" in value:
            tensor.desc.shape.dim.extend(value["_desc_shape"].ints)
        if "_desc_layout" in value:
            tensor.desc.layout = decoded(value["_desc_layout"].s)
        if "_desc_device_type" in value:
            tensor.desc.device_type = decoded(value["_desc_device_type"].s)
        if "_data" in value:
            tensor.data = value["_data"].s
        used |= {base + part for part in value}
    return used


def _count(attrs: dict[str, AttributeProto], name: str, what: str, node: str) -> int:
    count = int(attrs[name].i) if name in attrs else 0
    if not 0 <= count <= _MAX_DESCS:
        raise ModelError(f"dump file {quote(what)}: node {quote(node)} attribute {name} = {count} is out of range.")
    return count


def _set_field(op: pb.OpDef, name: str, value: Any) -> None:
    if name in ("id", "stream_id"):
        setattr(op, name, int(value))
    elif name == "is_input_const":
        op.is_input_const.extend(bool(v) for v in value)
    else:
        getattr(op, name).extend(decoded(v) for v in value)


def _set_desc_field(desc: pb.TensorDescriptor, field: str, attr: AttributeProto) -> None:
    value = decoded(onnx.helper.get_attribute_value(attr))
    if field == "dtype":
        desc.dtype = pb.DataType.Value(value) if value in _DTYPE_NAMES else pb.DT_UNDEFINED
    elif field == "shape":
        desc.shape.dim.extend(int(d) for d in value)
    elif field == "layout":
        desc.layout = value
    elif field == "origin_layout":
        desc.attr["origin_format"].s = value.encode()
        desc.attr["origin_format_for_int"].i = format_number(value)
    elif field == "origin_shape":
        origin = desc.attr["origin_shape"].list
        origin.i.extend(int(d) for d in value)
        origin.val_type = pb.AttrDef.ListValue.VT_LIST_INT
        if "origin_shape_initialized" not in desc.attr:
            desc.attr["origin_shape_initialized"].b = True
    elif field == "origin_dtype":
        if value and value != "DT_UNDEFINED":
            desc.attr["origin_data_type"].s = value.encode()
    elif field.startswith("attr_"):
        key = field.removeprefix("attr_")
        if key == "origin_shape_initialized":
            desc.attr[key].b = bool(value)
        elif key not in ("origin_format", "origin_shape", "origin_format_for_int"):
            set_attr(desc.attr[key], value)
    elif field in ("reuse_input", "output_tensor", "input_tensor"):
        setattr(desc, field, bool(value))
    elif field in pb.TensorDescriptor.DESCRIPTOR.fields_by_name:
        setattr(desc, field, value)


def _set_desc_json(desc: pb.TensorDescriptor, text: Any) -> None:
    try:
        data = json.loads(decoded(text))
    except (ValueError, TypeError):
        return
    if not isinstance(data, dict):
        return
    for key, value in data.items():
        attr = onnx.helper.make_attribute(key, value) if isinstance(value, (int, str, list)) and value != [] \
            else None
        if attr is not None and key in ("dtype", "shape", "layout", "origin_layout", "origin_shape",
                                        "origin_dtype", "size", "data_offset", "real_dim_cnt", "device_type"):
            _set_desc_field(desc, key, attr)
