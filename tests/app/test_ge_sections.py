"""The sections for what real GE left behind, through AppTest: a GE log on the Debug page (example, paste,
upload, a refusal) and GE's fusion_result.json beside ours on the Fusion page."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from ge_core.debugging import chain_frame, example_ge_log, parse_ge_log_text
from tests.app.apptest import APP, download_buttons
from workbench_ui.ge_fusion_view import UPLOAD_KEY as FUSION_UPLOAD_KEY
from workbench_ui.ge_log_view import EXAMPLE_PARAM, PASTE_KEY
from workbench_ui.ge_log_view import UPLOAD_KEY as LOG_UPLOAD_KEY
from workbench_ui.model_picker import SAMPLE_KEY

DEBUG, FUSION = "app_pages/debug.py", "app_pages/fusion.py"
SAMPLE = "conv_bn_relu"
GE_FUSION = Path(__file__).parents[1] / "debugging" / "ge_fusion"
LOGS = Path(__file__).parents[1] / "debugging" / "ge_logs"


def open_page(path: str, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params[SAMPLE_KEY] = SAMPLE
    for name, value in query.items():
        at.query_params[name] = value
    return at.run().switch_page(path).run()


def plain(text: str) -> str:
    return text.replace("\\", "")


def chain_table(at: AppTest) -> list[str]:
    return list(next(d.value for d in at.dataframe if "message" in d.value.columns)["message"])


def test_the_example_log_in_the_address_shows_its_chain_first_cause_on_top() -> None:
    at = open_page(DEBUG, **{EXAMPLE_PARAM: "example"})
    assert not at.exception
    first = next(e.value for e in at.error if "First cause" in e.value)
    assert "Failed to assemble op args" in plain(first)
    name, text = example_ge_log()
    assert chain_table(at) == list(chain_frame(parse_ge_log_text(text, name))["message"])
    advice = " ".join(plain(i.value) for i in at.info)
    assert "The fusion engine could not compile one op" in advice  # E20001 in plain words
    assert any(m.label == "Error codes" and m.value == "1" for m in at.metric)


def test_a_pasted_log_and_a_paste_without_errors() -> None:
    at = open_page(DEBUG)
    assert not at.exception and not any("First cause" in e.value for e in at.error)
    text = (LOGS / "plog_paddle_lite_add_graph.log").read_text()
    at.text_area(key=PASTE_KEY).set_value(text).run()
    assert not at.exception
    assert chain_table(at)[0].startswith("ErrorNo: 1343266818(Graph manager add graph failed.)")
    assert EXAMPLE_PARAM not in at.query_params or at.query_params[EXAMPLE_PARAM] in ("", [""])
    at.text_area(key=PASTE_KEY).set_value("all went well\n").run()
    assert any("No error in the 1 lines" in plain(i.value) for i in at.info)


def test_an_uploaded_plog_names_the_ops_and_kernels_and_a_binary_file_is_refused() -> None:
    at = open_page(DEBUG)
    (uploader,) = [u for u in at.file_uploader if u.key == LOG_UPLOAD_KEY]
    uploader.set_value(("plog-3536113.log", (LOGS / "plog_paddle_slice.log").read_bytes(), "text/plain")).run()
    assert not at.exception
    named = " ".join(plain(m.value) for m in at.markdown if "Named in the chain" in m.value)
    assert "`Slice`" in named and "te_slice_5f4f1d52" in named
    (uploader,) = [u for u in at.file_uploader if u.key == LOG_UPLOAD_KEY]
    uploader.set_value(("model.log", b"IMOD\n\x00\x01\x02", "application/octet-stream")).run()
    assert not at.exception
    assert any("'model.log' line 2 holds binary data" in plain(e.value) for e in at.error)


def test_ges_fusion_result_beside_ours_pass_by_pass() -> None:
    at = open_page(FUSION)
    assert not at.exception
    (uploader,) = [u for u in at.file_uploader if u.key == FUSION_UPLOAD_KEY]
    uploader.set_value(("fusion_result.json", (GE_FUSION / "yolov8_list.json").read_bytes(), "application/json"))
    at.run()
    assert not at.exception and not at.error
    frame = next(d.value for d in at.dataframe if "ge_match" in d.value.columns)
    ge_only = frame[frame["present"] == "GE only"]
    assert len(ge_only) == 10 and ge_only["our_match"].isna().all()
    assert {m.label for m in at.metric} >= {"Passes: both", "Passes: GE only", "Passes: ours only"}
    assert "Our fusion_result.json (GE's layout)" in download_buttons(at)


def test_a_file_of_another_schema_is_refused_on_the_fusion_page() -> None:
    at = open_page(FUSION)
    (uploader,) = [u for u in at.file_uploader if u.key == FUSION_UPLOAD_KEY]
    uploader.set_value(("model.json", b'{"nodes": []}', "application/json")).run()
    assert not at.exception
    assert any("holds no fusion counts" in plain(e.value) for e in at.error)
