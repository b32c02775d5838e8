"""canvas_graph against the GE Graph it draws: ids, labels, edges, constants, metadata, fused bodies, the
pass's marks and the fusion decisions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ge_core
from ge_core.ir import Graph
from ge_core.passes.infra.base import FusionDecision
from ge_core.samples.registry import sample_bytes
from ge_core.viz import canvas_graph, canvas_graphs, diff_graphs, graphs_around
from ge_core.viz.diff_style import DIFF_BORDER, DIFF_FILL
from tests.viz.graphs import conv_net, f32, fused_net


def nodes_by_id(graph_json: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["id"]: n for n in graph_json["nodes"]}


def attrs(node: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: a["value"] for a in node["attrs"]}


def meta(items: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    return {m["id"]: {a["key"]: a["value"] for a in m["attrs"]} for m in items}


def check_edges(graph: Graph, graph_json: dict[str, Any], outer: Graph | None = None) -> None:
    """Every data edge of the GE Graph, and nothing else, with its output and input indices: from the
    producing node or the graph input item; constants (a body's: those of the graph `outer` around it)
    draw no edge."""
    items = nodes_by_id(graph_json)
    constants = {*graph.constants, *(outer.constants if outer is not None else ())}
    for node in graph.nodes:
        want = []
        for i, t in enumerate(node.inputs):
            if not t or t in constants:
                continue
            producer = graph.producer(t)
            source = (producer.name, str(producer.outputs.index(t))) if producer else (f"input:{t}", "0")
            want.append({"sourceNodeId": source[0], "sourceNodeOutputId": source[1], "targetNodeInputId": str(i)})
        assert items[node.name]["incomingEdges"] == want, node.name
    for t in graph.outputs:
        producer = graph.producer(t)
        assert items[f"output:{t}"]["incomingEdges"] == [
            {"sourceNodeId": producer.name if producer else f"input:{t}",
             "sourceNodeOutputId": str(producer.outputs.index(t)) if producer else "0", "targetNodeInputId": "0"}]


def split_net() -> Graph:
    """A Split whose second output feeds the first input of an Add (output and input indices differ)."""
    g = Graph("split")
    g.add_input("x", f32(1, 8))
    g.add_constant("parts", np.array([4, 4], np.int64))
    g.add_node("Split", ["x", "parts"], ["a", "b"], {"axis": 1}, name="split", descs=[f32(1, 4), f32(1, 4)])
    g.add_node("Add", ["b", "a"], ["y"], name="add", descs=[f32(1, 4)])
    g.set_outputs(["y", "x"])  # a graph input that is also an output
    return g


def test_one_item_per_node_named_as_the_node_plus_inputs_and_outputs() -> None:
    g = conv_net()
    items = canvas_graph(g, "g")["nodes"]
    ids = [n["id"] for n in items]
    assert ids == ["input:x", *(n.name for n in g.nodes), "output:y", "output:z"]
    assert [n["label"] for n in items] == ["Input", *(n.op_type for n in g.nodes), "Output", "Output"]
    assert not {"W", "B", "scale"} & set(ids)  # constants are not items


def test_edges_follow_the_graph() -> None:
    for g in (conv_net(), split_net()):
        check_edges(g, canvas_graph(g, "g"))
    add = nodes_by_id(canvas_graph(split_net(), "g"))["add"]
    assert add["incomingEdges"][0] == {"sourceNodeId": "split", "sourceNodeOutputId": "1", "targetNodeInputId": "0"}


def test_edges_follow_real_models() -> None:
    compiled = ge_core.compile(sample_bytes("transformer_encoder"), input_shapes="hidden:1,12,64;mask:1,12")
    for g in (compiled.input_graph, compiled.graph):
        check_edges(g, canvas_graph(g, "g"))


def test_constants_are_listed_on_their_readers_and_tensors_described() -> None:
    items = nodes_by_id(canvas_graph(conv_net(), "g"))
    conv = items["conv1"]
    assert attrs(conv)["W (constant)"] == "W: f32[4,3,3,3]"
    assert attrs(conv)["pads"] == "[1, 1, 1, 1]" and attrs(conv)["op"] == "Conv" and attrs(conv)["name"] == "conv1"
    assert attrs(conv)["category"] == "cube"
    inputs = meta(conv["inputsMetadata"])
    assert inputs["0"] == {"__tensor_tag": "X", "tensor_name": "x", "shape": "[1,3,8,8]", "dtype": "float32",
                           "format": "ND", "producer": "graph input"}
    assert inputs["1"]["producer"] == "constant" and inputs["1"]["__tensor_tag"] == "W"
    relu = meta(items["relu1"]["outputsMetadata"])["0"]
    assert relu["tensor_name"] == "r" and relu["consumers"] == "pool, sig" and relu["shape"] == "[1,4,8,8]"
    assert meta(items["pool"]["outputsMetadata"])["0"]["graph output"] == "yes"
    assert meta(items["input:x"]["outputsMetadata"])["0"]["consumers"] == "conv1"


def test_a_scalar_constant_shows_its_value_and_arrays_are_summarised() -> None:
    g = Graph("g")
    g.add_input("x", f32(1, 4))
    g.add_constant("eps", np.array(1e-5, np.float32))
    g.add_node("Add", ["x", "eps"], ["y"], {"table": np.arange(100, dtype=np.float32)}, name="add",
               descs=[f32(1, 4)])
    g.set_outputs(["y"])
    add = attrs(nodes_by_id(canvas_graph(g, "g"))["add"])
    assert add["B (constant)"] == "eps: f32[] = 1e-05"
    assert add["table"] == "tensor<float32[100]>"


def test_lowered_tensors_show_their_device_shape() -> None:
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"), hardware="ascend910")
    outputs = [m for n in canvas_graph(compiled.graph, "g")["nodes"] for m in meta(n["outputsMetadata"]).values()]
    lowered = [m for m in outputs if m.get("format") == "NC1HWC0"]
    assert lowered and all("device shape" in m for m in lowered)


def test_a_fused_node_opens_its_body_as_a_subgraph() -> None:
    g = fused_net()
    graphs = canvas_graphs(g, "g")
    assert [x["id"] for x in graphs] == ["g", "g/relu1"]
    fused = nodes_by_id(graphs[0])["relu1"]
    assert fused["subgraphIds"] == ["g/relu1"] and fused["label"] == "FusedConv"
    assert attrs(fused)["body"] == "Conv conv1 → Relu relu1"
    assert attrs(fused)["W (constant)"] == "W: f32[4,3,3,3]"  # the slot named by the body's Conv
    body = graphs[1]
    assert [n["id"] for n in body["nodes"]] == ["input:x", "conv1", "relu1", "output:r"]  # W, B: constants
    assert attrs(nodes_by_id(body)["conv1"])["W (constant)"] == "W: f32[4,3,3,3]"
    check_edges(g.node("relu1").body, body, outer=g)  # type: ignore[arg-type]
    assert canvas_graph(g, "g") == graphs[0]


def test_nested_bodies_are_graphs_too() -> None:
    compiled = ge_core.compile(sample_bytes("transformer_encoder"), input_shapes="hidden:1,12,64;mask:1,12")
    graphs = canvas_graphs(compiled.graph, "g")
    ids = {x["id"] for x in graphs}
    pointed = {s for x in graphs for n in x["nodes"] for s in n["subgraphIds"]}
    assert pointed == ids - {"g"}  # every body is there, and every body is pointed at
    nested = [i for i in ids if i.count("/") >= 2]
    assert nested, "UB fusion wraps fused nodes: bodies inside bodies"


def check_marks(before: Graph, after: Graph) -> None:
    diff = diff_graphs(before, after)
    for graph, side, own in ((before, "before", diff.removed), (after, "after", diff.added)):
        items = nodes_by_id(canvas_graph(graph, side, diff=diff, side=side))  # type: ignore[arg-type]
        marked = {i for i, n in items.items() if "style" in n}
        assert marked == {*own, *diff.changed}, side
        for name in marked:
            state = diff.status(name)
            assert items[name]["style"]["backgroundColor"] == DIFF_FILL[state]
            assert items[name]["style"]["borderColor"] == DIFF_BORDER[state]
            assert attrs(items[name])["change"].startswith(state)


def test_the_pass_marks_show_what_it_added_removed_and_changed() -> None:
    before = conv_net()
    after = conv_net()
    after.replace_all_uses("n", "c")
    after.erase(after.node("bn1"))  # removed; relu1 now reads c: changed
    after.node("conv1").attrs["pads"] = [0, 0, 0, 0]  # changed
    after.add_node("Tanh", ["z"], ["t"], name="tanh", descs=[f32(1, 4, 8, 8)])  # added
    check_marks(before, after)
    items = nodes_by_id(canvas_graph(after, "a", diff=diff_graphs(before, after), side="after"))
    conv = attrs(items["conv1"])
    assert conv["change"] == "changed: attr" and conv["change 1"] == "attr pads: [1, 1, 1, 1] → [0, 0, 0, 0]"
    assert attrs(items["tanh"])["change"] == "added by this pass"
    assert "change" not in attrs(items["pool"]) and "style" not in items["pool"]


def test_every_pass_of_a_compile_is_marked_as_its_diff_says() -> None:
    compiled = ge_core.compile(sample_bytes("dead_branches_consts"), opt_level="O3")
    changed = [i for i, r in enumerate(compiled.records) if r.changed]
    assert changed
    for i in changed:
        check_marks(*graphs_around(compiled.input_graph, compiled.records, i))


def test_diff_needs_a_side() -> None:
    g = conv_net()
    with pytest.raises(ValueError, match="side"):
        canvas_graph(g, "g", diff=diff_graphs(g, g))


def test_fusion_decisions_that_took_or_refused_a_node_are_listed_on_it() -> None:
    g = fused_net()
    took = FusionDecision("ConvActivationFusionPass", "Conv+Activation", ("conv1", "relu1"), True,
                          "Conv + Relu into one kernel", "relu1")
    refused = FusionDecision("UbFusionPass", "FusedConv+GlobalAveragePool", ("relu1", "pool"), False,
                             "cube op 'relu1' fuses only with the elementwise/broadcast ops after it")
    graphs = canvas_graphs(g, "g", decisions=[took, refused])
    top = nodes_by_id(graphs[0])
    assert attrs(top["relu1"])["fusion"] == ("accepted by ConvActivationFusionPass (pattern Conv+Activation, "
                                             "with conv1) into relu1: Conv + Relu into one kernel")
    assert attrs(top["relu1"])["fusion 2"] == ("refused by UbFusionPass (pattern FusedConv+GlobalAveragePool, "
                                               "with pool): cube op 'relu1' fuses only with the "
                                               "elementwise/broadcast ops after it")
    assert attrs(top["pool"])["fusion"].startswith("refused by UbFusionPass")
    assert "fusion" not in attrs(top["sig"])
    body = nodes_by_id(graphs[1])
    assert attrs(body["conv1"])["fusion"].startswith("accepted by ConvActivationFusionPass")  # in the body too


def test_io_ids_never_clash_with_node_names() -> None:
    g = Graph("g")
    g.add_input("x", f32(1, 4))
    g.add_node("Relu", ["x"], ["y"], name="input:x", descs=[f32(1, 4)])
    g.add_node("Relu", ["y"], ["z"], name="output:z", descs=[f32(1, 4)])
    g.set_outputs(["z"])
    ids = [n["id"] for n in canvas_graph(g, "g")["nodes"]]
    assert len(set(ids)) == len(ids) == 4 and "input:x" in ids and "output:z" in ids


@pytest.mark.parametrize("model", ["vad_if", "loop_rnn"])
def test_a_control_flow_node_opens_each_subgraph_with_its_captures(model: str) -> None:
    from tests import control_models

    g = ge_core.load_onnx(getattr(control_models, model)().SerializeToString())
    graphs = canvas_graphs(g, "g")
    by_id = {x["id"]: x for x in graphs}
    pointed = {s for x in graphs for n in x["nodes"] for s in n["subgraphIds"]}
    assert pointed == set(by_id) - {"g"}  # every subgraph (nested ones too) is there and pointed at
    node = next(n for n in g.nodes if n.subgraphs)
    for attr, sub in node.subgraphs.items():
        items = nodes_by_id(by_id[f"g/{node.name}.{attr}"])
        assert {n.name for n in sub.nodes} <= set(items)
        reads = {t for n in sub.nodes for t in n.inputs if t} - set(sub.constants) - set(g.constants)
        for t in set(sub.captures) & reads:  # an outer activation read inside: a Captured item feeds it
            assert items[f"captured:{t}"]["label"] == "Captured"
            assert any(e["sourceNodeId"] == f"captured:{t}" for i in items.values() for e in i["incomingEdges"])
