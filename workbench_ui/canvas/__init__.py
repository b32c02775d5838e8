"""The graph canvas: Google's Model Explorer embedded in the page, fed with ge_core.viz's graph JSON.

    panes = [make_pane("after", graph_id, graph_json(key, graph, graph_id), overlays)]
    clicked = show_canvas(panes, key="ge_model_canvas", selected=node, on_click=select)

- serving.py: the web app is vendored in static/model_explorer/ and served by Streamlit's static file
  serving (same origin, no server or port of its own); vendor.py refreshes it from a model_explorer wheel;
  shim.js answers the app's server calls inside the page.
- component.py: show_canvas (one pane, or two kept in step), Pane, OpenInExplorer; canvas.js drives it.
- panes.py: each snapshot's JSON and overlays, built once and shared by every session.
"""

from workbench_ui.canvas.component import CANVAS_COLUMNS, CANVAS_HEIGHT, OpenInExplorer, Pane, show_canvas
from workbench_ui.canvas.panes import GraphJson, graph_json, make_pane, overlay_text, shown_last

__all__ = [
    "CANVAS_COLUMNS",
    "CANVAS_HEIGHT",
    "GraphJson",
    "OpenInExplorer",
    "Pane",
    "graph_json",
    "make_pane",
    "overlay_text",
    "show_canvas",
    "shown_last",
]
