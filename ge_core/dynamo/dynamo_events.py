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


@dataclass(frozen=True)
class News:
    graph_breaks: list[str]
    guard_failures: list[str]


@dataclass
class DynamoEvents:
    _breaks_seen: Counter[str] = field(default_factory=Counter)
    _failures_seen: dict[int, int] = field(default_factory=dict)  # id(code) -> reasons read

    def read(self) -> News:
        breaks: list[str] = []
        for reason, count in counters["graph_break"].items():
            breaks += [str(reason)] * max(0, count - self._breaks_seen[reason])
            self._breaks_seen[reason] = count
        failures: list[str] = []
        for code, reasons in list(guard_failures.items()):
            seen = self._failures_seen.get(id(code), 0)
            if len(reasons) < seen:  # torch._dynamo.reset() cleared them
                seen = 0
            failures += [_plain(str(r)) for r in reasons[seen:]]
            self._failures_seen[id(code)] = len(reasons)
        return News(breaks, failures)


def _plain(reason: str) -> str:
    """'0/0: tensor 'args[0]' size mismatch ...' without the compile id and the user stack."""
    first = reason.split("\nUser stack trace:", 1)[0]
    head, sep, rest = first.partition(": ")
    return rest if sep and "/" in head and " " not in head else first
