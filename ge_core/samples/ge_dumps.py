"""GE graph dump samples, made from our own compiles by the ge_proto writer (nothing large is committed):

- `ge_resnet50_build`: the Build-stage ge_proto dump (DUMP_GE_GRAPH=2: no weights) of resnet50 compiled at O3
  and lowered for the Ascend 310: 171 ops (60 kernels, 109 Const, Data, NetOutput) with TransData and
  NC1HWC0 / FRACTAL_Z descs, ~300 KB of text, as GE names it (ge_proto_<seq>_graph_<id>_Build.txt).
"""

from __future__ import annotations

import functools
import io

from ge_core.compiler import compile as ge_compile
from ge_core.config import CompileConfig
from ge_core.frontend.ge.proto_writer import write_ge_proto

# sample name -> (title, description, source sample, dump file name)
GE_DUMPS: dict[str, tuple[str, str, str, str]] = {
    "ge_resnet50_build": (
        "ResNet-50 GE Build dump (ge_proto, 171 ops)",
        "The Build-stage ge_proto dump of resnet50 compiled at O3 for the Ascend 310 (our compile written in "
        "GE's own dump form, DUMP_GE_GRAPH=2): TransData, NC1HWC0 and FRACTAL_Z descs, fused ops naming their "
        "originals in _datadump_original_op_names.", "resnet50", "ge_proto_00000003_graph_1_Build.txt"),
}


def dump_file_name(name: str) -> str:
    return GE_DUMPS[name][3]


def dump_source(name: str) -> str:
    """The sample GE dump sample `name` was compiled from (resnet50 for ge_resnet50_build)."""
    return GE_DUMPS[name][2]


@functools.lru_cache(maxsize=2)
def ge_dump_bytes(name: str, model: bytes) -> bytes:
    """The dump text of GE dump sample `name`, from `model` (its source sample's ONNX bytes)."""
    compiled = ge_compile(model, CompileConfig(opt_level="O3", hardware="ascend310"), cache=None)
    out = io.StringIO()
    write_ge_proto(compiled.graph, out, level=2, model_name=GE_DUMPS[name][2])
    return out.getvalue().encode("utf-8")
