"""The graph canvas in a real headless Chromium, on the default sample and on real models (resnet50,
densenet121, bert_encoder_torch, synthetic_10k): the canvas draws its panes, a click on a node box selects
that node in the workbench's inspector beside it, the before/after panes stay in step (both select the
node) while stepping through the passes, after a reload and in a second browser session; no page error,
no exception on the page, no traceback in the server's log (conftest checks it after every test).

One server for the module (conftest): a sample's first test pays for its compile. The Model page's canvas,
the Debug page's failure graph and an uploaded model are here too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from ge_core.samples.registry import DEFAULT_SAMPLE
from tests.app.models import tiny_model
from tests.browser.harness import (
    CANVAS_READY,
    SCRATCH,
    SHOTS,
    Server,
    assert_no_exception,
    new_tab,
    skip_unless_available,
    wait_idle,
)

skip_unless_available()

from playwright.sync_api import Browser, Page, expect  # noqa: E402  (after the skip: may be missing)

from tests.browser import canvas  # noqa: E402  (numpy and PIL: only once the browser tests run)

SAMPLES = [DEFAULT_SAMPLE, "resnet50", "densenet121", "bert_encoder_torch", "synthetic_10k"]
NEXT = "▶"
README_SHOTS = ("canvas_resnet50.png", "canvas_synthetic_10k_first.png", "debug_broken_model.png")


def shot(name: str) -> Path:
    """Where a screenshot goes: the README's in docs/screenshots/ (with GE_SCREENSHOTS=1), the rest aside."""
    return SHOTS / name if name in README_SHOTS else SCRATCH / name


@pytest.fixture
def tab(browser: Browser) -> Iterator[Page]:
    with new_tab(browser) as page:
        yield page


def watch_errors(page: Page) -> list[str]:
    """Uncaught errors in the page or its canvas frame, and console errors (Streamlit's own 404s for the
    health check under a page's path aside)."""
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    page.on("console", lambda m: errors.append(f"console: {m.text}")
            if m.type == "error" and "404" not in m.text else None)
    return errors


def inspector_names(page: Page, node: str) -> None:
    """The workbench's inspector (the column beside the canvas, under "Go to a node") shows `node`: its
    header names it as code, after the op in bold."""
    panel = page.get_by_test_id("stColumn").filter(has=page.get_by_role("combobox", name=re.compile("^Go to a node")))
    header = panel.get_by_test_id("stMarkdownContainer").filter(
        has=page.locator("code", has_text=re.compile(f"^{re.escape(node)}$"))).filter(has=page.locator("strong"))
    expect(header.first).to_be_visible()


def open_canvas(page: Page, url: str, panes: int | None = None) -> None:
    page.goto(url)
    page.wait_for_selector(CANVAS_READY)
    canvas.wait_rendered(page, panes, timeout=180)
    wait_idle(page)
    assert_no_exception(page)


def step_ahead(page: Page) -> bool:
    """Press ▶ (the next pass) and wait for the canvas's new panes; False when on the last pass."""
    button = page.get_by_role("button", name=NEXT, exact=True)
    if button.count() == 0 or button.is_disabled():
        return False
    shown = canvas.version(page)
    button.click()
    expect(page.locator(f"{canvas.CANVAS}:not([data-version='{shown}'])")).to_have_count(1)
    canvas.wait_rendered(page, timeout=180)
    wait_idle(page)
    return True


@pytest.mark.parametrize("sample", SAMPLES)
def test_the_graph_canvas_draws_selects_and_steps_in_step(server: Server, browser: Browser, sample: str) -> None:
    url = f"{server.url}/Graph?sample={sample}&colour=category"
    with new_tab(browser) as tab:
        errors = watch_errors(tab)
        open_canvas(tab, url, panes=2)  # first visit: the first pass that changed something, before | after
        tab.screenshot(path=str(shot(f"canvas_{sample}_first.png")))
        # The page's finder opens a node's layer on both panes (a big graph opens on its layers) ...
        node, op = canvas.node_among_others(tab)
        canvas.pick_in_finder(tab, node, op)
        canvas.wait_panes_selected(tab, node)
        # ... then a click on another node box selects that node in the inspector beside the canvas,
        clicked = canvas.click_a_node(tab)
        inspector_names(tab, clicked)
        assert f"node={quote(clicked, safe='')}" in tab.url or f"node={clicked}" in tab.url  # and in the address
        canvas.wait_panes_selected(tab, clicked)  # on both panes
        if step_ahead(tab):  # stepping to the next pass keeps it selected on both sides
            canvas.wait_panes_selected(tab, clicked)
        assert_no_exception(tab)
        address = tab.url
        tab.reload()
        tab.wait_for_selector(CANVAS_READY)
        canvas.wait_rendered(tab, timeout=180)
        wait_idle(tab)
        canvas.wait_panes_selected(tab, clicked)
        tab.screenshot(path=str(shot(f"canvas_{sample}.png")))
        assert errors == []
    with new_tab(browser) as other:  # a second session on the same address
        errors = watch_errors(other)
        open_canvas(other, address)
        canvas.wait_panes_selected(other, clicked)
        assert errors == []


