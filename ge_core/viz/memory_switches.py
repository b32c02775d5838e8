"""The Memory page's switches: each strategy's arena as a series, and what flipping one memory switch would
give, planned on the compiled graph (`ge_core.compiler.plan_for`) without running the passes again.

Live bytes do not depend on the strategy (only on in-place pairs and no-copy Concats); where the tensors
sit does. So a strategy's series is its `top_bytes`: the highest arena byte in use at each step, which
ends at that strategy's arena.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace

import pandas as pd

from ge_core.compiler import CompiledModel, plan_for
from ge_core.config import MemoryConfig
from ge_core.memory.order import MEMORY_ORDERS
from ge_core.memory.plan import MemoryPlan
from ge_core.memory.planners import NO_COPY, STRATEGIES
from ge_core.viz.memory_views import memory_timeline

ALIGNMENTS = (32, 512)  # the UB/L1 alignment and GE's arena alignment (DESIGN.md, hardware profiles)
STRATEGY_CHOICES = ("auto", *STRATEGIES)  # what MemoryConfig.strategy takes (the UI's switches)
ORDER_CHOICES = MEMORY_ORDERS  # what MemoryConfig.order takes
SWITCH_COLUMNS = ["switch", "value", "strategy", "arena_bytes", "theory_min_bytes", "delta_bytes", "config"]


def strategy_arenas(plan: MemoryPlan) -> pd.DataFrame:
    """Every strategy the planner ran (plan.strategies, no re-planning): strategy, layout (no-copy Concat
    parts pinned or Concats copying), arena bytes, its ratio to the lower bound, and whether it was kept."""
    bound = plan.theory_min_bytes or 1
    rows = [{"strategy": name.removesuffix(NO_COPY), "layout": "no-copy concat" if name.endswith(NO_COPY) else "copy",
             "key": name, "arena_bytes": arena, "vs_lower_bound": arena / bound, "chosen": name == plan.strategy}
            for name, arena in plan.strategies.items()]
    return pd.DataFrame(rows, columns=["strategy", "layout", "key", "arena_bytes", "vs_lower_bound", "chosen"])


def memory_for_strategy(key: str, memory: MemoryConfig) -> MemoryConfig:
    """The switches that make the planner run one strategy of plan.strategies (`key` as named there)."""
    name = key.removesuffix(NO_COPY)
    if name == "no_reuse":
        return replace(memory, reuse=False, strategy="auto")
    return replace(memory, reuse=True, strategy=name, no_copy_concat=key.endswith(NO_COPY))


def strategy_timelines(compiled: CompiledModel, keys: Iterable[str] | None = None,
                       memory: MemoryConfig | None = None) -> pd.DataFrame:
    """Long form (strategy, step, node, live_bytes, top_bytes) for each strategy key asked (default: every
    one the plan ran): re-plans once per key, so ask only for the series shown. Steps follow each plan's
    order (the same nodes, reordered under a memory-aware order)."""
    base = memory or compiled.config.memory
    plan = plan_for(compiled, base)
    frames = []
    for key in list(keys) if keys is not None else list(plan.strategies):
        one = plan if key == plan.strategy else plan_for(compiled, memory_for_strategy(key, base))
        frame = memory_timeline(one).drop(columns="is_peak")
        frame.insert(0, "strategy", key)
        frames.append(frame)
    columns = ["strategy", "step", "node", "live_bytes", "top_bytes"]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def switch_alternatives(memory: MemoryConfig) -> list[tuple[str, object, MemoryConfig]]:
    """(switch, value, the switches with only that one changed) for every other value of each switch."""
    out: list[tuple[str, object, MemoryConfig]] = []
    out += [("strategy", s, replace(memory, strategy=s)) for s in ("auto", *STRATEGIES) if s != memory.strategy]
    out.append(("reuse", not memory.reuse, replace(memory, reuse=not memory.reuse)))
    out.append(("no_copy_concat", not memory.no_copy_concat, replace(memory, no_copy_concat=not memory.no_copy_concat)))
    out += [("order", o, replace(memory, order=o)) for o in MEMORY_ORDERS if o != memory.order]
    out += [("alignment", a, replace(memory, alignment=a)) for a in ALIGNMENTS if a != memory.alignment]
    return out


def memory_switch_plans(compiled: CompiledModel, memory: MemoryConfig | None = None) -> pd.DataFrame:
    """What each memory switch would do from `memory` (default: the compile's own): the current plan's row
    first (switch "current"), then one row per other value of one switch, with the strategy the planner
    kept, arena, lower bound, arena minus the current one, and the MemoryConfig JSON to apply it."""
    base = memory or compiled.config.memory
    current = plan_for(compiled, base)
    rows = [_row("current", "", current, current, base)]
    for switch, value, changed in switch_alternatives(base):
        rows.append(_row(switch, value, plan_for(compiled, changed), current, changed))
    return pd.DataFrame(rows, columns=SWITCH_COLUMNS)


def _row(switch: str, value: object, plan: MemoryPlan, current: MemoryPlan, memory: MemoryConfig) -> dict[str, object]:
    return {"switch": switch, "value": value, "strategy": plan.strategy, "arena_bytes": plan.arena_bytes,
            "theory_min_bytes": plan.theory_min_bytes, "delta_bytes": plan.arena_bytes - current.arena_bytes,
            "config": json.dumps(memory.to_json(), sort_keys=True)}
