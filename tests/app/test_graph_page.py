"""The Graph page through AppTest: the pass stepper, the before/after panes handed to the canvas (graph
JSON and overlays), a click on the canvas selecting a node in the inspector, the finder, fused bodies,
the address, and a big model's layers."""

from __future__ import annotations

from typing import Any

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Selectbox

from ge_core.samples.registry import LIGHT_DIR
from tests.app.apptest import (
    APP,
    TIMEOUT,
    canvas,
    click_canvas,
    open_app,
    open_page,
    overlay,
    pane_graph,
    pane_graphs,
    pane_nodes,
)
from workbench_ui.graph_canvas import _PREFETCH, CANVAS_KEY
from workbench_ui.graph_controls import COLOUR_KEY, HIDE_KEY, STEP_KEY
from workbench_ui.graph_inspector import CONSUMERS_KEY
from workbench_ui.session import OPT_KEY
from workbench_ui.text import md_escape

GRAPH = "app_pages/graph.py"
CHANGE = "pass change"


def texts(at: AppTest) -> str:
    return "\n".join(e.value for e in [*at.markdown, *at.caption, *at.info, *at.success, *at.warning])


def panes(at: AppTest) -> list[dict[str, Any]]:
    return canvas(at, CANVAS_KEY)["panes"]


def finder(at: AppTest) -> Selectbox[Any]:
    """The "Go to a node" box (its key names the node selected, so it opens on it)."""
    (box,) = [s for s in at.selectbox if str(s.key).startswith("ge_graph_node:")]
    return box


def step_to(at: AppTest, pass_name: str) -> AppTest:
    """Move the stepper to `pass_name` (its labels read "N · PassName: ...", N = record index + 1)."""
    slider = at.select_slider(key=STEP_KEY)
    label = next(o for o in slider.options if f" · {pass_name}:" in o)
    return slider.set_value(int(label.split(" · ")[0])).run()


def step_label(at: AppTest) -> str:
    """The stepper's label for the pass shown."""
    slider = at.select_slider(key=STEP_KEY)
    return next(o for o in slider.options if o.startswith(f"{slider.value} · "))


def ops(pane: dict[str, Any]) -> list[str]:
    return [n["label"] for n in pane_graph(pane)["nodes"]]


def test_default_sample_opens_on_the_first_changed_pass_before_and_after() -> None:
    at = open_page(GRAPH)
    assert not at.exception and not at.error
    assert "What am I looking at?" in at.markdown[0].value
    assert at.checkbox(key=HIDE_KEY).value
    assert "BatchNormFoldPass" in step_label(at)
    before, after = panes(at)
    assert (before["label"], after["label"]) == ("before", "after")
    assert canvas(at, CANVAS_KEY)["sync"]  # kept in step by node id
    assert "BatchNormalization" in ops(before) and "BatchNormalization" not in ops(after)
    # the overlay shown is the last loaded: what the pass changed, removed nodes in red on the left
    assert before["overlays"][-1][0] == f"{CHANGE} (before)"
    marks = overlay(before, f"{CHANGE} (before)")
    assert {n for n, v in marks.items() if v["value"] == "removed"} == {"bn1", "bn2"}
    changes = at.dataframe[-1].value
    assert set(changes[changes["change"] == "removed"]["node"]) == {"bn1", "bn2"}


def test_stepping_keeps_both_panes_and_moves_the_address() -> None:
    at = open_page(GRAPH)
    first = canvas(at, CANVAS_KEY)["version"]
    step_to(at, "ConvActivationFusionPass")
    assert not at.exception
    before, after = panes(at)
    assert "FusedConv" in ops(after) and "FusedConv" not in ops(before)
    assert canvas(at, CANVAS_KEY)["version"] != first  # the canvas reloads its graphs, the page does not
    number = at.select_slider(key=STEP_KEY).value
    assert at.query_params["step"] == str(number)
    changes = at.dataframe[-1].value
    assert {"op", "body"} <= set(changes[changes["node"] == "relu1"]["change"])
    assert "ConvActivationFusionPass" in texts(at)
    at.button(key="ge_graph_prev").click().run()  # ◀: back to the pass before
    assert "BatchNormFoldPass" in step_label(at)
    at.button(key="ge_graph_next").click().run()
    assert at.select_slider(key=STEP_KEY).value == number


