"""GE Graph -> ONNX: the way back, for standard graphs (dumps, and an independent oracle for the passes).

`to_onnx(graph)` writes graph inputs/outputs as ValueInfos with their descs, constants as initializers,
every node with its attributes re-encoded (typed by the operator's schema where ONNX has one), the
graph's opset imports and a value_info for every intermediate tensor. Dims still unknown (-1) are written
with the input's symbolic name when the model declared one, else left unnamed; dims the graph knows are
written as numbers, because passes may have specialised the graph to them.

What does not survive the trip:
- control edges (ordering only) are not written: ONNX has none, and node order is already topological;
- TensorDesc formats (NCHW, NC1HWC0...) and shape ranges: ONNX tensors have no layout; so a TransData
  (the NPU lowering's layout conversion, values unchanged) is written as an Identity.

A node ONNX cannot express (an op of the default domain that ONNX does not define at the graph's opset,
such as a fused op, or an attribute holding something other than numbers, strings and tensors) raises a
GEError naming the node. `is_standard(graph)` says beforehand whether every node is a standard ONNX op.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from ge_core.errors import GEError
from ge_core.frontend.onnx_reader import tensor_dtype_name
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc

PRODUCER = "ge_core"
MIN_IR_VERSION = 4  # initializers need not be listed as graph inputs from IR 4 on
_UNUSED_OUTPUT = re.compile(r":unused\d+$")  # the importer's names for outputs ONNX left empty
# schema attribute types (a pybind enum) -> AttributeProto type codes; the two share names and values
_ATTR_CODES: dict[Any, int] = {
    getattr(onnx.defs.OpSchema.AttrType, n): int(getattr(AttributeProto, n))
    for n in ("FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "SPARSE_TENSOR", "TYPE_PROTO", "FLOATS", "INTS",
              "STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSORS", "TYPE_PROTOS")}


class ExportError(GEError):
    """The graph holds something ONNX cannot express; names the node (or tensor) concerned."""


def to_onnx(graph: Graph) -> onnx.ModelProto:
    """The graph as an ONNX model (see the module docstring for what is and is not kept).

    A fused node that is not itself a standard op (GE's fused kernels) is written as its body, which is
    standard: the exported model computes the same thing with the original ops.
    """
    proto = _graph_proto(graph)
    opsets = _opset_imports(graph, _placed_nodes(graph))
    ir_version = max(helper.find_min_ir_version_for(opsets, ignore_unknown=True), MIN_IR_VERSION)
    model = helper.make_model(proto, opset_imports=opsets, ir_version=ir_version, producer_name=PRODUCER)
    source = graph.metadata.get("producer", "")
    if source:
        model.doc_string = f"exported by GE Workbench from a graph imported from {source}"
    helper.set_model_props(model, {k: v for k, v in graph.metadata.items() if k != "producer"})
    return model


def _graph_proto(graph: Graph) -> onnx.GraphProto:
    """The graph (or a control-flow subgraph, whose captured tensors stay implicit: ONNX reads outer names
    directly) as a GraphProto."""
    placed = _flatten(graph)
    constants = dict(graph.constants)
    for context, _ in placed:
        for t, a in context.constants.items():
            constants.setdefault(t, a)
    return helper.make_graph(
        [_node_proto(context, n) for context, n in placed],
        graph.name,
        [_value_info(graph, t, graph.input_dim_params.get(t)) for t in graph.inputs],
        [_value_info(graph, t) for t in graph.outputs],
        [_initializer(t, a) for t, a in constants.items()],
        value_info=[info for context in _contexts(placed) for info in _intermediate_infos(context, graph)],
    )


def _placed_nodes(graph: Graph) -> list[Node]:
    """Every node written out, those of control-flow subgraphs included."""
    nodes = []
    for _, node in _flatten(graph):
        nodes.append(node)
        for sub in node.subgraphs.values():
            nodes += _placed_nodes(sub)
    return nodes


def is_standard(graph: Graph) -> bool:
    """True when every node is a standard ONNX op: domain "" and defined at the graph's ai.onnx opset."""
    return not nonstandard_nodes(graph)


def nonstandard_nodes(graph: Graph) -> list[Node]:
    """Nodes that are not standard ONNX ops at the graph's opset and have no standard body to write."""
    version = graph.opset.get("")
    bad = []
    for n in graph.nodes:
        if not (n.domain or version is None or not _is_onnx_op(n.op_type, version)) or _is_transdata(n):
            continue
        if n.body is None or nonstandard_nodes(n.body):
            bad.append(n)
    for n in graph.nodes:
        for sub in n.subgraphs.values():
            bad += nonstandard_nodes(sub)
    return bad


def _flatten(graph: Graph) -> list[tuple[Graph, Node]]:
    """(graph the node lives in, node) in order, fused nodes that are not standard ops replaced by bodies."""
    version = graph.opset.get("")
    placed: list[tuple[Graph, Node]] = []
    for n in graph.nodes:
        standard = not n.domain and version is not None and _is_onnx_op(n.op_type, version)
        if _is_transdata(n):
            placed.append((graph, Node(n.name, "Identity", n.inputs, n.outputs)))
        elif not standard and n.body is not None and not nonstandard_nodes(n.body):
            placed += _flatten(n.body)
        else:
            placed.append((graph, n))
    return placed


def _is_transdata(node: Node) -> bool:
    return node.op_type == "TransData" and node.domain == "ge" and len(node.inputs) == 1


def _contexts(placed: list[tuple[Graph, Node]]) -> list[Graph]:
    seen: dict[int, Graph] = {}
    for context, _ in placed:
        seen.setdefault(id(context), context)
    return list(seen.values())


# ---- graph parts ---------------------------------------------------------------------------------
def _opset_imports(graph: Graph, nodes: Sequence[Node]) -> list[onnx.OperatorSetIdProto]:
    versions = dict(graph.opset)
    for node in nodes:  # a domain a pass introduced without declaring it
        versions.setdefault(node.domain, node.opset)
    return [helper.make_opsetid(domain, version) for domain, version in versions.items()]


def _value_info(graph: Graph, tensor: str, dim_params: Sequence[int | str] | None = None) -> onnx.ValueInfoProto:
    desc = graph.descs.get(tensor)
    elem_type = _elem_type(desc.dtype) if desc is not None else None
    if desc is None or elem_type is None:
        return helper.make_empty_tensor_value_info(tensor)  # a tensor whose type was never inferred
    return helper.make_tensor_value_info(tensor, elem_type, _dims(desc, dim_params))


def _dims(desc: TensorDesc, dim_params: Sequence[int | str] | None) -> list[int | str | None]:
    """Known dims as numbers; unknown ones by their declared symbolic name, else unnamed (None)."""
    dims: list[int | str | None] = []
    for axis, d in enumerate(desc.shape):
        param = dim_params[axis] if dim_params is not None and axis < len(dim_params) else None
        if d >= 0:
            dims.append(d)
        elif isinstance(param, str) and param and param != "?":
            dims.append(param)
        else:
            dims.append(None)
    return dims


def _intermediate_infos(graph: Graph, top: Graph) -> list[onnx.ValueInfoProto]:
    outputs = set(top.outputs)
    infos = []
    for node in graph.nodes:
        for t in node.outputs:
            desc = graph.descs.get(t)
            if t in outputs or _is_unused_output(graph, t) or desc is None or _elem_type(desc.dtype) is None:
                continue
            infos.append(_value_info(graph, t))
    return infos


def _initializer(name: str, array: np.ndarray) -> TensorProto:
    """A constant as an initializer (object arrays of str become STRING tensors)."""
    return numpy_helper.from_array(np.asarray(array), name)


def _node_proto(graph: Graph, node: Node) -> onnx.NodeProto:
    version = graph.opset.get(node.domain, node.opset)
    schema = _schema(node.op_type, node.domain, version)
    if not node.domain and schema is None:
        raise ExportError(
            f"node '{node.name}' ({node.op_type}) cannot be written to ONNX: '{node.op_type}' is not an ONNX "
            f"operator at ai.onnx opset {version}.",
            hint="Only standard graphs export (check with is_standard(graph)); compile without the pass that "
                 "made this op, or give the op its own domain.")
    outputs = ["" if _is_unused_output(graph, t) else t for t in node.outputs]
    while outputs and not outputs[-1]:
        outputs.pop()
    proto = helper.make_node(node.op_type, list(node.explicit_inputs), outputs, name=node.name,
                             domain=node.domain or None)
    types = {k: _ATTR_CODES.get(a.type) for k, a in schema.attributes.items()} if schema is not None else {}
    attributes = [_attribute(node, k, v, types.get(k)) for k, v in node.attrs.items()]
    attributes += [helper.make_attribute(k, _graph_proto(g)) for k, g in node.subgraphs.items()]
    proto.attribute.extend(sorted(attributes, key=lambda a: a.name))
    return proto


def _is_unused_output(graph: Graph, tensor: str) -> bool:
    return bool(_UNUSED_OUTPUT.search(tensor)) and graph.num_uses(tensor) == 0


# ---- attributes ----------------------------------------------------------------------------------
def _attribute(node: Node, key: str, value: Any, schema_type: int | None) -> AttributeProto:
    """One attribute re-encoded; the schema's type (when ONNX defines the op) settles empty lists and
    ints written where floats are expected."""
    plain = _plain(value)
    if isinstance(plain, np.ndarray):
        plain = numpy_helper.from_array(plain)
    elif isinstance(plain, list) and plain and all(isinstance(v, np.ndarray) for v in plain):
        plain = [numpy_helper.from_array(v) for v in plain]
    plain = _coerce(plain, schema_type)
    try:
        return helper.make_attribute(key, plain, attr_type=schema_type if isinstance(plain, list) else None)
    except (TypeError, ValueError) as exc:
        raise ExportError(
            f"node '{node.name}' ({node.op_type}): attribute '{key}' = {_short(value)} cannot be written to "
            f"ONNX ({exc}).",
            hint="ONNX attributes hold numbers, strings, tensors and lists of them.") from None


def _plain(value: Any) -> Any:
    """numpy scalars -> python numbers, tuples -> lists (recursively); arrays are left as arrays."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _coerce(value: Any, schema_type: int | None) -> Any:
    """Widen to the schema's type: bool -> int, int -> float. Anything else is left for make_attribute."""
    if schema_type == AttributeProto.FLOAT and isinstance(value, int):
        return float(value)
    if schema_type == AttributeProto.INT and isinstance(value, bool):
        return int(value)
    if schema_type == AttributeProto.FLOATS and isinstance(value, list):
        return [float(v) if isinstance(v, int) else v for v in value]
    if schema_type == AttributeProto.INTS and isinstance(value, list):
        return [int(v) if isinstance(v, bool) else v for v in value]
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ---- types and schemas ---------------------------------------------------------------------------
@functools.cache
def _dtype_codes() -> dict[str, int]:
    """Our dtype names (as the importer writes them) -> ONNX element type codes."""
    codes: dict[str, int] = {}
    for code in TensorProto.DataType.values():
        name = tensor_dtype_name(code) if code != TensorProto.UNDEFINED else None
        if name is not None:
            codes.setdefault(name, code)
    return codes


def _elem_type(dtype: str) -> int | None:
    return _dtype_codes().get(dtype)


@functools.cache
def _is_onnx_op(op_type: str, version: int) -> bool:
    return bool(onnx.defs.has(op_type, version, ""))


@functools.cache
def _schema(op_type: str, domain: str, version: int) -> onnx.defs.OpSchema | None:
    try:
        return onnx.defs.get_schema(op_type, version, domain)
    except onnx.defs.SchemaError:
        return None
