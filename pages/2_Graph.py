"""Graph page: the GE Graph after any pass, the diff before/after, a node inspector, search and folding."""

from __future__ import annotations

import streamlit as st

from ge_core.viz.node_picker import inspect_node, node_choices
from ge_core.viz.pass_steps import graphs_around
from workbench_ui.graph_controls import pick_node, pick_step, view_options
from workbench_ui.graph_inspector import show_inspector
from workbench_ui.graph_views import cached_step_data, show_changes, show_drawings, show_fold_controls
from workbench_ui.session import compile_outcome, load_outcome, require_model, sidebar_config
from workbench_ui.status import debug_link, show_failure_headline
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
load = load_outcome(config)
if config.opt_level == "O0" and load.result is not None and load.result.ok:
    # O0 runs no pass: the graph as imported is all there is, so the page need not wait for the compile
    # (its memory plan takes a while on a big model).
    records, input_graph = [], load.result.graph
else:
    outcome = compile_outcome(config)
    if outcome.compiled is None:
        st.markdown("#### The compile did not finish")
        if outcome.failure is not None:
            show_failure_headline(outcome.failure)
        debug_link()
        st.stop()
    assert outcome.compiled is not None  # st.stop() does not return
    records, input_graph = outcome.compiled.records, outcome.compiled.input_graph
st.subheader(f"{md_escape(choice.title)} at {config.opt_level}")

step = pick_step(records)
if step is None:
    before = after = input_graph
else:
    before, after = graphs_around(input_graph, records, step.index)
    st.caption(f"**{md_escape(step.name)}** ({step.stage}): {md_escape(step.description)}")
selected, hits = pick_node(lambda query: node_choices(after, before, query))
options = view_options(selected, hits)
st.caption(CLICK_NOTE)
data = cached_step_data(config.cache_key, step.index if step else -1, options,
                        step.name if step else "import", before, after)
show_drawings(data, options)
show_fold_controls(data)
if step is not None:
    show_changes(data)
show_inspector(inspect_node(before, after, selected, data.diff) if selected else None, selected)
st.caption(f"Page data built in {data.seconds * 1e3:,.0f} ms (diff, folding, layout, drawing text); cached "
           "per pass and view options.")
