"""One workbench, many people (issue 41): N headless-browser sessions open different samples on different pages
at once, on a cold server, against each page's time alone on a cold server.

    python bench/bench_server.py [--sessions 8] [--budget 2147483648] [--timeout 300] [--browser-nice 0]
                                 [--canvas skip|draw]

Each row opens `/<page>?sample=<name>` in a browser context of its own (a new Streamlit session, a new browser
session) and times it twice: "served", until the page's script run ended (the sidebar is drawn and the app is
idle), and "drawn", until the page has drawn (tests/browser/harness.PAGE_READY, else the run's end), its graph
canvas included. "alone": a fresh server (empty caches, an empty compile cache folder) serving that page only;
"loaded": one fresh server serving all N at once. The Graph rows then step one pass (the address's ?step=2)
and time that too. Prints each page's times and ratio (drawn), errors (an exception on the page, the crash
text, a traceback in the server's output), the median ratio, the server's peak RSS (with its worker
processes) against GE_WORKBENCH_MEMORY_BUDGET, and the CPU seconds the server (with its workers) and the
bench's browser used under load: the N browsers share the server's cores here, where a real user's browser
draws on their own machine (--browser-nice 19 runs them at the lowest priority).
--canvas skip (the default) measures the server as a class would load it: each browser context answers the
canvas frame's page (Model Explorer's canvas.html, see workbench_ui/canvas/serving.py) with a blank page, so the
server still builds and hands over every graph and the page's script runs as for a user, but no browser draws
it. "Drawn" is then the run's end with the canvas given its data (`.ge-canvas[data-version]`). With --canvas
draw, 8 browsers draw WebGL in software (SwiftShader) on the server's own 2 cores, 1-5 s of CPU a frame: they
used more CPU than the server (39-62 s against 22-28 s), where a real class's browsers draw on each student's
own machine; bench/bench_canvas.py measures the drawing.
Issue 41's targets: no error, peak RSS <= 1.25x the budget, median ratio <= 3, a page light alone (< 3 s)
shown within 5 s (the default sample's Model page and the broken sample's Debug page are the candidates).
Print `uptime` beside the numbers: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
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

from playwright.async_api import Browser, Route, async_playwright

from tests.browser.harness import CHROMIUM, CRASH_TEXT, EXCEPTION, IDLE, PAGE_READY, Server, streamlit_server

# (page, sample): five real models, a 10,000-node graph, a broken sample and the default sample (a page light
# alone: issue 41's "a page light alone shown within 5 s"), on different pages.
SCENARIO = [("Graph", "resnet50"), ("Passes", "densenet121"), ("Debug", "bert_encoder_torch"),
            ("Model", "inception_v2"), ("Passes", "synthetic_10k"), ("Debug", "shape_mismatch"),
            ("Profile", "resnet50"), ("Model", "conv_bn_relu"), ("Graph", "densenet121")]
# A broken sample's Debug page draws no bisection table: the failure's code block is its "drawn".
READY = {("Debug", "shape_mismatch"): "[data-testid='stCode']"}
# The server has served the page: its script run ended (the sidebar, drawn first, is there and the app is
# idle). What follows is the browser's own drawing (the graph canvas), on the bench's machine: with N browsers
# on the server's 2 cores, "drawn" counts client work a real user's browser does on their own machine.
SERVED = (f"{IDLE} [data-testid='stSidebar']:has-text('Server memory for results'), {EXCEPTION}")
# --canvas skip: the canvas frame's page (Model Explorer's web app, served as a static file) and its answer.
CANVAS_FRAME = re.compile(r"/canvas\.html(\?|$)")
BLANK_CANVAS = "<!doctype html><title>canvas</title>"


CANVAS_MODES = {
    "skip": "canvas: skip (default): each canvas frame gets a blank page; the server builds and hands over every "
            "graph, no browser draws it, as in a class whose browsers draw on their own machines",
    "draw": "canvas: draw: the bench's browsers draw every graph in software WebGL on the server's cores",
}


@dataclass
class Visit:
    page: str
    sample: str
    seconds: float = float("nan")
    served_seconds: float = float("nan")
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


async def blank_canvas(route: Route) -> None:
    await route.fulfill(body=BLANK_CANVAS, content_type="text/html")


async def visit(browser: Browser, server: Server, row: Visit, timeout: float, canvas: str) -> None:
    context = await browser.new_context(viewport={"width": 1400, "height": 1600})
    if canvas == "skip":  # the graph reaches the page (data-version), no browser draws it
        await context.route(CANVAS_FRAME, blank_canvas)
    tab = await context.new_page()
    tab.set_default_timeout(timeout * 1000)
    ready = f"{READY.get((row.page, row.sample), PAGE_READY.get(row.page, IDLE))}, {EXCEPTION}"
    path = "" if row.page == "Model" else row.page
    try:
        start = time.monotonic()
        await tab.goto(f"{server.url}/{path}?sample={row.sample}")
        await tab.wait_for_selector(SERVED)
        row.served_seconds = time.monotonic() - start
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


async def run_rows(server: Server, rows: list[Visit], timeout: float, canvas: str) -> None:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM,
                                                   args=["--no-sandbox", "--disable-gpu"])
        await asyncio.gather(*(visit(browser, server, row, timeout, canvas) for row in rows))
        await browser.close()


class CpuWatch(threading.Thread):
    """The CPU seconds (user + system) used by a process's descendants whose name holds `name`, sampled (a
    process that ends between samples loses its last half second); each one found is set to `nice`."""

    def __init__(self, root: psutil.Process, name: str, nice: int) -> None:
        super().__init__(daemon=True)
        self.root, self.name, self.nice = root, name, nice
        self._seen: dict[int, float] = {}
        self._done = threading.Event()

    @property
    def seconds(self) -> float:
        return sum(self._seen.values())

    def run(self) -> None:
        while not self._done.wait(0.5):
            try:
                processes = self.root.children(recursive=True)
            except psutil.Error:
                continue
            for process in processes:
                try:
                    if self.name in process.name():
                        if process.pid not in self._seen and self.nice:
                            process.nice(self.nice)
                        times = process.cpu_times()
                        self._seen[process.pid] = times.user + times.system
                except psutil.Error:
                    continue

    def stop(self) -> None:
        self._done.set()
        self.join()


@dataclass
class Run:
    """One cold server's visit: its peak RSS with workers, any traceback it printed, and the CPU seconds the
    server (with its workers) and the bench's browser used."""

    peak: int
    printed: str
    server_cpu: float
    browser_cpu: float