def test_the_canvas_gets_the_next_pass_ahead_as_its_own_run_shows_it() -> None:
    """The page hands the canvas the panes ▶ leads to once the background has built them ("coming" until
    then, so the canvas asks again), under the version the next pass's own run shows: the canvas draws
    them out of sight and shows that frame when ▶ is pressed."""
    at = open_page(GRAPH)
    ahead = canvas(at, CANVAS_KEY)["ahead"]
    assert ahead == {"coming": True} or ahead["version"]
    _PREFETCH.submit(lambda: None).result(timeout=120)  # one worker, in order: what was queued is built
    at.run()
    ahead = canvas(at, CANVAS_KEY)["ahead"]
    assert ahead["version"] != canvas(at, CANVAS_KEY)["version"]
    at.button(key="ge_graph_next").click().run()
    assert not at.exception and canvas(at, CANVAS_KEY)["version"] == ahead["version"]
    assert [p["label"] for p in ahead["panes"]] == [p["label"] for p in panes(at)]


def test_the_address_opens_the_pass_node_and_overlay_it_names() -> None:
    at = open_page(GRAPH)
    number = step_to(at, "ConvActivationFusionPass").select_slider(key=STEP_KEY).value
    fresh = AppTest.from_file(APP, default_timeout=TIMEOUT)
    fresh.query_params.update({"step": str(number), "node": "relu2", "colour": "fusion"})
    fresh.run().switch_page(GRAPH).run()
    assert not fresh.exception
    assert fresh.select_slider(key=STEP_KEY).value == number
    assert canvas(fresh, CANVAS_KEY)["selected"] == {"id": "relu2", "pane": 1}
    assert fresh.button_group(key=COLOUR_KEY).value == "fusion"
    assert panes(fresh)[-1]["overlays"][-1][0] == "fusion group"
    assert md_escape("ge::FusedConv") + "** `relu2`" in texts(fresh)


def test_an_unchanged_pass_shows_one_pane_in_category_colours() -> None:
    at = open_page(GRAPH)
    at.checkbox(key=HIDE_KEY).uncheck().run()
    slider = at.select_slider(key=STEP_KEY)
    unchanged = next(o for o in slider.options if "unchanged" in o)
    slider.set_value(int(unchanged.split(" · ")[0])).run()
    assert not at.exception
    (pane,) = panes(at)
    assert pane["overlays"][-1][0] == "op category"
    assert overlay(pane, "op category")["conv1"]["value"] == "cube"
    assert "left the graph as it was" in texts(at)


def test_a_click_on_the_canvas_selects_the_node_in_the_inspector() -> None:
    at = open_page(GRAPH)
    click_canvas(at, CANVAS_KEY, "conv1")
    assert not at.exception
    assert at.query_params["node"] == "conv1"
    assert canvas(at, CANVAS_KEY)["selected"]["id"] == "conv1"
    text = texts(at)
    assert "**Conv** `conv1`" in text and "changed by this pass" in text
    inputs = next(t.value for t in at.table if "0 X image" in t.value.columns)  # tensors across, fields down
    assert list(inputs.columns) == ["0 X image", "1 W conv1.weight", "2 B conv1.bias"]
    assert inputs.loc["shape", "1 W conv1.weight"] == "[16, 3, 3, 3]"
    assert inputs.loc["kind", "0 X image"] == "graph input"
    assert finder(at).value == "conv1"
    at.button_group(key=CONSUMERS_KEY).set_value("relu1").run()  # a consumer pill: go to relu1
    assert "**Relu** `relu1`" in texts(at) and canvas(at, CANVAS_KEY)["selected"]["id"] == "relu1"


def test_a_removed_node_is_inspected_as_it_was_before() -> None:
    at = click_canvas(open_page(GRAPH), CANVAS_KEY, "bn1")
    assert canvas(at, CANVAS_KEY)["selected"] == {"id": "bn1", "pane": 0}  # it is only on the left
    assert "removed by this pass" in texts(at) and "gone after the pass" in texts(at)


