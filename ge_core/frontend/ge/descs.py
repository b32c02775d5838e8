"""GE's TensorDescriptor <-> our TensorDesc, and a Const's TensorDef <-> a numpy array.

A GE desc's `shape` is the shape in its `layout` (the device shape: 5-D for NC1HWC0) and its attrs carry
`origin_format` and `origin_shape` (the logical ones). Our TensorDesc keeps the logical shape in `shape` and
the layout in `format` (ir/formats.py derives the device shape), so reading takes the origin shape when the
layout differs from the origin format, and writing puts the device shape back.

What our TensorDesc has no field for (size, data_offset, real_dim_cnt, the desc's other attrs, and the
dumped device shape of a layout ir/formats.py does not model) is kept on the node as GE's own ONNX dump
names it: `output_desc_size:0`, `input_desc_attr_<name>:1`, ... (`desc_extras`); the writers put them back.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ge_core.frontend.ge.attrs import attr_value, set_attr
from ge_core.frontend.ge.ge_types import dtype_from_ge, dtype_to_ge, format_number
from ge_core.frontend.ge.layouts import pack, unpack
from ge_core.frontend.ge.vendor import ge_ir_pb2 as pb
from ge_core.ir import dtypes
from ge_core.ir.formats import DEVICE_FORMATS, device_shape
from ge_core.ir.tensor import TensorDesc

# desc attrs read into TensorDesc fields (or derived from them when written)
MAPPED_DESC_ATTRS = frozenset({"origin_format", "origin_shape", "origin_shape_initialized", "origin_format_for_int",
                               "format_for_int"})
EXTRA_FIELDS = ("size", "weight_size", "real_dim_cnt", "data_offset", "reuse_input", "reuse_input_index",
                "output_tensor", "input_tensor", "device_type", "cmps_size", "cmps_tab", "cmps_tab_offset", "name")
EXTRA_KEY = re.compile(r"^(input|output)_desc_(.+):(\d+)$")


def desc_from_proto(proto: pb.TensorDescriptor) -> TensorDesc:
    dtype = dtype_from_ge(pb.DataType.Name(proto.dtype) if proto.dtype in pb.DataType.values() else "")
    layout = proto.layout or "ND"
    ge_shape = tuple(int(d) for d in proto.shape.dim)
    attrs = proto.attr
    origin_format = _text(attrs["origin_format"].s) if "origin_format" in attrs else None
    initialized = attrs["origin_shape_initialized"].b if "origin_shape_initialized" in attrs \
        else "origin_shape" in attrs
    origin_shape = tuple(int(d) for d in attrs["origin_shape"].list.i) if initialized and "origin_shape" in attrs \
        else None
    if origin_shape is None and not initialized and origin_format == layout:
        origin_format = None  # what our writer writes for a desc that has no origin
    shape = origin_shape if origin_shape is not None and origin_format not in (None, layout) else ge_shape
    return TensorDesc(shape, dtype, layout, origin_shape, origin_format)


def desc_extras(proto: pb.TensorDescriptor, prefix: str, index: int, ours: TensorDesc) -> dict[str, Any]:
    """The node attrs holding what `ours` cannot: `<prefix>_desc_size:<index>`, ...; defaults left out."""
    extras: dict[str, Any] = {}
    for name in EXTRA_FIELDS:
        value = getattr(proto, name)
        if value:
            extras[f"{prefix}_desc_{name}:{index}"] = value
    dims = tuple(int(d) for d in proto.shape.dim)
    if dims != device_shape(ours.shape, ours.format):
        extras[f"{prefix}_desc_shape:{index}"] = list(dims)
    for key in proto.attr:
        if key not in MAPPED_DESC_ATTRS:
            extras[f"{prefix}_desc_attr_{key}:{index}"] = attr_value(proto.attr[key])
    return extras


def desc_to_proto(desc: TensorDesc, proto: pb.TensorDescriptor, extras: dict[str, Any] | None = None) -> None:
    """Fill `proto` as GE's GeTensorDescAsProto does (hicann/ge graph_metadef/graph/normal_graph/ge_tensor.cc)."""
    dims = device_shape(desc.shape, desc.format)
    proto.dtype = pb.DataType.Value(dtype_to_ge(desc.dtype))
    proto.layout = desc.format
    proto.shape.dim.extend(dims)
    proto.device_type = "NPU"
    proto.real_dim_cnt = len(dims)
    nbytes = _device_nbytes(desc)
    if nbytes:
        proto.size = -(-nbytes // 32) * 32  # GE aligns tensor sizes to 32 bytes
    origin_format = desc.origin_format or desc.format
    proto.attr["origin_format"].s = origin_format.encode()
    proto.attr["origin_format_for_int"].i = format_number(origin_format)
    proto.attr["format_for_int"].i = format_number(desc.format)
    proto.attr["origin_shape_initialized"].b = desc.origin_shape is not None
    if desc.origin_shape is not None:
        origin = proto.attr["origin_shape"].list
        origin.i.extend(desc.origin_shape)
        origin.val_type = pb.AttrDef.ListValue.VT_LIST_INT
    for key, value in (extras or {}).items():
        _put_extra(proto, key, value)


def _put_extra(proto: pb.TensorDescriptor, field: str, value: Any) -> None:
    if field == "shape":
        del proto.shape.dim[:]
        proto.shape.dim.extend(int(d) for d in value)
    elif field in EXTRA_FIELDS:
        setattr(proto, field, value)
    elif field.startswith("attr_"):
        set_attr(proto.attr[field.removeprefix("attr_")], value)


def split_extras(attrs: dict[str, Any]) -> tuple[dict[str, Any], dict[tuple[str, int], dict[str, Any]]]:
    """A node's attrs as (op attrs, {(input|output, index): {desc field: value}})."""
    plain: dict[str, Any] = {}
    extras: dict[tuple[str, int], dict[str, Any]] = {}
    for key, value in attrs.items():
        match = EXTRA_KEY.match(key)
        if match is None:
            plain[key] = value
        else:
            extras.setdefault((match.group(1), int(match.group(3))), {})[match.group(2)] = value
    return plain, extras


def _device_nbytes(desc: TensorDesc) -> int:
    if not desc.is_static or dtypes.dtype_info(desc.dtype) is None:
        return 0
    return desc.device_nbytes or 0


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


# ---- weights ---------------------------------------------------------------------------------------
def array_from_tensor(tensor: pb.TensorDef, origin_shape: tuple[int, ...] | None) -> np.ndarray | str:
    """The origin-layout array a Const's TensorDef holds, or why it cannot be decoded."""
    desc = tensor.desc
    dtype = dtype_from_ge(pb.DataType.Name(desc.dtype) if desc.dtype in pb.DataType.values() else "")
    npd = dtypes.numpy_dtype(dtype)
    if npd is None:
        return f"its data type {dtype} has no numeric array form"
    dims = tuple(int(d) for d in desc.shape.dim)
    expected = dtypes.packed_nbytes(int(np.prod(dims, dtype=np.int64)), dtype)
    if len(tensor.data) != expected:
        return f"its data holds {len(tensor.data)} bytes, its desc {dtype}{list(dims)} needs {expected}"
    array = dtypes.unpack(np.frombuffer(tensor.data, np.uint8), dtype, dims)
    layout = desc.layout or "ND"
    if layout not in DEVICE_FORMATS:
        return array
    origin = _origin_of(desc) or origin_shape
    logical = unpack(array, layout, origin) if origin is not None else None
    return logical if logical is not None else f"its data is in {layout}, which is not unpacked here"


def _origin_of(desc: pb.TensorDescriptor) -> tuple[int, ...] | None:
    if "origin_shape" in desc.attr:
        return tuple(int(d) for d in desc.attr["origin_shape"].list.i)
    return None


def tensor_from_array(array: np.ndarray, desc: TensorDesc, tensor: pb.TensorDef) -> None:
    """A Const's weights as GE stores them: the data in the desc's layout (FRACTAL_Z weights packed)."""
    device = pack(array, desc.format) if desc.format in DEVICE_FORMATS else None
    stored = array if device is None else device
    desc_to_proto(desc if device is not None else TensorDesc(desc.shape, desc.dtype, _host_format(desc),
                                                             desc.origin_shape, desc.origin_format), tensor.desc)
    tensor.data = dtypes.pack(np.ascontiguousarray(stored)).tobytes()


def _host_format(desc: TensorDesc) -> str:
    return desc.format if desc.format not in DEVICE_FORMATS else (desc.origin_format or "ND")
