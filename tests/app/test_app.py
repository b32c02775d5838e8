"""The Model page (where app.py lands), driven by Streamlit's AppTest (no browser): it loads, switches and refuses."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx
import pytest
from streamlit.testing.v1 import AppTest

from ge_core.frontend import import_onnx
from ge_core.frontend.summary import summarize
from ge_core.samples.registry import DEFAULT_SAMPLE, get_sample, list_samples, sample_bytes
from tests.app.apptest import canvas, click_canvas, overlay, pane_nodes
from tests.app.models import audio_frames_model, symbolic_model, text_line_model, tiny_model
from workbench_ui.model_picker import SAMPLE_KEY
from workbench_ui.sections import TEXT_FORM_KEY
from workbench_ui.text import md_escape

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 60
SAMPLES = {s.name for s in list_samples()}
MODEL_CANVAS = "ge_model_canvas"


def run_app(sample: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if sample is not None:
        at.query_params[SAMPLE_KEY] = sample
    return at.run()


def model_pane(at: AppTest) -> dict[str, Any]:
    """The one pane the Model page's canvas shows."""
    (pane,) = canvas(at, MODEL_CANVAS)["panes"]
    return pane


def inputs_table(at: AppTest) -> list[dict[str, str]]:
    return at.dataframe[0].value.to_dict("records")


def test_default_sample_loads_with_summary_and_graph() -> None:
    at = run_app()
    assert not at.exception
    assert at.selectbox(key=SAMPLE_KEY).value == DEFAULT_SAMPLE
    assert at.subheader[0].value == md_escape(get_sample(DEFAULT_SAMPLE).title)
    summary = summarize(import_onnx(sample_bytes(DEFAULT_SAMPLE)))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Nodes"] == str(summary.nodes)
    assert [row["name"] for row in inputs_table(at)] == [t.name for t in summary.inputs]
    nodes = pane_nodes(model_pane(at))
    assert {n["label"] for n in nodes.values()} >= {"Conv", "Input", "Output"}
    assert len([n for n in nodes if not n.startswith(("input:", "output:"))]) == summary.nodes
    assert model_pane(at)["overlays"][-1][0] == "op category"
    assert "What am I looking at?" in at.markdown[0].value


def test_the_text_form_is_drawn_once_its_expander_is_opened() -> None:
    at = run_app()
    assert not at.code  # closed: not sent (the browser would highlight it even inside a closed expander)
    at.session_state[TEXT_FORM_KEY] = True  # what opening it does (it reruns the page)
    at.run()
    graph = import_onnx(sample_bytes(DEFAULT_SAMPLE)).graph
    assert at.code[0].value.splitlines()[0] == graph.to_text().splitlines()[0]


def test_selecting_another_sample_updates_the_page() -> None:
    at = run_app()
    at.selectbox(key=SAMPLE_KEY).set_value("residual_block").run()
    assert not at.exception
    assert at.subheader[0].value == md_escape(get_sample("residual_block").title)
    summary = summarize(import_onnx(sample_bytes("residual_block")))
    assert {m.label: m.value for m in at.metric}["Nodes"] == str(summary.nodes)
    assert at.query_params[SAMPLE_KEY] == "residual_block"  # ?sample=residual_block: a shareable link


@pytest.mark.parametrize("name", sorted({"unsupported_op", "shape_mismatch"} & SAMPLES))
def test_broken_sample_lists_every_problem_in_one_error(name: str) -> None:
    at = run_app(name)
    assert not at.exception
    summary = summarize(import_onnx(sample_bytes(name)))
    assert not summary.ok
    assert len(at.error) == 1
    box = at.error[0].value
    for op, nodes in summary.unsupported.items():
        assert f"`{op}`" in box
        assert all(f"`{node}`" in box for node in nodes)
    for problem in summary.problems:
        assert md_escape(problem) in box
    marked = overlay(model_pane(at), "op category")  # the graph is still shown, unsupported ops in red
    assert all(marked[node]["value"] == "unsupported" for nodes in summary.unsupported.values() for node in nodes)


def test_an_unknown_sample_in_the_address_says_so() -> None:
    at = run_app("no_such_sample")
    assert not at.exception
    assert at.selectbox(key=SAMPLE_KEY).value == DEFAULT_SAMPLE
    assert len(at.sidebar.warning) == 1 and "no_such_sample" in at.sidebar.warning[0].value
    assert SAMPLE_KEY not in at.query_params  # the address now names what is shown


def test_symbolic_dims_use_the_sample_default_and_the_box() -> None:
    sample = get_sample("mlp")
    at = run_app("mlp")
    assert not at.exception
    box = at.sidebar.text_input[0]
    assert box.value == sample.input_shapes  # "x:2,64"
    name, dims = sample.input_shapes.split(":")
    assert inputs_table(at)[0] == {"name": name, "dtype": "float32", "dims": f"[{dims.replace(',', ', ')}]"}
    box.set_value(f"{name}:5,{dims.split(',')[1]}").run()
    assert not at.exception and not at.error
    assert inputs_table(at)[0]["dims"] == f"[5, {dims.split(',')[1]}]"
    at.sidebar.text_input[0].set_value("").run()  # no spec: the symbolic name shows
    assert "batch" in inputs_table(at)[0]["dims"]


