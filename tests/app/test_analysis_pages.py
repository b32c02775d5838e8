"""The Fusion, Memory, Profile and Compare pages through AppTest: what they show is what ge_core computes
for the model on screen (tables row for row, headline numbers), their controls work, the hardware target
travels in the sidebar and the address, and an unknown option in the address says so on the page."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import ge_core
from ge_core import CompileConfig, MemoryConfig
from ge_core.samples.registry import DEFAULT_SAMPLE, get_sample, sample_bytes
from ge_core.viz import (
    ComparisonSpec,
    alive_at_peak,
    format_bytes,
    fusion_decisions,
    peak_of,
    plan_for,
    profile_table,
)
from tests.app.apptest import APP, canvas, click_canvas, overlay, pane_nodes
from tests.app.models import tiny_model
from workbench_ui.analysis import PAGE_ROWS, chart_pick
from workbench_ui.charts import PICK
from workbench_ui.hardware_picker import HARDWARE_KEY, HARDWARE_PARAM, PROFILE_KIND, upload_problems
from workbench_ui.model_picker import SAMPLE_KEY
from workbench_ui.upload_store import UploadGone
from workbench_ui.uploads import upload_store

FUSION, MEMORY, PROFILE, COMPARE = (f"app_pages/{name}.py" for name in ("fusion", "memory", "profile", "compare"))
PAGES = (FUSION, MEMORY, PROFILE, COMPARE)
TIMEOUT = 180


def open_page(path: str, **query: str) -> AppTest:
    """A fresh session on the landing page with `query` in the address, then a switch to `path`."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for name, value in query.items():
        at.query_params[name] = value
    return at.run().switch_page(path).run()


def compiled_as_the_page(sample: str = DEFAULT_SAMPLE, hardware: str | None = None,
                         opt_level: str = "O3") -> ge_core.CompiledModel:
    """What the sidebar compiles: the sample's own input shapes, every pass verified."""
    config = CompileConfig(opt_level=opt_level, hardware=hardware, verify=True,
                           input_shapes=get_sample(sample).input_shapes)
    return ge_core.compile(sample_bytes(sample), config)


def texts(at: AppTest) -> str:
    return "\n".join(e.value for e in [*at.markdown, *at.caption, *at.info, *at.warning, *at.error])


def metric(at: AppTest, label: str) -> str:
    (found,) = [m.value for m in at.metric if m.label == label]
    return str(found)


