"""Every address the workbench offers, opened as users open them: a first visit, a reload, and a second
browser session, on the default sample and on ?sample=residual_block; and as the first request to a fresh
server. None may show an exception, Streamlit's "Page not found" dialog or "This app has encountered an
error", and the server may print no traceback (conftest checks its log after every test).

The addresses come from workbench_ui.navigation.PAGES, so a page added there is tested here too. The
reload of the Debug page replays its cached numeric bisection; the reproducer download and a tolerance set
back to an earlier value do too. Back returns from a page opened in the menu in one press, with the model
still in the address (issue 40: a page change used to add two history entries now and then).

Screenshots of every visit land in a temporary folder (GE_VISIT_SHOTS=DIR to keep them elsewhere).
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import tempfile
import zipfile
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from ge_core.debugging import DEFAULT_TOLERANCE
from ge_core.samples.registry import DEFAULT_SAMPLE, get_sample
from tests.app.models import symbolic_model, tiny_model
from tests.browser.harness import (
    CRASH_TEXT,
    EXCEPTION,
    IDLE,
    NAV_LINK,
    PAGE_READY,
    Server,
    new_tab,
    skip_unless_available,
    wait_idle,
)
from workbench_ui.navigation import PAGES, PageSpec

skip_unless_available()

from playwright.sync_api import Browser, Page, expect  # noqa: E402  (after the skip: may be missing)

SHOTS = Path(os.environ.get("GE_VISIT_SHOTS") or tempfile.mkdtemp(prefix="ge_visits_"))
LANDING = PAGES[0]  # shown at `/` too, where the menu's first entry points
# (address, the page it shows): `/` and then every page's own address.
ADDRESSES = [("", LANDING), *((p.url_path, p) for p in PAGES)]
SAMPLES = [DEFAULT_SAMPLE, "residual_block"]


def address_id(address: tuple[str, PageSpec]) -> str:
    return f"/{address[0]}"


def url_of(server: Server, path: str, sample: str) -> str:
    query = "" if sample == DEFAULT_SAMPLE else f"?sample={sample}"
    return f"{server.url}/{path}{query}"


def visit(tab: Page, spec: PageSpec, reload: bool = False, url: str = "") -> None:
    """Open `url` (or reload the tab) and wait until the page has drawn, or has failed."""
    if reload:
        tab.reload()
    else:
        tab.goto(url)
    visit_done(tab, spec)


def visit_done(tab: Page, spec: PageSpec) -> None:
    tab.wait_for_selector(f"{PAGE_READY.get(spec.title, IDLE)}, {EXCEPTION}")
    wait_idle(tab)


def assert_page_shown(tab: Page, path: str, spec: PageSpec, sample: str) -> None:
    """The page the address names, on the sample it names, and nothing broken over it."""
    assert tab.locator(EXCEPTION).count() == 0
    body = tab.inner_text("body")
    assert CRASH_TEXT not in body and "Traceback" not in body
    assert tab.get_by_text("Page not found").count() == 0 and tab.get_by_role("dialog").count() == 0
    assert urlsplit(tab.url).path == f"/{path}"  # not sent on to another page
    assert tab.locator("h1").first.inner_text().strip() in (spec.title, "GE Workbench")
    assert get_sample(sample).title in tab.locator("h3").first.inner_text()
    if path != LANDING.url_path:  # `/Model` is the landing page's hidden twin: no menu entry stands for it
        expect(tab.locator(f"{NAV_LINK}[aria-current='page']")).to_contain_text(spec.title)


def shoot(tab: Page, path: str, sample: str, when: str) -> None:
    tab.screenshot(path=str(SHOTS / f"{path or 'landing'}_{sample}_{when}.png"), full_page=False)


@pytest.mark.parametrize("sample", SAMPLES)
@pytest.mark.parametrize("address", ADDRESSES, ids=address_id)
def test_every_address_survives_a_first_visit_a_reload_and_a_second_session(
        server: Server, browser: Browser, address: tuple[str, PageSpec], sample: str) -> None:
    path, spec = address
    url = url_of(server, path, sample)
    with new_tab(browser) as tab:
        visit(tab, spec, url=url)
        assert_page_shown(tab, path, spec, sample)
        shoot(tab, path, sample, "first")
        visit(tab, spec, reload=True)  # Debug: the bisection is cached now, and replays
        assert_page_shown(tab, path, spec, sample)
        shoot(tab, path, sample, "reload")
    with new_tab(browser) as other:
        visit(other, spec, url=url)
        assert_page_shown(other, path, spec, sample)
        shoot(other, path, sample, "second_session")


@pytest.mark.parametrize("address", ADDRESSES, ids=address_id)
def test_every_address_works_as_the_first_request_to_a_fresh_server(
        fresh_server: Server, browser: Browser, address: tuple[str, PageSpec]) -> None:
    """The first request to a server no session has talked to (no router has run there yet)."""
    path, spec = address
    with new_tab(browser) as tab:
        visit(tab, spec, url=url_of(fresh_server, path, "residual_block"))
        assert_page_shown(tab, path, spec, "residual_block")
        shoot(tab, path, "residual_block", "fresh_server")


def test_an_unknown_address_says_so_and_shows_the_landing_page(server: Server, browser: Browser) -> None:
    with new_tab(browser) as tab:
        tab.goto(f"{server.url}/NoSuchPage")
        expect(tab.get_by_role("dialog")).to_contain_text("Page not found")
        tab.wait_for_selector(PAGE_READY.get(LANDING.title, IDLE))
        wait_idle(tab)
        assert tab.locator(EXCEPTION).count() == 0


def test_debug_replays_its_cached_bisection_after_a_download_and_a_tolerance_set_back(
        server: Server, browser: Browser, tmp_path: Path) -> None:
    debug = next(p for p in PAGES if p.title == "Debug")
    with new_tab(browser) as tab:
        visit(tab, debug, url=f"{server.url}/{debug.url_path}?sample=residual_block")
        with tab.expect_download() as info:
            tab.get_by_role("button", name="Download a reproducer (zip)").click()
        target = tmp_path / "reproducer.zip"
        info.value.save_as(target)
        with zipfile.ZipFile(io.BytesIO(target.read_bytes())) as archive:
            assert "config.json" in archive.namelist()
        wait_idle(tab)  # the rerun after the press replays the cached bisection
        assert_page_shown(tab, debug.url_path, debug, "residual_block")
        tolerance = tab.get_by_role("spinbutton", name="Tolerance (max relative error)")
        for value in (1e-2, DEFAULT_TOLERANCE):  # a new tolerance, then back to one already bisected
            tolerance.fill(f"{value:.1e}")
            tolerance.press("Enter")
            verdict = tab.get_by_text(f"{value:.1e}")  # the bisection's verdict names its tolerance
            expect(verdict.or_(tab.locator(EXCEPTION)).first).to_be_visible()
            wait_idle(tab)
            assert_page_shown(tab, debug.url_path, debug, "residual_block")
        shoot(tab, debug.url_path, "residual_block", "tolerance_set_back")


def test_the_back_button_returns_to_each_page_visited(server: Server, browser: Browser) -> None:
    """On the default sample (with a sample in the address: the tests below)."""
    pages = PAGES
    with new_tab(browser) as tab:
        visit(tab, LANDING, url=f"{server.url}/")
        for spec in pages[1:]:  # through the menu, page by page
            entries = tab.evaluate("history.length")
            tab.locator(NAV_LINK).filter(has_text=spec.title).click()
            expect(tab.locator("h1").first).to_have_text(spec.title)
            visit_done(tab, spec)
            # one entry per page: a default value a page writes into its address adds a second one
            assert tab.evaluate("history.length") == entries + 1, f"{spec.title}: {tab.url}"
        for spec in reversed(pages[1:-1]):
            tab.go_back()
            expect(tab.locator("h1").first).to_have_text(spec.title)
            visit_done(tab, spec)
            assert_page_shown(tab, spec.url_path, spec, DEFAULT_SAMPLE)
        tab.go_back()
        # Wait for the landing page's own title: until the route change renders, the page before it
        # (whose elements may satisfy the ready selector) is still on screen.
        expect(tab.locator("h1").first).to_have_text(re.compile(f"^({re.escape(LANDING.title)}|GE Workbench)$"))
        visit_done(tab, LANDING)
        assert_page_shown(tab, "", LANDING, DEFAULT_SAMPLE)


def upload_model(tab: Page, name: str, data: bytes) -> None:
    tab.get_by_test_id("stSidebar").get_by_text("Upload", exact=True).click()
    tab.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
        files=[{"name": name, "mimeType": "application/octet-stream", "buffer": data}])
    expect(tab.locator("h3").first).to_have_text(name)
    wait_idle(tab)


def test_an_uploaded_model_stays_in_the_address_across_reloads_pages_and_its_share_link(
        server: Server, browser: Browser) -> None:
    """?upload=<sha256 prefix> opens the uploaded model in the browser session that uploaded it: a reload,
    another page. A second browser session cannot open it from that address (issue 41: uploads belong to
    their session), only through the share link its owner makes; a link to a model the server never had
    says so."""
    data = tiny_model(doc="uploaded in the address test")
    digest = hashlib.sha256(data).hexdigest()[:16]
    with new_tab(browser) as tab:
        visit(tab, LANDING, url=f"{server.url}/")
        upload_model(tab, "mine.onnx", data)
        assert parse_qs(urlsplit(tab.url).query) == {"upload": [digest]}
        visit(tab, LANDING, reload=True)
        expect(tab.locator("h3").first).to_have_text("mine.onnx")
        graph = next(p for p in PAGES if p.title == "Graph")
        tab.locator(NAV_LINK).filter(has_text="Graph").first.click()
        visit_done(tab, graph)
        expect(tab.locator("h3").first).to_contain_text("mine.onnx")
        assert parse_qs(urlsplit(tab.url).query).get("upload") == [digest]
        address = tab.url
        with new_tab(browser) as stranger:  # another browser session, the owner's session still open
            stranger.goto(address)
            wait_idle(stranger)
            expect(stranger.get_by_test_id("stSidebar")).to_contain_text("This browser session has no uploaded model")
            assert stranger.locator("h3").count() == 0 and stranger.locator(EXCEPTION).count() == 0
        tab.get_by_test_id("stSidebar").get_by_role("button", name="Make a share link").click()
        link = tab.get_by_test_id("stSidebar").get_by_test_id("stCode").inner_text().strip()
        assert parse_qs(urlsplit(link).query)["upload"] == [digest]
        with new_tab(browser) as friend:
            visit(friend, graph, url=link)
            expect(friend.locator("h3").first).to_contain_text("mine.onnx")
            assert friend.locator(EXCEPTION).count() == 0
    with new_tab(browser) as stranger:
        stranger.goto(f"{server.url}/?upload=0123456789abcdef")  # no model: nothing drawn but the sidebar
        wait_idle(stranger)
        expect(stranger.get_by_test_id("stSidebar")).to_contain_text("no uploaded model 0123456789abcdef")
        assert stranger.locator(EXCEPTION).count() == 0


def page_titled(title: str) -> PageSpec:
    return next(p for p in PAGES if p.title == title)


def history_length(tab: Page) -> int:
    return int(tab.evaluate("history.length"))


BACK_TRIES = 5


def test_back_returns_from_a_page_opened_in_the_menu_in_one_press_every_time(server: Server,
                                                                             browser: Browser) -> None:
    """Issue 40: `/Memory?sample=bert_encoder_torch`, reload, click Profile, wait, Back: Memory again, each
    time. (Before, about one try in five stayed on Profile: the click added two history entries, `/Profile`
    and then `/Profile?sample=...`, when the sidebar's write of the sample reached the browser after the page
    change; see workbench_ui.router.)"""
    memory, profile = page_titled("Memory"), page_titled("Profile")
    sample = "bert_encoder_torch"
    for attempt in range(BACK_TRIES):
        with new_tab(browser) as tab:
            visit(tab, memory, url=f"{server.url}/{memory.url_path}?sample={sample}")
            visit(tab, memory, reload=True)
            entries = history_length(tab)
            tab.locator(NAV_LINK).filter(has_text=profile.title).click()
            expect(tab.locator("h1").first).to_have_text(profile.title)
            visit_done(tab, profile)
            tab.wait_for_timeout(1000)  # anything late that would add an entry of its own
            assert history_length(tab) == entries + 1, f"try {attempt}: the click added more than one entry"
            assert_page_shown(tab, profile.url_path, profile, sample)
            tab.go_back()
            expect(tab.locator("h1").first).to_have_text(memory.title)
            visit_done(tab, memory)
            assert_page_shown(tab, memory.url_path, memory, sample)
            assert parse_qs(urlsplit(tab.url).query) == {"sample": [sample]}


def test_back_returns_from_a_page_opened_after_an_upload_in_one_press(server: Server, browser: Browser) -> None:
    """Issue 40: after an upload (`?upload=<sha256 prefix>`), a page opened in the menu and Back: one press
    returns to the page before, with the upload still in the address."""
    data = tiny_model(doc="back after an upload")
    digest = hashlib.sha256(data).hexdigest()[:16]
    passes = page_titled("Passes")
    for attempt in range(3):
        with new_tab(browser) as tab:
            visit(tab, LANDING, url=f"{server.url}/")
            upload_model(tab, "mine.onnx", data)
            entries = history_length(tab)
            tab.locator(NAV_LINK).filter(has_text=passes.title).click()
            expect(tab.locator("h1").first).to_have_text(passes.title)
            visit_done(tab, passes)
            tab.wait_for_timeout(1000)
            assert history_length(tab) == entries + 1, f"try {attempt}: the click added more than one entry"
            tab.go_back()
            expect(tab.locator("h1").first).to_have_text(re.compile(f"^({re.escape(LANDING.title)}|GE Workbench)$"))
            visit_done(tab, LANDING)
            expect(tab.locator("h3").first).to_have_text("mine.onnx")
            assert urlsplit(tab.url).path == "/" and parse_qs(urlsplit(tab.url).query) == {"upload": [digest]}


def test_a_shared_link_to_an_uploaded_model_with_symbolic_dims_opens_the_page_it_names(
        server: Server, browser: Browser) -> None:
    """A new session opening `/Graph?upload=...&share=...` of such a model: its first run prefills the
    sidebar's shapes box (from the declared dims), before st.navigation has run; the page shown is still
    Graph. (The owner's session has ended by then: its upload outlives it by a grace period.)"""
    data = symbolic_model()
    with new_tab(browser) as tab:
        visit(tab, LANDING, url=f"{server.url}/")
        upload_model(tab, "sym.onnx", data)
        tab.get_by_test_id("stSidebar").get_by_role("button", name="Make a share link").click()
        query = urlsplit(tab.get_by_test_id("stSidebar").get_by_test_id("stCode").inner_text().strip()).query
    graph = page_titled("Graph")
    with new_tab(browser) as other:
        visit(other, graph, url=f"{server.url}/{graph.url_path}?{query}")
        expect(other.locator("h1").first).to_have_text(graph.title)
        expect(other.locator("h3").first).to_contain_text("sym.onnx")
        expect(other.get_by_test_id("stSidebar")).to_contain_text("Prefilled from the model's declared dims")
        assert urlsplit(other.url).path == f"/{graph.url_path}" and other.locator(EXCEPTION).count() == 0
