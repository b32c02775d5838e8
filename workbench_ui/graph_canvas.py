"""The Graph page's canvas: the graph before and after the picked pass in two panes kept in step by node
name, coloured by the chosen overlay; the downloads of the snapshot on screen."""

from __future__ import annotations

import functools
import json
from typing import Literal

import streamlit as st

from ge_core import Graph
from ge_core.viz import (
    GraphDiff,
    PassStep,
    canvas_json,
    category_overlay,
    change_overlay,
    explorer_graphs,
    fusion_group_overlay,
    graph_file,
    graph_to_dot,
    snapshot_id,
)
from workbench_ui import address
from workbench_ui.canvas import OpenInExplorer, Pane, graph_json, make_pane, overlay_text, show_canvas, shown_last
from workbench_ui.graph_controls import CATEGORY, CHANGE, FUSION, Pipeline
from workbench_ui.session import ConfigKey

CANVAS_KEY = "ge_graph_canvas"
Side = Literal["before", "after"]


def step_panes(key: ConfigKey, pipeline: Pipeline, step: PassStep | None, before: Graph, after: Graph,
               diff: GraphDiff, colour: str) -> list[Pane]:
    """Before and after the pass; one pane when it changed nothing (or at O0)."""
    if step is None:
        overlays = {CATEGORY: overlay_text((key, "input", CATEGORY), functools.partial(category_overlay, after))}
        imported = graph_json(key, after, snapshot_id(None))
        return [make_pane("graph", snapshot_id(None), imported, shown_last(overlays, colour))]
    records = pipeline.records
    sides: list[tuple[Side, Graph, int]] = [("after", after, step.index)]
    if step.changed:
        sides.insert(0, ("before", before, step.index - 1))
    panes = []
    for side, graph, index in sides:
        graph_id = snapshot_id(records[index] if index >= 0 else None)
        decisions = [d for r in records[:index + 1] for d in r.decisions]
        overlays = {
            FUSION: overlay_text((key, graph_id, FUSION), functools.partial(fusion_group_overlay, graph, decisions)),
            CATEGORY: overlay_text((key, graph_id, CATEGORY), functools.partial(category_overlay, graph)),
        }
        if step.changed:
            overlays[CHANGE] = overlay_text((key, step.index, side), functools.partial(change_overlay, diff, side))
        panes.append(make_pane(side, graph_id, graph_json(key, graph, graph_id), shown_last(overlays, colour)))
    return panes


def show_step_canvas(panes: list[Pane], pipeline: Pipeline, step: PassStep | None, selected: str,
                     selected_side: str) -> None:
    """The canvas; a click selects the node (in the address, which the inspector reads)."""
    where = f"{step.label}: before | after" if step is not None and len(panes) == 2 else (
        step.label if step is not None else "as imported")
    side = next((i for i, p in enumerate(panes) if p.label == selected_side), 0)
    show_canvas(panes, key=CANVAS_KEY, selected=selected, selected_pane=side, sync=True,
                caption=f"{where} · click a node to inspect it", on_click=_select,
                open_tab=_open_tab(panes[-1], pipeline, step))


def _select(node: str) -> None:
    address.write(address.NODE, node)


def _open_tab(pane: Pane, pipeline: Pipeline, step: PassStep | None) -> OpenInExplorer:
    if pipeline.compiled is None or step is None:
        graph = pipeline.input_graph
        build = functools.partial(graph_file, graph, pane.graph_id, graph.name)
    else:
        build = functools.partial(explorer_graphs, pipeline.compiled, step.index)
    return OpenInExplorer(pane.label if step is None else f"after {step.name}", pane.overlays, build)


def show_downloads(pipeline: Pipeline, step: PassStep | None, after: Graph) -> None:
    """The snapshot on screen as Model Explorer JSON (with its overlays) and as graphviz DOT."""
    stem = snapshot_id(pipeline.records[step.index]) if step is not None else snapshot_id(None)
    left, right, _ = st.columns([2, 2, 3])
    left.download_button("Download graph JSON", data=functools.partial(_snapshot_file, pipeline, step),
                         file_name=f"{stem}.json", mime="application/json", icon=":material/download:",
                         help="The graph after this pass with every detail and its overlays (ge_overlays), as "
                              "Model Explorer opens it: `model-explorer FILE.json`, or drop it on the canvas.")
    right.download_button("Download DOT", data=functools.partial(_dot, after), file_name=f"{stem}.dot",
                          mime="text/vnd.graphviz", icon=":material/download:",
                          help="The same graph for graphviz: `dot -Tsvg FILE.dot -o graph.svg`.")


def _snapshot_file(pipeline: Pipeline, step: PassStep | None) -> str:
    if pipeline.compiled is None or step is None:
        graph = pipeline.input_graph
        return graph_file(graph, snapshot_id(None), graph.name)
    return json.dumps(canvas_json(pipeline.compiled, step.index), ensure_ascii=False)


def _dot(graph: Graph) -> str:
    return graph_to_dot(graph, max_nodes=len(graph)).source
