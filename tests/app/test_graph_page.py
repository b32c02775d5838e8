"""The Graph page through AppTest: stepper, diff, inspector, search, fused bodies, the clickable drawing and
the node cap on a big model."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from ge_core.samples.registry import LIGHT_DIR
from tests.app.apptest import graphviz_sources, open_page
from workbench_ui.graph_controls import (
    EXPAND_KEY,
    FOCUS_KEY,
    HIDE_KEY,
    NODE_KEY,
    OPENED_KEY,
    QUERY_KEY,
    RENDERER_KEY,
    SCOPE_KEY,
    STEP_KEY,
)
from workbench_ui.graph_inspector import CONSUMERS_KEY
from workbench_ui.graph_views import clicked_item
from workbench_ui.session import OPT_KEY
from workbench_ui.text import md_escape

GRAPH = "pages/2_Graph.py"
DOT_BOX = re.compile(r"^\s+(?:op|in|out|box)_[0-9a-f]{12}(?:_\d+)? \[", re.MULTILINE)


def texts(at: AppTest) -> str:
    return "\n".join(e.value for e in [*at.markdown, *at.caption, *at.info, *at.success, *at.warning])


def drawings(at: AppTest) -> list[str]:
    """The page's graph drawings (the category legend is a DOT chart too, without op boxes)."""
    return [s for s in graphviz_sources(at) if "op_" in s]


def step_to(at: AppTest, pass_name: str) -> AppTest:
    """Move the stepper to `pass_name` (its labels read "N · PassName: ..." for record N - 1)."""
    slider = at.select_slider(key=STEP_KEY)
    label = next(o for o in slider.options if f" · {pass_name}:" in o)
    slider.set_value(int(label.split(" · ")[0]) - 1).run()
    return at


def test_default_sample_opens_on_the_first_changed_pass_with_its_diff() -> None:
    at = open_page(GRAPH)
    assert not at.exception and not at.error
    assert "What am I looking at?" in at.markdown[0].value
    assert at.checkbox(key=HIDE_KEY).value
    assert "BatchNormFoldPass" in at.select_slider(key=STEP_KEY).options[0]
    before, after = drawings(at)
    assert "<b>BatchNormalization</b>" in before and "<b>BatchNormalization</b>" not in after
    assert '"#f8c1c1"' in before  # the removed BatchNorms in red
    changes = at.dataframe[0].value
    assert set(changes[changes["change"] == "removed"]["node"]) == {"bn1", "bn2"}


def test_stepping_to_the_fusion_pass_shows_its_changes() -> None:
    at = open_page(GRAPH)
    step_to(at, "ConvActivationFusionPass")
    assert not at.exception
    assert "FusedConv" in drawings(at)[1]
    changes = at.dataframe[0].value
    assert {"op", "body"} <= set(changes[changes["node"] == "relu1"]["change"])
    assert "ConvActivationFusionPass" in texts(at)


def test_unhidden_unchanged_pass_draws_one_graph_in_category_colours() -> None:
    at = open_page(GRAPH)
    at.checkbox(key=HIDE_KEY).uncheck().run()
    slider = at.select_slider(key=STEP_KEY)
    assert any("unchanged" in o for o in slider.options)
    slider.set_value(0).run()
    assert not at.exception
    assert len(drawings(at)) == 1 and "left the graph as it was" in texts(at)
    assert '"#f6b26b"' in drawings(at)[0]  # Conv in the cube colour


def test_selecting_a_node_shows_the_inspector_and_outlines_it() -> None:
    at = open_page(GRAPH)
    at.selectbox(key=NODE_KEY).set_value("conv1").run()
    assert not at.exception
    text = texts(at)
    assert "**Conv** `conv1`" in text and "changed by this pass" in text
    tables = [df.value for df in at.dataframe]
    inputs = next(t for t in tables if "slot" in t.columns)
    assert list(inputs["slot"]) == ["X", "W", "B"] and list(inputs["shape"])[1] == "[16, 3, 3, 3]"
    assert any("peripheries=2" in s for s in drawings(at))  # outlined on both sides
    at.button_group(key=CONSUMERS_KEY).set_value("relu1").run()  # a consumer pill: go to relu1
    assert at.selectbox(key=NODE_KEY).value == "relu1" and "**Relu** `relu1`" in texts(at)


def test_search_narrows_the_picker_and_finds_body_nodes() -> None:
    at = open_page(GRAPH)
    step_to(at, "ConvActivationFusionPass")
    at.text_input(key=QUERY_KEY).set_value("conv").run()
    options = at.selectbox(key=NODE_KEY).options
    assert options[:2] == ["Conv · relu1 › conv1", "Conv · relu2 › conv2"]
    assert "FusedConv · relu1" in options and "Conv · conv1 (removed by this pass)" in options


def test_a_fused_node_expands_to_its_body() -> None:
    at = open_page(GRAPH)
    step_to(at, "ConvActivationFusionPass")
    at.selectbox(key=NODE_KEY).set_value("relu1").run()
    body = next(df.value for df in at.dataframe if "op" in df.value.columns and "node" in df.value.columns
                and "fused body" in df.value.columns)
    assert list(body["op"]) == ["Conv", "Relu"]
    at.button(key="ge_graph_expand_selected").click().run()
    assert at.multiselect(key=EXPAND_KEY).value == ["relu1"]
    assert "subgraph cluster_" in drawings(at)[1]


