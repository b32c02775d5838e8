"""Dynamo's own record of graph breaks and guard failures, read as it grows.

Dynamo counts graph breaks by reason in `torch._dynamo.utils.counters["graph_break"]` and appends the
reason of every guard failure (what made it recompile: "tensor 'x' size mismatch at index 0. expected 2,
actual 5") to `torch._dynamo.utils.guard_failures`. A DynamoEvents remembers how much it has read, so each
graph the backend receives is told what happened since the one before.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from torch._dynamo.utils import counters, guard_failures

from ge_core.dynamo.stats import LOCK, TorchStats


@dataclass(frozen=True)
class News:
    graph_breaks: list[str]
    guard_failures: list[str]
    eager_frames: list[str]  # frames Dynamo gave up on and ran eagerly ("Dynamo does not support ... LSTM")


@dataclass
class DynamoEvents:
    _breaks_seen: Counter[str] = field(default_factory=Counter)
    _unimplemented_seen: Counter[str] = field(default_factory=Counter)
    _failures_seen: dict[int, int] = field(default_factory=dict)  # id(code) -> reasons read

    def read(self) -> News:
        breaks = _grown(counters["graph_break"], self._breaks_seen)
        eager = [_first_line(r) for r in _grown(counters["unimplemented"], self._unimplemented_seen)]
        failures: list[str] = []
        for code, reasons in list(guard_failures.items()):
            seen = self._failures_seen.get(id(code), 0)
            if len(reasons) < seen:  # torch._dynamo.reset() cleared them
                seen = 0
            failures += [_plain(str(r)) for r in reasons[seen:]]
            self._failures_seen[id(code)] = len(reasons)
        return News(breaks, failures, eager)


def _grown(counter: Counter[str], seen: Counter[str]) -> list[str]:
    """The reasons counted since the last read, one entry per new count."""
    new: list[str] = []
    for reason, count in counter.items():
        new += [str(reason)] * max(0, count - seen[reason])
        seen[reason] = count
    return new


def _first_line(reason: str) -> str:
    """Dynamo's reason in one line: its title, explanation and first hint."""
    lines = [line.strip() for line in str(reason).splitlines() if line.strip()]
    parts = lines[:1] + [next((line for line in lines if line.startswith(k)), "") for k in ("Explanation:", "Hint:")]
    return " ".join(p for p in parts if p)


def _plain(reason: str) -> str:
    """'0/0: tensor 'args[0]' size mismatch ...' without the compile id and the user stack."""
    first = reason.split("\nUser stack trace:", 1)[0]
    head, sep, rest = first.partition(": ")
    return rest if sep and "/" in head and " " not in head else first


EVENTS = DynamoEvents()  # one reader per process: each event is counted once


def merge(news: News, stats: TorchStats) -> None:
    """Add the graph breaks and eager frames of `news` to `stats`."""
    with LOCK:
        stats.graph_breaks += news.graph_breaks
        stats.eager_frames += news.eager_frames