@pytest.mark.parametrize("spec, expected", [("x:two,64", "is not an integer"), ("nope:1,64", "not inputs")])
def test_bad_input_shape_spec_shows_a_clear_error(spec: str, expected: str) -> None:
    at = run_app("mlp")
    at.sidebar.text_input[0].set_value(spec).run()
    assert not at.exception
    assert len(at.error) == 1 and md_escape(expected) in at.error[0].value
    assert at.sidebar.text_input[0].value == spec  # still there to be fixed
    assert at.title[0].value == "GE Workbench"  # the rest of the page renders
    at.sidebar.text_input[0].set_value("x:2,64").run()
    assert not at.error


def test_upload_of_a_model_and_refusal_of_external_data() -> None:
    at = run_app()
    at.sidebar.radio[0].set_value("Upload").run()
    assert not at.exception and at.info  # asks for a file
    at.sidebar.file_uploader[0].set_value(("tiny.onnx", tiny_model(), "application/octet-stream")).run()
    assert not at.exception
    assert at.subheader[0].value == md_escape("tiny.onnx")
    assert "Relu" in {n["label"] for n in pane_nodes(model_pane(at)).values()}
    at.sidebar.file_uploader[0].set_value(("ext.onnx", tiny_model(external=True), "application/octet-stream"))
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and "external data" in at.error[0].value


def test_an_uploaded_model_with_symbolic_dims_gets_the_box_prefilled() -> None:
    at = run_app()
    at.sidebar.radio[0].set_value("Upload").run()
    at.sidebar.file_uploader[0].set_value(("sym.onnx", symbolic_model(), "application/octet-stream")).run()
    assert not at.exception and not at.error
    assert at.sidebar.text_input[0].value == "x:1,4"  # from the declared dims, 1 for the symbolic one
    assert "Prefilled from the model's declared dims" in at.sidebar.caption[-1].value
    assert inputs_table(at)[0]["dims"] == "[1, 4]"
    assert any("every shape is known" in m.value for m in at.markdown)  # a green line, not a box (issue 40)
    at.sidebar.text_input[0].set_value("").run()  # cleared by the user: stays cleared, the sizes open
    assert at.sidebar.text_input[0].value == ""
    assert "known only when the model runs" in at.info[0].value and "Input shapes box" in at.info[0].value
    assert not any("every shape is known" in m.value for m in at.markdown)


@pytest.mark.parametrize("model, prefilled", [(text_line_model, "x:1,3,32,224"), (audio_frames_model, "x:1,224,1")])
def test_an_upload_is_prefilled_with_sizes_its_shapes_take(model: Callable[[], bytes], prefilled: str) -> None:
    """Issue 40, friction 5: 1 for each symbolic dim was refused at once (a 3x3 AveragePool on a width of 1,
    as PP-OCR's recognizer; a 256-sample STFT on 1+64 samples, as Silero VAD). A shape typed that the model
    refuses is named as the cause, with sizes to type instead."""
    at = run_app()
    at.sidebar.radio[0].set_value("Upload").run()
    at.sidebar.file_uploader[0].set_value(("m.onnx", model(), "application/octet-stream")).run()
    assert not at.exception and not at.error
    assert at.sidebar.text_input[0].value == prefilled
    at.sidebar.text_input[0].set_value(prefilled.replace("224", "1")).run()
    assert not at.exception
    (warning,) = at.sidebar.warning
    assert "are the cause" in warning.value and f"`{prefilled}`" in warning.value


def test_tiny_model_is_valid() -> None:
    onnx.checker.check_model(onnx.load_from_string(tiny_model()))


def test_a_click_on_the_canvas_inspects_the_node_beside_it() -> None:
    at = run_app("transformer_encoder")
    node = next(n for n in pane_nodes(model_pane(at)) if not n.startswith(("input:", "output:")))
    click_canvas(at, MODEL_CANVAS, node)
    assert not at.exception
    assert at.query_params["node"] == node and canvas(at, MODEL_CANVAS)["selected"]["id"] == node
    assert any(f"`{node}`" in m.value for m in at.markdown)
    assert [b.proto.label for b in at.get("download_button")] == ["Download graph JSON", "Download DOT"]


def test_a_bug_of_ours_is_reported_without_crashing_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    import ge_core.frontend.onnx as frontend

    def broken_reader(source: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(frontend, "read_model", broken_reader)
    at = run_app()
    at.sidebar.radio[0].set_value("Upload").run()
    at.sidebar.file_uploader[0].set_value(("bug.onnx", tiny_model(doc="unique: bug test"), "application/x"))
    at.run()
    assert len(at.error) == 1 and "Internal error" in at.error[0].value and "boom" in at.error[0].value
    assert [e.message for e in at.expander[0].exception] == ["boom"]  # the traceback, tucked away
    assert at.title[0].value == "GE Workbench"
