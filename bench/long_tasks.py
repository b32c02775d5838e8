"""How long a page blocks the browser's main thread at a stretch: Chromium's long tasks (any task over
50 ms), recorded by a PerformanceObserver injected into the page and every frame in it (the canvas's
Model Explorer iframe is same-origin: its tasks run on the page's own main thread) before their scripts
run, read back after the page has drawn. Used by bench_canvas.py, which prints them per page.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

BLOCKED_LIMIT_MS = 1000.0  # issue 40: no page blocks the main thread for more than 1 s at a stretch
# In every frame before its scripts: each long task's duration (ms), kept in window.__geLongTasks.
RECORD_JS = """
(() => {
  const tasks = (window.__geLongTasks = []);
  try {
    new PerformanceObserver((list) => { for (const e of list.getEntries()) tasks.push(e.duration); })
      .observe({ type: "longtask", buffered: true });
  } catch (err) { /* no long task timing: nothing recorded */ }
})();
"""
READ_JS = "() => (window.__geLongTasks || []).slice()"


@dataclass(frozen=True)
class LongTasks:
    """The long tasks of one page visit, over its frames."""

    durations: tuple[float, ...]

    @property
    def longest_ms(self) -> float:
        return max(self.durations, default=0.0)

    @property
    def over_limit(self) -> int:
        return sum(1 for d in self.durations if d > BLOCKED_LIMIT_MS)

    def cell(self) -> str:
        mark = "≤" if self.longest_ms <= BLOCKED_LIMIT_MS else ">"
        return f"{self.longest_ms:,.0f} ms ({mark} 1 s), {len(self.durations)} tasks > 50 ms, {self.over_limit} > 1 s"


def record(context: Any) -> None:
    """Record long tasks in every page and frame `context` (a Playwright BrowserContext) opens from now on."""
    context.add_init_script(RECORD_JS)


def read(page: Any) -> LongTasks:
    """The long tasks recorded so far in `page` and its frames (a frame gone meanwhile is skipped)."""
    durations: list[float] = []
    for frame in page.frames:
        try:
            durations += frame.evaluate(READ_JS)
        except Exception:  # a frame detached while being read (the canvas replaces its iframe)
            continue
    return LongTasks(tuple(durations))


def visit(browser: Any, url: str, viewport: dict[str, int], ready: Any, settle_s: float = 2.0) -> LongTasks:
    """A new session on `url`: `ready(page)` waits until the page has drawn; then `settle_s` more seconds
    (drawing that follows), and the long tasks of the whole visit."""
    context = browser.new_context(viewport=viewport)
    record(context)
    try:
        page = context.new_page()
        page.set_default_timeout(300_000)
        page.goto(url)
        ready(page)
        time.sleep(settle_s)
        return read(page)
    finally:
        context.close()
