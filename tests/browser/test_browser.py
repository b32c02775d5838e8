"""The workbench in a real headless Chromium: every page renders, draws its graph, and downloads work; a
click in the clickable drawing inspects a node or opens a folded box; a page's address opened first on a
fresh server gets the workbench's menu. (tests/browser/test_addresses.py opens every address three times.)

Screenshots land in a temporary folder; with GE_SCREENSHOTS=1 in docs/screenshots/ (the README shows them).
The server, the browser and the checks are in tests/browser/harness.py and conftest.py.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from tests.browser.harness import (
    GRAPH_SVG,
    IDLE,
    PAGE_READY,
    REPO,
    Server,
    assert_no_exception,
    nav_labels,
    open_page,
    skip_unless_available,
    wait_idle,
)
from workbench_ui.navigation import present_pages

skip_unless_available()

from playwright.sync_api import Locator, Page, expect  # noqa: E402  (after the skip: may be missing)

# The README's screenshots are refreshed on request only, so a test run leaves the checkout untouched.
SHOTS = REPO / "docs" / "screenshots" if os.environ.get("GE_SCREENSHOTS") else Path(tempfile.mkdtemp(prefix="ge_"))
CHART = "[data-testid='stEChartsChart']"  # the clickable drawing (ECharts on a canvas)
# The ECharts instance behind a clickable drawing. ECharts is bundled inside Streamlit (no global `echarts`,
# so no getInstanceByDom); Streamlit keeps the instance in React state, so it is found by walking up the
# chart element's React fiber to a hook holding an object with ECharts' API whose DOM is this element.
# Returns the drawing's item names (in drawing order) and where item `name`'s centre is drawn, in pixels
# from the element's top left (convertToPixel: the layout's coordinates through ECharts' placement and
# any pan or zoom), or null while the chart is not set up yet.
CHART_JS = """
(root, name) => {
  const key = Object.keys(root).find(k => k.startsWith('__reactFiber$'));
  const isChart = v => v && typeof v.convertToPixel === 'function' && typeof v.getDom === 'function'
                       && v.getDom() === root;
  let chart = null;
  for (let fiber = key ? root[key] : null; fiber && !chart; fiber = fiber.return)
    for (let hook = fiber.memoizedState; hook && typeof hook === 'object' && !chart; hook = hook.next)
      for (const v of [hook.memoizedState, hook.memoizedState && hook.memoizedState.current])
        if (isChart(v)) chart = v;
  const option = chart && !chart.isDisposed() ? chart.getOption() : null;
  if (!option || !option.series || !option.series.length) return null;
  const data = option.series[0].data;
  const item = data.find(d => d.name === name);
  return {names: data.map(d => d.name),
          pixel: item ? chart.convertToPixel({seriesIndex: 0}, [item.x, item.y]) : null};
}
"""
def page_titles() -> list[str]:
    return [p.title for p in present_pages()]


@pytest.mark.parametrize("title", page_titles())
def test_each_page_renders_without_an_exception(server: Server, page: Page, title: str) -> None:
    path = "" if title == page_titles()[0] else title  # the landing page lives at /
    open_page(page, f"{server.url}/{path}", PAGE_READY.get(title, IDLE))
    assert_no_exception(page)
    assert page.locator("h1").first.inner_text().strip() in (title, "GE Workbench")
    if PAGE_READY.get(title) == GRAPH_SVG:
        assert page.locator(f"{GRAPH_SVG} g.node").count() > 3  # the GE Graph is drawn, not just the legend
    page.screenshot(path=str(SHOTS / f"{title.lower()}.png"))


def test_debug_names_the_nodes_of_a_broken_model(server: Server, page: Page) -> None:
    open_page(page, f"{server.url}/Debug?sample=shape_mismatch", GRAPH_SVG)
    assert_no_exception(page)
    errors = " ".join(page.locator("[data-testid='stAlertContentError']").all_inner_texts())
    assert "at nodes 'y', 'z'" in errors and "What to do" in errors
    assert page.locator(f"{GRAPH_SVG} g.node").count() >= 3
    page.screenshot(path=str(SHOTS / "debug_broken_model.png"))


def test_the_sidebar_choice_follows_the_user_to_another_page(server: Server, page: Page) -> None:
    open_page(page, f"{server.url}/?sample=residual_block", GRAPH_SVG)
    page.get_by_role("link", name="Passes").first.click()
    page.wait_for_selector("[data-testid='stDataFrame']")
    page.wait_for_selector(IDLE)  # then wait for the state asserted (the heading may update after idle)
    expect(page.locator("h3").first).to_contain_text("Two ResNet basic blocks at O3")


def test_the_dump_zip_downloads(server: Server, page: Page, tmp_path: Path) -> None:
    open_page(page, f"{server.url}/Passes", PAGE_READY["Passes"])
    with page.expect_download() as info:
        page.get_by_role("button", name="Download the dumps (zip)").click()
    target = tmp_path / "dumps.zip"
    info.value.save_as(target)
    with zipfile.ZipFile(io.BytesIO(target.read_bytes())) as archive:
        names: list[Any] = archive.namelist()
    assert "dumps/report.json" in names and any(n.endswith("_input.txt") for n in names)


def test_a_page_address_opened_first_on_a_fresh_server_gets_the_workbench_menu(fresh_server: Server,
                                                                                   page: Page) -> None:
    """Streamlit starts an app with a `pages/` folder in its legacy mode (its own menu of that folder, the
    page run without app.py) until some session has run st.navigation: the first address opened must
    still get the router (our menu, the shared sidebar, the wide layout)."""
    open_page(page, f"{fresh_server.url}/Graph", GRAPH_SVG)
    assert_no_exception(page)
    assert page.locator("h1").first.inner_text().strip() == "Graph"
    assert nav_labels(page) == page_titles()  # not ["app", "Model", ...]
    assert page.get_by_role("link", name="app", exact=True).count() == 0
    assert page.get_by_text("Page not found").count() == 0
    main = page.locator("[data-testid='stMainBlockContainer']").bounding_box()
    assert main is not None and main["width"] > 900  # layout="wide" (the centred layout is 736 px wide)
    page.get_by_test_id("stSidebar").get_by_role("radio", name="O1", exact=True).click()  # the sidebar works
    expect(page.locator("h3").first).to_contain_text("at O1")
    wait_idle(page)
    page.get_by_role("link", name="Passes").first.click()
    page.wait_for_selector(PAGE_READY["Passes"])
    wait_idle(page)
    assert page.locator("h1").first.inner_text().strip() == "Passes"
    assert nav_labels(page) == page_titles()
    assert page.locator("h3").first.inner_text().endswith(" at O1")  # the sidebar's choice came along


def test_clicking_a_node_in_the_clickable_drawing_inspects_it(server: Server, page: Page) -> None:
    open_page(page, f"{server.url}/Graph", GRAPH_SVG)  # conv_bn_relu at O3, on its first changed pass
    use_clickable_drawing(page)
    after = page.locator(CHART).last
    click_chart_item(after, "conv2")
    header = inspector_header(page, "Conv", "conv2")
    expect(header).to_have_count(1)
    wait_idle(page)
    assert_no_exception(page)
    expect(page.get_by_role("combobox", name=re.compile(r"^Node \("))).to_have_value(re.compile(r"\bconv2$"))
    click_chart_item(page.locator(CHART).first, "bn1")  # a node the pass removed, in the drawing before it
    expect(inspector_header(page, "BatchNormalization", "bn1")).to_have_count(1)
    wait_idle(page)
    expect(page.get_by_text("This node is gone after the pass")).to_have_count(1)


def test_clicking_a_folded_box_in_the_clickable_drawing_opens_it(server: Server, page: Page) -> None:
    open_page(page, f"{server.url}/Graph?sample=residual_block", GRAPH_SVG)
    use_clickable_drawing(page)
    depth = page.get_by_label("Fold name scopes at depth", exact=True)
    depth.fill("1")  # fold every top-level name scope: block1, block2
    depth.press("Enter")
    after = page.locator(CHART).last
    wait_for_items(after, lambda names: "scope:block1" in names)
    wait_idle(page)
    click_chart_item(after, "scope:block1")
    opened = page.get_by_test_id("stMultiSelect").filter(has_text="Open folded boxes")
    expect(opened).to_contain_text("scope block1")
    names = wait_for_items(after, lambda names: "block1.conv1" in names)
    wait_idle(page)
    assert "scope:block1" not in names and "scope:block2" in names  # only the clicked box opened
    assert_no_exception(page)


def use_clickable_drawing(page: Page) -> None:
    page.get_by_role("radio", name="Clickable").click()
    page.wait_for_selector(f"{CHART} canvas")
    wait_idle(page)
    expect(page.locator(GRAPH_SVG)).to_have_count(0)  # no Graphviz drawing left (the legend is not one)


def wait_for_items(chart: Locator, wanted: Callable[[list[str]], bool], seconds: float = 30) -> list[str]:
    """The chart's item names, once `wanted(names)` holds (the chart redraws after each rerun)."""
    deadline = time.monotonic() + seconds
    while True:
        state = chart.evaluate(CHART_JS, "")
        names = cast(list[str], state["names"]) if state else []
        if state and wanted(names):
            return names
        if time.monotonic() > deadline:
            raise AssertionError(f"the chart never showed what was expected; it shows {names}")
        time.sleep(0.1)


def click_chart_item(chart: Locator, name: str) -> None:
    """Click the centre of item `name` of a clickable drawing (Playwright scrolls it into view first)."""
    wait_for_items(chart, lambda names: name in names)
    chart.scroll_into_view_if_needed()
    x, y = chart.evaluate(CHART_JS, name)["pixel"]
    box = chart.bounding_box()
    assert box is not None and 0 < x < box["width"] and 0 < y < box["height"], f"{name} is drawn outside the chart"
    chart.click(position={"x": x, "y": y})


def inspector_header(page: Page, op: str, name: str) -> Locator:
    """The node inspector's first line: the op in bold, then the node's name as code."""
    return (page.get_by_test_id("stMarkdownContainer")
            .filter(has=page.locator("strong", has_text=re.compile(f"^{re.escape(op)}$")))
            .filter(has=page.locator("code", has_text=re.compile(f"^{re.escape(name)}$"))))
