"""Graph page: the GE Graph before and after any pass on the canvas, kept in step, with the inspector beside."""

from __future__ import annotations

import streamlit as st

from workbench_ui.canvas import CANVAS_COLUMNS, CANVAS_HEIGHT
from workbench_ui.ge_dump_view import heading, no_stages_note
from workbench_ui.graph_canvas import (
    build_neighbours_ahead,
    panes_ahead,
    show_downloads,
    show_step_canvas,
    step_panes,
)
from workbench_ui.graph_controls import CHANGE, graphs_at, pass_records, pick_colour, pick_step, step_diff
from workbench_ui.graph_inspector import selected_node, show_finder, show_inspector
from workbench_ui.graph_views import constants_note, show_changes, show_legend
from workbench_ui.router import page_start
from workbench_ui.text import md_escape

INTRO = (
    "**What am I looking at?** The GE Graph as the compiler rewrites it, one pass at a time. Step through the "
    "passes: the canvas shows the graph **before** (left) and **after** (right) one pass, kept in step by node "
    "name, with what it **added**, **removed** and **changed** coloured (an attribute, a shape, dtype or "
    "format, or a rewired input), and a table of the changes below. Click a node to see its op, attributes "
    "and input/output TensorDescs in the inspector beside the canvas. Big graphs open folded into layers "
    "(name scopes, structural blocks, runs of nodes): double-click a layer to open it. A **fused** node holds the "
    "ops it replaced: its subgraph button opens its body. On a **GE dump** the stepper steps GE's dumped "
    "stages instead (PreRunBegin … Build), and a node GE fused names the ops that went into it."
)

config, choice = page_start("Graph", INTRO)
pipeline = pass_records(config)  # stops the page when the compile did not finish
st.subheader(heading(choice, config))

step = pick_step(pipeline.records, no_stages_note(choice))
before, after = graphs_at(step, pipeline)
diff = step_diff(config.cache_key, step, before, after)
colour = pick_colour(step is not None and step.changed)
node, side = selected_node(before, after)

note = st.empty()  # always here: an element that comes and goes above the canvas would remount it
if step is not None and step.changed and not (diff.added or diff.removed or diff.changed):
    note.caption(constants_note(diff, before, after, step.name))  # nothing to mark on the canvas: say why
canvas, panel = st.columns(CANVAS_COLUMNS)
with canvas:
    panes = step_panes(config.cache_key, pipeline, step, before, after, diff, colour)
    show_step_canvas(panes, pipeline, step, node.split(" › ")[0], side, panes_ahead(config.cache_key, pipeline, step))
with panel, st.container(height=CANVAS_HEIGHT + 36, border=False):
    show_finder(before, after, node, "ge_graph_node", (config.cache_key, step.index if step is not None else -1))
    passes_so_far = pipeline.records[:step.index + 1] if step is not None else ()
    show_inspector(before, after, node, diff, passes_so_far)
show_legend(colour == CHANGE)
if step is not None:
    st.caption(f"**{md_escape(step.name)}** ({step.stage}): {md_escape(step.description)}")
show_downloads(pipeline, step, after)
if step is not None:
    show_changes(diff, before, after, step.name)
build_neighbours_ahead(config.cache_key, pipeline, step)
