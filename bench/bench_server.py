"""One workbench, many people (issue 41): N headless-browser sessions open different samples on different pages
at once, on a cold server, against each page's time alone on a cold server.

    python bench/bench_server.py [--sessions 8] [--budget 2147483648] [--timeout 300]

Each row opens `/<page>?sample=<name>` in a browser context of its own (a new Streamlit session, a new browser
session) and times it until the page has drawn (tests/browser/harness.PAGE_READY, else the run's end). "alone":
a fresh server (empty caches, an empty compile cache folder) serving that page only; "loaded": one fresh server
serving all N at once. The Graph rows then step one pass (the address's ?step=2) and time that too. Prints each
page's times and ratio, errors (an exception on the page, the crash text, a traceback in the server's output),
the median ratio, and the server's peak RSS (with its worker processes) against GE_WORKBENCH_MEMORY_BUDGET.
Issue 41's targets: no error, peak RSS <= 1.25x the budget, median ratio <= 3, a page light alone (< 3 s)
shown within 5 s. Print `uptime` beside the numbers: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from playwright.async_api import Browser, async_playwright

from tests.browser.harness import CHROMIUM, CRASH_TEXT, EXCEPTION, IDLE, PAGE_READY, Server, streamlit_server

# (page, sample): five real models, a 10,000-node graph, a broken sample and the default sample (a page light
# alone: issue 41's "a page light alone shown within 5 s"), on different pages.
SCENARIO = [("Graph", "resnet50"), ("Passes", "densenet121"), ("Debug", "bert_encoder_torch"),
            ("Model", "inception_v2"), ("Passes", "synthetic_10k"), ("Debug", "shape_mismatch"),
            ("Profile", "resnet50"), ("Model", "conv_bn_relu"), ("Graph", "densenet121")]
# A broken sample's Debug page draws no bisection table: the failure's code block is its "drawn".
READY = {("Debug", "shape_mismatch"): "[data-testid='stCode']"}


@dataclass
class Visit:
    page: str
    sample: str
    seconds: float = float("nan")
    step_seconds: float = float("nan")
    error: str = ""


@contextmanager
def cold_server(budget: int) -> Iterator[tuple[Server, RssWatch]]:
    """A fresh `streamlit run app.py` with the budget set and an empty compile cache, its RSS watched."""
    folder = Path(tempfile.mkdtemp(prefix="ge_bench_server_"))
    saved = dict(os.environ)
    os.environ.update(GE_WORKBENCH_MEMORY_BUDGET=str(budget), GE_CACHE_DIR=str(folder / "compile_cache"))
    try:
        with streamlit_server(folder) as server:
            watch = RssWatch(server_pid(server))
            watch.start()
            try:
                yield server, watch
            finally:
                watch.stop()
    finally:
        os.environ.clear()
        os.environ.update(saved)


def server_pid(server: Server) -> int:
    port = server.url.rsplit(":", 1)[1]
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if "streamlit" in " ".join(cmdline) and port in cmdline:
            return int(proc.pid)
    raise LookupError(f"no streamlit process serves port {port}")


class RssWatch(threading.Thread):
    """The peak resident memory of a process and its children (the worker processes), sampled."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.process = psutil.Process(pid)
        self.peak = 0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(0.2):
            try:
                tree = [self.process, *self.process.children(recursive=True)]
                self.peak = max(self.peak, sum(p.memory_info().rss for p in tree if p.is_running()))
            except psutil.Error:
                continue

    def stop(self) -> None:
        self._done.set()
        self.join()


async def visit(browser: Browser, server: Server, row: Visit, timeout: float) -> None:
    context = await browser.new_context(viewport={"width": 1400, "height": 1600})
    tab = await context.new_page()
    tab.set_default_timeout(timeout * 1000)
    ready = f"{READY.get((row.page, row.sample), PAGE_READY.get(row.page, IDLE))}, {EXCEPTION}"
    path = "" if row.page == "Model" else row.page
    try:
        start = time.monotonic()
        await tab.goto(f"{server.url}/{path}?sample={row.sample}")
        await tab.wait_for_selector(ready)
        await tab.wait_for_selector(IDLE)
        row.seconds = time.monotonic() - start
        if row.page == "Graph":  # step a pass: the address's ?step=
            start = time.monotonic()
            await tab.goto(f"{server.url}/{path}?sample={row.sample}&step=2")
            await tab.wait_for_selector(ready)
            await tab.wait_for_selector(IDLE)
            row.step_seconds = time.monotonic() - start
        body = await tab.inner_text("body")
        if await tab.locator(EXCEPTION).count() or CRASH_TEXT in body:
            row.error = "exception on the page"
    except Exception as exc:  # a timeout: reported in the table, the other rows go on
        row.error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
    finally:
        await context.close()


async def run_rows(server: Server, rows: list[Visit], timeout: float) -> None:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM,
                                                   args=["--no-sandbox", "--disable-gpu"])
        await asyncio.gather(*(visit(browser, server, row, timeout) for row in rows))
        await browser.close()


def measure(rows: list[Visit], budget: int, timeout: float) -> tuple[int, str]:
    """Visit `rows` at once on a cold server: its peak RSS and any traceback it printed."""
    with cold_server(budget) as (server, watch):
        asyncio.run(run_rows(server, rows, timeout))
        return watch.peak, server.tracebacks()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--budget", type=int, default=2 << 30)
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    scenario = [SCENARIO[i % len(SCENARIO)] for i in range(args.sessions)]
    alone = [Visit(page, sample) for page, sample in scenario]
    alone_peak = 0
    for row in alone:
        peak, printed = measure([row], args.budget, args.timeout)
        alone_peak = max(alone_peak, peak)
        row.error = row.error or ("traceback in the server's output" if printed else "")
    loaded = [Visit(page, sample) for page, sample in scenario]
    peak, printed = measure(loaded, args.budget, args.timeout)
    report(alone, loaded, peak, alone_peak, printed, args.budget)


def report(alone: list[Visit], loaded: list[Visit], peak: int, alone_peak: int, printed: str, budget: int) -> None:
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"({os.cpu_count()} cores); budget {budget / 2**30:.2f} GiB")
    print(f"{'page':8} {'sample':20} {'alone s':>8} {'loaded s':>9} {'ratio':>6} {'step alone':>10} "
          f"{'step loaded':>11}  error")
    ratios = []
    for a, b in zip(alone, loaded, strict=True):
        ratio = b.seconds / a.seconds if a.seconds > 0 else float("nan")
        ratios.append(ratio)
        print(f"{a.page:8} {a.sample:20} {a.seconds:8.1f} {b.seconds:9.1f} {ratio:6.1f} {a.step_seconds:10.1f} "
              f"{b.step_seconds:11.1f}  {a.error or b.error}")
    light = [(a, b) for a, b in zip(alone, loaded, strict=True) if a.seconds < 3]
    print(f"median ratio {statistics.median(r for r in ratios if r == r) if ratios else float('nan'):.1f} "
          f"(target <= 3); light pages (< 3 s alone) under load: "
          f"{', '.join(f'{b.page} {b.sample} {b.seconds:.1f} s' for _, b in light) or 'none'} (target <= 5 s)")
    print(f"peak RSS with workers: {peak / 2**30:.2f} GiB under load ({peak / budget:.2f}x the budget; target "
          f"<= 1.25x), {alone_peak / 2**30:.2f} GiB at most alone")
    print("server traceback under load:" if printed else "no traceback in the server's output under load")
    if printed:
        print(printed[-3000:])


if __name__ == "__main__":
    main()
