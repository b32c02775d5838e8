"""Every page through AppTest: each opens fresh on the default sample; Passes and Debug do their jobs."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import ge_core
from ge_core.debugging import DEFAULT_TOLERANCE
from ge_core.passes.cleanup.cse import CsePass
from ge_core.samples.registry import DEFAULT_SAMPLE, sample_bytes
from tests.app.apptest import Downloads, canvas, download_buttons, open_app, open_page, overlay, pane_nodes
from tests.debugging.broken_passes import RefusingPass
from workbench_ui.debug_view import TOLERANCE_KEY
from workbench_ui.navigation import DEBUG_PAGE, PAGES
from workbench_ui.session import DISABLED_KEY, OPT_KEY

PASSES = "app_pages/passes.py"
DEBUG_CANVAS = "ge_debug_canvas"


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> Downloads:
    recorder = Downloads()
    monkeypatch.setattr(st, "download_button", recorder.button)
    return recorder


@pytest.fixture
def fresh_caches() -> Iterator[None]:
    """For tests that change what a compile does: the caches are shared by the whole process."""
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


def texts(at: AppTest) -> str:
    return "\n".join(e.value for e in [*at.markdown, *at.error, *at.success, *at.info, *at.caption])


def pass_rows(at: AppTest) -> list[dict[str, object]]:
    return at.dataframe[0].value.to_dict("records")


@pytest.mark.parametrize("path", [p.path for p in PAGES])
def test_every_page_opens_fresh_on_the_default_sample(path: str) -> None:
    at = open_page(path)
    assert not at.exception and not at.error
    assert "What am I looking at?" in texts(at)
    assert at.selectbox(key="sample").value == DEFAULT_SAMPLE


def test_passes_table_has_one_row_per_record() -> None:
    at = open_page(PASSES)
    compiled = ge_core.compile(sample_bytes(DEFAULT_SAMPLE), opt_level="O3")
    rows = pass_rows(at)
    assert [(r["#"], r["pass"], r["stage"]) for r in rows] == [
        (r.index, r.name, str(r.stage)) for r in compiled.records]
    assert [r["nodes after"] for r in rows] == [r.nodes_after for r in compiled.records]
    assert len(at.expander) == len(compiled.records)  # each pass explained
    assert compiled.records[0].description.split()[0] in at.expander[0].markdown[0].value


def test_the_passes_page_says_whether_the_compile_came_from_the_disk_cache(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A second server start (a fresh process: the in-memory caches are empty) loads the compile from disk."""
    monkeypatch.setenv("GE_CACHE_DIR", str(tmp_path / "cache"))
    st.cache_resource.clear()  # what a new server process starts with
    first = open_page(PASSES)
    assert any("Compiled in" in c.value for c in first.caption), [c.value for c in first.caption]
    st.cache_resource.clear()
    again = open_page(PASSES)
    assert any("Loaded from the compile cache" in c.value for c in again.caption), [c.value for c in again.caption]


def test_turning_a_pass_off_recompiles_and_the_sidebar_follows() -> None:
    at = open_page(PASSES)
    before = pass_rows(at)
    index = next(i for i, r in enumerate(before) if r["pass"] == "CsePass")
    at.toggle[index].set_value(False).run()
    assert not at.exception
    assert at.multiselect(key=DISABLED_KEY).value == ["CsePass"]
    assert "CsePass" not in {r["pass"] for r in pass_rows(at)}
    assert len(pass_rows(at)) == len(before) - 2  # CSE runs twice at O3
    (runs,) = [m for m in at.metric if m.label == "Passes run"]
    assert runs.value == str(len(before) - 2) and runs.delta == "1 switched off"  # says why it went down
    at.multiselect(key=DISABLED_KEY).set_value([]).run()  # the sidebar is the same switch
    assert len(pass_rows(at)) == len(before)
    at.button_group(key=OPT_KEY).set_value("O1").run()
    assert len(pass_rows(at)) == len(ge_core.compile(sample_bytes(DEFAULT_SAMPLE), opt_level="O1").records)


def test_the_dump_zip_downloads(downloads: Downloads) -> None:
    at = open_page(PASSES)
    assert "Download the dumps (zip)" in download_buttons(at)
    with zipfile.ZipFile(io.BytesIO(downloads.press("Download the dumps (zip)"))) as archive:
        names = archive.namelist()
        report = json.loads(archive.read("dumps/report.json"))
    assert len([n for n in names if n.endswith(".txt")]) == len(pass_rows(at)) + 1
    assert [p["name"] for p in report["passes"]] == [r["pass"] for r in pass_rows(at)]


