"""A GE graph dump on the pages, through AppTest: the dump sample (ResNet-50's Build stage) on the Model, Graph,
Profile, Passes, Memory, Dynamic, Fusion and Debug pages; an uploaded zip of a dump folder stepped on the Graph
page with the diff; our compile beside GE's Build graph on the Compare page."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import ge_core
from ge_core.debugging import load_ge_dump
from ge_core.debugging.ge_stages import GeDumpOptions, write_ge_dumps
from ge_core.samples import sample_bytes
from tests.app.apptest import APP, canvas, open_page
from workbench_ui.ge_compare_view import GE_PARAM
from workbench_ui.ge_log_view import PASTE_KEY
from workbench_ui.graph_canvas import CANVAS_KEY
from workbench_ui.graph_controls import HIDE_KEY, STEP_KEY
from workbench_ui.model_picker import SAMPLE_KEY, SOURCE_KEY

DUMP = "ge_resnet50_build"
PAGES = "app_pages"


def texts(at: AppTest) -> str:
    """Every text on the page, Markdown escapes taken out."""
    shown = [*at.markdown, *at.caption, *at.info, *at.success, *at.warning, *at.error]
    return "\n".join(e.value for e in shown).replace("\\", "")


def on_dump(page: str) -> AppTest:
    at = open_page(f"{PAGES}/{page}.py", DUMP)
    assert not at.exception, at.exception
    return at


@pytest.fixture(scope="module")
def dump_zip(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A dump folder of every stage (DUMP_GRAPH_LEVEL=1) of conv_bn_relu at O3 for the 310, zipped."""
    folder = tmp_path_factory.mktemp("dump")
    config = ge_core.CompileConfig(opt_level="O3", hardware="ascend310")
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"), config)
    files = write_ge_dumps(compiled, folder, GeDumpOptions(2, "1", ("ge_proto",)))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            archive.write(path, f"pid_1_deviceid_0/{path.name}")
    return buffer.getvalue()


def test_the_picker_offers_the_dump_samples_last_in_a_group_of_their_own() -> None:
    at = AppTest.from_file(APP, default_timeout=120).run()
    options = at.sidebar.selectbox(key=SAMPLE_KEY).options
    dumps = [o for o in options if o.startswith("GE dump · ")]
    assert dumps and options[-len(dumps):] == dumps
    assert "ResNet-50 GE Build dump" in dumps[0]


def test_the_model_page_shows_the_dump_with_ges_types() -> None:
    at = on_dump("model")
    assert any("A GE graph dump" in s.value for s in at.success)
    assert next(m.value for m in at.metric if m.label == "Nodes") == "171"  # the ops the file lists
    assert "Besides the ops below, the dump lists" in texts(at)  # Data, Const, NetOutput named, not drawn
    graph = load_ge_dump(sample_bytes(DUMP), "ge_proto_00000003_graph_1_Build.txt").graph
    assert any(n.op_type == "TransData" for n in graph.nodes)
    assert canvas(at, "ge_model_canvas")["panes"]


def test_the_graph_page_on_a_one_stage_dump_says_there_is_nothing_to_step() -> None:
    at = on_dump("graph")
    assert "This dump holds one stage" in texts(at)


def test_an_uploaded_dump_folder_steps_through_ges_stages_with_the_diff(dump_zip: bytes) -> None:
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.sidebar.radio(key=SOURCE_KEY).set_value("Upload").run()
    at.sidebar.file_uploader[0].set_value(("pid_1_deviceid_0.zip", dump_zip, "application/zip")).run()
    at.switch_page(f"{PAGES}/graph.py").run()
    assert not at.exception, at.exception
    at.checkbox(key=HIDE_KEY).set_value(True).run()
    slider = at.select_slider(key=STEP_KEY)
    fusing = next(o for o in slider.options if "ConvActivationFusionPass" in o)
    slider.set_value(int(fusing.split(" · ")[0])).run()
    assert not at.exception, at.exception
    panes = canvas(at, CANVAS_KEY)["panes"]
    assert [p["label"] for p in panes] == ["before", "after"]  # it changed the graph: both sides, diff coloured
    assert "GE's OptimizeStage1_ConvActivationFusionPass dump" in texts(at)


def test_the_profile_page_prices_the_mapped_ops_and_names_the_rest() -> None:
    at = on_dump("profile")
    assert any(m.label == "Total latency" for m in at.metric)
    assert "unpriced" in texts(at) or "all of it is priced" in texts(at)


@pytest.mark.parametrize(("page", "said"), [("memory", "GE planned its memory"),
                                            ("dynamic", "nothing to recompile"),
                                            ("passes", "GE ran its own passes")])
def test_pages_that_do_not_apply_to_a_dump_say_so(page: str, said: str) -> None:
    at = on_dump(page)
    assert said in texts(at)


def test_the_fusion_page_opens_on_a_dump() -> None:
    on_dump("fusion")


def test_a_log_naming_a_dumped_op_marks_it_on_the_debug_page() -> None:
    graph = load_ge_dump(sample_bytes(DUMP), "ge_proto_00000003_graph_1_Build.txt").graph
    target = next(n for n in graph.nodes if n.op_type == "TransData").name
    at = on_dump("debug")
    log = (f"[ERROR] GE(1234,atc):2024-01-01-00:00:00.000.000 [task_builder.cc:10]1234 Build: ErrorNo: 4294967295"
           f"(failed) [COMP][BUILD]Failed to build op [{target}].\n"
           f"E40021: Failed to compile Op [{target}]. (oppath: [x], optype: [TransData])\n")
    at.text_area(key=PASTE_KEY).set_value(log).run()
    assert not at.exception, at.exception
    assert any("Found on the dumped graph" in s.value and target in s.value for s in at.success)
    overlays = canvas(at, "ge_debug_dump_canvas")["panes"][0]["overlays"]
    assert any("named in the log" in str(o) for o in overlays)


def test_the_compare_page_puts_our_compile_beside_ges_build_graph() -> None:
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["sample"] = "resnet50"
    at.query_params[GE_PARAM] = DUMP
    at.run().switch_page(f"{PAGES}/compare.py").run()
    assert not at.exception, at.exception
    labels = {m.label: m.value for m in at.metric}
    assert labels["TransData: ours | GE's"].split(" | ")[1] != "0"
    assert "Kernels by op type" in texts(at)


def test_the_compare_page_on_a_dump_says_configurations_do_not_apply() -> None:
    at = on_dump("compare")
    assert "comparing configurations compiles a model several ways" in texts(at)


def test_a_dump_file_uploaded_opens_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.sidebar.radio(key=SOURCE_KEY).set_value("Upload").run()
    text = sample_bytes(DUMP)
    at.sidebar.file_uploader[0].set_value(("ge_proto_00000003_graph_1_Build.txt", text, "text/plain")).run()
    assert not at.exception, at.exception
    assert any("A GE graph dump" in s.value for s in at.success)
    at.sidebar.file_uploader[0].set_value(("ge_proto_00000004_graph_1_Build.txt", text[: len(text) // 2],
                                           "text/plain")).run()
    assert not at.exception, at.exception
    refusal = [e.value.replace("\\", "") for e in at.error]
    assert any("ge_proto_00000004_graph_1_Build.txt" in e and "line" in e for e in refusal), refusal
