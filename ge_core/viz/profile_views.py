"""The Profile page's data from a SimResult: the summary, the slowest kernels, latency per node for the graph's
heat overlay, and the NPU's outputs against the CPU's. The per-op table, the per-unit Gantt rows and the
roofline are ge_core.sim.tables' (re-exported by ge_core.viz as profile_table, unit_timeline, roofline_*).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ge_core.compiler import CompiledModel
from ge_core.runtime import random_feeds, relative_error
from ge_core.sim.cost import UNITS
from ge_core.sim.precision import exact, parse_precision
from ge_core.sim.simulator import SimResult
from ge_core.sim.tables import op_table

TOP_COLUMNS = ["rank", "node", "op_type", "unit", "latency_us", "share", "cumulative_share", "bound", "flops",
               "bytes", "attained_flops", "intensity"]
OUTPUT_COLUMNS = ["output", "dtype", "shape", "rel_error", "npu_min", "npu_max", "npu_mean", "cpu_min", "cpu_max",
                  "cpu_mean"]


def profile_summary(result: SimResult) -> dict[str, Any]:
    """The headline numbers: total and floor µs, kernels, views, FLOPs, bytes, each unit's utilisation
    (busy / total), how many kernels each bound has, and the slowest kernel."""
    total = result.total_us or 1.0
    slowest = max(result.ops, key=lambda r: r.latency_us, default=None)
    return {"hardware": result.profile.name, "precision": result.precision, "total_us": result.total_us,
            "floor_us": result.floor_us, "kernels": len(result.ops), "views": len(result.views),
            "flops": result.flops, "bytes": result.bytes,
            "utilisation": {u: busy / total for u, busy in result.busy_us().items()},
            "bounds": dict(Counter(r.bound for r in result.ops)),
            "slowest": {"node": slowest.node, "op_type": slowest.op_type, "latency_us": slowest.latency_us,
                        "bound": slowest.bound} if slowest is not None else None}


def top_ops(result: SimResult, n: int = 10) -> pd.DataFrame:
    """The `n` slowest kernels, slowest first, with their share and the running share of the total."""
    frame = op_table(result).sort_values("latency_us", ascending=False, kind="stable").head(n)
    frame = frame.reset_index(drop=True)
    frame["rank"] = range(1, len(frame) + 1)
    frame["cumulative_share"] = frame["share"].cumsum()
    return frame[TOP_COLUMNS]


def latency_by_node(result: SimResult) -> dict[str, float]:
    """Node -> simulated µs, for the graph's heat overlay (views launch no kernel: absent)."""
    return {r.node: r.latency_us for r in result.ops}


def unit_order() -> list[str]:
    """The Gantt chart's rows, top to bottom."""
    return list(UNITS)


def cpu_reference(compiled: CompiledModel, seed: int = 0,
                  feeds: Mapping[str, object] | None = None) -> dict[str, np.ndarray]:
    """The CPU executor's outputs on the inputs `simulate` used (seeded random ones unless `feeds`)."""
    return compiled.run(dict(feeds) if feeds is not None else random_feeds(compiled.graph, seed))


def output_comparison(result: SimResult, reference: Mapping[str, np.ndarray] | None = None) -> pd.DataFrame:
    """Per graph output, the NPU's values against the CPU's: relative error (ge_core.runtime.relative_error)
    and min/max/mean of each side. Without `reference`, the error is the simulator's own precision_errors
    (against fp32) and the CPU columns are empty, except in an exact mode where both sides are the outputs."""
    rows = []
    same = exact(parse_precision(result.precision))  # the outputs are the CPU's own
    for name, npu in result.outputs.items():
        cpu = reference.get(name) if reference is not None else (npu if same else None)
        error = relative_error(npu, cpu) if cpu is not None else result.precision_errors.get(name, math.nan)
        value = np.asarray(npu)
        rows.append({"output": name, "dtype": str(value.dtype), "shape": str(list(value.shape)), "rel_error": error,
                     **_stats("npu", value), **_stats("cpu", np.asarray(cpu) if cpu is not None else None)})
    return pd.DataFrame(rows, columns=OUTPUT_COLUMNS)


def _stats(side: str, value: np.ndarray | None) -> dict[str, float]:
    if value is None or value.size == 0 or value.dtype.kind not in "biuf":
        return {f"{side}_{k}": math.nan for k in ("min", "max", "mean")}
    v = value.astype(np.float64)
    return {f"{side}_min": float(v.min()), f"{side}_max": float(v.max()), f"{side}_mean": float(v.mean())}
