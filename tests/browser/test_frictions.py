"""The newcomer's frictions of issue 40, each opened as a user opens it: a first visit, a reload, a second
browser session, and Back from another page opened in the menu. Each check is a function of the tab, run
after every one of those four visits."""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Callable
from pathlib import Path

from tests.app.models import text_line_model
from tests.browser.harness import (
    CANVAS_READY,
    DATAFRAME,
    EXCEPTION,
    IDLE,
    NAV_LINK,
    PAGE_READY,
    Server,
    new_tab,
    skip_unless_available,
    wait_idle,
)
from tests.browser.test_addresses import assert_page_shown, page_titled, upload_model
from workbench_ui.navigation import PageSpec

skip_unless_available()

from playwright.sync_api import Browser, Page, expect  # noqa: E402  (after the skip: may be missing)

Check = Callable[[Page], None]
ALERT = "[data-testid='stAlertContentError']"


def four_visits(server: Server, browser: Browser, spec: PageSpec, sample: str, check: Check,
                ready: str = "") -> None:
    """`check` after a first visit, a reload, Back from the Graph page, and in a second session. `ready`:
    what shows the page drew (default: the page's own, as test_addresses waits for it)."""
    url = f"{server.url}/{spec.url_path}?sample={sample}"
    drawn = f"{ready or PAGE_READY.get(spec.title, IDLE)}, {EXCEPTION}"

    def done(tab: Page) -> None:
        tab.wait_for_selector(drawn)
        wait_idle(tab)

    with new_tab(browser) as tab:
        tab.goto(url)
        done(tab)
        assert_page_shown(tab, spec.url_path, spec, sample)
        check(tab)
        tab.reload()
        done(tab)
        check(tab)
        tab.locator(NAV_LINK).filter(has_text="Graph").first.click()
        expect(tab.locator("h1").first).to_have_text("Graph")
        wait_idle(tab)
        tab.go_back()
        expect(tab.locator("h1").first).to_have_text(spec.title)
        done(tab)
        check(tab)
    with new_tab(browser) as other:
        other.goto(url)
        done(other)
        check(other)


def no_error(tab: Page) -> None:
    wait_idle(tab)
    assert tab.locator(EXCEPTION).count() == 0 and tab.locator(ALERT).count() == 0, tab.inner_text("main")


def test_dynamic_defaults_fit_the_model_and_name_the_model_played(server: Server, browser: Browser) -> None:
    """Friction 2: bert_encoder_torch played at sizes it takes (no red broadcast error); a model without a
    symbolic dim names the BERT layer it plays in its heading, and plays as many distinct sizes as asked."""
    dynamic = page_titled("Dynamic shapes")

    def bert(tab: Page) -> None:
        no_error(tab)
        expect(tab.get_by_role("spinbutton", name="Largest")).to_have_value("128")
        expect(tab.get_by_text("The largest size defaults to 128")).to_be_visible()

    def residual(tab: Page) -> None:
        no_error(tab)
        expect(tab.locator("h3").first).to_contain_text("BERT-style encoder layer, in place of")
        expect(tab.get_by_text("(4 distinct sizes)")).to_be_visible()

    four_visits(server, browser, dynamic, "bert_encoder_torch", bert)
    four_visits(server, browser, dynamic, "residual_block", residual)


def test_the_debug_pages_reproducer_carries_the_bisections_drift(server: Server, browser: Browser,
                                                                   tmp_path: Path) -> None:
    """Friction 4: at a tolerance BatchNorm folding exceeds, the Debug page says the outputs drift, and the
    reproducer it downloads carries that finding (README, config.json) and a `bisect` command at that tolerance."""
    debug = page_titled("Debug")

    def drift_in_the_zip(tab: Page) -> None:
        tolerance = tab.get_by_role("spinbutton", name="Tolerance (max relative error)")
        tolerance.fill("1.0e-12")
        tolerance.press("Enter")
        expect(tab.get_by_text("The outputs first drift after BatchNormFoldPass")).to_be_visible()
        wait_idle(tab)
        with tab.expect_download() as info:
            tab.get_by_role("button", name="Download a reproducer (zip)").click()
        target = tmp_path / "reproducer.zip"
        info.value.save_as(target)
        with zipfile.ZipFile(target) as archive:
            readme = archive.read("README.txt").decode()
            kept = json.loads(archive.read("config.json"))
        assert "first drift after BatchNormFoldPass" in readme and "Everything worked" not in readme
        assert kept["bisection"]["tolerance"] == 1e-12
        assert any(c["command"].startswith("python3 -m ge_core bisect") and c["expected_exit"] == 3
                   for c in kept["commands"])
        wait_idle(tab)

    four_visits(server, browser, debug, "conv_bn_relu", drift_in_the_zip)


