"""Every table of the Passes, Fusion, Memory and Profile pages for one compile, under stable names: what
`python -m ge_core compile --tables DIR` writes as DIR/<name>.csv and the pages offer as CSV downloads.
"""

from __future__ import annotations

import pandas as pd

from ge_core.compiler import CompiledModel
from ge_core.sim.simulator import SimResult
from ge_core.sim.tables import op_table, roofline_lines, roofline_points, unit_timeline, unit_totals
from ge_core.viz.fusion_views import fusion_decisions, fusion_summary
from ge_core.viz.memory_switches import strategy_arenas
from ge_core.viz.memory_views import allocation_table, memory_timeline, peak_table, reference_lines
from ge_core.viz.pass_table import pass_table
from ge_core.viz.profile_views import output_comparison

# name -> what it holds, in the order written (docs/cli.md lists the same)
TABLE_FILES = {
    "passes": "one row per pass: stage, changed, nodes before/after, ms, fusions, notes",
    "fusion_decisions": "one row per fusion candidate: pass, pattern, accepted, reason, nodes, fused node",
    "fusion_summary": "per pass and pattern: matched, applied, rejected (fusion_result.json's numbers)",
    "memory_timeline": "per execution step: node, live bytes, highest arena byte in use, peak",
    "memory_reference_lines": "peak, lower bound, arena, no reuse (bytes)",
    "memory_rectangles": "per tensor: offset, size, steps, producer, consumers, shape, dtype (+ device bytes)",
    "memory_alive_at_peak": "the tensors alive at the peak, largest first, with their share of it",
    "memory_strategies": "the arena every planner strategy reached",
    "profile_ops": "per kernel: unit, start, latency, share, FLOPs, bytes, attained FLOP/s, intensity, bound",
    "profile_units": "per kernel and unit: start and end (the Gantt chart)",
    "profile_unit_totals": "busy time per unit and its share of the total",
    "profile_roofline_points": "per kernel: arithmetic intensity and attained FLOP/s",
    "profile_roofline": "the roof: attainable FLOP/s per intensity",
    "profile_outputs": "per output: NPU against CPU values and relative error (when the simulation ran them)",
}


def compile_tables(compiled: CompiledModel, result: SimResult | None = None) -> dict[str, pd.DataFrame]:
    """The tables that apply: passes and fusion always, memory with a plan, profile with a simulation.
    With a hardware target the memory tables carry each tensor's format and device bytes."""
    tables = {"passes": pass_table(compiled.records), "fusion_decisions": fusion_decisions(compiled.records),
              "fusion_summary": fusion_summary(compiled.records)}
    plan = compiled.memory
    if plan is not None:
        graph = compiled.graph if compiled.config.hardware is not None else None
        tables.update({"memory_timeline": memory_timeline(plan), "memory_reference_lines": reference_lines(plan),
                       "memory_rectangles": allocation_table(plan, graph),
                       "memory_alive_at_peak": peak_table(plan, graph), "memory_strategies": strategy_arenas(plan)})
    if result is not None:
        tables.update({"profile_ops": op_table(result), "profile_units": unit_timeline(result),
                       "profile_unit_totals": unit_totals(result), "profile_roofline_points": roofline_points(result),
                       "profile_roofline": roofline_lines(result)})
        if result.outputs:
            tables["profile_outputs"] = output_comparison(result)
    return tables
