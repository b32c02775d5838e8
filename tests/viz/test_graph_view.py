"""build_view, the layered layout and both renderers (DOT and ECharts) of a view."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from ge_core.ir import Graph
from ge_core.viz.diff_style import HIT, SELECTED, item_marks
from ge_core.viz.dot import view_to_dot
from ge_core.viz.graph_view import build_view
from ge_core.viz.layout import layered_layout
from ge_core.viz.node_index import SEP, index_nodes
from ge_core.viz.view_chart import PX_PER_UNIT, chart_height, view_to_echarts
from tests.viz.graphs import conv_net, f32, fused_net, residual, scoped

AWKWARD = ['a<b>&c', 'q"uote', '{br}ace|x', 'back\\slash']


def edges(graph: Graph, **kw: object) -> set[tuple[str, str]]:
    return {(e.src, e.dst) for e in build_view(graph, **kw).edges}  # type: ignore[arg-type]


def test_items_are_inputs_ops_outputs_in_order_with_data_edges() -> None:
    view = build_view(conv_net())
    assert [i.id for i in view.items] == ["in:x", "conv1", "bn1", "relu1", "pool", "sig", "out:y", "out:z"]
    assert [i.kind for i in view.items][:2] == ["input", "op"] and view.items[1].title == "Conv"
    assert {(e.src, e.dst) for e in view.edges} == {
        ("in:x", "conv1"), ("conv1", "bn1"), ("bn1", "relu1"), ("relu1", "pool"), ("relu1", "sig"),
        ("pool", "out:y"), ("sig", "out:z")}
    assert view.nodes == view.total_nodes == 5


def test_a_fused_node_is_one_box_until_expanded_to_its_body() -> None:
    g = fused_net()
    assert ("in:x", "relu1") in edges(g)
    view = build_view(g, expand=["relu1"])
    conv, relu = f"relu1{SEP}conv1", f"relu1{SEP}relu1"
    assert [i.id for i in view.items if i.kind == "op"] == [conv, relu, "pool", "sig"]
    assert all(i.cluster == "relu1" for i in view.items if i.id in (conv, relu)) and view.clusters == {"relu1": ""}
    assert {("in:x", conv), (conv, relu), (relu, "pool"), (relu, "sig")} <= {(e.src, e.dst) for e in view.edges}
    pinned = build_view(g, pinned=[conv])  # selecting a body node expands its fused node
    assert pinned.item_of[conv] == conv


def test_focus_draws_a_region_and_marks_its_boundary() -> None:
    g = conv_net()
    view = build_view(g, focus={"bn1", "relu1"})
    assert [i.id for i in view.items] == ["bn1", "relu1"] and view.nodes == 2 and view.total_nodes == 5
    assert all(i.boundary for i in view.items)  # conv1 above, pool and sig below are not drawn


def test_layout_puts_every_consumer_below_its_producers() -> None:
    view = build_view(residual(6))
    layout = layered_layout(view)
    for e in view.edges:
        assert layout.layer[e.src] < layout.layer[e.dst]
        assert layout.positions[e.src][1] < layout.positions[e.dst][1]
    assert len(set(layout.positions.values())) == len(view.items)  # no two items on one spot
    lr = layered_layout(view, "LR")
    assert all(lr.positions[i][0] == layout.positions[i][1] for i in layout.positions)


def test_dot_colours_the_diff_outlines_the_selection_and_draws_clusters() -> None:
    g = fused_net()
    index = index_nodes(g)
    view = build_view(g, index=index, expand=["relu1"])
    source = view_to_dot(g, view, index, status={"relu1": "changed", "sig": "added"}, selected="pool")
    assert "subgraph cluster_" in source and "FusedConv relu1 (fused, expanded)" in source
    assert '"#ffd699"' in source and '"#b9e4bc"' in source and '"#f1f1f1"' in source  # changed, added, rest
    assert source.count("peripheries=2") == 1
    plain = view_to_dot(g, build_view(g), index)
    assert '"#f6b26b"' in plain and "fused: 2 ops" in plain  # cube colour, body size on the box
    with pytest.raises(ValueError, match="rankdir"):
        view_to_dot(g, view, index, rankdir="XX")


def test_folded_boxes_list_what_they_hold() -> None:
    g = scoped(blocks=4, per_block=5)
    view = build_view(g, budget=8)
    source = view_to_dot(g, view, index_nodes(g), status={"/enc/layer.0/Relu_1": "removed"})
    assert source.count("shape=box3d") == 4 and "scope enc/layer.0" in source and "Relu×5" in source
    assert '"#ffd699"' in source  # a box mixing a removed node and unchanged ones reads "changed"


def awkward_graph() -> Graph:
    g = Graph("awkward")
    g.add_input("x", f32(1))
    previous = "x"
    for name in AWKWARD:
        g.add_node("Relu", [previous], [name], name=name, descs=[f32(1)])
        previous = name
    g.set_outputs([previous])
    return g


@pytest.mark.skipif(shutil.which("dot") is None, reason="the Graphviz binary is not installed")
def test_graphviz_accepts_views_with_awkward_names_boxes_and_clusters() -> None:
    for g, kw in ((awkward_graph(), {}), (fused_net(), {"expand": ["relu1"]}), (scoped(4, 5), {"budget": 8})):
        index = index_nodes(g)
        source = view_to_dot(g, build_view(g, index=index, **kw), index, status={}, selected="x")
        done = subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and not done.stderr, done.stderr


def test_echarts_option_is_json_with_one_data_item_per_view_item() -> None:
    g = awkward_graph()
    index = index_nodes(g)
    view = build_view(g, index=index)
    option = view_to_echarts(view, index, status={"a<b>&c": "added"}, selected="q\"uote")
    text = json.dumps(option)
    series = option["series"][0]
    assert series["type"] == "graph" and series["selectedMode"] == "single"
    assert [d["name"] for d in series["data"]] == [i.id for i in view.items]
    assert all(0 <= link["source"] < len(view.items) and 0 <= link["target"] < len(view.items)
               for link in series["links"])
    tips = " ".join(d["tooltip"]["formatter"] for d in series["data"])
    assert "a<b>" not in tips and "a&lt;b&gt;&amp;c" in tips and "&#123;br&#125;" in tips  # escaped HTML
    assert '"name": "a<b>&c"' in text  # names and labels are canvas text, never HTML
    labels = [d["label"]["formatter"] for d in series["data"]]
    assert not any(c in label for label in labels for c in "{}|")  # no ECharts rich-text markup
    selected = next(d for d in series["data"] if d["name"] == 'q"uote')
    assert selected["itemStyle"]["borderWidth"] == 4
    added = next(d for d in series["data"] if d["name"] == "a<b>&c")
    assert added["itemStyle"]["color"] == "#b9e4bc"


def test_search_hits_are_outlined_and_a_box_holding_one_is_too() -> None:
    g = scoped(blocks=4, per_block=5)
    index = index_nodes(g)
    view = build_view(g, index=index, budget=8)
    hits = ["/enc/layer.1/Relu_2"]
    assert item_marks(view, "", hits) == {"scope:enc/layer.1": HIT}
    assert item_marks(view, "/enc/layer.1/Relu_2", hits) == {"scope:enc/layer.1": SELECTED}
    source = view_to_dot(g, view, index, hits=hits)
    assert source.count('penwidth=3, color="#1565c0"') == 1
    option = view_to_echarts(view, index, hits=hits)
    widths = [d["itemStyle"]["borderWidth"] for d in option["series"][0]["data"]]
    assert widths.count(3) == 1


def test_the_chart_keeps_boxes_in_shape_and_opens_on_the_selection() -> None:
    g = residual(30)
    index = index_nodes(g)
    view = build_view(g, index=index)
    layout = layered_layout(view)
    series = view_to_echarts(view, index, selected="n40", layout=layout)["series"][0]
    ys = [y for _, y in layout.positions.values()]
    assert series["height"] == pytest.approx((max(ys) - min(ys)) * PX_PER_UNIT)  # same scale on both axes
    assert series["center"] == list(layout.positions["n40"])
    assert chart_height(layout) == 900  # a window onto a tall drawing


def test_expanded_bodies_never_break_the_budget() -> None:
    g = fused_net()
    assert build_view(g, expand=["relu1"], budget=4).clusters == {"relu1": ""}  # 2 body nodes <= 4 // 2
    small = build_view(g, expand=["relu1"], budget=3)
    assert small.clusters == {} and "1 fused node(s) stay closed" in small.note()
    assert build_view(g, expand=["pool", "nothing"]).clusters == {}  # not fused / unknown: ignored
