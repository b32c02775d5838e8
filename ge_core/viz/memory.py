"""Data frames for the Memory page: live bytes per step and the planner chart (offset x lifetime).

Lifetimes come from the plan's steps alone: a tensor is alive from the step producing it to the last step
reading it (graph outputs to the last step). A view (plan.aliases) owns no bytes: it keeps the tensor it
aliases alive until its own last reader. An in-place output (PlanStep.inplace) reuses its input's bytes, so
at the step where one becomes the other they are counted once. The inputs of a no-copy Concat
(PlanStep.no_task) are slices of its output: while the output is alive they are not counted again, and
their rectangles carry the output's name (`inside`), to be drawn within it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from ge_core.runtime.arena import MemoryPlanLike


@dataclass(frozen=True, slots=True)
class Life:
    tensor: str
    offset: int
    size: int
    first_step: int
    last_step: int
    inside: str = ""  # the no-copy Concat output these bytes are a slice of


def tensor_lives(plan: MemoryPlanLike) -> list[Life]:
    """One row per tensor owning arena bytes (views excluded), in production order."""
    first, last = _first_last(plan)
    for view in reversed(list(first)):  # views of views: the later view extends its base first
        base = plan.aliases.get(view)
        if base is not None and base in last:
            last[base] = max(last[base], last[view])
    holder = holders(plan)
    return [Life(t, plan.allocations[t].offset, plan.allocations[t].size, first[t], last[t], holder.get(t, ""))
            for t in first if t not in plan.aliases and t in plan.allocations]


def holders(plan: MemoryPlanLike) -> dict[str, str]:
    """Input of a no-copy Concat -> its output, whose bytes hold it."""
    return {t: step.outputs[0] for step in plan.steps if getattr(step, "no_task", False) and step.outputs
            for t in step.inputs}


def _first_last(plan: MemoryPlanLike) -> tuple[dict[str, int], dict[str, int]]:
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for i, step in enumerate(plan.steps):
        for t in step.inputs:
            if t in first:
                last[t] = i
        for t in step.outputs:
            if t:
                first[t] = last[t] = i
    end = len(plan.steps) - 1
    for t in plan.graph_outputs:
        if t in last:
            last[t] = end
    return first, last


def _alive(lives: Sequence[Life], step: int, inplace: Mapping[str, str]) -> list[Life]:
    """Tensors holding bytes at `step`; an in-place output made at `step` shares its input's bytes."""
    alive = [life for life in lives if life.first_step <= step <= life.last_step]
    names = {life.tensor for life in alive}
    return [life for life in alive if not (life.first_step == step and inplace.get(life.tensor) in names)
            and not _held(life.inside, names, lives)]


def _held(inside: str, alive: set[str], lives: Sequence[Life]) -> bool:
    """Are these bytes counted already, inside a live no-copy Concat output (at any depth)?"""
    if not inside:
        return False
    parent = {life.tensor: life.inside for life in lives if life.inside}
    while inside:
        if inside in alive:
            return True
        inside = parent.get(inside, "")
    return False


def live_bytes_timeline(plan: MemoryPlanLike) -> pd.DataFrame:
    """Columns step, node, live_bytes: the planned (aligned) bytes alive at each step."""
    lives = tensor_lives(plan)
    rows = [(i, step.node, sum(life.size for life in _alive(lives, i, step.inplace)))
            for i, step in enumerate(plan.steps)]
    return pd.DataFrame(rows, columns=["step", "node", "live_bytes"])


def allocation_rectangles(plan: MemoryPlanLike) -> pd.DataFrame:
    """Columns tensor, offset, size, first_step, last_step, inside: one rectangle per tensor owning bytes
    (`inside` names the no-copy Concat output a slice lies in, "" otherwise)."""
    rows = [(life.tensor, life.offset, life.size, life.first_step, life.last_step, life.inside)
            for life in tensor_lives(plan)]
    return pd.DataFrame(rows, columns=["tensor", "offset", "size", "first_step", "last_step", "inside"])


def alive_at_peak(plan: MemoryPlanLike) -> list[str]:
    """The tensors alive at the (first) step with the most live bytes, in production order."""
    if not plan.steps:
        return []
    timeline = live_bytes_timeline(plan)
    peak = int(timeline["live_bytes"].idxmax())
    return [life.tensor for life in _alive(tensor_lives(plan), peak, plan.steps[peak].inplace)]
