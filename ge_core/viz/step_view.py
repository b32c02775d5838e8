"""Everything the Graph page draws for one pass, in one call: the diff and the before/after drawings.

Pure (no streamlit), so the page can cache the result per (compile, pass, options) and tests can check it.
A pass that changed the graph gets two drawings side by side, which share the node budget; otherwise
one drawing gets it all. What each drawing covers is its focus: the whole graph, the changed region, or
the neighbourhood of the selected node.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from ge_core.ir.graph import Graph
from ge_core.viz.dot import view_to_dot
from ge_core.viz.graph_diff import GraphDiff, diff_graphs
from ge_core.viz.graph_view import DEFAULT_BUDGET, GraphView, build_view
from ge_core.viz.layout import layered_layout
from ge_core.viz.neighbourhood import neighbourhood
from ge_core.viz.node_index import Located, index_nodes, top_level
from ge_core.viz.view_chart import chart_height, view_to_echarts

FOCUS_ALL, FOCUS_CHANGES, FOCUS_AROUND = "all", "changes", "around"
FOCUSES = {FOCUS_ALL: "Whole graph", FOCUS_CHANGES: "What changed", FOCUS_AROUND: "Around the selected node"}


@dataclass(frozen=True)
class ViewOptions:
    """The page's view controls (hashable: part of the cache key)."""

    focus: str = FOCUS_ALL
    depth: int = 2  # neighbourhood depth (around the selection, or around the changes)
    selected: str = ""  # a node reference
    expand: tuple[str, ...] = ()  # fused nodes drawn as their bodies
    expand_all: bool = False
    opened: tuple[str, ...] = ()  # folded boxes the user opened
    scope_depth: int = 0  # fold name scopes at this depth (0: only as needed)
    rankdir: str = "TB"
    colour: str = "diff"  # "diff" or "category"
    renderer: str = "dot"  # "dot" (Graphviz) or "echarts" (clickable)
    budget: int = DEFAULT_BUDGET
    hits: tuple[str, ...] = ()  # search hits to outline


@dataclass(frozen=True)
class Side:
    """One drawing: DOT source or an ECharts option, and what it shows."""

    title: str
    dot: str = ""
    chart: dict[str, Any] | None = None
    height: int = 0
    items: tuple[str, ...] = ()  # item ids in drawing order (an ECharts click reports a position in this)
    kinds: tuple[str, ...] = ()  # item kinds, same order
    boxes: tuple[tuple[str, str], ...] = ()  # folded boxes: (id, title)
    fused: tuple[str, ...] = ()  # fused nodes drawn (or expanded), which can be expanded
    shown: int = 0  # items drawn
    nodes: int = 0  # nodes the drawing covers
    total: int = 0  # top-level nodes of the graph
    note: str = ""  # what was folded
    focus_note: str = ""  # what the focus left out


@dataclass(frozen=True)
class StepData:
    diff: GraphDiff
    after: Side
    before: Side | None = None  # None when the pass changed nothing
    status: dict[str, str] = field(default_factory=dict)  # node name -> added / removed / changed
    seconds: float = 0.0  # time to build all of this


def step_data(before: Graph, after: Graph, options: ViewOptions, *, pass_name: str = "the pass") -> StepData:
    """Diff `before` against `after` and draw them as `options` say."""
    start = time.perf_counter()
    diff = diff_graphs(before, after)
    status = {n: diff.status(n) for n in (*diff.added, *diff.removed, *diff.changed)}
    if diff.empty:  # nothing to colour by change: op categories instead
        options = replace(options, colour="category")
        side = _side(after, index_nodes(after), options, status, diff, options.budget, f"After {pass_name}", None)
        return StepData(diff, side, None, status, time.perf_counter() - start)
    half = max(1, options.budget // 2)
    ib, ia = index_nodes(before), index_nodes(after)
    after_side = _side(after, ia, options, status, diff, half, f"After {pass_name}", before)
    before_side = _side(before, ib, options, status, diff, half, f"Before {pass_name}", after)
    return StepData(diff, after_side, before_side, status, time.perf_counter() - start)


def _side(graph: Graph, index: dict[str, Located], options: ViewOptions, status: dict[str, str],
          diff: GraphDiff, budget: int, title: str, other: Graph | None) -> Side:
    focus, focus_note = _focus(graph, options, diff, other)
    expand = [n.name for n in graph.nodes if n.body is not None] if options.expand_all else list(options.expand)
    pinned = [options.selected] if options.selected in index else []
    view = build_view(graph, index=index, focus=focus, expand=expand, opened=options.opened, pinned=pinned,
                      budget=budget, scope_depth=options.scope_depth)
    return _render(graph, view, index, options, status if options.colour == "diff" else None, title, focus_note)


def _render(graph: Graph, view: GraphView, index: dict[str, Located], options: ViewOptions,
            colours: dict[str, str] | None, title: str, focus_note: str) -> Side:
    common: dict[str, Any] = dict(
        items=tuple(i.id for i in view.items), kinds=tuple(i.kind for i in view.items),
        boxes=tuple((i.id, i.title) for i in view.items if i.is_box), fused=_fused(view, index),
        shown=len(view.items), nodes=view.nodes, total=view.total_nodes, note=view.note(), focus_note=focus_note)
    if options.renderer == "echarts":
        layout = layered_layout(view, options.rankdir)
        chart = view_to_echarts(view, index, status=colours, selected=options.selected, rankdir=options.rankdir,
                                layout=layout, hits=options.hits)
        return Side(title, chart=chart, height=chart_height(layout), **common)
    dot = view_to_dot(graph, view, index, status=colours, selected=options.selected, rankdir=options.rankdir,
                      hits=options.hits)
    return Side(title, dot=dot, **common)


def _fused(view: GraphView, index: dict[str, Located]) -> tuple[str, ...]:
    drawn = [r for i in view.items if i.kind == "op" for r in i.refs[:1] if index[r].node.body is not None]
    return tuple(dict.fromkeys([*view.clusters, *drawn]))


def _focus(graph: Graph, options: ViewOptions, diff: GraphDiff, other: Graph | None) -> tuple[set[str] | None, str]:
    """The top-level nodes to draw (None: all) and a sentence on what was left out."""
    if options.focus == FOCUS_AROUND:
        return _around(graph, options, other)
    if options.focus == FOCUS_CHANGES:
        seeds = [n for n in (*diff.added, *diff.removed, *diff.changed) if graph.has_node(n)]
        if not seeds:
            return None, "This pass changed nothing here, so the whole graph is drawn."
        region = neighbourhood(graph, seeds, options.depth)
        return region, (f"Drawing the {len(seeds):,} changed nodes and their neighbours within {options.depth} "
                        f"edge(s): {len(region):,} of {len(graph):,} nodes.")
    return None, ""


def _around(graph: Graph, options: ViewOptions, other: Graph | None) -> tuple[set[str] | None, str]:
    if not options.selected:
        return None, "Pick a node to draw its neighbourhood; until then the whole graph is drawn."
    name = top_level(options.selected)
    if graph.has_node(name):
        region = neighbourhood(graph, name, options.depth)
    elif other is not None and other.has_node(name):  # the node is new (or gone): show where it was
        region = {n for n in neighbourhood(other, name, options.depth) if graph.has_node(n)}
    else:
        return None, f"The selected node '{name}' is not in this graph: the whole graph is drawn."
    return region, (f"Drawing the nodes within {options.depth} edge(s) of '{name}': {len(region):,} of "
                    f"{len(graph):,} nodes; dashed boxes have neighbours not drawn.")
