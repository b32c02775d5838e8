"""One graph on the canvas with the inspector beside it: the Model page's GE Graph, the Debug page's graph
before the failing pass (the nodes concerned in red). Each offers the graph as JSON and as DOT."""

from __future__ import annotations

import functools
from collections.abc import Hashable, Sequence

import streamlit as st

from ge_core import Graph
from ge_core.viz import category_overlay, graph_file, graph_to_dot, marked_overlay
from workbench_ui import address
from workbench_ui.canvas import (
    CANVAS_COLUMNS,
    CANVAS_HEIGHT,
    OpenInExplorer,
    graph_json,
    make_pane,
    overlay_text,
    show_canvas,
)
from workbench_ui.graph_inspector import selected_node, show_finder, show_inspector

CONCERNED = "concerned"


def show_graph_canvas(key: Hashable, graph: Graph, graph_id: str, *, canvas_key: str, label: str = "graph",
                      marked: Sequence[str] = (), marked_name: str = "failure") -> None:
    """The canvas (overlays: op category; with `marked`, those nodes in red, shown), the inspector beside
    it, and the downloads below."""
    overlays = [overlay_text((key, graph_id, "category"), functools.partial(category_overlay, graph))]
    if marked:
        make = functools.partial(marked_overlay, marked_name, tuple(marked), CONCERNED)
        overlays.append(overlay_text((key, graph_id, marked_name, tuple(marked)), make))
    pane = make_pane(label, graph_id, graph_json(key, graph, graph_id), overlays)
    node, _ = selected_node(graph, graph)
    node = node or (marked[0] if marked else "")  # a failure opens on the first node it concerns
    canvas, panel = st.columns(CANVAS_COLUMNS)
    with canvas:
        show_canvas([pane], key=canvas_key, selected=node.split(" › ")[0],
                    caption=f"{graph.name}: {len(graph):,} nodes · click a node to inspect it",
                    on_click=_select, open_tab=OpenInExplorer(label, pane.overlays,
                                                              functools.partial(graph_file, graph, graph_id, label)))
    with panel, st.container(height=CANVAS_HEIGHT + 36, border=False):
        show_finder(graph, graph, node, f"{canvas_key}_node", (key, graph_id))
        show_inspector(graph, graph, node)
    show_graph_downloads(graph, graph_id)


def _select(node: str) -> None:
    address.write(address.NODE, node)


def show_graph_downloads(graph: Graph, graph_id: str) -> None:
    left, right, _ = st.columns([2, 2, 3])
    left.download_button("Download graph JSON", on_click="ignore",
                         data=functools.partial(graph_file, graph, graph_id, graph.name),
                         file_name=f"{graph_id}.json", mime="application/json", icon=":material/download:",
                         key=f"ge_json_{graph_id}",
                         help="The graph with every detail as Model Explorer opens it (`model-explorer FILE.json`).")
    right.download_button("Download DOT", on_click="ignore", data=functools.partial(_dot, graph),
                          file_name=f"{graph_id}.dot",
                          mime="text/vnd.graphviz", icon=":material/download:", key=f"ge_dot_{graph_id}",
                          help="The graph for graphviz: `dot -Tsvg FILE.dot -o graph.svg`.")


def _dot(graph: Graph) -> str:
    return graph_to_dot(graph, max_nodes=len(graph)).source
