"""The Memory page's sections (app_pages/memory.py): live bytes per execution step against the lower bound,
no reuse and each strategy's arena; the planner chart (tensors as rectangles of lifetime x offset); the
tensors alive at the peak; the memory switches re-planning the compiled graph; device bytes with a hardware
target. A step or a rectangle selects its node, on the graph too, and a node picked on the graph is marked
on the charts."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd
import streamlit as st

from ge_core import CompiledModel, MemoryConfig
from ge_core.viz import (
    ORDER_CHOICES,
    STRATEGY_CHOICES,
    allocation_table,
    device_totals,
    format_bytes,
    memory_overlay,
    memory_switch_plans,
    memory_timeline,
    peak_table,
    plan_for,
    reference_lines,
    step_index,
    strategy_arenas,
    strategy_timelines,
)
from workbench_ui.analysis import chart_pick, memo, table
from workbench_ui.analysis_canvas import PaneSpec, show_graphs
from workbench_ui.charts import PICK, planner_chart, timeline_chart
from workbench_ui.session import ConfigKey
from workbench_ui.text import code_span, md_escape

Plan = Any  # ge_core's MemoryPlan (the UI reaches it only through CompiledModel.memory and plan_for)
ALIGNMENT_CHOICES = (32, 64, 128, 256, 512, 1024)
OVERLAYS = {"bytes": "arena bytes of its outputs", "steps": "how long its outputs live (steps)"}


@dataclass(frozen=True)
class MemoryView:
    """One plan of the compiled graph (the compile's own, or the switches') and what the charts need."""

    plan: Plan
    timeline: pd.DataFrame
    lines: pd.DataFrame
    rectangles: pd.DataFrame
    peak: pd.DataFrame


def plan_view(key: ConfigKey, compiled: CompiledModel, memory: MemoryConfig) -> MemoryView:
    graph = compiled.graph if compiled.config.hardware is not None else None  # device bytes with a target

    def make() -> MemoryView:
        plan = plan_for(compiled, memory)
        return MemoryView(plan, memory_timeline(plan), reference_lines(plan), allocation_table(plan, graph),
                          peak_table(plan, graph))
    return memo((key, "memory", _memory_key(memory)), make)


def _memory_key(memory: MemoryConfig) -> str:
    return json.dumps(memory.to_json(), sort_keys=True)


def node_marks(view: MemoryView, node: str) -> tuple[int | None, list[str]]:
    """The selected node's execution step and the tensors it makes, to mark on the charts."""
    index = step_index(view.plan)
    return index.step_of.get(node), index.tensors_of(node) if node else []


def on_screen(title: str, view: MemoryView) -> str:
    """The intro's numbers, read from the plan on screen."""
    plan = view.plan
    if view.timeline.empty:
        return f"**{md_escape(title)}** runs no step: nothing is planned."
    peak = view.timeline[view.timeline["is_peak"]].iloc[0]
    gap = plan.arena_bytes - plan.theory_min_bytes
    text = (f"On **{md_escape(title)}**: the peak is {format_bytes(int(peak['live_bytes']))} at step "
            f"{int(peak['step'])} of {len(view.timeline)} ({code_span(str(peak['node']))}); the arena "
            f"({md_escape(plan.strategy)}) is {format_bytes(plan.arena_bytes)}, "
            + ("exactly the lower bound" if gap == 0 else
               f"{format_bytes(gap)} ({gap / max(plan.theory_min_bytes, 1):.1%}) above the lower bound")
            + f"; without reuse it would be {format_bytes(plan.no_reuse_bytes)}.")
    if len(view.peak):
        top = view.peak.iloc[0]
        text += (f" {len(view.peak)} tensors are alive at the peak; the largest, {code_span(str(top['tensor']))} "
                 f"(made by {code_span(str(top['producer']))}), holds {top['share']:.0%} of it.")
    return text


def show_live_bytes(key: ConfigKey, compiled: CompiledModel, view: MemoryView, memory: MemoryConfig,
                    step: int | None) -> None:
    show_timeline(key, compiled, view, memory, step)
    st.markdown("#### Alive at the peak")
    table(view.peak, "ge_memory_peak", config={"share": st.column_config.ProgressColumn(
        "share", format="percent", min_value=0.0, max_value=1.0)})


def show_switches(own: MemoryConfig) -> MemoryConfig:
    """The memory switches, starting from the compile's own; the plan is re-made from the compiled graph."""
    strategies = list(STRATEGY_CHOICES)
    cols = st.columns([2, 1.3, 1, 1.2, 1.4])
    strategy = cols[0].selectbox("Strategy", strategies, index=strategies.index(own.strategy)
                                 if own.strategy in strategies else 0, key="ge_memory_strategy",
                                 help="auto keeps the smallest arena of every planner (GE's hybrid assigner).")
    alignment = cols[1].selectbox("Alignment (bytes)", ALIGNMENT_CHOICES, key="ge_memory_alignment",
                                  index=ALIGNMENT_CHOICES.index(own.alignment) if own.alignment in ALIGNMENT_CHOICES
                                  else len(ALIGNMENT_CHOICES) - 1)
    reuse = cols[2].toggle("Reuse", value=own.reuse, key="ge_memory_reuse",
                           help="Off: every activation gets bytes of its own (GE's disableReuseMemory).")
    no_copy = cols[3].toggle("No-copy Concat", value=own.no_copy_concat, key="ge_memory_no_copy",
                             help="Concat inputs written in place at their slice of the output.")
    aware = cols[4].toggle("Memory-aware order", value=own.order == "memory_aware", key="ge_memory_order",
                           help="Run the nodes in a topological order with a lower peak, when one exists.")
    order = ORDER_CHOICES[-1] if aware else ORDER_CHOICES[0]  # graph, memory_aware
    return replace(own, strategy=str(strategy), alignment=int(alignment), reuse=reuse, no_copy_concat=no_copy,
                   order=order)