def frame_with(at: AppTest, column: str) -> pd.DataFrame:
    """The first table on the page with `column`."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def plain(text: str) -> str:
    return text.replace("\\", "")


@pytest.mark.parametrize("path", PAGES)
def test_each_page_opens_on_the_default_sample(path: str) -> None:
    at = open_page(path)
    assert not at.exception and not at.error
    assert "What am I looking at?" in texts(at) and "densenet121" in texts(at)
    assert at.selectbox(key=SAMPLE_KEY).value == DEFAULT_SAMPLE


def test_the_fusion_log_is_ge_cores_log_row_for_row() -> None:
    at = open_page(FUSION)
    expected = fusion_decisions(compiled_as_the_page().records)
    log = at.dataframe[1].value
    assert log[["#", "pass", "pattern", "accepted", "reason"]].to_dict("records") == \
        expected[["#", "pass", "pattern", "accepted", "reason"]].to_dict("records")
    assert f"{len(expected)} candidates, {int(expected['accepted'].sum())} applied" in plain(texts(at))
    at.segmented_control(key="ge_fusion_outcome").set_value("rejected").run()
    rejected = at.dataframe[1].value
    assert len(rejected) == int((~expected["accepted"]).sum()) and not rejected["accepted"].any()


def test_a_rejected_decision_is_shown_with_its_reason_and_outlined_on_the_graph() -> None:
    at = open_page(FUSION)
    expected = fusion_decisions(compiled_as_the_page().records)
    first = expected[~expected["accepted"]].iloc[0]
    assert f"Why:** {first['reason']}" in plain(texts(at))
    before, after = canvas(at, "ge_fusion_canvas")["panes"]
    nodes = str(first["nodes"]).split(", ")
    assert set(overlay(before, "candidate")) == set(nodes) <= set(pane_nodes(before))
    assert set(overlay(after, "left as is")) <= set(nodes)  # rejected: the same nodes after the pass


def test_an_unknown_decision_in_the_address_says_so() -> None:
    at = open_page(FUSION, decision="9999")
    assert not at.exception
    assert any("decision 9999" in w.value for w in at.warning)


def test_a_node_clicked_on_the_fusion_graph_lists_its_fusions() -> None:
    at = open_page(FUSION)
    before, _ = canvas(at, "ge_fusion_canvas")["panes"]
    node = next(iter(overlay(before, "candidate")))
    at = click_canvas(at, "ge_fusion_canvas", node)
    assert not at.exception
    history = at.dataframe[-1].value
    assert len(history) >= 1 and {"pass", "pattern", "applied", "role", "reason"} <= set(history.columns)


def test_the_memory_page_shows_the_plans_peak_and_what_is_alive_there() -> None:
    at = open_page(MEMORY)
    plan = compiled_as_the_page().memory
    assert plan is not None
    assert metric(at, "Peak live bytes") == format_bytes(peak_of(plan)["live_bytes"])
    assert metric(at, "Lower bound") == format_bytes(plan.theory_min_bytes)
    assert metric(at, "Arena") == format_bytes(plan.arena_bytes)
    alive = at.dataframe[0].value if "share" in at.dataframe[0].value else at.dataframe[1].value
    assert sorted(alive["tensor"]) == sorted(alive_at_peak(plan))


def test_a_memory_switch_re_plans_the_arena() -> None:
    at = open_page(MEMORY, view="What each switch would do")  # the switches sit above the tabs
    compiled = compiled_as_the_page()
    at.toggle(key="ge_memory_reuse").set_value(False).run()
    assert not at.exception
    expected = plan_for(compiled, MemoryConfig(reuse=False)).arena_bytes
    assert metric(at, "Arena") == format_bytes(expected)
    at.toggle(key="ge_memory_switch_table").set_value(True).run()
    assert not at.exception and any("switch" in d.value.columns for d in at.dataframe)


def test_memory_on_densenet121_for_ascend910_shows_device_bytes() -> None:
    at = open_page(MEMORY, sample="densenet121", **{HARDWARE_PARAM: "ascend910"})
    assert not at.exception and not at.error
    plan = compiled_as_the_page("densenet121", "ascend910").memory
    assert plan is not None
    assert metric(at, "Peak live bytes") == format_bytes(peak_of(plan)["live_bytes"])
    assert "device bytes" in texts(at)
    assert at.selectbox(key=HARDWARE_KEY).value == "ascend910"


def test_the_profile_page_simulates_on_the_default_target_when_the_sidebar_names_none() -> None:
    at = open_page(PROFILE)
    assert not at.exception and not at.error
    assert any("ascend910" in i.value for i in at.info)
    result = ge_core.simulate(compiled_as_the_page(hardware="ascend910"), run=False)
    assert metric(at, "Total latency") == f"{result.total_us:,.1f} µs"
    ops = next(d.value for d in at.dataframe if "tiling" in d.value.columns)
    assert list(ops["node"]) == list(profile_table(result)["node"])[:PAGE_ROWS]
    slowest = max(result.ops, key=lambda r: r.latency_us)
    assert metric(at, "Slowest op") == slowest.node
    assert f"**{slowest.bound}-bound**" in texts(at)


def test_profile_in_fp16_compares_the_npus_outputs_with_the_cpus() -> None:
    at = open_page(PROFILE, precision="force_fp16", view="NPU vs CPU")
    at.toggle(key="ge_profile_numbers").set_value(True).run()
    assert not at.exception
    outputs = next(d.value for d in at.dataframe if "rel_error" in d.value.columns)
    assert len(outputs) >= 1 and (outputs["rel_error"] > 0).all()  # fp16 rounds: never exactly the CPU's


def test_an_unknown_precision_or_hardware_in_the_address_says_so() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params[HARDWARE_PARAM] = "tpu9"
    at.query_params["precision"] = "fp8"
    at.run()
    assert any("tpu9" in w.value for w in at.sidebar.warning)
    assert at.selectbox(key=HARDWARE_KEY).value == "none"
    at.switch_page(PROFILE).run()
    assert not at.exception
    assert any("fp8" in w.value for w in at.warning)


def test_an_edited_profile_with_a_bad_field_is_refused_naming_it() -> None:
    at = open_page(PROFILE, view="Downloads and profile", **{HARDWARE_PARAM: "ascend910"})
    (area,) = [a for a in at.text_area if a.key.startswith("ge_profile_edit")]
    data = json.loads(area.value)
    data["cores"]["ai_cores"] = -1
    area.set_value(json.dumps(data)).run()
    at.button(key="ge_profile_use").click().run()
    assert not at.exception
    assert any("field 'cores.ai_cores' must be a positive integer" in plain(e.value) for e in at.error)
    data["cores"]["ai_cores"] = 8  # a good edit becomes the sidebar's target
    next(a for a in at.text_area if a.key.startswith("ge_profile_edit")).set_value(json.dumps(data)).run()
    at.button(key="ge_profile_use").click().run()
    assert not at.exception and at.selectbox(key=HARDWARE_KEY).value == "upload"
    assert str(at.query_params[HARDWARE_PARAM]).startswith("upload:")
    assert "edited.json" in at.subheader[0].value.replace("\\", "")  # the page simulates on it


def test_an_uploaded_profile_is_checked_field_by_field() -> None:
    assert any("bandwidth" in p for p in upload_problems("mine.json", b'{"extends": "ascend910", '
                                                                       b'"memory_bandwidth_gbps": 0}'))
    assert upload_problems("mine.json", b"not json")[0].startswith("'mine.json' is not JSON")
    good = b'{"extends": "ascend910", "name": "mine", "title": "Mine"}'
    assert upload_problems("mine.json", good) == []
    kept = upload_store().put("owner-a", "mine.json", PROFILE_KIND, good)  # what the picker keeps (issue 41)
    assert ge_core.load_profile(str(kept.path)).name == "mine"
    with pytest.raises(UploadGone):  # another browser session's address to it opens nothing
        upload_store().get("owner-b", kept.id)


def test_compare_shows_o1_against_o3_with_the_compiles_numbers() -> None:
    at = open_page(COMPARE)
    assert not at.exception and not at.error
    metrics = frame_with(at, "kernels_delta")
    assert list(metrics["config"]) == ["O1", "O3"]
    for level, kernels in zip(("O1", "O3"), metrics["kernels"], strict=True):
        assert kernels == compiled_as_the_page(hardware="ascend910", opt_level=level).plan.kernels
    assert metrics["kernels_delta"].iloc[1] == metrics["kernels"].iloc[1] - metrics["kernels"].iloc[0]
    glance = frame_with(at, "metric").set_index("metric")
    assert glance.at["kernels", "O3 Δ"] == f"{metrics['kernels_delta'].iloc[1]:+,.0f}"


def test_a_comparison_in_the_address_is_the_one_shown() -> None:
    spec = ComparisonSpec.of(f"sample:{DEFAULT_SAMPLE}", [("plain", CompileConfig(opt_level="O0")),
                                                         ("fused", CompileConfig(opt_level="O3"))])
    at = open_page(COMPARE, cmp=spec.to_address())
    assert not at.exception
    assert list(frame_with(at, "kernels_delta")["config"]) == ["plain", "fused"]
    broken = open_page(COMPARE, cmp="not-a-comparison")
    assert not broken.exception and any("cannot be read" in e.value for e in broken.error)
    assert list(frame_with(broken, "kernels_delta")["config"]) == ["O1", "O3"]


def test_bert_on_profile_and_compare() -> None:
    for path in (PROFILE, COMPARE):
        at = open_page(path, sample="bert_encoder_torch")
        assert not at.exception and not at.error, path
        assert len(at.dataframe) >= 2


def test_a_third_configuration_added_in_the_editor_is_compared_and_lands_in_the_address() -> None:
    at = open_page(COMPARE)
    at.slider[0].set_value(3).run()
    (name,) = [t for t in at.text_input if t.key.startswith("ge_cmp_name_2")]
    name.set_value("no fusion")
    (off,) = [m for m in at.multiselect if m.key.startswith("ge_cmp_off_2")]
    off.set_value(["UbFusionPass", "ConvActivationFusionPass"])
    at.form_submit_button[0].click().run()
    assert not at.exception and not at.error
    metrics = frame_with(at, "kernels_delta")
    assert list(metrics["config"]) == ["O1", "O3", "no fusion"]
    assert metrics["kernels"].iloc[2] > metrics["kernels"].iloc[1]  # nothing fused: more kernels than O3
    spec = ComparisonSpec.from_address(str(at.query_params["cmp"]))
    assert [n for n, _ in spec.configs] == ["O1", "O3", "no fusion"]


def test_all_fusion_off_is_one_checkbox_and_the_headline_compares_best_and_worst() -> None:
    """Issue 40, friction 7: a third configuration with every fusion pass off, in one click (and Compare)."""
    at = open_page(COMPARE)
    at.slider[0].set_value(3).run()
    (name,) = [t for t in at.text_input if t.key.startswith("ge_cmp_name_2")]
    name.set_value("no fusion")
    (no_fusion,) = [c for c in at.checkbox if c.key.startswith("ge_cmp_nofusion_2")]
    no_fusion.check()
    at.form_submit_button[0].click().run()
    assert not at.exception and not at.error
    spec = ComparisonSpec.from_address(str(at.query_params["cmp"]))
    assert spec.configs[2][1].disabled_passes == frozenset(ge_core.fusion_pass_names())
    assert len(ge_core.fusion_pass_names()) == 7
    metrics = frame_with(at, "kernels_delta").set_index("config")
    fastest, slowest = metrics["simulated_us"].idxmin(), metrics["simulated_us"].idxmax()
    headline = next(m.value for m in at.markdown if m.value.startswith("On **"))
    assert f"the fastest, `{fastest}`, against the slowest, `{slowest}`" in headline
    charts = [c.proto.spec for c in at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")]
    assert charts and all('"sort": ["O1", "O3", "no fusion"]' in c for c in charts)  # bars in the table's order


def test_every_page_works_on_an_uploaded_model() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.sidebar.radio[0].set_value("Upload").run()
    at.sidebar.file_uploader[0].set_value(("tiny.onnx", tiny_model(), "application/octet-stream")).run()
    for path in PAGES:
        at.switch_page(path).run()
        assert not at.exception and not at.error, path
        assert "tiny.onnx" in plain(at.subheader[0].value), path
    assert set(frame_with(at, "kernels_delta")["status"]) == {"ok"}  # Compare ran on the upload's bytes


def test_a_click_on_a_chart_mark_selects_its_node(monkeypatch: pytest.MonkeyPatch) -> None:
    """st.altair_chart's selection state, as Streamlit hands it to the on_select callback."""
    picked: list[str] = []
    state = {"chart": SimpleNamespace(selection={PICK: [{"node": "conv1", "step": 3}]}),
             "empty": SimpleNamespace(selection={PICK: []})}
    monkeypatch.setattr(st, "session_state", state)
    chart_pick("chart", PICK, "node", picked.append)()
    chart_pick("empty", PICK, "node", picked.append)()  # a click beside every mark selects nothing
    assert picked == ["conv1"]


