"""The workbench in a real headless Chromium: every page renders, draws its graph, and downloads work.

Needs Debian's chromium (/usr/bin/chromium) and Python Playwright (requirements-dev.txt); Playwright's own
browser download is never used. Skipped when either is missing, unless GE_BROWSER_TESTS is set (CI sets
it, and installs chromium first): then a missing browser fails the run instead of hiding it.
Screenshots land in a temporary folder; with GE_SCREENSHOTS=1 in docs/screenshots/ (the README shows them).
"""

from __future__ import annotations

import io
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
# The README's screenshots are refreshed on request only, so a test run leaves the checkout untouched.
SHOTS = REPO / "docs" / "screenshots" if os.environ.get("GE_SCREENSHOTS") else Path(tempfile.mkdtemp(prefix="ge_"))
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
REQUIRED = bool(os.environ.get("GE_BROWSER_TESTS"))
VIEWPORT = {"width": 1400, "height": 1600}
TIMEOUT_MS = 90_000
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
GRAPH_SVG = "[data-testid='stGraphVizChart'] svg"
PAGE_READY = {  # what shows that each page finished drawing (beyond the script having stopped)
    "Model": GRAPH_SVG,
    "Graph": GRAPH_SVG,
    "Passes": "[data-testid='stDataFrame']",
    "Debug": "[data-testid='stDataFrame']",
}

try:
    from playwright.sync_api import Browser, Page, sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None  # type: ignore[assignment]

_missing = [what for what, ok in (("chromium", Path(CHROMIUM).is_file()), ("playwright", sync_playwright is not None))
            if not ok]
if _missing and not REQUIRED:
    pytest.skip(f"browser tests need {' and '.join(_missing)} (set GE_BROWSER_TESTS=1 to make this a failure)",
                allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"streamlit did not answer {url}/_stcore/health within {seconds:.0f} s")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """`streamlit run app.py` on a free local port, as the README starts it."""
    assert not _missing, f"GE_BROWSER_TESTS is set but {' and '.join(_missing)} is missing"
    port = _free_port()
    url = f"http://localhost:{port}"
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
           "--server.headless", "true", "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_healthy(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)  # type: ignore[arg-type]
    tab = context.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    yield tab
    context.close()


def open_page(page: Page, url: str, ready: str) -> None:
    page.goto(url)
    page.wait_for_selector(ready)
    page.wait_for_selector(IDLE)


def assert_no_exception(page: Page) -> None:
    assert page.locator("[data-testid='stException']").count() == 0
    body = page.inner_text("body")
    assert "Traceback" not in body and "Error running app" not in body


def page_titles() -> list[str]:
    sys.path.insert(0, str(REPO))
    from workbench_ui.navigation import present_pages

    return [p.title for p in present_pages()]


@pytest.mark.parametrize("title", page_titles())
def test_each_page_renders_without_an_exception(server: str, page: Page, title: str) -> None:
    path = "" if title == page_titles()[0] else title  # the landing page lives at /
    open_page(page, f"{server}/{path}", PAGE_READY.get(title, IDLE))
    assert_no_exception(page)
    assert page.locator("h1").first.inner_text().strip() in (title, "GE Workbench")
    if PAGE_READY.get(title) == GRAPH_SVG:
        assert page.locator(f"{GRAPH_SVG} g.node").count() > 3  # the GE Graph is drawn, not just the legend
    page.screenshot(path=str(SHOTS / f"{title.lower()}.png"))


def test_debug_names_the_nodes_of_a_broken_model(server: str, page: Page) -> None:
    open_page(page, f"{server}/Debug?sample=shape_mismatch", GRAPH_SVG)
    assert_no_exception(page)
    errors = " ".join(page.locator("[data-testid='stAlertContentError']").all_inner_texts())
    assert "at nodes 'y', 'z'" in errors and "What to do" in errors
    assert page.locator(f"{GRAPH_SVG} g.node").count() >= 3
    page.screenshot(path=str(SHOTS / "debug_broken_model.png"))


def test_the_sidebar_choice_follows_the_user_to_another_page(server: str, page: Page) -> None:
    open_page(page, f"{server}/?sample=residual_block", GRAPH_SVG)
    page.get_by_role("link", name="Passes").first.click()
    page.wait_for_selector("[data-testid='stDataFrame']")
    page.wait_for_selector(IDLE)
    assert "Two ResNet basic blocks at O3" in page.locator("h3").all_inner_texts()[0]


def test_the_dump_zip_downloads(server: str, page: Page, tmp_path: Path) -> None:
    open_page(page, f"{server}/Passes", PAGE_READY["Passes"])
    with page.expect_download() as info:
        page.get_by_role("button", name="Download the dumps (zip)").click()
    target = tmp_path / "dumps.zip"
    info.value.save_as(target)
    with zipfile.ZipFile(io.BytesIO(target.read_bytes())) as archive:
        names: list[Any] = archive.namelist()
    assert "dumps/report.json" in names and any(n.endswith("_input.txt") for n in names)
