"""The Memory page's data beyond ge_core.viz.memory: the timeline with its reference lines, the planner
chart's rectangles with what a hover shows, the tensors alive at the peak, step <-> node, and device bytes.

Everything is read from the MemoryPlan (and, for formats and device bytes, the graph it plans), so the
page, the CLI's --tables and an independent reader of the compile report see the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ge_core.hardware.sizes import stored_bytes
from ge_core.ir.graph import Graph
from ge_core.ir.tensor import dtype_itemsize
from ge_core.memory.plan import MemoryPlan
from ge_core.viz.memory import alive_at_peak, live_bytes_timeline, tensor_lives

TIMELINE_COLUMNS = ["step", "node", "live_bytes", "top_bytes", "is_peak"]
RECTANGLE_COLUMNS = ["tensor", "kind", "inside", "offset", "size", "end", "first_step", "last_step", "steps",
                     "producer", "consumers", "shape", "dtype", "logical_bytes"]
DEVICE_COLUMNS = ["format", "device_bytes"]  # added to rectangles and the peak table when a graph is given
PEAK_COLUMNS = ["tensor", "producer", "consumers", "shape", "dtype", "size", "share", "first_step", "last_step"]


@dataclass(frozen=True)
class StepIndex:
    """Step <-> node, and tensor -> the node producing it (a chart selection to a graph selection and back)."""

    nodes: tuple[str, ...]  # step -> node
    step_of: Mapping[str, int]  # node -> step
    producer: Mapping[str, str]  # tensor -> node
    consumers: Mapping[str, tuple[str, ...]]  # tensor -> nodes reading it, in step order

    def tensors_of(self, node: str) -> list[str]:
        """The tensors a node produces and reads (the rectangles to outline when the node is selected)."""
        made = [t for t, p in self.producer.items() if p == node]
        return made + [t for t, users in self.consumers.items() if node in users and t not in made]


def step_index(plan: MemoryPlan) -> StepIndex:
    producer: dict[str, str] = {}
    consumers: dict[str, list[str]] = {}
    for step in plan.steps:
        for t in step.inputs:
            readers = consumers.setdefault(t, [])
            if step.node not in readers:
                readers.append(step.node)
        for t in step.outputs:
            if t:
                producer[t] = step.node
    return StepIndex(tuple(s.node for s in plan.steps), {s.node: i for i, s in enumerate(plan.steps)}, producer,
                     {t: tuple(users) for t, users in consumers.items()})


def memory_timeline(plan: MemoryPlan) -> pd.DataFrame:
    """Per step: node, live bytes (ge_core.viz.memory's count), top_bytes (the highest arena byte in use:
    above live bytes by the plan's fragmentation) and is_peak (the first step of most live bytes)."""
    frame = live_bytes_timeline(plan)
    top = [0] * len(plan.steps)
    for life in tensor_lives(plan):
        end = life.offset + life.size
        for step in range(life.first_step, life.last_step + 1):
            top[step] = max(top[step], end)
    frame["top_bytes"] = top
    frame["is_peak"] = False
    if len(frame):
        frame.loc[int(frame["live_bytes"].idxmax()), "is_peak"] = True
    return frame[TIMELINE_COLUMNS]


def peak_of(plan: MemoryPlan) -> dict[str, Any]:
    """The peak: its step, node and live bytes (step -1 for a plan with no steps)."""
    frame = live_bytes_timeline(plan)
    if frame.empty:
        return {"step": -1, "node": "", "live_bytes": 0}
    i = int(frame["live_bytes"].idxmax())
    return {"step": i, "node": str(frame.at[i, "node"]), "live_bytes": int(frame.at[i, "live_bytes"])}


def reference_lines(plan: MemoryPlan) -> pd.DataFrame:
    """Horizontal lines for the timeline: line, bytes, note. The peak, the lower bound (theory minimum),
    the arena the chosen strategy reached, no reuse; the lower bounds with every Concat copied and in the
    memory-aware order when they differ from the plan's."""
    peak = peak_of(plan)
    rows = [("peak", peak["live_bytes"], f"step {peak['step']}: {peak['node']}"),
            ("lower bound", plan.theory_min_bytes, "peak of the live bytes: no strategy can do better"),
            ("arena", plan.arena_bytes, plan.strategy),
            ("no reuse", plan.no_reuse_bytes, "every tensor its own bytes")]
    if plan.copy_concat_min_bytes and plan.copy_concat_min_bytes != plan.theory_min_bytes:
        rows.append(("lower bound, Concats copying", plan.copy_concat_min_bytes, "no no-copy Concat"))
    if 0 < plan.memory_aware_min_bytes < plan.graph_order_min_bytes:
        rows.append(("lower bound, memory-aware order", plan.memory_aware_min_bytes, "without in-place reuse"))
    return pd.DataFrame(rows, columns=["line", "bytes", "note"])


def allocation_table(plan: MemoryPlan, graph: Graph | None = None) -> pd.DataFrame:
    """The planner chart: one rectangle per tensor (x = steps first..last, y = offset..end) with its hover
    data. kind: tensor (owns bytes), view (drawn inside its base, `inside`) or concat part (a slice of the
    no-copy Concat output `inside`, whose rectangle starts at its first part's step). With `graph`: each
    tensor's format and device bytes (padding included)."""
    index = step_index(plan)
    lives = {life.tensor: life for life in tensor_lives(plan)}
    first = {t: life.first_step for t, life in lives.items()}
    for life in lives.values():  # production order: a part before the Concat output holding it
        if life.inside in first:  # the output's bytes are taken from its first part on
            first[life.inside] = min(first[life.inside], first[life.tensor])
    rows = [_rectangle(plan, index, t, "concat part" if life.inside else "tensor", life.inside, first[t],
                       life.last_step) for t, life in lives.items()]
    end = len(plan.steps) - 1
    for view, base in plan.aliases.items():
        if view not in plan.allocations or view not in index.producer:
            continue
        made = index.step_of[index.producer[view]]
        readers = [index.step_of[c] for c in index.consumers.get(view, ())]
        last = end if view in plan.graph_outputs else max([made, *readers])
        if base in lives:  # the base's rectangle covers its views' lives
            last = min(last, lives[base].last_step)
        rows.append(_rectangle(plan, index, view, "view", base, made, last))
    frame = pd.DataFrame(rows, columns=RECTANGLE_COLUMNS)
    return _with_device(frame, graph) if graph is not None else frame


def _rectangle(plan: MemoryPlan, index: StepIndex, tensor: str, kind: str, inside: str, first: int,
               last: int) -> dict[str, Any]:
    a = plan.allocations[tensor]
    return {"tensor": tensor, "kind": kind, "inside": inside, "offset": a.offset, "size": a.size, "end": a.end,
            "first_step": first, "last_step": last, "steps": last - first + 1,
            "producer": index.producer.get(tensor, ""), "consumers": ", ".join(index.consumers.get(tensor, ())),
            "shape": "[" + ", ".join(map(str, a.shape)) + "]", "dtype": a.dtype,
            "logical_bytes": math.prod(a.shape) * dtype_itemsize(a.dtype)}


def _with_device(frame: pd.DataFrame, graph: Graph) -> pd.DataFrame:
    descs = [graph.desc(t) if graph.has_tensor(t) else None for t in frame["tensor"]]
    frame["format"] = [d.format if d is not None else "" for d in descs]
    frame["device_bytes"] = [stored_bytes(d) if d is not None else 0 for d in descs]
    return frame


def peak_table(plan: MemoryPlan, graph: Graph | None = None) -> pd.DataFrame:
    """The tensors alive at the peak step, largest first: producer, consumers, shape, dtype, planned size,
    share of the peak's live bytes (the shares sum to 1), lifetime; with `graph` also format, device bytes."""
    alive = alive_at_peak(plan)
    index = step_index(plan)
    lives = {life.tensor: life for life in tensor_lives(plan)}
    total = sum(plan.allocations[t].size for t in alive) or 1
    rows = [{"tensor": t, "producer": index.producer.get(t, ""), "consumers": ", ".join(index.consumers.get(t, ())),
             "shape": "[" + ", ".join(map(str, plan.allocations[t].shape)) + "]", "dtype": plan.allocations[t].dtype,
             "size": plan.allocations[t].size, "share": plan.allocations[t].size / total,
             "first_step": lives[t].first_step, "last_step": lives[t].last_step} for t in alive]
    frame = pd.DataFrame(rows, columns=PEAK_COLUMNS).sort_values("size", ascending=False, kind="stable")
    frame = frame.reset_index(drop=True)
    return _with_device(frame, graph) if graph is not None else frame


def device_totals(plan: MemoryPlan, graph: Graph) -> dict[str, int]:
    """Logical against device bytes (the hardware formats' padding, e.g. NC1HWC0's C to 16) over the
    tensors owning bytes, and over the tensors alive at the peak (each aligned as the plan aligns)."""
    owners = [life.tensor for life in tensor_lives(plan)]
    logical = {t: math.prod(plan.allocations[t].shape) * dtype_itemsize(plan.allocations[t].dtype) for t in owners}
    device = {t: stored_bytes(graph.desc(t)) if graph.has_tensor(t) else logical[t] for t in owners}
    align = plan.alignment

    def aligned(n: int) -> int:
        return -(-n // align) * align

    peak = alive_at_peak(plan)
    return {"tensors": len(owners), "logical_bytes": sum(logical.values()), "device_bytes": sum(device.values()),
            "padding_bytes": sum(device.values()) - sum(logical.values()),
            "peak_planned_bytes": sum(plan.allocations[t].size for t in peak),
            "peak_device_bytes": sum(aligned(device[t]) for t in peak)}
