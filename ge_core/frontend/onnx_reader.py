"""Reading ONNX bytes safely: size checks before reading, and external data under strict rules.

- From **bytes** (the upload path) no tensor may be marked external, anywhere in the model: the server's
  files are never read on behalf of an upload.
- From a **path**, external data is read only from regular files inside the model's own folder: no
  absolute locations, no `..`, no symlinks, offsets and lengths within the file and matching the
  tensor's size, every size checked before a byte is read (external_data.py).
- Every text field of the model (names, types, domains) must be valid UTF-8: protobuf hands invalid text
  over as bytes, which would surface much later as a confusing failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import onnx
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message
from onnx import TensorProto

from ge_core.errors import ModelError, ResourceLimitError, quote
from ge_core.frontend.external_data import external_files
from ge_core.ir.dtypes import onnx_dtype_name
from ge_core.ir.limits import MAX_MODEL_BYTES

_HINT_EXPORT = "Re-export the model, or check the file was copied completely."


def read_model(source: str | os.PathLike[str] | bytes) -> onnx.ModelProto:
    """Parse a model from a path or from bytes, with external data resolved safely (paths only)."""
    if isinstance(source, bytes | bytearray | memoryview):
        model = parse_model(bytes(source), "uploaded bytes")
        named = [quote(t.name or "<unnamed>") for t in iter_tensors(model) if _is_external(t)]
        if named:
            raise ModelError(
                f"the uploaded model marks {len(named)} tensor(s) as external data "
                f"({', '.join(named[:5])}); uploads may not reference files.",
                hint="Save the model with all tensors inside the file (onnx.save with "
                     "save_as_external_data=False) and upload that.")
        return model
    path = Path(source)
    if not path.is_file():
        raise ModelError(f"model file {quote(path)} does not exist or is not a file.")
    size = path.stat().st_size
    if size > MAX_MODEL_BYTES:
        raise ResourceLimitError(f"model file {quote(path)} is {size} bytes, over the {MAX_MODEL_BYTES}-byte "
                                 "limit for one protobuf.", hint="Save large weights as external data.")
    model = parse_model(path.read_bytes(), quote(path))
    external = [t for t in iter_tensors(model) if _is_external(t)]
    if external:
        with external_files(path.resolve().parent) as files:
            for tensor in external:
                files.read(tensor, tensor_dtype_name(tensor.data_type))
    return model


def parse_model(data: bytes, origin: str) -> onnx.ModelProto:
    if not data:
        raise ModelError(f"{origin} is empty: there is no ONNX model to read.", hint=_HINT_EXPORT)
    if len(data) > MAX_MODEL_BYTES:
        raise ResourceLimitError(f"{origin} is {len(data)} bytes, over the {MAX_MODEL_BYTES}-byte limit.")
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise ModelError(f"{origin} is not a valid ONNX model: protobuf decoding failed ({exc}); the data "
                         "is corrupt, truncated or not ONNX at all.", hint=_HINT_EXPORT) from None
    if not model.HasField("graph") or (not model.graph.node and not model.graph.output):
        raise ModelError(f"{origin} decodes but holds no ONNX graph (no nodes, no outputs): it is "
                         "probably not an ONNX file, or it is truncated.", hint=_HINT_EXPORT)
    bad_text = list(_invalid_text(model, "model"))
    if bad_text:
        raise ModelError(f"{origin} holds {len(bad_text)} text field(s) that are not valid UTF-8:",
                         problems=bad_text[:20], hint="Names in an ONNX model must be UTF-8; re-export it.")
    return model


def iter_tensors(model: onnx.ModelProto) -> Iterator[TensorProto]:
    """Every TensorProto in the model, wherever one can sit: initializers, sparse initializers, node
    attributes (t, tensors, sparse_tensor, sparse_tensors), subgraphs, functions and training graphs."""
    yield from _graph_tensors(model.graph)
    for function in model.functions:
        yield from _node_tensors(function.node)
    for info in model.training_info:
        yield from _graph_tensors(info.initialization)
        yield from _graph_tensors(info.algorithm)


def _graph_tensors(graph: onnx.GraphProto) -> Iterator[TensorProto]:
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield from (sparse.values, sparse.indices)
    yield from _node_tensors(graph.node)


def _node_tensors(nodes: Iterable[onnx.NodeProto]) -> Iterator[TensorProto]:
    for node in nodes:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            sparse = [attr.sparse_tensor] if attr.HasField("sparse_tensor") else []
            for s in [*sparse, *attr.sparse_tensors]:
                yield from (s.values, s.indices)
            if attr.HasField("g"):
                yield from _graph_tensors(attr.g)
            for g in attr.graphs:
                yield from _graph_tensors(g)


def _is_external(tensor: TensorProto) -> bool:
    return tensor.HasField("data_location") and tensor.data_location == TensorProto.EXTERNAL


def _invalid_text(message: Message, where: str) -> Iterator[str]:
    """Where a string field holds bytes (protobuf's way of handing over text that is not UTF-8)."""
    for descriptor, value in message.ListFields():
        path = f"{where}.{descriptor.name}"
        if descriptor.type == FieldDescriptor.TYPE_STRING:
            values = value if _repeated(descriptor) else [value]
            for i, text in enumerate(values):
                if isinstance(text, bytes):
                    index = f"[{i}]" if _repeated(descriptor) else ""
                    yield f"{path}{index} is {text[:40]!r}"
        elif descriptor.type == FieldDescriptor.TYPE_MESSAGE:
            items = value if _repeated(descriptor) else [value]
            for i, item in enumerate(items):
                yield from _invalid_text(item, f"{path}[{i}]" if _repeated(descriptor) else path)


def _repeated(descriptor: FieldDescriptor) -> bool:
    repeated = getattr(descriptor, "is_repeated", None)  # protobuf >= 6; older ones only have `label`
    return bool(descriptor.label == FieldDescriptor.LABEL_REPEATED if repeated is None else repeated)


def tensor_dtype_name(code: int) -> str | None:
    """The IR's dtype name of an ONNX data type code (ge_core/ir/dtypes.py); None for UNDEFINED and codes
    this table does not know."""
    return onnx_dtype_name(code)


def decoded(value: Any) -> Any:
    """An attribute value with its text as str: protobuf hands STRING and STRINGS values over as bytes."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list):
        return [decoded(v) for v in value]
    return value
