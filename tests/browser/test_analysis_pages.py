"""The Fusion, Memory, Profile and Compare pages in a real headless Chromium, on the default sample and on
resnet50, densenet121 and bert_encoder_torch: a first visit, a reload and a second browser session each,
none showing an exception, Streamlit's "Page not found" or "This app has encountered an error", and the
server printing no traceback (conftest checks its log after every test). Then the README's screenshots:
densenet121 at O3 for ascend910, each page answering its question (with GE_SCREENSHOTS=1 they land in
docs/screenshots/, otherwise in a temporary folder).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ge_core.samples.registry import DEFAULT_SAMPLE
from tests.browser.harness import (
    CRASH_TEXT,
    DATAFRAME,
    EXCEPTION,
    REPO,
    Server,
    new_tab,
    skip_unless_available,
    wait_idle,
)

skip_unless_available()

from playwright.sync_api import Browser, Page, expect  # noqa: E402  (after the skip: may be missing)

SHOTS = REPO / "docs" / "screenshots" if os.environ.get("GE_SCREENSHOTS") else Path(tempfile.mkdtemp(prefix="ge_"))
PAGES = ("Fusion", "Memory", "Profile", "Compare")
SAMPLES = (DEFAULT_SAMPLE, "resnet50", "densenet121", "bert_encoder_torch")
SHOT_VIEWPORT = {"width": 1400, "height": 2200}
# What each README screenshot must show (the four questions on densenet121 at O3 for ascend910).
ANSWERS = {
    "Fusion": "the first refusal reads",
    "Memory": "tensors are alive at the peak",
    "Profile": "The slowest op is",
    "Compare": "kernels against",
}


def url_of(server: Server, page: str, sample: str, extra: str = "") -> str:
    query = [f"sample={sample}"] if sample != DEFAULT_SAMPLE else []
    query += [extra] if extra else []
    return f"{server.url}/{page}" + (f"?{'&'.join(query)}" if query else "")


def drawn(tab: Page) -> None:
    """The page finished: a table is on it (each of these pages has one) or it failed, and the run ended."""
    tab.wait_for_selector(f"{DATAFRAME}, {EXCEPTION}", state="attached")
    wait_idle(tab)


def assert_page_shown(tab: Page, page: str) -> None:
    assert tab.locator(EXCEPTION).count() == 0
    body = tab.inner_text("body")
    assert CRASH_TEXT not in body and "Traceback" not in body
    assert tab.get_by_text("Page not found").count() == 0 and tab.get_by_role("dialog").count() == 0
    assert urlsplit(tab.url).path == f"/{page}"
    expect(tab.locator("h1").first).to_have_text(page)
    assert "What am I looking at?" in body


@pytest.mark.parametrize("sample", SAMPLES)
@pytest.mark.parametrize("title", PAGES)
def test_first_visit_reload_and_a_second_session(server: Server, page: Page, browser: Browser, title: str,
                                                 sample: str) -> None:
    url = url_of(server, title, sample)
    page.goto(url)
    drawn(page)
    assert_page_shown(page, title)
    page.reload()
    drawn(page)
    assert_page_shown(page, title)
    with new_tab(browser) as second:
        second.goto(url)
        drawn(second)
        assert_page_shown(second, title)


@pytest.mark.parametrize("title", PAGES)
def test_the_readme_screenshot_answers_the_pages_question(server: Server, page: Page, title: str) -> None:
    """densenet121 at O3 for ascend910 (O3 is the sidebar's default)."""
    page.set_viewport_size(SHOT_VIEWPORT)  # type: ignore[arg-type]
    page.goto(url_of(server, title, "densenet121", "hw=ascend910"))
    drawn(page)
    assert_page_shown(page, title)
    expect(page.get_by_text(ANSWERS[title], exact=False).first).to_be_visible()
    page.wait_for_timeout(1500)  # let the charts finish their first draw
    page.screenshot(path=str(SHOTS / f"{title.lower()}.png"))