def test_focus_around_the_selected_node() -> None:
    at = open_page(GRAPH, "transformer_encoder")
    at.selectbox(key=NODE_KEY).set_value("attn.q.matmul").run()
    at.button_group(key=FOCUS_KEY).set_value("around").run()
    assert not at.exception
    assert md_escape("Drawing the nodes within 2 edge(s) of 'attn.q.matmul'") in texts(at)


def test_clickable_drawing_and_click_mapping() -> None:
    at = open_page(GRAPH)
    at.button_group(key=RENDERER_KEY).set_value("echarts").run()
    assert not at.exception and drawings(at) == []
    assert len(at.get("echarts_chart")) == 2  # before and after
    event = {"selection": {"selected": [{"series_index": 0, "data_type": "node", "data_indices": [2]}]}}
    assert clicked_item(event, ["in:x", "conv1", "relu1"]) == "relu1"
    assert clicked_item({"selection": {"selected": []}}, ["a"]) is None
    assert clicked_item({"selection": {"selected": [{"data_type": "edge", "data_indices": [0]}]}}, ["a"]) is None


def test_o0_draws_the_graph_as_imported() -> None:
    at = open_page(GRAPH)
    at.button_group(key=OPT_KEY).set_value("O0").run()
    assert not at.exception
    assert "No pass ran" in at.info[0].value and len(drawings(at)) == 1


@pytest.mark.slow
def test_densenet121_stays_within_the_node_cap() -> None:
    at = open_page(GRAPH, "densenet121")
    assert not at.exception and not at.error
    sources = drawings(at)
    assert len(sources) == 2 and sum(len(DOT_BOX.findall(s)) for s in sources) <= 1500
    assert "Folded" in texts(at)  # the user is told what is folded


def test_search_hits_are_outlined_in_the_drawing() -> None:
    at = open_page(GRAPH)
    at.text_input(key=QUERY_KEY).set_value("relu").run()
    after = drawings(at)[1]
    outlined = [line for line in after.splitlines() if 'penwidth=3, color="#1565c0"' in line]
    assert len(outlined) == 2 and all("<b>Relu</b>" in line for line in outlined)


def test_the_page_keeps_its_state_across_a_visit_to_another_page() -> None:
    at = open_page(GRAPH)
    step = step_to(at, "ConvActivationFusionPass").select_slider(key=STEP_KEY).value
    at.selectbox(key=NODE_KEY).set_value("relu2").run()
    at.switch_page("pages/3_Passes.py").run()
    at.switch_page(GRAPH).run()
    assert not at.exception
    assert at.select_slider(key=STEP_KEY).value == step and at.selectbox(key=NODE_KEY).value == "relu2"
    assert md_escape("ge::FusedConv") + "** `relu2`" in texts(at)


def test_uploaded_densenet121_at_o0_is_folded_under_the_cap() -> None:
    at = open_page(GRAPH)
    at.sidebar.radio[0].set_value("Upload").run()
    data = (LIGHT_DIR / "light_densenet121.onnx").read_bytes()
    at.sidebar.file_uploader[0].set_value(("densenet121.onnx", data, "application/octet-stream")).run()
    at.button_group(key=OPT_KEY).set_value("O0").run()
    assert not at.exception and not at.error
    (source,) = drawings(at)
    assert len(DOT_BOX.findall(source)) <= 1500 and "of 1,746 nodes" in texts(at)
    assert md_escape("1,078 nodes that only compute constants") in texts(at)  # the user is told what is folded


def test_a_changed_drawing_is_drawn_afresh_not_updated_in_place() -> None:
    at = open_page(GRAPH)
    first = len(at.get("empty"))  # an empty element before each chart every other change moves it
    moved = len(step_to(at, "ConvActivationFusionPass").get("empty"))
    assert moved != first
    assert len(at.run().get("empty")) == moved  # nothing changed: the charts stay where they are


def test_opening_a_folded_scope_box() -> None:
    at = open_page(GRAPH, "bert_encoder_torch")
    at.number_input(key=SCOPE_KEY).set_value(3).run()
    boxes = at.multiselect(key=OPENED_KEY)
    assert "scope m/encoder/layer.0" in boxes.options
    assert "m/encoder/layer.0" in drawings(at)[1] and "50 nodes, folded" in drawings(at)[1]
    at.multiselect(key=OPENED_KEY).set_value(["scope:m/encoder/layer.0"]).run()
    assert not at.exception
    after = drawings(at)[1]
    assert "scope m/encoder/layer.1</b>" in after and "scope m/encoder/layer.0</b>" not in after
    assert "scope m/encoder/layer.0/attention</b>" in after  # opened: its sub-scopes show (depth 4 > 3)
    assert at.multiselect(key=OPENED_KEY).value == ["scope:m/encoder/layer.0"]


def test_a_refused_model_says_so_and_points_to_debug() -> None:
    at = open_page(GRAPH, "unsupported_op")
    assert not at.exception
    assert len(at.error) == 1 and "The compile did not finish" in texts(at)
    assert drawings(at) == []
