"""Chrome trace export (the JSON Perfetto and chrome://tracing open): one track per unit, an X event per op.

Track 0 ("kernels") holds every kernel with its whole latency; each unit's track (cube, vector, scalar,
MTE1/2/3, FixPipe) holds, per kernel that uses the unit, an event as long as the unit is busy on the
busiest core, starting with the kernel. Times are microseconds, the trace format's unit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ge_core.sim.cost import UNITS

if TYPE_CHECKING:
    from ge_core.sim.simulator import SimResult

PID = 1
TRACKS = ("kernels", *UNITS)


def chrome_trace(result: SimResult) -> dict[str, Any]:
    """The simulated timeline as a Chrome trace (JSON object format)."""
    events: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": PID, "tid": 0,
         "args": {"name": f"{result.profile.title} (simulated, {result.precision})"}}]
    for tid, track in enumerate(TRACKS):
        events.append({"name": "thread_name", "ph": "M", "pid": PID, "tid": tid, "args": {"name": track}})
        events.append({"name": "thread_sort_index", "ph": "M", "pid": PID, "tid": tid, "args": {"sort_index": tid}})
    for row in result.ops:
        args = {"op_type": row.op_type, "unit": row.unit, "bound": row.bound, "flops": row.flops, "bytes": row.bytes,
                "floor_us": row.floor_us, "block_dim": row.block_dim, "tiles": row.tiles, "tiling": row.tiling}
        events.append(_event(row.node, row.op_type, row.start_us, row.latency_us, 0, args))
        for tid, unit in enumerate(UNITS, start=1):
            busy = row.busy_us[unit]
            if busy > 0:
                events.append(_event(row.node, row.op_type, row.start_us, min(busy, row.latency_us), tid,
                                     {"busy_us": busy}))
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"hardware": result.profile.name, "total_us": result.total_us,
                          "precision_mode": result.precision}}


def _event(name: str, category: str, start: float, duration: float, tid: int, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "cat": category, "ph": "X", "ts": round(start, 4), "dur": round(duration, 4),
            "pid": PID, "tid": tid, "args": args}
