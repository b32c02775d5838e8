"""GE's own graph dumps in and out: `ge_proto_*.txt` (GE's ModelDef as protobuf text, schema ge_ir.proto
vendored beside this file), `ge_onnx_*.pbtxt` (an ONNX ModelProto whose nodes are `ge:` ops) and a dump
folder or zip of them, read into our GE Graph; and our own graphs written in both forms.

    read_ge_file(path_or_bytes, name)  one dump file -> ImportResult (graph + problems)
    read_dump(folder_or_zip)            every stage of every graph, ordered by sequence number
    write_ge_proto(graph, out)          a graph as ge_proto text, streamed op by op
    write_ge_onnx(graph, out)           a graph as ge_onnx text, streamed node by node
"""

from ge_core.frontend.ge.dump_files import DumpFile, DumpStage, GeDump, import_ge_dump, parse_name, read_dump
from ge_core.frontend.ge.onnx_writer import write_ge_onnx
from ge_core.frontend.ge.proto_writer import write_ge_proto
from ge_core.frontend.ge.reader import read_ge_file

__all__ = ["DumpFile", "DumpStage", "GeDump", "import_ge_dump", "parse_name", "read_dump", "read_ge_file",
           "write_ge_onnx", "write_ge_proto"]