def test_a_tensor_never_inferred_reads_not_inferred(server: Server, browser: Browser) -> None:
    """Friction 8: shape_mismatch's Debug page showed `%y = MatMul(%x, %w) : undefined[]`."""

    def not_inferred(tab: Page) -> None:
        wait_idle(tab)
        expect(tab.get_by_text("%y = MatMul(%x, %w) : ? (not inferred)")).to_be_visible()
        assert "undefined[]" not in tab.inner_text("main")

    four_visits(server, browser, page_titled("Debug"), "shape_mismatch", not_inferred, ready="[data-testid='stCode']")


def test_a_sample_fails_inside_a_pass_and_the_debug_page_names_it(server: Server, browser: Browser) -> None:
    """Friction 6: no sample failed inside a pass; fails_in_a_pass fails in ConstantFoldingPass."""

    def failing_pass(tab: Page) -> None:
        wait_idle(tab)
        expect(tab.get_by_text("Failing pass: ConstantFoldingPass")).to_be_visible()
        expect(tab.get_by_text("The graph as it was before ConstantFoldingPass ran")).to_be_visible()
        assert tab.locator(EXCEPTION).count() == 0

    four_visits(server, browser, page_titled("Debug"), "fails_in_a_pass", failing_pass, ready=CANVAS_READY)


def test_compare_turns_all_fusion_off_in_one_click_and_heads_with_best_against_worst(
        server: Server, browser: Browser) -> None:
    """Friction 7: 'All fusion off' is one checkbox per configuration (7 passes were picked one by one); the
    headline names the fastest configuration against the slowest."""
    compare = page_titled("Compare")

    def headline(tab: Page) -> None:
        no_error(tab)
        expect(tab.get_by_text("the fastest,").filter(visible=True).first).to_be_visible()
        expect(tab.get_by_text("All fusion off").filter(visible=True)).to_have_count(2)

    four_visits(server, browser, compare, "residual_block", headline)
    with new_tab(browser) as tab:
        tab.goto(f"{server.url}/{compare.url_path}?sample=residual_block")
        tab.wait_for_selector(PAGE_READY.get(compare.title, DATAFRAME))
        wait_idle(tab)
        tab.get_by_text("All fusion off").filter(visible=True).last.click()  # O3's column: O3 without fusion
        tab.get_by_role("button", name="Compare", exact=True).click()
        expect(tab).to_have_url(re.compile(r"cmp="))
        wait_idle(tab)
        assert "cmp=" in tab.url and tab.locator(EXCEPTION).count() == 0
        boxes = (tab.locator("[data-testid='stCheckbox']", has_text="All fusion off").filter(visible=True)
                 .locator("input"))
        assert [boxes.nth(i).is_checked() for i in range(boxes.count())] == [False, True]  # kept, from the address


def test_an_upload_with_symbolic_dims_is_prefilled_with_sizes_it_takes(server: Server, browser: Browser) -> None:
    """Friction 5: a text-line model (symbolic width before a 3x3 AveragePool) was prefilled `x:1,3,32,1` and
    refused at once; now `x:1,3,32,224`, imported. Typed sizes it refuses are named as the cause."""
    landing = page_titled("Model")

    def prefilled(tab: Page) -> None:
        wait_idle(tab)
        expect(tab.get_by_test_id("stSidebar").get_by_role("textbox", name="Input shapes")).to_have_value(
            "x:1,3,32,224")
        expect(tab.get_by_text("Legality check passed")).to_be_visible()
        assert tab.locator(EXCEPTION).count() == 0 and tab.locator(ALERT).count() == 0

    with new_tab(browser) as tab:
        tab.goto(f"{server.url}/")
        tab.wait_for_selector(PAGE_READY["Model"])
        wait_idle(tab)
        upload_model(tab, "line.onnx", text_line_model())
        prefilled(tab)
        shared = tab.url
        tab.reload()
        prefilled(tab)
        tab.locator(NAV_LINK).filter(has_text="Graph").first.click()
        expect(tab.locator("h1").first).to_have_text("Graph")
        wait_idle(tab)
        tab.go_back()
        expect(tab.locator("h1").first).to_have_text(re.compile(f"^({landing.title}|GE Workbench)$"))
        prefilled(tab)
        box = tab.get_by_test_id("stSidebar").get_by_role("textbox", name="Input shapes")
        box.fill("x:1,3,32,1")
        box.press("Enter")
        expect(tab.get_by_text("are the cause")).to_be_visible()
        # a second browser session opens an upload only through its owner's share link (issue 41)
        tab.get_by_test_id("stSidebar").get_by_role("button", name="Make a share link").click()
        link = tab.get_by_test_id("stSidebar").get_by_test_id("stCode").inner_text().strip()
        assert link.startswith(shared.split("?")[0].rsplit("/", 1)[0]) and "share=" in link
    with new_tab(browser) as other:
        other.goto(link)
        prefilled(other)
