"""Calibration: a profile's free parameters fitted to a measured profile (an op_summary of a real run).

    fit = calibrate(compiled, profile, summary)   # least squares on log time over the matched kernels
    fit.profile_json()                            # the calibrated profile (extends the base one), with its record
    fit.error_before, fit.error_after             # geomean |ln(simulated / measured)| per kernel

The free parameters are the profile's `efficiency` (cube, vector, memory: how much of its modelled rate a unit
attains) and `overheads.kernel_launch_us` (per kernel). Every kernel's latency is the cost model's own
formula (ge_core.sim.cost._assemble) re-evaluated from its simulated per-unit busy time: the pipeline of its
stages, the off-chip floor, setup and launch, so a fit needs no re-tiling. scipy's least_squares minimises
sum (ln simulated - ln measured)^2: every kernel counts by its ratio, a 2 us one as much as a 2 ms one. The
calibrated profile records what it was fitted on, the residuals and the error before and after; it loads like
any other profile (`--hardware FILE`, the sidebar's upload).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.optimize import least_squares

from ge_core.errors import UsageError
from ge_core.hardware import HardwareProfile, load_profile, profile_names
from ge_core.hardware.loader import profile_data
from ge_core.sim.op_summary import OpSummary
from ge_core.sim.real_compare import match_tasks
from ge_core.sim.simulator import OpRow, SimResult, simulate

if TYPE_CHECKING:
    from ge_core.compiler import CompiledModel

MEMORY_UNITS = ("mte1", "mte2", "mte3", "fixpipe")
PARAMETERS = ("efficiency.cube", "efficiency.vector", "efficiency.memory", "overheads.kernel_launch_us")
EFFICIENCY_BOUNDS = (0.05, 20.0)
LAUNCH_BOUNDS = (0.0, 100.0)


@dataclass(frozen=True)
class Kernel:
    """One matched kernel's simulated parts, at efficiency 1, in µs."""

    node: str
    op_type: str
    task: str
    measured_us: float
    units: dict[str, float]  # cube, vector, mte1, mte2, mte3, fixpipe; scalar per tile
    tiles: int  # pipeline steps on the busiest core
    ddr_us: float  # the off-chip floor at the profile's bandwidth
    setup_us: float


