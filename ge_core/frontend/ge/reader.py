"""One GE dump file -> our GE Graph: `read_ge_file` takes a path or the file's bytes."""

from __future__ import annotations

import os

import onnx

from ge_core.frontend.ge.onnx_form import model_def_from_onnx
from ge_core.frontend.ge.proto_reader import import_model_def
from ge_core.frontend.ge.text_input import Kind, decode, parse, read_file_bytes, sniff_kind
from ge_core.frontend.ge.vendor import ge_ir_pb2 as pb
from ge_core.frontend.onnx import ImportResult

GE_SUFFIXES = (".txt", ".pbtxt")


def is_ge_dump_name(name: str) -> bool:
    """True for the names GE gives its graph dumps (ge_proto_*.txt, ge_onnx_*.pbtxt)."""
    base = os.path.basename(name)
    return base.startswith(("ge_proto", "ge_onnx")) and base.endswith(GE_SUFFIXES)


def read_ge_file(source: str | os.PathLike[str] | bytes, name: str = "", kind: Kind | None = None) -> ImportResult:
    """A ge_proto or ge_onnx dump file (path, or its bytes with `name` for messages and the kind)."""
    what = name or (os.fspath(source) if not isinstance(source, bytes) else "<bytes>")
    data = source if isinstance(source, bytes) else read_file_bytes(source)
    text = decode(data, what)
    return read_ge_text(text, what, kind or sniff_kind(text, what))


def read_ge_text(text: str, what: str, kind: Kind) -> ImportResult:
    message = parse(text, kind, what)
    if kind == "ge_onnx":
        assert isinstance(message, onnx.ModelProto)
        model = model_def_from_onnx(message, what)
    else:
        assert isinstance(message, pb.ModelDef)
        model = message
    result = import_model_def(model, os.path.basename(what))
    result.graph.metadata["ge_form"] = kind
    return result
