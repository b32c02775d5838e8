"""Overlays on the graph canvas: one value per node, as Model Explorer node data (a heat map or colours).

An Overlay maps node ids (GE node names) to a number (bytes, µs, steps: coloured along a gradient or by
thresholds) or to a category (a string: coloured from `colours`, one colour per value). `node_data`
turns it into Model Explorer's GraphNodeData JSON (`results: {node id: {value, bgColor?}}`); the canvas
also lists each overlay's value in the node's attributes, so the side panel shows it with the rest.

Builders for what ge_core knows already are below; later pages add theirs the same way (build an
Overlay, hand it to `canvas_graph(overlays=...)` and `node_data`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ge_core.frontend.ge.op_map import registry_op
from ge_core.ir.graph import Graph
from ge_core.memory.plan import MemoryPlan
from ge_core.ops import REGISTRY
from ge_core.passes.infra.base import FusionDecision
from ge_core.sim.simulator import SimResult
from ge_core.viz.diff_style import CATEGORY_COLOURS, DIFF_FILL, UNSUPPORTED_FILL
from ge_core.viz.graph_diff import ADDED, REMOVED, GraphDiff
from ge_core.viz.memory import tensor_lives
from ge_core.viz.tables import format_bytes

Value = float | int | str
# Light to strong orange: big values stand out, and every fill is light enough for a black label.
HEAT: tuple[tuple[float, str], ...] = ((0.0, "#fff5eb"), (0.5, "#fdae6b"), (1.0, "#e6550d"))
# Labels are always written in black: on a dark fill Model Explorer switches to white text, which its
# WebGL font draws as a white bar without a GPU (the Fusion page's red candidates showed bars, no op names).
LABEL_COLOUR = "#000000"
# Qualitative colours for groups without meaning of their own (ColorBrewer Set3), reused in turn.
GROUP_COLOURS = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
                 "#bc80bd", "#ccebc5", "#ffed6f", "#d9d9d9")
OTHER_COLOUR = "#eeeeee"  # a category with no colour of its own


@dataclass(frozen=True)
class Overlay:
    """Per-node values under one name. Numbers are coloured by `thresholds` when given (value <= bound:
    that colour), else along `gradient` (stops 0..1 over min..max); strings by `colours`."""

    name: str
    values: Mapping[str, Value]
    unit: str = ""  # "bytes", "µs", "steps"; "" for categories
    colours: Mapping[str, str] = field(default_factory=dict)  # category -> CSS colour
    gradient: tuple[tuple[float, str], ...] = HEAT
    thresholds: tuple[tuple[float, str], ...] = ()
    description: str = ""

    def text(self, node: str) -> str | None:
        """The node's value as the side panel shows it ("1.5 MB", "12.3 µs"), None without one."""
        value = self.values.get(node)
        if value is None or isinstance(value, str):
            return value
        if self.unit == "bytes":
            return format_bytes(int(value))
        number = f"{value:,}" if isinstance(value, int) else f"{value:.4g}"
        return f"{number} {self.unit}".strip()


def node_data(overlay: Overlay, graph_id: str | None = None) -> dict[str, Any]:
    """Model Explorer's GraphNodeData for `overlay` (a node data file of one graph); with `graph_id`, its
    ModelNodeData form `{graph_id: GraphNodeData}`, which names the graph it belongs to."""
    results: dict[str, dict[str, Value]] = {}
    for node, value in overlay.values.items():
        if isinstance(value, str):
            results[node] = {"value": value, "bgColor": overlay.colours.get(value, OTHER_COLOUR),
                             "textColor": LABEL_COLOUR}
        else:
            results[node] = {"value": value}
    data: dict[str, Any] = {"name": overlay.name, "results": results}
    if any(not isinstance(v, str) for v in overlay.values.values()):
        if overlay.thresholds:
            data["thresholds"] = [{"value": v, "bgColor": c, "textColor": LABEL_COLOUR} for v, c in overlay.thresholds]
        else:
            data["gradient"] = [{"stop": s, "bgColor": c, "textColor": LABEL_COLOUR} for s, c in overlay.gradient]
    return data if graph_id is None else {graph_id: data}


