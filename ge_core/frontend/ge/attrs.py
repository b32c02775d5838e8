"""GE's AttrDef (every kind of its `value` oneof) <-> plain Python values.

Read: s -> str (bytes that are not UTF-8 stay bytes), i -> int, f -> float, b -> bool, bt -> bytes,
list -> a list of its val_type's items, list_list_int / list_list_float -> lists of lists, dt -> AttrDataType,
func (NamedAttrs) -> NamedAttrs, td -> TensorDescriptor and g -> GraphDef kept as the proto message (shown by
name and type), t -> TensorDef kept as the message (weights are decoded by descs.py, not here).
Write: the inverse for the Python kinds our passes put in attrs (numpy arrays become TensorDefs in descs.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from google.protobuf.message import Message

from ge_core.frontend.ge.vendor import ge_ir_pb2 as pb

ORIGINAL_NAME_ATTRS = ("_datadump_original_op_names", "_original_op_names")  # a fused op's originals


def original_names(attrs: Mapping[str, Any]) -> list[str]:
    """The ops GE fused into an op, as its attrs name them ([] for an op GE did not fuse)."""
    for key in ORIGINAL_NAME_ATTRS:
        value = attrs.get(key)
        if isinstance(value, list) and value:
            return [str(v) for v in value if v]
    return []


@dataclass(frozen=True)
class AttrDataType:
    """An attribute holding a ge::DataType (AttrDef.dt): the number as written."""

    value: int


@dataclass(frozen=True)
class NamedAttrs:
    """AttrDef.func: a name and nested attributes (e.g. GE's GraphOptions on a dumped graph)."""

    name: str
    attrs: dict[str, Any] = field(default_factory=dict)


_LIST_FIELDS = ("s", "i", "f", "b", "bt", "td", "t", "g", "na", "dt")


def attr_value(attr: pb.AttrDef) -> Any:
    kind = attr.WhichOneof("value")
    if kind is None:
        return None
    if kind == "s":
        return _text(attr.s)
    if kind in ("i", "f", "b", "bt"):
        return getattr(attr, kind)
    if kind == "list":
        return _list_value(attr.list)
    if kind == "list_list_int":
        return [list(x.list_i) for x in attr.list_list_int.list_list_i]
    if kind == "list_list_float":
        return [list(x.list_f) for x in attr.list_list_float.list_list_f]
    if kind == "dt":
        return AttrDataType(attr.dt)
    if kind == "func":
        return named_attrs(attr.func)
    if kind == "expression":
        return _text(attr.expression)
    return getattr(attr, kind)  # td, t, g: the message itself


def named_attrs(func: pb.NamedAttrs) -> NamedAttrs:
    return NamedAttrs(func.name, attrs_of(func.attr))


def attrs_of(attr_map: Mapping[str, pb.AttrDef]) -> dict[str, Any]:
    return {key: attr_value(attr_map[key]) for key in sorted(attr_map)}


def _list_value(lst: pb.AttrDef.ListValue) -> list[Any]:
    kind = pb.AttrDef.ListValue.ListValueType.Name(lst.val_type)
    by_type = {"VT_LIST_STRING": "s", "VT_LIST_INT": "i", "VT_LIST_FLOAT": "f", "VT_LIST_BOOL": "b",
               "VT_LIST_BYTES": "bt", "VT_LIST_TENSOR_DESC": "td", "VT_LIST_TENSOR": "t", "VT_LIST_GRAPH": "g",
               "VT_LIST_NAMED_ATTRS": "na", "VT_LIST_DATA_TYPE": "dt"}
    name = by_type.get(kind) or next((f for f in _LIST_FIELDS if len(getattr(lst, f))), "i")
    items = list(getattr(lst, name))
    if name == "s":
        return [_text(s) for s in items]
    if name == "na":
        return [named_attrs(x) for x in items]
    if name == "dt":
        return [AttrDataType(x) for x in items]
    return items


def _text(raw: bytes) -> str | bytes:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def set_attr(attr: pb.AttrDef, value: Any) -> bool:
    """Write `value` into `attr`; False for a value GE's AttrDef cannot hold (the caller skips it)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        attr.b = value
    elif isinstance(value, int):
        attr.i = value
    elif isinstance(value, float):
        attr.f = value
    elif isinstance(value, str):
        attr.s = value.encode("utf-8")
    elif isinstance(value, bytes):
        attr.bt = value
    elif isinstance(value, AttrDataType):
        attr.dt = value.value
    elif isinstance(value, NamedAttrs):
        attr.func.name = value.name
        for key, inner in value.attrs.items():
            set_attr(attr.func.attr[key], inner)
    elif isinstance(value, Message):
        getattr(attr, _MESSAGE_FIELD[type(value).__name__]).CopyFrom(value)
    elif isinstance(value, (list, tuple)):
        return _set_list(attr, list(value))
    else:
        return False
    return True


_MESSAGE_FIELD = {"TensorDescriptor": "td", "TensorDef": "t", "GraphDef": "g"}


def _set_list(attr: pb.AttrDef, items: list[Any]) -> bool:
    lst = attr.list
    VT = pb.AttrDef.ListValue
    items = [x.item() if isinstance(x, np.generic) else x for x in items]
    if items and all(isinstance(x, (list, tuple)) for x in items):
        if all(isinstance(v, int) for x in items for v in x):
            for x in items:
                attr.list_list_int.list_list_i.add().list_i.extend(x)
            return True
        for x in items:
            attr.list_list_float.list_list_f.add().list_f.extend(float(v) for v in x)
        return True
    if all(isinstance(x, bool) for x in items) and items:
        lst.b.extend(items)
        lst.val_type = VT.VT_LIST_BOOL
    elif all(isinstance(x, int) and not isinstance(x, bool) for x in items):
        lst.i.extend(items)
        lst.val_type = VT.VT_LIST_INT
    elif all(isinstance(x, (int, float)) for x in items):
        lst.f.extend(float(x) for x in items)
        lst.val_type = VT.VT_LIST_FLOAT
    elif all(isinstance(x, str) for x in items):
        lst.s.extend(x.encode("utf-8") for x in items)
        lst.val_type = VT.VT_LIST_STRING
    elif all(isinstance(x, bytes) for x in items):
        lst.bt.extend(items)
        lst.val_type = VT.VT_LIST_BYTES
    else:
        return False
    return True
