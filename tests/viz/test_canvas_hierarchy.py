"""The canvas's layers: never one flat layer (Model Explorer hangs on a flat chain of ~3k nodes), by name
scopes, else blocks, else topological chunks, and no layer over MAX_LAYER children."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

import ge_core
from ge_core.ir import Graph
from ge_core.samples.registry import get_sample, sample_bytes
from ge_core.viz import MAX_LAYER, canvas_graph, canvas_graphs
from ge_core.viz.canvas_hierarchy import BLOCKS, CHUNKS, SCOPES, graph_hierarchy
from ge_core.viz.scopes import common_scope, node_scope
from tests.viz.graphs import chain, f32, fused_net, residual, scoped


def layer_children(graph_json: dict[str, Any]) -> dict[str, set[tuple[str, str]]]:
    """Namespace -> its direct children: ("node", id) and ("layer", segment), as Model Explorer nests them."""
    kids: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for n in graph_json["nodes"]:
        parts = n["namespace"].split("/") if n["namespace"] else []
        assert all(parts), f"empty layer name in {n['namespace']!r}"
        kids["/".join(parts)].add(("node", n["id"]))
        for depth in range(len(parts)):
            kids["/".join(parts[:depth])].add(("layer", parts[depth]))
    return kids


def widest(graph_json: dict[str, Any]) -> int:
    return max(len(c) for c in layer_children(graph_json).values())


def namespaces(graph_json: dict[str, Any]) -> dict[str, str]:
    return {n["id"]: n["namespace"] for n in graph_json["nodes"]}


def test_a_flat_10k_chain_is_cut_into_topological_chunks() -> None:
    g = chain(10_000)
    data = canvas_graph(g, "g")
    assert graph_hierarchy(g).rule == CHUNKS
    kids = layer_children(data)
    assert widest(data) <= MAX_LAYER
    root = kids[""]
    assert ("node", "input:t0") in root and ("node", "output:t10000") in root  # inputs/outputs stay on top
    chunks = sorted((k for kind, k in root if kind == "layer"), key=lambda s: int(s.split()[1]))
    assert chunks == [f"chunk {k}" for k in range(1, 27)]  # ids a pass does not move (ranges: attributes)
    layers = data["groupNodeAttributes"]
    assert layers["chunk 1"]["positions"] == "nodes 1-385 in topological order"
    assert layers["chunk 26"]["positions"].endswith("-10000 in topological order")
    ns = namespaces(data)
    assert all(ns[n.name] for n in g.nodes)  # no op node left in the flat root
    assert [ns[n.name] for n in g.nodes] == sorted((ns[n.name] for n in g.nodes),
                                                   key=lambda s: int(s.split()[1]))  # chunks in order


def test_chunks_nest_when_one_level_is_not_enough() -> None:
    g = chain(100)
    h = graph_hierarchy(g, {"t0": "input:t0"}, {"t100": "output:t100"}, max_layer=4)
    ns = h.namespaces
    items = [{"id": i, "namespace": s} for i, s in ns.items()]
    assert max(len(c) for c in layer_children({"nodes": items}).values()) <= 4
    depths = {s.count("/") for s in ns.values() if s}
    assert max(depths) >= 2  # chunks of chunks of chunks
    order = [ns[n.name] for n in g.nodes]
    assert order == sorted(order, key=lambda s: [int(p.split()[1]) for p in s.split("/")])
    assert all(h.layers[s]["layer"].startswith("topological chunk") for s in {*ns.values()} - {""})


def test_name_scopes_are_the_layers_and_never_cut_apart() -> None:
    g = scoped(blocks=6, per_block=3)
    h = graph_hierarchy(g)
    assert h.rule == SCOPES
    # 'enc', the one top scope every node shares, is no layer (it would open as one collapsed box)
    assert h.namespaces["/enc/layer.2/Relu_1"] == "layer.2"
    assert h.layers["layer.2"] == {"layer": "name scope", "nodes": "3"}
    assert "enc" not in h.layers
    cut = graph_hierarchy(g, max_layer=3).namespaces  # 6 scopes: cut into chunks of whole scopes
    for b in range(6):
        spaces = {cut[f"/enc/layer.{b}/Relu_{i}"] for i in range(3)}
        assert len(spaces) == 1
        space = spaces.pop()
        assert space.startswith("chunk ") and space.endswith(f"/layer.{b}")


def test_a_fused_node_lives_in_the_scope_holding_all_its_ops() -> None:
    sample = get_sample("bert_encoder_torch")
    compiled = ge_core.compile(sample.read_bytes(), input_shapes=sample.input_shapes)
    fused = [n for n in compiled.graph.nodes if n.body is not None and "+" in n.name]
    assert fused
    for node in fused:
        inner = [node_scope(b) for b in node.body.nodes]  # type: ignore[union-attr]
        assert node_scope(node) == common_scope(inner)
    ns = namespaces(canvas_graph(compiled.graph, "g"))
    assert all("+" not in ns[n.name] for n in compiled.graph.nodes)  # joined names never become layers
    assert common_scope([("m", "a", "b"), ("m", "a", "c"), ("m", "a")]) == ("m", "a")
    assert common_scope([("m",), ("n",)]) == () and common_scope([]) == ()


@pytest.mark.parametrize("stage", ["input", "compiled"])
def test_bert_encoder_torch_nests_by_its_module_scopes(stage: str) -> None:
    sample = get_sample("bert_encoder_torch")
    compiled = ge_core.compile(sample.read_bytes(), input_shapes=sample.input_shapes)
    graph = compiled.input_graph if stage == "input" else compiled.graph
    assert graph_hierarchy(graph).rule == SCOPES
    data = canvas_graph(graph, "g")
    spaces = set(namespaces(data).values())
    # the wrapper module `m` every node shares is no layer: the canvas opens on embeddings, encoder, pooler
    assert any(s.startswith("encoder/layer.0/attention") for s in spaces)
    assert not any(s == "m" or s.startswith("m/") for s in spaces)
    assert widest(data) <= MAX_LAYER


def test_resnet50_nests_by_its_blocks() -> None:
    compiled = ge_core.compile(sample_bytes("resnet50"))
    h = graph_hierarchy(compiled.input_graph)
    assert h.rule == BLOCKS  # zoo names (n0, n1...) carry no scopes
    blocks = {s for s in h.namespaces.values() if s.startswith("block ")}
    assert len(blocks) >= 16  # 16 bottleneck blocks, and the stem
    for graph in (compiled.input_graph, compiled.graph):
        assert widest(canvas_graph(graph, "g")) <= MAX_LAYER


def residual3(blocks: int) -> Graph:
    """x -> relu -> sigmoid -> tanh -> add(x, .), `blocks` times: three nodes inside each block."""
    g = Graph("residual")
    g.add_input("x", f32(1, 4))
    previous = "x"
    for b in range(blocks):
        a = g.add_node("Relu", [previous], [f"r{b}"], name=f"r{b}", descs=[f32(1, 4)]).outputs[0]
        s = g.add_node("Sigmoid", [a], [f"s{b}"], name=f"s{b}", descs=[f32(1, 4)]).outputs[0]
        t = g.add_node("Tanh", [s], [f"t{b}"], name=f"t{b}", descs=[f32(1, 4)]).outputs[0]
        previous = g.add_node("Add", [previous, t], [f"a{b}"], name=f"a{b}", descs=[f32(1, 4)]).outputs[0]
    g.set_outputs([previous])
    return g


def test_residual_blocks_become_layers_with_their_joins_between() -> None:
    h = graph_hierarchy(residual3(4), {"x": "input:x"}, {"a3": "output:a3"})
    assert h.rule == BLOCKS
    assert h.namespaces["r0"] == h.namespaces["s0"] == h.namespaces["t0"] == "block 1"
    assert h.namespaces["r3"] == "block 4"
    assert h.namespaces["a0"] == ""  # the Add joining two blocks sits between them
    assert h.layers["block 1"]["layer"].startswith("structural block")
    assert graph_hierarchy(residual(4), {"x": "input:x"}, {"n11": "output:n11"}).rule == CHUNKS  # 2 inside: no layer
    assert namespaces(canvas_graph(residual3(4), "g")) == {**h.namespaces}


def test_synthetic_10k_input_has_no_layer_over_max() -> None:
    graph = ge_core.load_onnx(sample_bytes("synthetic_10k"))
    assert len(graph) == 10_000
    data = canvas_graph(graph, "g")
    assert widest(data) <= MAX_LAYER
    assert len(layer_children(data)[""]) < 20  # opens on a few boxes


@pytest.mark.slow
def test_synthetic_10k_compiled_has_no_layer_over_max_in_any_graph() -> None:
    compiled = ge_core.compile(sample_bytes("synthetic_10k"))
    for data in canvas_graphs(compiled.graph, "g"):
        assert widest(data) <= MAX_LAYER, data["id"]


def test_bodies_and_tiny_graphs_get_a_hierarchy_too() -> None:
    for data in canvas_graphs(fused_net(), "g"):
        assert widest(data) <= MAX_LAYER
    empty = Graph("empty")
    assert canvas_graph(empty, "e")["nodes"] == []
    with pytest.raises(ValueError, match="max_layer"):
        graph_hierarchy(chain(3), max_layer=1)
