"""The canvas shows each pass happen to a learner who only presses ▶ (issue 40): on every step through the
passes that changed the graph, both panes open on what the pass changed (the layers holding it opened, its
first node selected and framed) at a zoom where the op names are readable, on scoped models (BERT, whose
every node sits under one module `m`) and flat ones (resnet50, densenet121, an uploaded flat third-party
model): the change-coloured node boxes are found on a screenshot of each pane (tests/browser/canvas.py)
and their labels' ink is at least canvas.READABLE_TEXT_PX high.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from tests.browser.flat_model import flat_model
from tests.browser.harness import (
    CANVAS_READY,
    SCRATCH,
    Server,
    assert_no_exception,
    new_tab,
    skip_unless_available,
    wait_idle,
)

skip_unless_available()

from playwright.sync_api import Browser, Page, expect  # noqa: E402  (after the skip: may be missing)

from tests.browser import canvas  # noqa: E402  (numpy and PIL: only once the browser tests run)

NEXT = "▶"
SIZE = {"width": 1600, "height": 1000}  # the window
MAX_STEPS = 40  # every changed pass of these models (a lost press would loop otherwise)


@pytest.fixture
def tab(browser: Browser) -> Iterator[Page]:
    with new_tab(browser) as page:
        page.set_viewport_size(SIZE)
        yield page


def press_next(page: Page) -> bool:
    """▶ pressed, the new panes drawn; False on the last pass."""
    button = page.get_by_role("button", name=NEXT, exact=True)
    if button.count() == 0 or button.is_disabled():
        return False
    shown = canvas.version(page)
    button.click()
    expect(page.locator(f"{canvas.CANVAS}:not([data-version='{shown}'])")).to_have_count(1, timeout=180_000)
    canvas.wait_rendered(page, timeout=240)
    wait_idle(page)
    return True


def assert_change_readable(page: Page, name: str) -> None:
    """Each pane shows change-coloured node boxes, whole on screen, with a readable label."""
    panes = canvas.pane_canvases(page).count()
    for pane in range(panes):
        found = canvas.readable_boxes(page, pane)
        readable = [b for b, height in found if height >= canvas.READABLE_TEXT_PX]
        if not readable:
            page.screenshot(path=str(SCRATCH / f"focus_{name}_pane{pane}.png"))
        assert readable, (f"{name}: pane {pane} of {panes} shows no change-coloured node with a readable label "
                          f"(boxes and label heights: {[(b.width, b.height, h) for b, h in found]}; "
                          f"screenshot in {SCRATCH})")


def step_through(page: Page, name: str) -> int:
    """From the Graph page as opened (the first pass that changed the graph), press only ▶ to the last pass;
    the change is on screen and readable on it and after every step. Returns the steps taken."""
    assert_change_readable(page, f"{name}_0")
    steps = 0
    while steps < MAX_STEPS and press_next(page):
        steps += 1
        assert_change_readable(page, f"{name}_{steps}")
    page.screenshot(path=str(SCRATCH / f"focus_{name}_last.png"))
    assert_no_exception(page)
    return steps


@pytest.mark.parametrize("sample", ["bert_encoder_torch", "resnet50", "densenet121"])
def test_pressing_only_next_shows_each_pass_change_readably(server: Server, tab: Page, sample: str) -> None:
    tab.goto(f"{server.url}/Graph?sample={sample}")
    tab.wait_for_selector(CANVAS_READY)
    canvas.wait_rendered(tab, timeout=300)
    wait_idle(tab)
    assert step_through(tab, sample) >= 1


def test_an_uploaded_flat_model_shows_each_pass_change_readably(server: Server, tab: Page) -> None:
    tab.goto(f"{server.url}/Graph")
    tab.wait_for_selector(CANVAS_READY)
    wait_idle(tab)
    tab.get_by_test_id("stSidebar").get_by_text("Upload", exact=True).click()
    upload = tab.locator("[data-testid='stFileUploaderDropzoneInput']")
    upload.set_input_files(files=[{"name": "flat_mobilenet.onnx", "mimeType": "application/octet-stream",
                                   "buffer": flat_model()}])
    expect(tab.locator("h3").first).to_contain_text("flat_mobilenet.onnx")
    canvas.wait_rendered(tab, timeout=300)
    wait_idle(tab)
    assert step_through(tab, "flat_upload") >= 1


def test_next_change_goes_to_each_changed_node_in_turn(server: Server, tab: Page) -> None:
    """"change ▶" selects and frames the pass's next changed node (its layer opened), readably."""
    tab.goto(f"{server.url}/Graph?sample=resnet50")
    tab.wait_for_selector(CANVAS_READY)
    canvas.wait_rendered(tab, timeout=300)
    wait_idle(tab)
    count = tab.locator(".ge-canvas-change-count")

    def several_changes() -> bool:
        listed = re.fullmatch(r"1 of (\d+)", count.inner_text())
        return listed is not None and int(listed.group(1)) >= 2

    while not several_changes() and press_next(tab):
        pass  # on to a pass that changed more than one node
    expect(count).to_have_text(re.compile(r"^1 of \d+$"))
    first = canvas.pane_selected(tab)
    tab.get_by_role("button", name="change ▶", exact=True).click()
    expect(count).to_have_text(re.compile(r"^2 of \d+$"))
    deadline = time.monotonic() + 60
    while canvas.pane_selected(tab) == first and time.monotonic() < deadline:
        time.sleep(0.2)
    assert canvas.pane_selected(tab) != first, "change ▶ selected no other node"
    canvas.wait_rendered(tab, timeout=120)
    assert_change_readable(tab, "next_change")
    assert canvas.page_selected(tab) == ""  # the canvas's own move: the page's selection (address) is untouched
    # the strip: a mark per changed node, in graph order; its last mark goes to the last change
    marks = tab.locator(".ge-canvas-strip .ge-canvas-mark")
    total = int(count.inner_text().split(" of ")[1])
    assert marks.count() == total
    lefts = [float(marks.nth(k).evaluate("m => parseFloat(m.style.left)")) for k in range(total)]
    assert all(0 <= x <= 100 for x in lefts)
    assert tab.locator(".ge-canvas-strip").bounding_box()["width"] > 500  # across the canvas, in sight
    marks.nth(total - 1).click()
    expect(count).to_have_text(f"{total} of {total}")
    expect(marks.nth(total - 1)).to_have_class(re.compile("ge-canvas-mark-at"))