def show_headline(view: MemoryView, compiled: CompiledModel) -> None:
    plan = view.plan
    peak = int(view.timeline["live_bytes"].max()) if len(view.timeline) else 0
    cols = st.columns(5)
    cols[0].metric("Peak live bytes", format_bytes(peak), help=f"{peak:,} bytes")
    cols[1].metric("Lower bound", format_bytes(plan.theory_min_bytes), help=f"{plan.theory_min_bytes:,} bytes")
    gap = plan.arena_bytes - plan.theory_min_bytes
    cols[2].metric("Arena", format_bytes(plan.arena_bytes), delta=f"+{format_bytes(gap)} over the bound" if gap
                   else "at the lower bound", delta_color="inverse" if gap else "off",
                   help=f"{plan.arena_bytes:,} bytes, strategy {plan.strategy}")
    cols[3].metric("No reuse", format_bytes(plan.no_reuse_bytes), help=f"{plan.no_reuse_bytes:,} bytes")
    cols[4].metric("Tensors", f"{len(view.rectangles):,}")
    if compiled.config.hardware is not None:
        totals = device_totals(plan, compiled.graph)
        st.caption(f"On {md_escape(str(compiled.config.hardware))} (padded formats such as NC1HWC0): "
                   f"{format_bytes(totals['logical_bytes'])} logical → {format_bytes(totals['device_bytes'])} "
                   f"device bytes over {totals['tensors']:,} tensors ({format_bytes(totals['padding_bytes'])} "
                   f"padding); at the peak {format_bytes(totals['peak_planned_bytes'])} planned, "
                   f"{format_bytes(totals['peak_device_bytes'])} on the device.")


def show_timeline(key: ConfigKey, compiled: CompiledModel, view: MemoryView, memory: MemoryConfig,
                  step: int | None) -> None:
    st.markdown("#### Live bytes per execution step")
    arenas = strategy_arenas(view.plan)
    keys = list(arenas["key"])
    shown = st.multiselect("Arena in use by strategy (a line each)", keys, default=[view.plan.strategy]
                           if view.plan.strategy in keys else [], key="ge_memory_lines",
                           help="The highest arena byte in use at each step, as each strategy places the tensors: "
                                "it ends at that strategy's arena.")
    lines = memo((key, "strategy lines", _memory_key(memory), tuple(shown)),
                 lambda: strategy_timelines(compiled, shown, memory)) if shown else pd.DataFrame()
    no_reuse = st.toggle("Draw the no-reuse line too", key="ge_memory_no_reuse_line",
                         help="Usually far above the rest: drawn, it squashes the live bytes to the bottom.")
    drawn = view.lines if no_reuse else view.lines[view.lines["line"] != "no reuse"]
    st.altair_chart(timeline_chart(view.timeline, drawn, lines, step), key="ge_memory_timeline",
                    on_select=chart_pick("ge_memory_timeline", PICK, "node"), selection_mode=PICK)
    with st.expander("Every strategy's arena"):
        table(arenas, "ge_memory_arenas", config={"vs_lower_bound": st.column_config.NumberColumn(format="%.3f×")})


def show_planner(view: MemoryView, highlighted: list[str]) -> None:
    st.markdown("#### The planner chart: each tensor's lifetime (x) and bytes in the arena (y)")
    st.caption("Hover a rectangle for its tensor, producer, consumers, shape, dtype and size; click it to select "
               "the node that makes it. The selected node's tensors are outlined in red.")
    st.altair_chart(planner_chart(view.rectangles, highlighted), key="ge_memory_planner",
                    on_select=chart_pick("ge_memory_planner", PICK, "node"), selection_mode=PICK)


def show_graph(key: ConfigKey, compiled: CompiledModel, node: str) -> None:
    """The compile's own plan on the canvas (a switch re-plans the charts, not the canvas: redrawing the
    canvas costs far more than the rest of a rerun, and bytes per node change only with the alignment)."""
    st.markdown("#### On the graph")
    measure = st.segmented_control("Colour the nodes by", list(OVERLAYS), default="bytes",
                                   format_func=OVERLAYS.__getitem__, key="ge_memory_overlay") or "bytes"
    plan = compiled.memory
    assert plan is not None  # the page stops earlier without a plan
    overlay = (("memory", measure),
               lambda: memory_overlay(compiled.graph, plan, "steps" if measure == "steps" else "bytes"))
    show_graphs([PaneSpec("compiled", key, compiled.graph, "compiled", (overlay,))], canvas_key="ge_memory_canvas",
                selected=node, caption="The compile's own plan. Click a node: its step and tensors are marked on "
                                       "the charts of the other tabs")


def show_switch_table(key: ConfigKey, compiled: CompiledModel, memory: MemoryConfig) -> None:
    st.markdown("#### What each switch would do")
    if not st.toggle("Re-plan once with each switch flipped (about a second on a big model)",
                     key="ge_memory_switch_table"):
        return
    frame = memo((key, "switch plans", _memory_key(memory)), lambda: memory_switch_plans(compiled, memory))
    table(frame.drop(columns="config").astype({"value": str}), "ge_memory_switches")
