"""The Profile page's measured side: an msprof op_summary beside the simulation, and how far to trust it.

- `measured_against(data, name, compiled, sim)` -> Measured: the file read (ge_core.sim.op_summary), its tasks
  matched to our kernels (ge_core.sim.real_compare), the comparison tables, and the measured profile as a
  SimResult named by our nodes, so the page shows it with the simulated one's tables, Gantt and overlay.
- `stream_timeline(result)`: one Gantt row per stream (a measured profile may use several).
- `calibrated(compiled, profile, summary)`: the fit of ge_core.sim.calibrate, `calibration_table` its
  per-op-type ratios before and after.
- `trust_line(profile)`: the profile's calibration state and its error on the published figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ge_core.compiler import CompiledModel
from ge_core.hardware import HardwareProfile
from ge_core.sim.calibrate import Calibration, calibrate
from ge_core.sim.op_summary import OpSummary, measured_result, read_op_summary
from ge_core.sim.real_compare import match_tasks, most_wrong, per_op, per_type, totals
from ge_core.sim.simulator import SimResult
from ge_core.viz.canvas_overlays import Overlay

FIDELITY_PAGE = "docs/fidelity.md"


@dataclass(frozen=True)
class Measured:
    summary: OpSummary
    result: SimResult  # the tasks as a SimResult, matched ones named by our nodes
    matched: dict[int, str]  # task index -> our node
    ops: pd.DataFrame  # real_compare.per_op
    types: pd.DataFrame  # real_compare.per_type
    wrong: pd.DataFrame  # real_compare.most_wrong
    totals: dict[str, float]


def measured_against(data: bytes, name: str, compiled: CompiledModel, sim: SimResult,
                     infer_id: int | None = None) -> Measured:
    """An op_summary's bytes read and set beside `sim` (the simulation of `compiled`); OpSummaryError when
    the file cannot be read."""
    summary = read_op_summary(data, name, infer_id)
    matched = match_tasks(summary, sim, compiled.graph)
    ops = per_op(summary, sim, matched)
    result = measured_result(summary, sim.profile, matched, sim.precision)
    return Measured(summary, result, matched, ops, per_type(ops), most_wrong(ops), totals(summary, sim, ops))


def measured_overlay(measured: Measured) -> Overlay:
    """Measured µs per node of our graph (the tasks matched to it), for the canvas's heat overlay."""
    values = {r.node: r.latency_us for i, r in enumerate(measured.result.ops) if i in measured.matched}
    return Overlay("measured latency (µs)", values, "µs",
                   description=f"Task Duration of the node's task in {measured.summary.file}")


def stream_timeline(result: SimResult) -> pd.DataFrame:
    """One row per kernel on its stream's line: unit (= "stream N", the Gantt's row), node, op_type, start_us,
    end_us, busy_us."""
    rows = [{"unit": f"stream {r.stream}", "node": r.node, "op_type": r.op_type, "start_us": r.start_us,
             "end_us": r.end_us, "busy_us": r.latency_us} for r in result.ops]
    return pd.DataFrame(rows, columns=["unit", "node", "op_type", "start_us", "end_us", "busy_us"])


def stream_order(result: SimResult) -> list[str]:
    return [f"stream {s}" for s in sorted({r.stream for r in result.ops})]


def calibrated(compiled: CompiledModel, profile: HardwareProfile, summary: OpSummary, model: str = "") -> Calibration:
    return calibrate(compiled, profile, summary, model)


def calibration_table(fit: Calibration) -> pd.DataFrame:
    """Per op type: kernels, measured µs, simulated before and after, and both ratios (simulated / measured)."""
    frame = pd.DataFrame(fit.residuals())
    if frame.empty:
        return pd.DataFrame(columns=["op_type", "kernels", "measured_us", "before_us", "after_us", "ratio_before",
                                     "ratio_after"])
    grouped = frame.groupby("op_type", sort=False).agg(kernels=("node", "size"), measured_us=("measured_us", "sum"),
                                                       before_us=("before_us", "sum"), after_us=("after_us", "sum"))
    grouped["ratio_before"] = grouped["before_us"] / grouped["measured_us"]
    grouped["ratio_after"] = grouped["after_us"] / grouped["measured_us"]
    return grouped.reset_index().sort_values("measured_us", ascending=False, kind="stable").reset_index(drop=True)


def trust_line(profile: HardwareProfile) -> str:
    """How far to trust the numbers on `profile`: calibrated or not (and the fit's error), and how far its
    built-in base was off on the published figures (bench/bench_fidelity.py, docs/fidelity.md)."""
    parts = [_calibration_words(profile.calibration)]
    parts.append(_fidelity_words(profile.fidelity, profile.name))
    return " ".join(p for p in parts if p)


def _calibration_words(record: dict[str, Any]) -> str:
    if not record:
        return ("Not calibrated: the figures are public specifications and stated assumptions "
                "(the profile's sources), not measurements of this chip.")
    before, after = _number(record.get("error_before")), _number(record.get("error_after"))
    return (f"Calibrated on {record.get('fitted_on', 'a measured profile')} ({record.get('kernels_fitted', '?')} "
            f"kernels of {record.get('model') or 'a model'}): per-kernel error {_times(before)} before the fit, "
            f"{_times(after)} after (geometric mean of simulated/measured either way).")


def _fidelity_words(fidelity: dict[str, Any], name: str) -> str:
    if not fidelity:
        return (f"No published figures were found to check {name} against, so its error is unknown; "
                f"see {FIDELITY_PAGE}.")
    which = fidelity.get("profile", name)
    return (f"On {fidelity.get('figures', '?')} published batch-1 latencies of {fidelity.get('chip', which)}, "
            f"{which} was off by {_times(_number(fidelity.get('geomean_abs_ln_ratio')))} on average "
            f"(worst {fidelity.get('worst_ratio', '?')}x, simulated / published; {FIDELITY_PAGE}).")


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else math.nan


def _times(abs_ln: float) -> str:
    """A mean |ln ratio| as "x1.11" (exp of it): the typical factor between simulated and real."""
    return "x?" if math.isnan(abs_ln) else f"x{math.exp(abs_ln):.2f}"
