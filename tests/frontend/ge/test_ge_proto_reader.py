"""A hand-checked ge_proto dump (tests/frontend/ge/data): every field that carries meaning read, every AttrDef
kind decoded, a control edge, a subgraph, a fused op's originals and an op type our registry does not know."""

from __future__ import annotations

from pathlib import Path

from ge_core.frontend.ge.attrs import AttrDataType, NamedAttrs
from ge_core.frontend.ge.reader import read_ge_file
from ge_core.frontend.ge.vendor.ge_ir_pb2 import TensorDescriptor

DATA = Path(__file__).parent / "data"
HAND = DATA / "ge_proto_00000007_graph_1_PreRunAfterOptimizeSubgraph.txt"


def test_descs_take_the_origin_shape_and_keep_the_layout() -> None:
    graph = read_ge_file(HAND).graph
    x = graph.desc("x")
    assert (x.shape, x.dtype, x.format, x.origin_format, x.origin_shape) == \
        ((1, 3, 4, 4), "float16", "NC1HWC0", "NCHW", (1, 3, 4, 4))
    assert x.device_shape == (1, 1, 4, 4, 16)  # ir/formats.py gives back what GE dumped


def test_every_attr_kind_is_read() -> None:
    node = read_ge_file(HAND).graph.node("fused")
    attrs = node.attrs
    assert attrs["_datadump_original_op_names"] == ["conv1", "relu1"]
    assert attrs["a_float"] == 0.5 and attrs["a_bool"] is True and attrs["a_bytes"] == b"\x01\x02"
    assert attrs["a_dt"] == AttrDataType(1)
    assert attrs["a_floats"] == [1.5, 2.5] and attrs["a_list_list_int"] == [[1, 2], [3]]
    assert attrs["a_func"] == NamedAttrs("GraphOptions", {"ge.exec.precision_mode": "allow_fp32_to_fp16"})
    assert isinstance(attrs["a_td"], TensorDescriptor)
    assert attrs["id"] == 1 and attrs["stream_id"] == 2
    assert attrs["output_desc_attr__datadump_origin_name:0"] == "relu1"  # a desc's own attrs, GE's ONNX name


def test_unknown_op_types_are_kept_not_refused() -> None:
    result = read_ge_file(HAND)
    assert result.ok
    node = result.graph.node("fused")
    assert (node.op_type, node.domain) == ("MysteryFusedOp", "ge")
    assert "MysteryFusedOp" in result.graph.metadata["ge_unmapped_ops"]


def test_control_edges_and_subgraphs() -> None:
    graph = read_ge_file(HAND).graph
    call = graph.node("call")
    assert call.inputs == ("fused:0",) and call.control_inputs == ("fused",)  # x is a graph input, not a node
    body = call.subgraphs["f"]
    assert body.inputs == ["arg0"] and [n.op_type for n in body.nodes] == ["Relu"] and body.outputs == ["relu:0"]
    assert graph.outputs == ["call:0"]


def test_summary_counts_the_ops_as_the_file_lists_them() -> None:
    text = HAND.read_text()
    first = text.index("\ngraph {")
    main = text[first: text.index("\ngraph {", first + 1)]  # the main graph; its subgraph follows
    direct = main.count("\n  op {")
    graph = read_ge_file(HAND).graph
    assert graph.metadata["ge_ops"] == \
        '{"Data": 1, "MysteryFusedOp": 1, "NetOutput": 1, "PartitionedCall": 1}' and direct == 4
