"""Reading a dump file safely: its size checked before a byte is read, its text parsed by protobuf's
text_format into GE's ModelDef (ge_proto_*.txt) or ONNX's ModelProto (ge_onnx_*.pbtxt), every failure a
ModelError that names the file and, for a parse error, the line and column text_format reports.

A file that is not the schema its name says (an ONNX text model named ge_proto_*, TensorFlow's pbtxt, a
truncated or garbled file) fails the parse at the first field that does not belong, and the message says so.
"""

from __future__ import annotations

import os
import stat
from typing import Literal

import onnx
from google.protobuf import text_format
from google.protobuf.message import Message

from ge_core.errors import ModelError, ResourceLimitError, quote
from ge_core.frontend.ge.vendor import ge_ir_pb2 as pb
from ge_core.ir.limits import human_bytes

Kind = Literal["ge_proto", "ge_onnx"]
# One dump file larger than this is refused before it is read (text parsing takes several times its size in
# memory). GE_MAX_DUMP_BYTES overrides (bytes).
DEFAULT_MAX_DUMP_BYTES = 1 << 30
HINT_SIZE = ("Open a smaller stage (DUMP_GRAPH_LEVEL=3 keeps only Build), dump without weights (DUMP_GE_GRAPH=2), "
             "or raise GE_MAX_DUMP_BYTES if the machine has the memory.")


def max_dump_bytes() -> int:
    raw = os.environ.get("GE_MAX_DUMP_BYTES", "")
    return int(raw) if raw.isdigit() else DEFAULT_MAX_DUMP_BYTES


def check_size(what: str, size: int, limit: int | None = None) -> None:
    limit = max_dump_bytes() if limit is None else limit
    if size > limit:
        raise ResourceLimitError(f"dump file {quote(what)} is {human_bytes(size)}, over the {human_bytes(limit)} "
                                 "limit per dump file; it was not read.", hint=HINT_SIZE)


def read_file_bytes(path: str | os.PathLike[str]) -> bytes:
    """A regular file's bytes, its size checked first (no FIFO, no device: fstat of the open descriptor)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        raise ModelError(f"cannot open dump file {quote(os.fspath(path))}: {err.strerror}.") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ModelError(f"{quote(os.fspath(path))} is not a regular file.")
        check_size(os.fspath(path), info.st_size)
        return handle.read(info.st_size + 1)[: info.st_size]


def decode(data: bytes, what: str) -> str:
    check_size(what, len(data))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ModelError(f"dump file {quote(what)} is not text: byte {err.start} is not UTF-8 "
                         f"({data[err.start:err.start + 1]!r}).",
                         hint="GE writes its dumps as protobuf text (ge_proto_*.txt, ge_onnx_*.pbtxt); a binary "
                              "file (an .om, an .onnx) opens elsewhere.") from None


def parse(text: str, kind: Kind, what: str) -> Message:
    """`text` parsed into a ModelDef (ge_proto) or ModelProto (ge_onnx), or a ModelError naming line:column."""
    message: Message = pb.ModelDef() if kind == "ge_proto" else onnx.ModelProto()
    schema = "GE's ModelDef (ge_ir.proto)" if kind == "ge_proto" else "an ONNX ModelProto (ge_onnx)"
    try:
        text_format.Parse(text, message, allow_unknown_extension=False)
    except text_format.ParseError as err:
        where = f"{err.GetLine()}:{err.GetColumn()}" if err.GetLine() else "?"
        raise ModelError(f"dump file {quote(what)} line {where}: not {schema} text: {_reason(err)}.",
                         hint=_parse_hint(kind)) from None
    except RecursionError:
        raise ModelError(f"dump file {quote(what)}: messages nested too deeply to parse.",
                         hint="A GE dump nests a few levels; this file was not written by GE.") from None
    return message


def sniff_kind(text: str, name: str) -> Kind:
    """ge_proto or ge_onnx, from the file name GE gives it, else from the text."""
    base = os.path.basename(name)
    if base.startswith("ge_onnx") or base.endswith(".pbtxt"):
        return "ge_onnx"
    if base.startswith("ge_proto"):
        return "ge_proto"
    head = text[:65536]
    return "ge_onnx" if ("op_type:" in head or "ir_version:" in head) else "ge_proto"


def _reason(err: text_format.ParseError) -> str:
    message = str(err)
    parts = message.split(" : ", 1)  # "12:3 : Message type ... has no field named ..."
    return parts[-1].strip()


def _parse_hint(kind: Kind) -> str:
    if kind == "ge_proto":
        return ("A GE graph dump (ge_proto_<seq>_graph_<id>_<stage>.txt) is ModelDef text; a truncated copy ends "
                "mid-message: dump the stage again or copy the whole file.")
    return ("A GE ONNX dump (ge_onnx_<seq>_graph_<id>_<stage>.pbtxt) is ModelProto text; a truncated copy ends "
            "mid-message: dump the stage again or copy the whole file.")
