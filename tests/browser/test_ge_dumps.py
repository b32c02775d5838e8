"""GE graph dumps in a real headless Chromium: the ResNet-50 Build dump sample on the Model, Graph and Profile
pages (a first visit, a reload and a second browser session each, no exception, the server printing no
traceback), and a zipped dump folder of several stages uploaded in the sidebar, stepped on the Graph page with
the before | after canvas. Screenshots land in a temporary folder (printed) to look at."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

import ge_core
from ge_core.debugging.ge_stages import GeDumpOptions, write_ge_dumps
from ge_core.samples import sample_bytes
from tests.browser.canvas import pane_nodes
from tests.browser.harness import (
    CANVAS_READY,
    CRASH_TEXT,
    EXCEPTION,
    SCRATCH,
    Server,
    new_tab,
    skip_unless_available,
    wait_idle,
)

skip_unless_available()

from playwright.sync_api import Browser, Page, expect  # noqa: E402  (after the skip: may be missing)

DUMP = "ge_resnet50_build"
READY = {"Model": CANVAS_READY, "Graph": CANVAS_READY, "Profile": "[data-testid='stMetric']"}
SHOWN = {"Model": "A GE graph dump", "Graph": "This dump holds one stage", "Profile": "Total latency"}


def shown(tab: Page, title: str) -> None:
    tab.wait_for_selector(f"{READY[title]}, {EXCEPTION}", state="attached")
    wait_idle(tab)
    assert tab.locator(EXCEPTION).count() == 0
    body = tab.inner_text("body")
    assert CRASH_TEXT not in body and "Traceback" not in body and "Page not found" not in body
    assert SHOWN[title] in body
    assert "ResNet-50 GE Build dump" in body


@pytest.mark.parametrize("title", list(READY))
def test_the_resnet50_build_dump_first_visit_reload_and_a_second_session(server: Server, page: Page,
                                                                          browser: Browser, title: str) -> None:
    url = f"{server.url}/{title}?sample={DUMP}"
    page.goto(url)
    shown(page, title)
    page.screenshot(path=str(SCRATCH / f"ge_dump_{title.lower()}.png"), full_page=True)
    page.reload()
    shown(page, title)
    with new_tab(browser) as second:
        second.goto(url)
        shown(second, title)
    print(f"screenshots in {SCRATCH}")


def dump_folder_zip(folder: Path) -> bytes:
    config = ge_core.CompileConfig(opt_level="O3", hardware="ascend310")
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"), config)
    files = write_ge_dumps(compiled, folder, GeDumpOptions(2, "1", ("ge_proto",)))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            archive.write(path, f"pid_1_deviceid_0/{path.name}")
    return buffer.getvalue()


def test_a_dump_folder_steps_on_the_graph_page_with_the_diff(server: Server, page: Page, tmp_path: Path) -> None:
    page.goto(f"{server.url}/Graph")
    page.wait_for_selector(CANVAS_READY)
    wait_idle(page)
    page.get_by_test_id("stSidebar").get_by_text("Upload", exact=True).click()
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
        files=[{"name": "pid_1_deviceid_0.zip", "mimeType": "application/zip", "buffer": dump_folder_zip(tmp_path)}])
    expect(page.locator("h3").first).to_contain_text("pid_1_deviceid_0.zip")
    wait_idle(page)
    page.wait_for_selector(CANVAS_READY)
    first = page.get_by_test_id("stSlider").inner_text()
    page.get_by_role("button", name="▶", exact=True).click()
    wait_idle(page)
    expect(page.get_by_test_id("stSlider")).not_to_have_text(first)
    assert page.locator(EXCEPTION).count() == 0
    panes = pane_nodes(page)
    assert panes is not None and len(panes) == 2  # a changing stage: before | after
    assert "GE's" in page.inner_text("body")  # the stage's caption names GE's dump file
    page.screenshot(path=str(SCRATCH / "ge_dump_folder_graph.png"), full_page=True)
