"""What ONNX's own operator schemas say about a node, checked up front with every other problem: attribute
names and types (an `epsilon` given as a list is caught here, not when a kernel or a fold trips over it),
required attributes, and graph outputs whose declared element type contradicts what the graph computes.

Value ranges (a negative epsilon, an axis out of range) belong to each op's inference in ge_core/ops.
"""

from __future__ import annotations

import onnx
from onnx import AttributeProto, TensorProto
from onnx.defs import OpSchema

from ge_core.errors import quote
from ge_core.frontend.onnx_reader import tensor_dtype_name
from ge_core.ir.graph import Graph


def schema_of(proto: onnx.NodeProto, opset: int) -> OpSchema | None:
    domain = "" if proto.domain in ("", "ai.onnx") else proto.domain
    try:
        return onnx.defs.get_schema(proto.op_type, opset, domain)
    except onnx.defs.SchemaError:  # not an ONNX op (or not at this opset): the op registry decides
        return None


def attribute_problems(proto: onnx.NodeProto, opset: int, name: str) -> list[str]:
    """Unknown, mistyped and missing attributes of one node, against its ONNX schema at `opset`."""
    schema = schema_of(proto, opset)
    if schema is None:
        return []
    where = f"node {quote(name)} ({proto.op_type})"
    problems = []
    for attr in proto.attribute:
        spec = schema.attributes.get(attr.name)
        if spec is None:
            known = ", ".join(sorted(schema.attributes)) or "none"
            problems.append(f"{where} has an unknown attribute {quote(attr.name)} ({proto.op_type} at opset "
                            f"{opset} takes: {known})")
        elif attr.type == AttributeProto.UNDEFINED:
            problems.append(f"{where}: attribute {quote(attr.name)} has no type")
        elif not attr.ref_attr_name and _attr_type(int(attr.type)) != _schema_type(spec):
            problems.append(f"{where}: attribute {quote(attr.name)} is {_attr_type(int(attr.type))}, but "
                            f"{proto.op_type} expects {_schema_type(spec)}")
    given = {a.name for a in proto.attribute}
    problems += [f"{where} lacks its required attribute {quote(n)}"
                 for n, spec in sorted(schema.attributes.items()) if spec.required and n not in given]
    return problems + _arity_problems(proto, schema, where, opset)


def _arity_problems(proto: onnx.NodeProto, schema: OpSchema, where: str, opset: int) -> list[str]:
    """Inputs and outputs within the schema's counts (trailing optional ones may be left out)."""
    problems = []
    for kind, count, low, high in (("inputs", len(proto.input), schema.min_input, schema.max_input),
                                   ("outputs", len(proto.output), schema.min_output, schema.max_output)):
        if not low <= count <= high:
            allowed = f"{low}" if low == high else f"{low} to {high}" if high < 1 << 20 else f"at least {low}"
            problems.append(f"{where} has {count} {kind}, but {proto.op_type} at opset {opset} takes {allowed}")
    return problems


def declared_output_problems(model: onnx.ModelProto, graph: Graph) -> list[str]:
    """Graph outputs whose declared element type is not an ONNX type, or is not what the graph computes."""
    problems = []
    for value in model.graph.output:
        declared = value.type.tensor_type.elem_type if value.type.HasField("tensor_type") else 0
        if declared == TensorProto.UNDEFINED or not graph.has_tensor(value.name):
            continue
        where = f"graph output {quote(value.name)}"
        if declared not in TensorProto.DataType.values():
            problems.append(f"{where} declares element type {declared}, which is not an ONNX data type")
            continue
        want, have = tensor_dtype_name(declared), graph.desc(value.name).dtype
        if have != "undefined" and want != have:
            problems.append(f"{where} is declared {TensorProto.DataType.Name(declared)}, but the graph computes "
                            f"{have} for it")
    return problems


def _schema_type(spec: OpSchema.Attribute) -> str:
    """The schema's type as AttributeProto spells it ("FLOAT", "INTS"...): OpSchema.AttrType prints so."""
    return str(spec.type).rpartition(".")[2]


def _attr_type(code: int) -> str:
    return AttributeProto.AttributeType.Name(code) if code in AttributeProto.AttributeType.values() else str(code)