def measure(rows: list[Visit], budget: int, timeout: float, browser_nice: int, canvas: str) -> Run:
    """Visit `rows` at once on a cold server, the browser's processes at `browser_nice`, the canvas drawn or
    skipped (`canvas`)."""
    with cold_server(budget) as (server, watch):
        browser = CpuWatch(psutil.Process(), "chrom", browser_nice)
        browser.start()
        asyncio.run(run_rows(server, rows, timeout, canvas))
        browser.stop()
        times = watch.process.cpu_times()  # the workers ended: their time is the forkserver's children's
        workers = sum(p.cpu_times().children_user + p.cpu_times().children_system
                      for p in watch.process.children() if p.is_running())
        return Run(watch.peak, server.tracebacks(), times.user + times.system + workers, browser.seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--budget", type=int, default=2 << 30)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--browser-nice", type=int, default=0,
                        help="the bench's browser processes' niceness: a real user's browser draws on their own "
                             "machine, not on the server's cores (0: as the first runs, browser and server alike)")
    parser.add_argument("--canvas", choices=("skip", "draw"), default="skip",
                        help="skip (default): the canvas frame gets a blank page, the server measured as a class "
                             "loads it; draw: the bench's browsers draw every graph on the server's cores")
    args = parser.parse_args()
    scenario = [SCENARIO[i % len(SCENARIO)] for i in range(args.sessions)]
    alone = [Visit(page, sample) for page, sample in scenario]
    alone_peak = 0
    for row in alone:
        run = measure([row], args.budget, args.timeout, args.browser_nice, args.canvas)
        alone_peak = max(alone_peak, run.peak)
        row.error = row.error or ("traceback in the server's output" if run.printed else "")
    loaded = [Visit(page, sample) for page, sample in scenario]
    run = measure(loaded, args.budget, args.timeout, args.browser_nice, args.canvas)
    report(alone, loaded, run, alone_peak, args.budget, args.canvas)


def report(alone: list[Visit], loaded: list[Visit], run: Run, alone_peak: int, budget: int, canvas: str) -> None:
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"({os.cpu_count()} cores); budget {budget / 2**30:.2f} GiB; {' '.join(sys.argv[1:])}")
    print(CANVAS_MODES[canvas])
    print(f"{'page':8} {'sample':20} {'alone s':>8} {'loaded s':>9} {'ratio':>6} {'served alone/loaded':>19} "
          f"{'step alone':>10} {'step loaded':>11}  error")
    ratios = []
    for a, b in zip(alone, loaded, strict=True):
        ratio = b.seconds / a.seconds if a.seconds > 0 else float("nan")
        ratios.append(ratio)
        print(f"{a.page:8} {a.sample:20} {a.seconds:8.1f} {b.seconds:9.1f} {ratio:6.1f} "
              f"{a.served_seconds:9.1f} /{b.served_seconds:8.1f} {a.step_seconds:10.1f} {b.step_seconds:11.1f}  "
              f"{a.error or b.error}")
    light = [(a, b) for a, b in zip(alone, loaded, strict=True) if a.seconds < 3]
    print(f"median ratio {statistics.median(r for r in ratios if r == r) if ratios else float('nan'):.1f} "
          f"(target <= 3); light pages (< 3 s alone) under load: "
          f"{', '.join(f'{b.page} {b.sample} {b.seconds:.1f} s' for _, b in light) or 'none'} (target <= 5 s)")
    print(f"peak RSS with workers: {run.peak / 2**30:.2f} GiB under load ({run.peak / budget:.2f}x the budget; "
          f"target <= 1.25x), {alone_peak / 2**30:.2f} GiB at most alone")
    print(f"CPU under load: server with workers {run.server_cpu:.0f} s, the bench's browser {run.browser_cpu:.0f} s")
    print("server traceback under load:" if run.printed else "no traceback in the server's output under load")
    if run.printed:
        print(run.printed[-3000:])


if __name__ == "__main__":
    main()