# Without scrolling: the canvas's top (px from the window's top) and whether its frame has drawn a pane.
FIRST_SCREEN_JS = """
([root, frame, renderer]) => {
  const canvas = document.querySelector(root);
  const iframe = canvas && canvas.querySelector(frame);
  const doc = iframe && iframe.contentDocument;
  return {scrolled: window.scrollY, top: canvas ? canvas.getBoundingClientRect().top : null,
          drawn: doc ? doc.querySelectorAll(renderer).length : 0};
}
"""
MIN_VISIBLE_PX = 400  # of the canvas inside the 1000 px high window


def test_the_model_pages_graph_draws_in_the_first_screen(server: Server, browser: Browser) -> None:
    """The Model page's graph sat below its tables and chart and drew only when scrolled to (issue 40): now it
    draws without a scroll, at least MIN_VISIBLE_PX of it in the window, on a first visit, a reload and a
    second session."""

    def first_screen(page: Page) -> None:
        page.wait_for_selector(CANVAS_READY)
        deadline = time.monotonic() + 300
        state = page.evaluate(FIRST_SCREEN_JS, [canvas.CANVAS, canvas.FRAME, canvas.RENDERER])
        while not state["drawn"] and time.monotonic() < deadline:
            time.sleep(0.5)
            state = page.evaluate(FIRST_SCREEN_JS, [canvas.CANVAS, canvas.FRAME, canvas.RENDERER])
        page.screenshot(path=str(SCRATCH / "model_first_screen.png"))
        assert state["scrolled"] == 0 and state["drawn"] >= 1, f"not drawn without a scroll: {state}"
        assert state["top"] <= SIZE["height"] - MIN_VISIBLE_PX, f"the canvas starts {state['top']} px down"
        assert_no_exception(page)

    url = f"{server.url}/?sample=resnet50"
    with new_tab(browser) as page:
        page.set_viewport_size(SIZE)
        page.goto(url)
        first_screen(page)
        page.reload()
        first_screen(page)
    with new_tab(browser) as second:
        second.set_viewport_size(SIZE)
        second.goto(url)
        first_screen(second)