def test_the_finder_lists_every_node_and_selects_one() -> None:
    at = open_page(GRAPH)
    step_to(at, "ConvActivationFusionPass")
    box = finder(at)
    assert "FusedConv · relu1" in box.options and "Conv · relu1 › conv1" in box.options  # body nodes too
    assert box.label.startswith(f"Go to a node ({len(box.options)}")
    box.set_value("relu1").run()
    assert canvas(at, CANVAS_KEY)["selected"]["id"] == "relu1"
    body = next(t.value for t in at.table if "fused body" in t.value.columns)
    assert list(body["op"]) == ["Conv", "Relu"]


def test_a_fused_node_holds_its_body_as_a_subgraph() -> None:
    at = open_page(GRAPH)
    step_to(at, "ConvActivationFusionPass")
    after = panes(at)[1]
    graphs = pane_graphs(after)
    fused = pane_nodes(after)["relu1"]
    (body_id,) = fused["subgraphIds"]
    body = next(g for g in graphs if g["id"] == body_id)
    assert [n["label"] for n in body["nodes"] if not n["id"].startswith(("input:", "output:"))] == ["Conv", "Relu"]


def test_o0_shows_the_graph_as_imported() -> None:
    at = open_page(GRAPH)
    at.button_group(key=OPT_KEY).set_value("O0").run()
    assert not at.exception
    assert "No pass ran" in at.info[0].value
    (pane,) = panes(at)
    assert "BatchNormalization" in ops(pane)


def test_the_page_keeps_its_state_across_a_visit_to_another_page() -> None:
    at = open_page(GRAPH)
    step = step_to(at, "ConvActivationFusionPass").select_slider(key=STEP_KEY).value
    click_canvas(at, CANVAS_KEY, "relu2")
    at.switch_page("app_pages/passes.py").run()
    at.switch_page(GRAPH).run()
    assert not at.exception
    assert at.select_slider(key=STEP_KEY).value == step
    assert md_escape("ge::FusedConv") + "** `relu2`" in texts(at)


def test_the_downloads_are_model_explorer_json_and_dot() -> None:
    at = open_page(GRAPH)
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["Download graph JSON", "Download DOT"]


def test_uploaded_densenet121_at_o0_opens_in_layers() -> None:
    at = open_app()
    at.sidebar.radio[0].set_value("Upload").run()
    data = (LIGHT_DIR / "light_densenet121.onnx").read_bytes()
    at.sidebar.file_uploader[0].set_value(("densenet121.onnx", data, "application/octet-stream")).run()
    at.button_group(key=OPT_KEY).set_value("O0").run()
    at.switch_page(GRAPH).run()
    assert not at.exception and not at.error
    (pane,) = panes(at)
    nodes = pane_graph(pane)["nodes"]
    top = [n for n in nodes if not n["namespace"]]
    assert len(nodes) > 600 and len(top) < 100  # no flat layer: blocks, then chunks
    per_layer: dict[str, int] = {}
    for n in nodes:
        per_layer[n["namespace"]] = per_layer.get(n["namespace"], 0) + 1
    assert max(per_layer.values()) <= 400


def test_a_refused_model_says_so_and_points_to_debug() -> None:
    at = open_page(GRAPH, "unsupported_op")
    assert not at.exception
    assert len(at.error) == 1 and "The compile did not finish" in texts(at)
    assert not at.get("bidi_component")


@pytest.mark.slow
def test_synthetic_10k_opens_with_every_node_in_the_finder() -> None:
    at = open_page(GRAPH, "synthetic_10k")
    assert not at.exception and not at.error
    box = finder(at)
    graph_nodes = [n for n in pane_graph(panes(at)[-1])["nodes"] if not n["id"].startswith(("input:", "output:"))]
    assert len(box.options) >= len(graph_nodes) > 8000  # the finder is not capped
    assert box.label == f"Go to a node ({len(box.options):,})"
