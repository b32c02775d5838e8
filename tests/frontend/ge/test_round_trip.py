"""Our graphs written in GE's ge_proto and ge_onnx forms and read back give the same graph; the two forms of
one graph give the same GE Graph."""

from __future__ import annotations

import io
from collections.abc import Callable

import numpy as np
import pytest

from ge_core.frontend.ge.onnx_writer import write_ge_onnx
from ge_core.frontend.ge.proto_writer import write_ge_proto
from ge_core.frontend.ge.reader import read_ge_file
from ge_core.ir.graph import Graph
from tests.frontend.ge.helpers import compiled_npu, signature


def _read_back(graph: Graph, level: int, write: Callable[..., int], file_name: str) -> Graph:
    """`graph` written by `write` at `level`, read back from a file named as GE names that form's dumps."""
    out = io.StringIO()
    write(graph, out, level=level)
    result = read_ge_file(out.getvalue().encode(), file_name)
    assert result.problems == []
    return result.graph


def _proto(graph: Graph, level: int) -> Graph:
    return _read_back(graph, level, write_ge_proto, "ge_proto_00000000_graph_1_Build.txt")


def _onnx(graph: Graph, level: int) -> Graph:
    return _read_back(graph, level, write_ge_onnx, "ge_onnx_00000000_graph_1_Build.pbtxt")


@pytest.mark.parametrize("stage", ["input", "build"])
def test_ge_proto_round_trip_gives_the_same_graph_with_weights(stage: str) -> None:
    compiled = compiled_npu()
    graph = compiled.input_graph if stage == "input" else compiled.graph
    back = _proto(graph, level=1)
    assert signature(back) == signature(graph)
    for name, array in graph.constants.items():  # FRACTAL_Z weights packed and unpacked exactly
        np.testing.assert_array_equal(back.constants[name], array)
    assert back.metadata["ge_weights"] == "present"


def test_ge_onnx_and_ge_proto_of_one_graph_give_the_same_graph() -> None:
    graph = compiled_npu().graph
    from_proto, from_onnx = _proto(graph, level=1), _onnx(graph, level=1)
    assert signature(from_onnx) == signature(from_proto) == signature(graph)
    for name, array in from_proto.constants.items():
        np.testing.assert_array_equal(from_onnx.constants[name], array)


def test_level_2_leaves_weights_out_without_allocating_them() -> None:
    graph = compiled_npu().graph
    back = _proto(graph, level=2)
    assert back.metadata["ge_weights"] == "absent"
    assert signature(back) == signature(graph)  # descs and structure all there
    weight = next(a for a in back.constants.values() if a.ndim == 4)
    assert weight.strides == (0, 0, 0, 0) and not weight.flags.writeable  # a zero view, nothing allocated


def test_level_3_ge_onnx_is_structure_only() -> None:
    graph = compiled_npu().graph
    back = _onnx(graph, level=3)
    assert [(n.name, n.op_type) for n in back.nodes] == [(n.name, n.op_type) for n in graph.nodes]
    assert {back.desc(t).dtype for n in back.nodes for t in n.outputs} == {"undefined"}


def test_fused_nodes_name_their_originals() -> None:
    graph = compiled_npu().graph
    fused = next(n for n in graph.nodes if n.body is not None)
    back = _proto(graph, level=2)
    assert back.node(fused.name).attrs["_datadump_original_op_names"] == [n.name for n in fused.body.nodes]
