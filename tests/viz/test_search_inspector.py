"""find_nodes (search) and node_details (the inspector), fused bodies included."""

from __future__ import annotations

import pytest

from ge_core.viz.inspector import node_details
from ge_core.viz.node_index import SEP, ancestors, index_nodes, top_level
from ge_core.viz.search import find_nodes
from tests.viz.graphs import conv_net, fused_net


def test_index_names_body_nodes_by_path() -> None:
    index = index_nodes(fused_net())
    assert list(index) == ["relu1", f"relu1{SEP}conv1", f"relu1{SEP}relu1", "pool", "sig"]
    inner = index[f"relu1{SEP}relu1"]
    assert inner.parent == "relu1" and inner.depth == 1 and inner.node.op_type == "Relu"
    assert top_level(inner.ref) == "relu1" and ancestors(inner.ref) == ["relu1"]


def test_search_by_op_type_first_then_names() -> None:
    g = fused_net()
    assert [(h.ref, h.why) for h in find_nodes(g, "relu")] == [
        (f"relu1{SEP}relu1", "op type"), ("relu1", "name")]
    assert [h.ref for h in find_nodes(g, "CONV")] == [f"relu1{SEP}conv1", "relu1"]  # exact type, then FusedConv
    assert [h.ref for h in find_nodes(g, "oo")] == ["pool"]
    assert find_nodes(g, "  ") == [] and find_nodes(g, "nothing like it") == []
    assert len(find_nodes(conv_net(), "o", limit=2)) == 2


def test_inspector_lists_attrs_tensor_descs_and_neighbours() -> None:
    d = node_details(conv_net(), "conv1")
    assert (d.op_type, d.category, d.parent, d.fused) == ("Conv", "cube", None, False)
    assert d.attrs == [{"attribute": "pads", "value": "[1, 1, 1, 1]"}]
    assert [(r["slot"], r["tensor"], r["kind"], r["shape"], r["dtype"], r["format"]) for r in d.inputs] == [
        ("X", "x", "graph input", "[1, 3, 8, 8]", "float32", "ND"),
        ("W", "W", "constant", "[4, 3, 3, 3]", "float32", "NCHW"),
        ("B", "B", "constant", "[4]", "float32", "ND")]
    assert d.outputs[0]["consumers"] == "bn1" and d.outputs[0]["graph output"] == ""
    assert d.producers == [] and d.consumers == ["bn1"]
    assert d.text.startswith("%c = Conv(%x, %W, %B)")
    sig = node_details(conv_net(), "sig")
    assert sig.producers == ["relu1"] and sig.outputs[0]["graph output"] == "yes"


def test_inspector_of_a_fused_node_and_of_a_node_in_its_body() -> None:
    g = fused_net()
    fused = node_details(g, "relu1")
    assert fused.fused and fused.op_type == "FusedConv" and fused.domain == "ge"
    assert [(r["node"], r["op"], r["outputs"]) for r in fused.body] == [
        ("conv1", "Conv", "f32[1,4,8,8]"), ("relu1", "Relu", "f32[1,4,8,8]")]
    assert fused.consumers == ["pool", "sig"]
    conv = node_details(g, f"relu1{SEP}conv1")
    assert conv.parent == "relu1" and conv.consumers == [f"relu1{SEP}relu1"]
    assert conv.inputs[0]["kind"] == "graph input" and conv.inputs[1]["kind"] == "constant"
    relu = node_details(g, f"relu1{SEP}relu1")
    assert relu.producers == [f"relu1{SEP}conv1"] and relu.consumers == ["pool", "sig"]  # out of the body
    with pytest.raises(KeyError):
        node_details(g, "conv1")  # only inside the body now