def test_the_profile_pages_tabs_run_only_the_open_one_and_live_in_the_address() -> None:
    at = open_page(PROFILE)
    assert not at.exception and not at.get("vega_lite_chart")  # Operators: tables, no chart drawn
    assert any("tiling" in d.value.columns for d in at.dataframe)
    at = open_page(PROFILE, view="Timeline per unit")
    assert not at.exception and len(at.get("vega_lite_chart")) == 2  # utilisation and the Gantt
    assert not any("tiling" in d.value.columns for d in at.dataframe)  # the Operators tab did not run
    at = open_page(PROFILE, view="Gantt")
    assert not at.exception and any("`Gantt`" in w.value and "Operators" in w.value for w in at.warning)


def test_the_memory_pages_planner_chart_is_a_tab_of_its_own() -> None:
    at = open_page(MEMORY)
    assert not at.exception and len(at.get("vega_lite_chart")) == 1  # the live bytes, not the planner chart
    at = open_page(MEMORY, view="Planner chart")
    (chart,) = at.get("vega_lite_chart")
    assert not at.exception and chart.proto.id.endswith("-ge_memory_planner")


def test_the_compare_pages_sections_are_tabs_and_only_the_open_one_runs() -> None:
    at = open_page(COMPARE, hw="ascend910")
    assert not at.exception and any("kernels_delta" in d.value.columns for d in at.dataframe)
    assert not at.get("bidi_component")  # the graphs' canvas did not run
    at = open_page(COMPARE, hw="ascend910", view="Latency per op")
    assert not at.exception and not any("kernels_delta" in d.value.columns for d in at.dataframe)
    assert any(c.endswith("delta_us") for d in at.dataframe for c in d.value.columns)
    at = open_page(COMPARE, view="Graphs side by side")
    assert not at.exception and len(canvas(at, "ge_compare_canvas")["panes"]) == 2
