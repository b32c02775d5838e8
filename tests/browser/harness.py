"""Driving the workbench in a real headless Chromium: a Streamlit server whose output is kept, and the
waits and checks every browser test uses.

Needs Debian's chromium (/usr/bin/chromium) and Python Playwright (pyproject.toml's "dev" extra); Playwright's own
browser download is never used. The tests are skipped when either is missing, unless GE_BROWSER_TESTS is
set (CI sets it, and installs chromium first): then a missing browser fails the run instead of hiding it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Screenshots: the README's (docs/screenshots/) are refreshed on request only (GE_SCREENSHOTS=1), so a test
# run leaves the checkout untouched; else they land in a temporary folder.
SCRATCH = Path(tempfile.mkdtemp(prefix="ge_shots_"))  # every other screenshot (to look at after a run)
SHOTS = REPO / "docs" / "screenshots" if os.environ.get("GE_SCREENSHOTS") else SCRATCH
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
REQUIRED = bool(os.environ.get("GE_BROWSER_TESTS"))
VIEWPORT = {"width": 1400, "height": 1600}
TIMEOUT_MS = 90_000
EXPECT_TIMEOUT_MS = 30_000  # a rerun on a loaded 2-core machine can take longer than expect's 5 s
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
EXCEPTION = "[data-testid='stException']"
CANVAS_READY = ".ge-canvas[data-version]"  # the graph canvas (workbench_ui.canvas) got its panes
GRAPH_SVG = CANVAS_READY  # the name the pages' tests used when the graph was a graphviz SVG
DATAFRAME = "[data-testid='stDataFrame']"
NAV_LINK = "[data-testid='stSidebarNavLink']"
CRASH_TEXT = "This app has encountered an error"  # what showErrorDetails = "none" shows for an uncaught exception
PAGE_READY = {  # what shows that each page finished drawing (beyond the script having stopped)
    "Model": CANVAS_READY,
    "Graph": CANVAS_READY,
    "Passes": DATAFRAME,
    "Debug": DATAFRAME,
}

try:
    from playwright.sync_api import Browser, Page, expect, sync_playwright

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None  # type: ignore[assignment]

MISSING = [what for what, ok in (("chromium", Path(CHROMIUM).is_file()), ("playwright", sync_playwright is not None))
           if not ok]


def skip_unless_available() -> None:
    """Call at the top of a browser test module."""
    if MISSING and not REQUIRED:
        pytest.skip(f"browser tests need {' and '.join(MISSING)} (set GE_BROWSER_TESTS=1 to make this a failure)",
                    allow_module_level=True)


@dataclass(frozen=True)
class Server:
    """A running `streamlit run app.py`: its address, and the file its stdout and stderr go to."""

    url: str
    log: Path

    def log_size(self) -> int:
        return self.log.stat().st_size

    def tracebacks(self, since: int = 0) -> str:
        """The server's output from byte `since` on, if it holds a traceback ("" when it does not)."""
        with self.log.open("rb") as f:
            f.seek(since)
            text = f.read().decode("utf-8", "replace")
        return text if "Traceback (most recent call last)" in text else ""


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
            time.sleep(0.2)
    raise TimeoutError(f"streamlit did not answer {url}/_stcore/health within {seconds:.0f} s")


@contextlib.contextmanager
def streamlit_server(log_dir: Path, script: str = "app.py") -> Iterator[Server]:
    """`streamlit run app.py` on a free local port, as the README starts it, its output kept in log_dir
    (`script`: another app of the checkout, e.g. a benchmark's reference page)."""
    assert not MISSING, f"GE_BROWSER_TESTS is set but {' and '.join(MISSING)} is missing"
    port = _free_port()
    url = f"http://localhost:{port}"
    log = log_dir / f"streamlit_{port}.log"
    cmd = [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port),
           "--server.headless", "true", "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        _wait_healthy(url, proc)
        yield Server(url, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextlib.contextmanager
def new_tab(browser: Browser) -> Iterator[Page]:
    """A tab in a browser context of its own: a new Streamlit session, as a second user gets."""
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)  # type: ignore[arg-type]
    tab = context.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    try:
        yield tab
    finally:
        context.close()


def open_page(page: Page, url: str, ready: str) -> None:
    page.goto(url)
    page.wait_for_selector(ready)
    page.wait_for_selector(IDLE)


def wait_idle(page: Page) -> None:
    """The script run finished: stApp says so and the "Running..." status widget is gone."""
    page.wait_for_selector(IDLE)
    expect(page.get_by_text("Running...", exact=True)).to_have_count(0)


def assert_no_exception(page: Page) -> None:
    assert page.locator(EXCEPTION).count() == 0
    body = page.inner_text("body")
    assert "Traceback" not in body and "Error running app" not in body


def nav_labels(page: Page) -> list[str]:
    """The sidebar menu's labels (a link's text starts with its icon's ligature name)."""
    return [text.strip().split("\n")[-1].strip() for text in page.locator(NAV_LINK).all_inner_texts()]
