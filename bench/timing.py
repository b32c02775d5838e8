"""Timing helpers and the machine's description shared by the benchmarks."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm-up: first-call allocations, ORT's lazy init
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo) and core count, for a benchmark's header."""
    try:
        names = [line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                 if line.startswith("model name")]
    except OSError:
        names = []
    return f"{names[0] if names else 'unknown CPU'} x {os.cpu_count()}"
