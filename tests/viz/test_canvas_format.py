"""The canvas JSON is Model Explorer's format: it loads into model_explorer's own dataclasses (strictly: an
unknown key fails too), so a drift of either side fails here. ge_core itself never imports model_explorer."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import dacite
import pytest

import ge_core
from ge_core.samples.registry import sample_bytes
from ge_core.viz import (
    canvas_collection,
    canvas_graph,
    canvas_graphs,
    canvas_json,
    category_overlay,
    change_overlay,
    diff_graphs,
    fusion_group_overlay,
    graphs_around,
    latency_overlay,
    memory_overlay,
    node_data,
)
from tests.viz.graphs import conv_net, f32, fused_net, scoped

graph_builder = pytest.importorskip("model_explorer.graph_builder")
node_data_builder = pytest.importorskip("model_explorer.node_data_builder")
STRICT = dacite.Config(strict=True)
REPO = Path(__file__).resolve().parents[2]


def check_graph(data: dict[str, Any]) -> Any:
    return dacite.from_dict(graph_builder.Graph, data, config=STRICT)


def check_node_data(data: dict[str, Any]) -> Any:
    """GraphNodeData. Categorical overlays give strings as values: Model Explorer's web app takes them (its
    docs for showExpandedSummaryOnGroupNode: "non-numerical (e.g. string) node data values") but colours
    only numbers itself, while its Python dataclass types the value as a number. So a string must come
    with its own bgColor, and is checked as a number."""
    data = copy.deepcopy(data)
    for result in data["results"].values():
        if isinstance(result["value"], str):
            assert result.get("bgColor"), result
            result["value"] = 0
    return dacite.from_dict(node_data_builder.GraphNodeData, data, config=STRICT)


@pytest.fixture(scope="module")
def compiled() -> ge_core.CompiledModel:
    return ge_core.compile(sample_bytes("conv_bn_relu"), opt_level="O3")


@pytest.mark.parametrize("build", [conv_net, fused_net, scoped], ids=["conv_net", "fused_net", "scoped"])
def test_every_graph_loads_into_model_explorers_dataclasses(build: Any) -> None:
    graphs = canvas_graphs(build(), "g")
    parsed = [check_graph(g) for g in graphs]
    assert parsed[0].id == "g" and parsed[0].nodes
    collection = dacite.from_dict(graph_builder.GraphCollection, canvas_collection("net", graphs), config=STRICT)
    assert [g.id for g in collection.graphs] == [g["id"] for g in graphs]


def test_marked_graphs_load_too(compiled: ge_core.CompiledModel) -> None:
    """Diff styles, decisions (with node_ids values: control inputs) and overlays are all in the format."""
    decisions = [d for r in compiled.records for d in r.decisions]
    index = next(i for i, r in enumerate(compiled.records) if r.name == "BatchNormFoldPass")
    before, after = graphs_around(compiled.input_graph, compiled.records, index)
    diff = diff_graphs(before, after)
    overlays = {"category": category_overlay(after), "group": fusion_group_overlay(compiled.graph, decisions)}
    for graph, side in ((before, "before"), (after, "after")):
        parsed = check_graph(canvas_graph(graph, side, diff=diff, side=side, overlays=overlays,
                                          decisions=decisions))
        assert any(n.style is not None for n in parsed.nodes)  # the pass's marks are styles
    for graph in canvas_graphs(compiled.graph, "final", decisions=decisions, overlays=overlays):
        check_graph(graph)


def test_control_inputs_are_node_id_links() -> None:
    g = conv_net()
    g.add_node("Relu", ["y"], ["after_pool"], name="late", descs=[f32(1, 4, 1, 1)], control_inputs=["sig"])
    parsed = check_graph(canvas_graph(g, "g"))
    late = next(n for n in parsed.nodes if n.id == "late")
    link = next(a.value for a in late.attrs if a.key == "control inputs")
    assert isinstance(link, graph_builder.NodeIdsNodeAttributeValue) and link.nodeIds == ["sig"]


def test_overlays_are_model_explorer_node_data(compiled: ge_core.CompiledModel) -> None:
    sim = ge_core.simulate(compiled)
    assert compiled.memory is not None
    index = next(i for i, r in enumerate(compiled.records) if r.name == "BatchNormFoldPass")
    diff = diff_graphs(*graphs_around(compiled.input_graph, compiled.records, index))
    overlays = [category_overlay(compiled.graph), change_overlay(diff, "before"), change_overlay(diff, "after"),
                fusion_group_overlay(compiled.graph), memory_overlay(compiled.graph, compiled.memory),
                memory_overlay(compiled.graph, compiled.memory, "steps"), latency_overlay(sim)]
    for overlay in overlays:
        assert overlay.values, overlay.name
        parsed = check_node_data(node_data(overlay))
        assert parsed.name == overlay.name and set(parsed.results) == set(overlay.values)
        numeric = not any(isinstance(v, str) for v in overlay.values.values())
        assert bool(parsed.gradient) == numeric  # numbers along a gradient, categories by their own colours
        wrapped = node_data(overlay, "g")  # ModelNodeData: {graph id: GraphNodeData}
        assert list(wrapped) == ["g"]
        check_node_data(wrapped["g"])


def test_the_download_json_is_a_collection_plus_node_data_files(compiled: ge_core.CompiledModel) -> None:
    data = canvas_json(compiled, sim=ge_core.simulate(compiled))
    overlays = data.pop("ge_overlays")  # the one key Model Explorer's GraphCollection does not have
    collection = dacite.from_dict(graph_builder.GraphCollection, data, config=STRICT)
    assert collection.graphs[0].id == "final"
    assert {"op category", "fusion group", "memory (bytes)", "lifetime (steps)",
            "simulated latency (µs)"} <= set(overlays)
    for per_graph in overlays.values():
        assert list(per_graph) == ["final"]
        check_node_data(per_graph["final"])


def test_ge_core_never_imports_model_explorer() -> None:
    """Model Explorer is a UI dependency: the library only writes its JSON."""
    offenders = [p.relative_to(REPO).as_posix() for p in (REPO / "ge_core").rglob("*.py")
                 if re.search(r"^\s*(import|from)\s+model_explorer", p.read_text(), re.MULTILINE)]
    assert offenders == []