def test_the_debug_page_replays_its_cached_bisection() -> None:
    """A second session, and a tolerance set back to one already used, take the bisection from the cache:
    nothing drawn inside a cached function may break that (CacheReplayClosureError before)."""
    first = open_page(DEBUG_PAGE)
    second = open_page(DEBUG_PAGE)
    assert not first.exception and not second.exception
    table = second.dataframe[0].value
    assert table.equals(first.dataframe[0].value)
    second.number_input(key=TOLERANCE_KEY).set_value(1e-2).run()
    second.number_input(key=TOLERANCE_KEY).set_value(DEFAULT_TOLERANCE).run()
    assert not second.exception
    assert second.dataframe[0].value.equals(table)


@pytest.mark.parametrize("sample, nodes", [("shape_mismatch", ["y", "z"]),
                                           ("unsupported_op", ["split", "joined", "y", "ngrams"])])
def test_a_broken_sample_on_debug_names_its_nodes(sample: str, nodes: list[str]) -> None:
    at = open_page(DEBUG_PAGE, sample)
    assert not at.exception
    assert at.error[0].value.startswith("**Import**")
    headline = at.error[1].value
    assert all(f"\\'{n}\\'" in headline for n in nodes)  # escaped quotes around each node name
    assert "What to do" in headline
    (pane,) = canvas(at, DEBUG_CANVAS)["panes"]  # the graph as imported, each node concerned in red
    assert pane["overlays"][-1][0] == "failure"
    assert set(overlay(pane, "failure")) == set(nodes) <= set(pane_nodes(pane))
    assert canvas(at, DEBUG_CANVAS)["selected"]["id"] == nodes[0]  # centred on the first
    assert any(f"`{nodes[0]}` :gray-badge" in m.value for m in at.markdown)  # and in the inspector beside


def test_a_sample_failing_inside_a_pass_shows_the_failing_pass_and_the_graph_before_it() -> None:
    """Issue 40, friction 6: fails_in_a_pass imports, then ConstantFoldingPass computes a Reshape target
    that does not fit and the graph after it fails verification."""
    at = open_page(DEBUG_PAGE, "fails_in_a_pass")
    assert not at.exception
    assert at.error[0].value.startswith("**Compile**")
    assert "ConstantFoldingPass" in at.error[1].value and "reshaped" in at.error[1].value
    assert any("The graph as it was before ConstantFoldingPass ran" in m.value for m in at.markdown)
    (pane,) = canvas(at, DEBUG_CANVAS)["panes"]
    assert set(overlay(pane, "failure")) == {"reshaped"}


def test_an_uploaded_broken_model_lands_on_debug_with_the_node_named() -> None:
    at = open_app()
    at.sidebar.radio[0].set_value("Upload").run()
    upload = ("broken.onnx", sample_bytes("shape_mismatch"), "application/octet-stream")
    at.sidebar.file_uploader[0].set_value(upload).run()
    assert not at.exception and "node 'y' (MatMul)" in at.error[0].value.replace("\\", "")
    assert any(link.proto.page.endswith("debug.py") or "Debug" in link.proto.label for link in at.get("page_link"))
    at.switch_page(DEBUG_PAGE).run()
    assert not at.exception
    assert "'y'" in at.error[1].value.replace("\\", "") and "broken.onnx" in at.subheader[0].value.replace("\\", "")


@pytest.mark.usefixtures("fresh_caches")
def test_a_failing_pass_shows_pass_stage_and_node_and_can_be_switched_off(
        monkeypatch: pytest.MonkeyPatch, downloads: Downloads, tmp_path: Path) -> None:
    monkeypatch.setattr(CsePass, "run", RefusingPass.run)
    monkeypatch.setenv("GE_CACHE_DIR", str(tmp_path))  # the disk cache knows the source, not this patch
    at = open_page(DEBUG_PAGE)
    assert not at.exception
    headline = at.error[1].value.replace("\\", "")
    assert headline.startswith("Pass CsePass (stage OptimizeOriginalGraph) failed at node '")
    node = headline.split("'")[1]
    assert "CsePass:off" in headline
    assert f"`{node}`" in texts(at)
    (pane,) = canvas(at, DEBUG_CANVAS)["panes"]  # the graph before CsePass, the node in red
    assert pane["graph_id"] == "before_CsePass" and list(overlay(pane, "failure")) == [node]
    with zipfile.ZipFile(io.BytesIO(downloads.press("Download a reproducer (zip)"))) as archive:
        outcome = json.loads(archive.read("config.json"))["outcome"]
    assert outcome["pass"] == "CsePass" and outcome["nodes"] == [node]
    at.switch_page(PASSES).run()
    assert "CsePass" in at.error[0].value and at.get("page_link")
    at.multiselect(key=DISABLED_KEY).set_value(["CsePass"]).run()  # the workaround the error suggests
    assert not at.error and "CsePass" not in {r["pass"] for r in pass_rows(at)}
