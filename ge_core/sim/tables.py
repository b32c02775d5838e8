"""Chart data for the UI from a SimResult: pure functions returning pandas DataFrames.

- op_table: one row per kernel (the report's ops rows, with share of the total, attained FLOP/s, intensity
  and busy times);
- unit_timeline: one row per (kernel, unit) with start/end, for a Gantt chart per unit;
- roofline_points: intensity vs attained FLOP/s per kernel, and roofline_lines: the roof itself.
"""

from __future__ import annotations

import math

import pandas as pd

from ge_core.sim.cost import UNITS
from ge_core.sim.simulator import SimResult

OP_COLUMNS = ["node", "op_type", "unit", "start_us", "latency_us", "share", "end_us", "floor_us", "flops", "bytes",
              "attained_flops", "intensity", "bound", "block_dim", "tiles", *[f"{u}_us" for u in UNITS], "tiling"]


def op_table(result: SimResult) -> pd.DataFrame:
    """share: the kernel's latency over the total (one stream: the shares sum to 1)."""
    rows = []
    total = result.total_us or 1.0
    for r in result.ops:
        row = {"node": r.node, "op_type": r.op_type, "unit": r.unit, "start_us": r.start_us,
               "latency_us": r.latency_us, "share": r.latency_us / total, "end_us": r.end_us,
               "floor_us": r.floor_us, "flops": r.flops, "bytes": r.bytes, "attained_flops": r.attained_flops,
               "intensity": r.intensity if math.isfinite(r.intensity) else None, "bound": r.bound,
               "block_dim": r.block_dim, "tiles": r.tiles, "tiling": r.tiling}
        row.update({f"{u}_us": r.busy_us[u] for u in UNITS})
        rows.append(row)
    return pd.DataFrame(rows, columns=OP_COLUMNS)


def unit_timeline(result: SimResult) -> pd.DataFrame:
    """Per kernel and unit it keeps busy: unit, node, op_type, start_us, end_us, busy_us."""
    rows = [{"unit": u, "node": r.node, "op_type": r.op_type, "start_us": r.start_us,
             "end_us": r.start_us + min(r.busy_us[u], r.latency_us), "busy_us": r.busy_us[u]}
            for r in result.ops for u in UNITS if r.busy_us[u] > 0]
    return pd.DataFrame(rows, columns=["unit", "node", "op_type", "start_us", "end_us", "busy_us"])


def roofline_points(result: SimResult) -> pd.DataFrame:
    """Kernels with FLOPs and bytes: arithmetic intensity (FLOP/byte) and attained FLOP/s."""
    rows = [{"node": r.node, "op_type": r.op_type, "unit": r.unit, "intensity": r.flops / r.bytes,
             "attained_flops": r.attained_flops, "latency_us": r.latency_us, "bound": r.bound}
            for r in result.ops if r.flops > 0 and r.bytes > 0]
    return pd.DataFrame(rows, columns=["node", "op_type", "unit", "intensity", "attained_flops", "latency_us", "bound"])


def roofline_lines(result: SimResult, points: int = 64) -> pd.DataFrame:
    """The roof: min(peak, intensity x bandwidth) over intensities spanning the kernels' (log-spaced)."""
    p = result.profile
    ridge = p.peak_flops / p.memory_bandwidth
    intensities = [r.flops / r.bytes for r in result.ops if r.flops > 0 and r.bytes > 0] or [ridge]
    lo, hi = math.log10(min(min(intensities), ridge) / 4), math.log10(max(max(intensities), ridge) * 4)
    xs = [10 ** (lo + (hi - lo) * i / (points - 1)) for i in range(points)]
    return pd.DataFrame({"intensity": xs, "attainable_flops": [min(p.peak_flops, x * p.memory_bandwidth) for x in xs]})


def unit_totals(result: SimResult) -> pd.DataFrame:
    """Busy time per unit summed over kernels, and its share of the total."""
    busy = result.busy_us()
    total = result.total_us or 1.0
    return pd.DataFrame({"unit": list(busy), "busy_us": list(busy.values()),
                         "share": [v / total for v in busy.values()]})