def kernel_parts(row: OpRow, profile: HardwareProfile) -> tuple[dict[str, float], int, float, float]:
    """(units at efficiency 1, tiles per core, off-chip µs, setup µs) of a simulated row: the inputs of
    `latency`, which gives the row's own latency back at the profile's parameters."""
    eff = profile.efficiency
    scale = {"cube": eff.cube, "vector": eff.vector, **dict.fromkeys(MEMORY_UNITS, eff.memory)}
    setup = profile.overheads.scalar_cycles_per_kernel / (profile.clock_ghz * 1e3)
    units = {u: row.busy_us[u] * scale[u] for u in scale}
    units["scalar"] = max(row.busy_us["scalar"] - setup, 0.0)
    tiles = max(row.tiles // max(row.block_dim, 1), 1)
    return units, tiles, row.bytes / profile.memory_bandwidth * 1e6, setup


def latency(units: dict[str, float], tiles: int, ddr_us: float, setup_us: float, params: np.ndarray) -> float:
    """The cost model's kernel latency (cost._assemble) at `params`: log efficiencies (cube, vector, memory)
    and the launch µs."""
    cube, vector, memory = np.exp(params[:3])
    stages = [units["cube"] / cube, units["vector"] / vector, units["scalar"],
              *(units[u] / memory for u in MEMORY_UNITS)]
    slowest = max(stages)
    pipeline = slowest + (sum(stages) - slowest) / tiles
    return max(pipeline, ddr_us / memory) + setup_us + float(params[3])


@dataclass
class Calibration:
    base: HardwareProfile
    source: str  # the op_summary's file
    model: str
    kernels: list[Kernel]
    before: np.ndarray  # the base profile's parameters
    after: np.ndarray  # the fitted ones
    tasks: int  # measured tasks in the file
    excluded: int  # matched kernels the fit could not use (control flow, zero times)

    @property
    def error_before(self) -> float:
        return _error(self.kernels, self.before)

    @property
    def error_after(self) -> float:
        return _error(self.kernels, self.after)

    def parameters(self, params: np.ndarray | None = None) -> dict[str, float]:
        p = self.after if params is None else params
        return {"efficiency.cube": float(math.exp(p[0])), "efficiency.vector": float(math.exp(p[1])),
                "efficiency.memory": float(math.exp(p[2])), "overheads.kernel_launch_us": float(p[3])}

    def residuals(self) -> list[dict[str, Any]]:
        """Per kernel: measured, simulated before and after, in µs."""
        return [{"task": k.task, "node": k.node, "op_type": k.op_type, "measured_us": _r(k.measured_us),
                 "before_us": _r(_latency(k, self.before)), "after_us": _r(_latency(k, self.after))}
                for k in self.kernels]

    def profile_json(self, name: str = "") -> dict[str, Any]:
        """The calibrated profile: extends the base (a built-in by name, a file by its full content) with the
        fitted efficiency and launch, and a `calibration` record of the fit."""
        fitted = self.parameters()
        base = self.base
        data: dict[str, Any] = {"extends": base.name} if base.name in profile_names() else profile_data(base)
        data.update({
            "name": name or f"{base.name}_calibrated",
            "title": f"{base.title}, calibrated on {self.source}",
            "efficiency": {"cube": _r(fitted["efficiency.cube"]), "vector": _r(fitted["efficiency.vector"]),
                           "memory": _r(fitted["efficiency.memory"])},
            "overheads": {**(data.get("overheads") or {}),
                          "kernel_launch_us": _r(fitted["overheads.kernel_launch_us"])},
            "calibration": self.record(),
        })
        return data

    def record(self) -> dict[str, Any]:
        return {"fitted_on": self.source, "model": self.model, "base_profile": self.base.name,
                "method": "scipy least_squares on ln(simulated) - ln(measured) per matched kernel",
                "tasks": self.tasks, "kernels_fitted": len(self.kernels), "kernels_excluded": self.excluded,
                "parameters_before": {k: _r(v) for k, v in self.parameters(self.before).items()},
                "parameters_after": {k: _r(v) for k, v in self.parameters().items()},
                "error_before": _r(self.error_before), "error_after": _r(self.error_after),
                "residuals": self.residuals()}


def calibrate(compiled: CompiledModel, profile: HardwareProfile | str, summary: OpSummary,
              model: str = "") -> Calibration:
    """Fit `profile`'s efficiency and launch overhead so that the simulation of `compiled` matches `summary`
    kernel by kernel (the matched ones: ge_core.sim.real_compare)."""
    base = load_profile(profile)
    sim = simulate(compiled, base, run=False)
    matched = match_tasks(summary, sim, compiled.graph)
    kernels, excluded = _kernels(summary, sim, matched, base)
    if len(kernels) < 2:
        raise UsageError(f"cannot calibrate on '{summary.file}': {len(kernels)} of its {len(summary.tasks)} tasks "
                         f"match a kernel of the compiled model.",
                         hint="Profile the same model (same input shapes) that is compiled here, with msprof.")
    start = np.array([math.log(base.efficiency.cube), math.log(base.efficiency.vector),
                      math.log(base.efficiency.memory), base.overheads.kernel_launch_us])
    lo = [math.log(EFFICIENCY_BOUNDS[0])] * 3 + [LAUNCH_BOUNDS[0]]
    hi = [math.log(EFFICIENCY_BOUNDS[1])] * 3 + [LAUNCH_BOUNDS[1]]
    measured = np.log([k.measured_us for k in kernels])

    def residuals(params: np.ndarray) -> np.ndarray:
        return np.log([_latency(k, params) for k in kernels]) - measured

    fit = least_squares(residuals, np.clip(start, lo, hi), bounds=(lo, hi), x_scale=[1.0, 1.0, 1.0, 1.0])
    return Calibration(base, summary.file, model, kernels, start, fit.x, len(summary.tasks), excluded)


def _kernels(summary: OpSummary, sim: SimResult, matched: dict[int, str],
             profile: HardwareProfile) -> tuple[list[Kernel], int]:
    rows = {r.node: r for r in sim.ops}
    kernels, excluded = [], 0
    start = np.array([math.log(profile.efficiency.cube), math.log(profile.efficiency.vector),
                      math.log(profile.efficiency.memory), profile.overheads.kernel_launch_us])
    for i, node in matched.items():
        row, task = rows[node], summary.tasks.iloc[i]
        units, tiles, ddr, setup = kernel_parts(row, profile)
        again = latency(units, tiles, ddr, setup, start)
        measured = float(task["duration_us"])
        # the formula gives the row back unless the row is not one kernel (control flow prices its subgraphs)
        if measured <= 0 or not math.isclose(again, row.latency_us, rel_tol=1e-6, abs_tol=1e-6):
            excluded += 1
            continue
        kernels.append(Kernel(node, row.op_type, str(task["name"]), measured, units, tiles, ddr, setup))
    return kernels, excluded


def _latency(k: Kernel, params: np.ndarray) -> float:
    return latency(k.units, k.tiles, k.ddr_us, k.setup_us, params)


def _error(kernels: list[Kernel], params: np.ndarray) -> float:
    if not kernels:
        return math.nan
    return float(np.mean([abs(math.log(_latency(k, params) / k.measured_us)) for k in kernels]))


def write_profile(calibration: Calibration, path: str | Path, name: str = "") -> Path:
    """Write the calibrated profile JSON; it loads back as a profile (checked here)."""
    out = Path(path)
    out.write_text(json.dumps(calibration.profile_json(name), indent=2) + "\n", encoding="utf-8")
    load_profile(out)
    return out


def _r(value: float) -> float:
    return float(f"{value:.6g}")

