"""The Profile page's Measured vs simulated tab in a real headless Chromium: an op_summary of each of msprof's
layouts uploaded through the page's own widget opens beside the simulation (tasks matched, the tables, the
Gantt per stream, the measured latency on our graph), a calibration shows its error before and after, and
screenshots are left to look at (docs/screenshots/profile_measured.png with GE_SCREENSHOTS=1, else a
temporary folder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.canvas import wait_rendered
from tests.browser.harness import SCRATCH, SHOTS, Server, assert_no_exception, skip_unless_available, wait_idle

skip_unless_available()

from playwright.sync_api import Page, expect  # noqa: E402  (after the skip: may be missing)

FIXTURES = Path(__file__).resolve().parents[1] / "sim" / "fixtures"
URL = "/Profile?sample=squeezenet&hw=ascend310p&view=Measured+vs+simulated"


def upload(page: Page, path: Path) -> None:
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
        files=[{"name": path.name, "mimeType": "text/csv", "buffer": path.read_bytes()}])
    expect(page.get_by_text("37 of 38", exact=True)).to_be_visible()
    wait_idle(page)


@pytest.mark.parametrize("layout", ["current", "older"])
def test_an_op_summary_opens_beside_the_simulation(server: Server, page: Page, layout: str) -> None:
    page.goto(server.url + URL)
    expect(page.get_by_text("msprof's op_summary CSV")).to_be_visible()
    wait_idle(page)
    expect(page.get_by_text("How far to trust this:")).to_be_visible()
    upload(page, FIXTURES / f"op_summary_squeezenet_{layout}.csv")
    expect(page.get_by_text("Where the simulator is most wrong")).to_be_visible()
    expect(page.get_by_text("Timeline per stream")).to_be_visible()
    page.get_by_role("button", name="Calibrate").click()
    expect(page.get_by_text("Per-kernel error before")).to_be_visible()
    wait_idle(page)
    assert_no_exception(page)
    wait_rendered(page)  # the measured latency on our graph (Model Explorer draws it)
    if layout == "older":
        page.get_by_text("How far to trust this:").scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "profile_measured.png"))
        page.get_by_text("Measured latency on the graph").scroll_into_view_if_needed()
        page.screenshot(path=str(SCRATCH / "profile_measured_graph.png"))
