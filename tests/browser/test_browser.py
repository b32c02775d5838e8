"""The workbench in a real headless Chromium: every page renders and draws its graph, the sidebar's choice
follows the user, downloads work, and a page's address opened first on a fresh server gets the workbench's
menu. (test_addresses.py opens every address three times; test_canvas.py drives the graph canvas.)

Screenshots land in a temporary folder; with GE_SCREENSHOTS=1 in docs/screenshots/ (the README shows them).
The server, the browser and the checks are in tests/browser/harness.py and conftest.py.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.browser.harness import (
    CANVAS_READY,
    IDLE,
    PAGE_READY,
    SCRATCH,
    SHOTS,
    Server,
    assert_no_exception,
    nav_labels,
    open_page,
    skip_unless_available,
    wait_idle,
)
from workbench_ui.navigation import PAGES

skip_unless_available()

from playwright.sync_api import Page, expect  # noqa: E402  (after the skip: may be missing)

from tests.browser import canvas  # noqa: E402  (numpy and PIL: only once the browser tests run)

README_SHOTS = ("Model", "Graph", "Passes", "Debug")


def page_titles() -> list[str]:
    return [p.title for p in PAGES]


@pytest.mark.parametrize("title", page_titles())
def test_each_page_renders_without_an_exception(server: Server, page: Page, title: str) -> None:
    spec = next(p for p in PAGES if p.title == title)
    path = "" if title == page_titles()[0] else spec.url_path  # the landing page lives at /
    open_page(page, f"{server.url}/{path}", PAGE_READY.get(title, IDLE))
    assert_no_exception(page)
    assert page.locator("h1").first.inner_text().strip() in (title, "GE Workbench")
    if PAGE_READY.get(title) == CANVAS_READY:
        canvas.wait_rendered(page, timeout=180)  # the GE Graph is drawn on the canvas
    # The README's shots of these pages; the analysis pages' come from test_analysis_pages.py.
    where = SHOTS / f"{title.lower()}.png" if title in README_SHOTS else SCRATCH / f"page_{spec.url_path}.png"
    page.screenshot(path=str(where))


def test_the_sidebar_choice_follows_the_user_to_another_page(server: Server, page: Page) -> None:
    open_page(page, f"{server.url}/?sample=residual_block", CANVAS_READY)
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
    """The first address opened on a fresh server gets the router: our menu, the shared sidebar, the wide
    layout. (A `pages/` folder would start Streamlit in its legacy mode there, its own menu of that folder and
    the page run without app.py: the pages live in app_pages/.)"""
    open_page(page, f"{fresh_server.url}/Graph", CANVAS_READY)
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
