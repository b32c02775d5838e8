"""Reading ONNX bytes safely: size checks before reading, and external data under strict rules.

- From **bytes** (the upload path) no tensor may be marked external, anywhere in the model: the server's
  files are never read on behalf of an upload.
- From a **path**, external data is read only from regular files inside the model's own folder: no
  absolute locations, no `..`, no symlinks, offsets and lengths within the file and matching the
  tensor's size.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError
from onnx import TensorProto

from ge_core.errors import ModelError, ResourceLimitError
from ge_core.ir.limits import MAX_MODEL_BYTES, check_tensor_size
from ge_core.ir.tensor import dtype_itemsize

_HINT_EXPORT = "Re-export the model, or check the file was copied completely."


def read_model(source: str | os.PathLike[str] | bytes) -> onnx.ModelProto:
    """Parse a model from a path or from bytes, with external data resolved safely (paths only)."""
    if isinstance(source, bytes | bytearray | memoryview):
        model = parse_model(bytes(source), "uploaded bytes")
        external = [t.name or "<unnamed>" for t in iter_tensors(model) if _is_external(t)]
        if external:
            raise ModelError(
                f"the uploaded model marks {len(external)} tensor(s) as external data "
                f"({', '.join(external[:5])}); uploads may not reference files.",
                hint="Save the model with all tensors inside the file (onnx.save with "
                     "save_as_external_data=False) and upload that.")
        return model
    path = Path(source)
    if not path.is_file():
        raise ModelError(f"model file '{path}' does not exist or is not a file.")
    size = path.stat().st_size
    if size > MAX_MODEL_BYTES:
        raise ResourceLimitError(f"model file '{path}' is {size} bytes, over the {MAX_MODEL_BYTES}-byte "
                                 "limit for one protobuf.", hint="Save large weights as external data.")
    model = parse_model(path.read_bytes(), f"'{path}'")
    for tensor in iter_tensors(model):
        if _is_external(tensor):
            _load_external(tensor, path.resolve().parent)
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
    return model


def iter_tensors(model: onnx.ModelProto) -> Iterator[TensorProto]:
    """Every TensorProto in the model: initializers and attribute tensors, subgraphs included."""
    yield from _graph_tensors(model.graph)


def _graph_tensors(graph: onnx.GraphProto) -> Iterator[TensorProto]:
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield sparse.values
        yield sparse.indices
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            if attr.HasField("sparse_tensor"):
                yield attr.sparse_tensor.values
                yield attr.sparse_tensor.indices
            if attr.HasField("g"):
                yield from _graph_tensors(attr.g)
            for g in attr.graphs:
                yield from _graph_tensors(g)


def _is_external(tensor: TensorProto) -> bool:
    return tensor.HasField("data_location") and tensor.data_location == TensorProto.EXTERNAL


def _load_external(tensor: TensorProto, base: Path) -> None:
    info = {e.key: e.value for e in tensor.external_data}
    name = tensor.name or "<unnamed>"
    location = info.get("location", "")
    target = _safe_location(name, location, base)
    offset = _int_field(name, info, "offset", 0)
    file_size = target.stat().st_size
    expected = _expected_bytes(tensor)
    length = _int_field(name, info, "length", file_size - offset)
    if offset < 0 or length < 0 or offset + length > file_size:
        raise ModelError(f"tensor '{name}': external data range offset={offset} length={length} lies "
                         f"outside '{location}' ({file_size} bytes).", hint=_HINT_EXPORT)
    if expected is not None and length != expected:
        raise ModelError(f"tensor '{name}': external data holds {length} bytes but dims {list(tensor.dims)} "
                         f"need {expected}.", hint=_HINT_EXPORT)
    with open(target, "rb") as f:
        f.seek(offset)
        tensor.raw_data = f.read(length)
    tensor.data_location = TensorProto.DEFAULT
    del tensor.external_data[:]


def _safe_location(name: str, location: str, base: Path) -> Path:
    refuse = f"tensor '{name}': external data location '{location}'"
    rel = Path(location)
    if not location or rel.is_absolute() or location.startswith(("/", "\\")) or ":" in location:
        raise ModelError(f"{refuse} is not a relative file name inside the model's folder.",
                         hint="External data must sit beside the model file.")
    if any(part == ".." for part in rel.parts):
        raise ModelError(f"{refuse} leaves the model's folder ('..').",
                         hint="External data must sit beside the model file.")
    current = base
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            raise ModelError(f"{refuse} goes through a symbolic link ('{current.name}'), which is refused.",
                             hint="Copy the data file itself next to the model.")
    try:
        mode = current.stat().st_mode
    except OSError:
        raise ModelError(f"{refuse} does not exist next to the model.",
                         hint="Copy the external data file beside the model.") from None
    if not stat.S_ISREG(mode) or not current.resolve().is_relative_to(base):
        raise ModelError(f"{refuse} is not a regular file inside the model's folder.")
    return current


def _int_field(name: str, info: dict[str, str], key: str, default: int) -> int:
    if key not in info:
        return default
    try:
        return int(info[key])
    except ValueError:
        raise ModelError(f"tensor '{name}': external data {key} '{info[key]}' is not an integer.") from None


def _expected_bytes(tensor: TensorProto) -> int | None:
    dtype = tensor_dtype_name(tensor.data_type)
    if dtype is None or dtype == "str":
        return None
    if any(d < 0 for d in tensor.dims):
        raise ModelError(f"tensor '{tensor.name}' has a negative dim in {list(tensor.dims)}.")
    check_tensor_size(f"tensor '{tensor.name}'", list(tensor.dims), dtype)
    return math.prod(tensor.dims) * dtype_itemsize(dtype)


def tensor_dtype_name(code: int) -> str | None:
    """Numpy dtype name of an ONNX data type code; None when numpy cannot hold it."""
    if code == TensorProto.STRING:
        return "str"
    if code == TensorProto.BFLOAT16:
        return "bfloat16"
    try:
        import numpy as np

        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(code)).name
    except (KeyError, TypeError, ValueError):
        return None