def test_the_next_pass_is_drawn_ahead_and_shown_at_once(server: Server, tab: Page) -> None:
    """Once the canvas has drawn and been calm, it draws the panes ▶ leads to beneath it (asking the page
    again while they are still being built); ▶ then shows that frame, no new one loaded, with the node
    picked since selected, and the same graphs a fresh load of the address draws."""
    errors = watch_errors(tab)
    open_canvas(tab, f"{server.url}/Graph?sample=resnet50&colour=category", panes=2)
    node, op = canvas.node_among_others(tab)
    canvas.pick_in_finder(tab, node, op)  # its layer opened, so node boxes are drawn to click
    canvas.wait_panes_selected(tab, node)
    clicked = canvas.click_a_node(tab)  # picked after the next pass was planned: the frame shown follows
    canvas.wait_panes_selected(tab, clicked)
    ahead = tab.locator(f"{canvas.CANVAS} iframe.ge-canvas-ahead")
    expect(ahead).to_have_count(1, timeout=60_000)
    drawn_ahead, ahead_version = ahead.get_attribute("src"), ahead.get_attribute("data-version")
    assert step_ahead(tab)
    assert canvas.version(tab) == ahead_version
    assert tab.locator(canvas.FRAME).get_attribute("src") == drawn_ahead
    canvas.wait_panes_selected(tab, clicked)
    shown, version = canvas.pane_nodes(tab), canvas.version(tab)
    tab.reload()
    tab.wait_for_selector(CANVAS_READY)
    canvas.wait_rendered(tab, panes=2, timeout=180)
    assert canvas.version(tab) == version and canvas.pane_nodes(tab) == shown
    assert tab.locator(canvas.FRAME).get_attribute("src") != drawn_ahead  # loaded anew this time
    assert_no_exception(tab)
    assert errors == []


def test_the_model_page_canvas_inspects_a_clicked_node(server: Server, tab: Page) -> None:
    errors = watch_errors(tab)
    open_canvas(tab, f"{server.url}/?sample=transformer_encoder", panes=1)
    node = canvas.click_a_node(tab, pane=0)
    inspector_names(tab, node)
    assert canvas.pane_selected(tab) == [node]
    tab.screenshot(path=str(shot("canvas_model.png")))
    assert errors == []


def test_the_debug_page_shows_the_failing_graph_with_the_nodes_concerned(server: Server, tab: Page) -> None:
    errors = watch_errors(tab)
    open_canvas(tab, f"{server.url}/Debug?sample=shape_mismatch", panes=1)
    errors_shown = " ".join(tab.locator("[data-testid='stAlertContentError']").all_inner_texts())
    assert "at nodes 'y', 'z'" in errors_shown
    canvas.wait_panes_selected(tab, "y")  # centred on the first node concerned
    inspector_names(tab, "y")
    red = [b for b in canvas.node_boxes(tab, pane=0) if b.colour[0] > 200 and b.colour[1] < 215]
    assert red, "the nodes concerned are not marked"
    tab.screenshot(path=str(shot("debug_broken_model.png")))
    assert errors == []


def test_an_uploaded_model_opens_on_the_canvas(server: Server, tab: Page) -> None:
    errors = watch_errors(tab)
    open_canvas(tab, f"{server.url}/", panes=1)
    tab.get_by_test_id("stSidebar").get_by_text("Upload", exact=True).click()
    upload = tab.locator("[data-testid='stFileUploaderDropzoneInput']")
    upload.set_input_files(files=[{"name": "tiny.onnx", "mimeType": "application/octet-stream",
                                   "buffer": tiny_model()}])
    expect(tab.locator("h3").first).to_have_text("tiny.onnx")
    canvas.wait_rendered(tab, panes=1, timeout=180)
    wait_idle(tab)
    nodes = canvas.pane_nodes(tab)
    assert nodes == [["add", "relu"]], nodes
    node = canvas.click_a_node(tab, pane=0)
    assert node in ("add", "relu")
    inspector_names(tab, node)
    tab.get_by_role("link", name="Graph").first.click()  # the upload follows the user to the Graph page
    tab.wait_for_selector(CANVAS_READY)
    canvas.wait_rendered(tab, timeout=180)
    wait_idle(tab)
    assert_no_exception(tab)
    assert errors == []


def test_the_back_button_returns_to_the_pass_before_not_into_the_canvas(server: Server, tab: Page) -> None:
    """The canvas keeps its state out of the browser's history (its iframe is made anew, Model Explorer's
    own address changes replace their entry): Back leaves the step, then the page, as for any page."""
    open_canvas(tab, f"{server.url}/Graph", panes=2)
    first = tab.get_by_test_id("stSlider").inner_text()
    entries = tab.evaluate("history.length")
    navigations: list[str] = []  # said when the count is wrong: which frame moved to where
    tab.on("framenavigated",
           lambda f: navigations.append(f"{'page' if f == tab.main_frame else 'frame'} {f.url[:100]}"))
    assert step_ahead(tab)
    assert tab.evaluate("history.length") == entries + 1, navigations  # the step's address, not the canvas's
    shown = canvas.version(tab)
    tab.go_back()
    expect(tab.locator(f"{canvas.CANVAS}:not([data-version='{shown}'])")).to_have_count(1)
    canvas.wait_rendered(tab, panes=2, timeout=180)
    wait_idle(tab)
    assert tab.get_by_test_id("stSlider").inner_text() == first
    assert_no_exception(tab)


def test_open_in_model_explorer_shows_the_snapshot_with_its_overlays(server: Server, tab: Page) -> None:
    """The button opens Model Explorer in a tab of its own (same origin, no server of its own): the graph
    after the pass with every detail, and each overlay as node data."""
    open_canvas(tab, f"{server.url}/Graph", panes=2)
    with tab.expect_popup() as opened:
        tab.get_by_role("button", name=re.compile("^Open in Model Explorer")).click()
    explorer = opened.value
    errors = watch_errors(explorer)
    explorer.wait_for_selector(canvas.RENDERER)
    expect(explorer.locator("body")).not_to_contain_text("Processing")
    expect(explorer.locator("graph-selector")).to_contain_text("after BatchNormFoldPass")
    for overlay in ("fusion group", "op category", "pass change (after)"):
        expect(explorer.get_by_text(overlay, exact=True).first).to_be_attached()
    assert errors == []