def category_overlay(graph: Graph) -> Overlay:
    """Each node's fusion category (cube, elementwise, ...; "unsupported" with no kernel)."""
    values: dict[str, Value] = {}
    for node in graph.nodes:
        op = REGISTRY.for_node(node) or registry_op(node.op_type, node.domain)  # a GE dump's Conv2D: cube
        values[node.name] = op.category.value if op is not None else "unsupported"
    colours = {c.value: colour for c, colour in CATEGORY_COLOURS.items()} | {"unsupported": UNSUPPORTED_FILL}
    return Overlay("op category", values, colours=colours,
                   description="the op's fusion category (what UB fusion may chain it with)")


def change_overlay(diff: GraphDiff, side: Literal["before", "after"]) -> Overlay:
    """What the pass did to each node on one side: removed or changed (before), added or changed (after)."""
    skip = ADDED if side == "before" else REMOVED
    names = [*diff.removed] if side == "before" else [*diff.added]
    values: dict[str, Value] = {n: diff.status(n) for n in [*names, *diff.changed] if diff.status(n) != skip}
    return Overlay(f"pass change ({side})", values, colours=dict(DIFF_FILL),
                   description="added, removed or changed by the pass; nodes it left alone have no value")


def fusion_group_overlay(graph: Graph, decisions: Sequence[FusionDecision] = ()) -> Overlay:
    """The fused node each original node ended in: keys are the original node names (nodes of the graphs
    before fusion, and body nodes of `graph`'s fused nodes) and the fused nodes themselves."""
    group: dict[str, str] = {}
    for node in graph.nodes:
        if node.body is not None:
            group[node.name] = node.name
            for inner in _body_names(node.body):
                group.setdefault(inner, node.name)
    for d in decisions:
        if d.accepted and d.fused_node:
            final = group.get(d.fused_node, d.fused_node)
            for name in d.nodes:
                group.setdefault(name, final)
    order = list(dict.fromkeys(group.values()))
    colours = {g: GROUP_COLOURS[i % len(GROUP_COLOURS)] for i, g in enumerate(order)}
    return Overlay("fusion group", dict(group), colours=colours,
                   description="the fused node (one kernel) each op ended in; unfused ops have no value")


def _body_names(body: Graph) -> list[str]:
    names = []
    for node in body.nodes:
        names.append(node.name)
        if node.body is not None:
            names += _body_names(node.body)
    return names


def memory_overlay(graph: Graph, plan: MemoryPlan, measure: Literal["bytes", "steps"] = "bytes") -> Overlay:
    """Per node of the planned graph: the arena bytes its outputs occupy ("bytes"), or how many steps its
    longest-lived output stays alive ("steps"). Views own no bytes and have no value."""
    lives = {life.tensor: life for life in tensor_lives(plan)}
    values: dict[str, Value] = {}
    for node in graph.nodes:
        mine = [lives[t] for t in node.outputs if t in lives]
        if not mine:
            continue
        if measure == "bytes":
            values[node.name] = sum(life.size for life in mine)
        else:
            values[node.name] = max(life.last_step - life.first_step + 1 for life in mine)
    if measure == "bytes":
        return Overlay("memory (bytes)", values, "bytes", description="arena bytes of the node's outputs")
    return Overlay("lifetime (steps)", values, "steps",
                   description="execution steps the node's longest-lived output stays in the arena")


def latency_overlay(sim: SimResult) -> Overlay:
    """Simulated µs per kernel (`SimResult.ops`); views launch none and have no value."""
    values: dict[str, Value] = {row.node: row.latency_us for row in sim.ops}
    return Overlay("simulated latency (µs)", values, "µs",
                   description=f"latency of the node's kernel on {sim.profile.name}")
