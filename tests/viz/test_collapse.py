"""Folding a drawing under its budget: name scopes, constant subgraphs, structural blocks, chunks."""

from __future__ import annotations

import pytest

from ge_core.viz.blocks import biconnected_blocks, block_interiors
from ge_core.viz.graph_view import GraphView, build_view
from ge_core.viz.node_index import index_nodes
from ge_core.viz.scopes import choose_folded_scopes, folded_scope_of, scope_path
from tests.viz.graphs import chain, light_densenet, residual, scoped


def covered(view: GraphView) -> list[str]:
    return sorted(r for item in view.items for r in item.refs)


def assert_consistent(view: GraphView, graph_refs: list[str]) -> None:
    """Every node is drawn exactly once (by itself or in a box) and edges join drawn items."""
    assert covered(view) == sorted(graph_refs)
    ids = {i.id for i in view.items}
    assert len(ids) == len(view.items)
    assert all(e.src in ids and e.dst in ids and e.src != e.dst for e in view.edges)
    assert all(view.item_of[r] in ids for r in graph_refs)


@pytest.mark.parametrize("name, path", [
    ("/encoder/layer.0/attention/MatMul", ("encoder", "layer.0", "attention")),
    ("resnet_v1/block1/unit_1/conv1/Conv2D", ("resnet_v1", "block1", "unit_1", "conv1")),
    ("layer1.0.conv1", ("layer1", "0")), ("Conv.3", ()), ("n17", ()), ("n8+n10+n12+...", ()), ("/Relu", ()),
])
def test_scope_path(name: str, path: tuple[str, ...]) -> None:
    assert scope_path(name) == path


def test_scopes_open_shallowest_and_biggest_first_within_the_budget() -> None:
    paths = {f"a{i}": ("a",) for i in range(5)} | {f"b{i}": ("b", "c") for i in range(3)} | {"x": ()}
    assert choose_folded_scopes(paths, 100) == (set(), [])
    folded, _ = choose_folded_scopes(paths, 3)  # root shows a, b, x; opening a would make 7 boxes
    assert folded == {("a",), ("b", "c")}  # b holds only c: opening it costs nothing, so the box is c
    folded, _ = choose_folded_scopes(paths, 5)  # b opens (-> c), then c (-> 3 items): 1 + 3 + 1 boxes
    assert folded == {("a",)} and folded_scope_of(("b", "c"), folded) is None
    assert choose_folded_scopes(paths, 7)[0] == {("b", "c")}  # a (the biggest) opens first
    assert choose_folded_scopes(paths, 7, forced=[("b", "c")]) == ({("a",)}, [])  # unless c is wanted
    folded, refused = choose_folded_scopes(paths, 2, forced=[("a",)])
    assert ("a",) in folded and refused == [("a",)]
    folded, _ = choose_folded_scopes(paths, 100, max_depth=1)
    assert folded == {("a",), ("b", "c")}


def test_blocks_are_the_biconnected_pieces() -> None:
    g = residual(3)
    names = [n.name for n in g.nodes]
    edges = [(p.name, n.name) for n in g.nodes for t in n.inputs if (p := g.producer(t)) is not None]
    blocks = biconnected_blocks(names, edges)
    # the first block's cycle runs through the graph input, which is not a vertex here: bridges
    assert {frozenset(b) for b in blocks} == {frozenset({"n0", "n1"}), frozenset({"n1", "n2"}),
                                              frozenset({"n2", "n3", "n4", "n5"}), frozenset({"n5", "n6", "n7", "n8"})}
    assert block_interiors(names, edges) == [["n6", "n7", "n8"], ["n3", "n4"], ["n0"]]


def test_small_graphs_are_not_folded() -> None:
    g = scoped()
    view = build_view(g)
    assert not view.folded and view.note() == "" and len(view.items) == len(g) + 2  # + input + output
    assert_consistent(view, [n.name for n in g.nodes])


def test_scopes_fold_to_fit_and_the_pinned_scope_stays_open() -> None:
    g = scoped(blocks=5, per_block=6)  # 30 nodes in 5 scopes
    view = build_view(g, budget=10)
    assert len(view.items) <= 10 and view.boxes == 5 and "5 name-scope boxes" in view.note()
    assert_consistent(view, [n.name for n in g.nodes])
    pinned = "/enc/layer.2/Relu_3"
    view = build_view(g, budget=12, pinned=[pinned])
    assert view.item_of[pinned] == pinned and len(view.items) <= 12
    view = build_view(g, budget=12, opened=["scope:enc/layer.4"])
    assert view.item_of["/enc/layer.4/Relu_0"] == "/enc/layer.4/Relu_0"
    assert build_view(g, scope_depth=2).boxes == 5  # fold every layer.K whatever the budget


def test_a_flat_chain_folds_into_chunks_never_over_budget() -> None:
    g = chain(300, "n{}")
    view = build_view(g, budget=20, pinned=["n150"])
    assert len(view.items) <= 20 and view.item_of["n150"] == "n150"
    assert {i.kind for i in view.items} >= {"chunk", "op"} and "runs of consecutive nodes" in view.note()
    assert_consistent(view, [n.name for n in g.nodes])
    roomy = build_view(g, budget=60, pinned=["n150"])
    chunk = next(i for i in roomy.items if i.kind == "chunk")
    opened = build_view(g, budget=60, pinned=["n150"], opened=[chunk.id])
    assert len(opened.items) <= 60 and opened.item_of[chunk.refs[0]] == chunk.refs[0]  # drawn node by node
    tight = build_view(g, budget=20, pinned=["n150"], opened=[next(i.id for i in view.items if i.kind == "chunk")])
    assert len(tight.items) <= 20 and "could not stay open" in tight.note()  # the cap wins


def test_structural_blocks_fold_residual_blocks() -> None:
    g = residual(20)
    view = build_view(g, budget=50)
    assert len(view.items) <= 50 and "structural blocks" in view.note()
    assert all(i.kind in ("op", "block", "input", "output") for i in view.items)
    assert_consistent(view, [n.name for n in g.nodes])


@pytest.mark.parametrize("budget", [1500, 750, 200, 40])
def test_densenet121_upload_stays_within_the_cap(budget: int) -> None:
    g = light_densenet()
    assert len(g) > 1500
    view = build_view(g, index=index_nodes(g), budget=budget)
    assert len(view.items) <= budget and view.folded
    assert "ConstantOfShape" in view.note()
    assert_consistent(view, [n.name for n in g.nodes])
    if budget >= 750:  # folding the weights' constant subgraphs is enough: every real op is drawn
        assert view.boxes == 0 and sum(i.absorbed for i in view.items) == 1078
