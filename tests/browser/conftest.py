"""Fixtures of the browser tests: one server and one Chromium per module, a fresh server on request, and a
check after every test that the server printed no traceback (the page shows none: showErrorDetails = "none")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.harness import CHROMIUM, Server, new_tab, streamlit_server, sync_playwright

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

SERVER_FIXTURES = ("server", "fresh_server")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the module's tests (which page a test opens first does not matter to them)."""
    with streamlit_server(tmp_path_factory.mktemp("server")) as running:
        yield running


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[Server]:
    """A server no browser has talked to yet: for what happens on the very first page load."""
    with streamlit_server(tmp_path) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    with new_tab(browser) as tab:
        yield tab


@pytest.fixture(autouse=True)
def no_traceback_in_the_server_log(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fails the test if a server it used printed a traceback while it ran (read after the test, when a
    fresh server has stopped and flushed its output)."""
    servers: list[Server] = [request.getfixturevalue(name) for name in SERVER_FIXTURES if name in request.fixturenames]
    starts = [s.log_size() for s in servers]
    yield
    for running, start in zip(servers, starts, strict=True):
        printed = running.tracebacks(since=start)
        assert not printed, f"the server printed a traceback during the test:\n{printed[-4000:]}"
