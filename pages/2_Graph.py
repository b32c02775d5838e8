"""Graph page: the GE Graph after any pass, the diff before/after, a node inspector, search and folding."""

from __future__ import annotations

import streamlit as st

from workbench_ui.graph_controls import graphs_at, pass_records, pick_node, pick_step, view_options
from workbench_ui.graph_inspector import show_inspector
from workbench_ui.graph_views import show_changes, show_drawings, show_fold_controls, step_drawings
from workbench_ui.router import sidebar_config
from workbench_ui.session import require_model
from workbench_ui.text import md_escape

GRAPH_INTRO = (
    "**What am I looking at?** The GE Graph as the compiler rewrites it, one pass at a time. Step through the "
    "passes: each step draws the graph **before** and **after** one pass, side by side, with what it "
    "**added** (green), **removed** (red) and **changed** (amber: an attribute, a shape, dtype or format, "
    "or a rewired input), and lists the changes in a table. Pick a node, by search or by clicking it, to see "
    "its op, attributes and input/output TensorDescs. A **fused** node is one box that holds the ops it "
    "replaced: expand it to see its body. Big graphs are folded (by name scope, structural block or run of "
    "nodes) so at most 1,500 boxes reach the browser; the note above each drawing says what is folded."
)
CLICK_NOTE = (
    "Graphviz draws the clearest layout but reports no clicks, so the node picker above is kept in step with "
    "it (the picked node is outlined in blue). Switch **Drawing** to *Clickable* to click nodes directly: an "
    "ECharts drawing over a layered layout computed by ge_core; clicking a folded box opens it."
)

config = sidebar_config()
st.title("Graph")
st.markdown(GRAPH_INTRO)
choice = require_model(config)
records, input_graph = pass_records(config)  # stops the page when the compile did not finish
st.subheader(f"{md_escape(choice.title)} at {config.opt_level}")

step = pick_step(records)
before, after = graphs_at(step, input_graph, records)
if step is not None:
    st.caption(f"**{md_escape(step.name)}** ({step.stage}): {md_escape(step.description)}")
selected, hits = pick_node(after, before)
options = view_options(selected, hits)
st.caption(CLICK_NOTE)
data = step_drawings(config.cache_key, step, options, before, after)
show_drawings(data, options)
show_fold_controls(data)
if step is not None:
    show_changes(data)
show_inspector(before, after, selected, data.diff)
st.caption(f"Page data built in {data.seconds * 1e3:,.0f} ms (diff, folding, layout, drawing text); cached "
           "per pass and view options.")
