"""The Graph page's controls: the pass stepper, the node picker (search + select) and the view options.

Every widget has a `ge_graph_*` key, so the page keeps its state across reruns and the drawing, the
inspector and the chart clicks all talk through `st.session_state` (a click sets NODE_KEY).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import streamlit as st

from ge_core import Graph, PassRecord
from ge_core.viz import FOCUS_ALL, FOCUSES, PassStep, ViewOptions, graphs_around, node_choices, pass_steps
from workbench_ui.session import WorkbenchConfig, compile_outcome, load_outcome
from workbench_ui.status import show_compile_failure
from workbench_ui.text import md_escape

HIDE_KEY = "ge_graph_hide_unchanged"
STEP_KEY = "ge_graph_step"
QUERY_KEY = "ge_graph_query"
NODE_KEY = "ge_graph_node"
FOCUS_KEY = "ge_graph_focus"
DEPTH_KEY = "ge_graph_depth"
COLOUR_KEY = "ge_graph_colour"
RENDERER_KEY = "ge_graph_renderer"
RANKDIR_KEY = "ge_graph_rankdir"
SCOPE_KEY = "ge_graph_scope_depth"
EXPAND_KEY = "ge_graph_expand"
EXPAND_ALL_KEY = "ge_graph_expand_all"
OPENED_KEY = "ge_graph_opened"

COLOURS = {"diff": "What the pass changed", "category": "Op category"}
RENDERERS = {"dot": "Graphviz", "echarts": "Clickable"}
DIRECTIONS = {"TB": "Top to bottom", "LR": "Left to right"}
MAX_DEPTH = 8
MAX_HITS = 500  # search hits outlined in the drawing
PERSIST: Final = "session"  # the page's controls keep their values when the user visits another page and comes back


def pass_records(config: WorkbenchConfig) -> tuple[Sequence[PassRecord], Graph]:
    """The pass records to step through and the graph as imported; when the compile did not finish, says
    so and stops the page. O0 runs no pass, so there the page need not wait for the compile (its memory
    plan takes a while on a big model)."""
    load = load_outcome(config)
    if config.opt_level == "O0" and load.result is not None and load.result.ok:
        return [], load.result.graph
    outcome = compile_outcome(config)
    if outcome.compiled is None:
        show_compile_failure(outcome)
        st.stop()
    assert outcome.compiled is not None  # st.stop() does not return
    return outcome.compiled.records, outcome.compiled.input_graph


def pick_step(records: Sequence[PassRecord]) -> PassStep | None:
    """The stepper over the pass records; None when no pass ran (O0: the graph as imported)."""
    if not records:
        st.info("No pass ran at this opt level (O0): this is the GE Graph as imported. Pick O1 or O3 in the "
                "sidebar to step through the passes.")
        return None
    hide = st.checkbox("Hide passes that changed nothing", value=True, key=HIDE_KEY, persist_state=PERSIST)
    steps = pass_steps(records, changed_only=hide) or pass_steps(records)
    by_index = {s.index: s for s in steps}
    if st.session_state.get(STEP_KEY) not in by_index:  # e.g. the list was just filtered
        st.session_state[STEP_KEY] = _nearest(st.session_state.get(STEP_KEY), list(by_index))
    if len(steps) == 1:
        st.caption(f"Pass: {md_escape(steps[0].label)} (the only one to show)")
        return steps[0]
    index = st.select_slider("Pass", list(by_index), key=STEP_KEY, persist_state=PERSIST,
                             format_func=lambda i: by_index[i].label,
                             help="Step through the pipeline: each position shows the graph before and after "
                                  "one pass. Arrow keys move one pass at a time.")
    return by_index[int(index)]


def graphs_at(step: PassStep | None, input_graph: Graph, records: Sequence[PassRecord]) -> tuple[Graph, Graph]:
    """The graphs (before, after) the picked pass; the graph as imported, twice, when no pass ran."""
    if step is None:
        return input_graph, input_graph
    return graphs_around(input_graph, records, step.index)


def _nearest(current: object, options: list[int]) -> int:
    if not isinstance(current, int):
        return options[0]
    return min(options, key=lambda i: (abs(i - current), i))


def pick_node(after: Graph, before: Graph) -> tuple[str, tuple[str, ...]]:
    """Search box + node picker (synced with chart clicks through NODE_KEY): the picked node ("" when none)
    and the search hits to outline in the drawing. The choices are the nodes after the pass, then the ones
    it removed."""
    search, picker = st.columns([1, 2])
    query = search.text_input("Search nodes", key=QUERY_KEY, persist_state=PERSIST,
                              placeholder="name or op type, e.g. Conv",
                              help="Finds nodes by op type (exact type first) or by a piece of their name, "
                                   "inside fused nodes too. Pick one on the right to inspect it.")
    choices = node_choices(after, before, query)
    current = st.session_state.get(NODE_KEY)
    options = list(choices)
    if current and current not in choices:
        if query:  # keep the selection visible even when the search does not match it
            options.insert(0, current)
        else:
            st.session_state[NODE_KEY] = current = None
    picked = picker.selectbox(f"Node ({len(choices):,} {'matches' if query else 'nodes'})", options, index=None,
                              key=NODE_KEY, persist_state=PERSIST, placeholder="pick a node to inspect it",
                              format_func=lambda r: choices.get(r, r))
    if query and not choices:
        search.caption("No node matches.")
    return str(picked or ""), tuple(choices)[:MAX_HITS] if query.strip() else ()


def view_options(selected: str, hits: tuple[str, ...] = ()) -> ViewOptions:
    """The drawing's options; opened boxes and expanded fused nodes are read from their widgets' state
    (the widgets are drawn after the drawing, when their options are known)."""
    left, mid, right = st.columns([3, 2, 2])
    focus = left.segmented_control("Draw", list(FOCUSES), default=FOCUS_ALL, required=True, key=FOCUS_KEY,
                                   persist_state=PERSIST, format_func=FOCUSES.__getitem__,
                                   help="The whole graph (folded when big), only what the pass changed with "
                                        "its neighbours, or the neighbourhood of the selected node.")
    depth = mid.slider("Neighbourhood depth", 1, MAX_DEPTH, 2, key=DEPTH_KEY, persist_state=PERSIST,
                       help="Edges away from the selected node (or the changed nodes) still drawn.")
    colour = right.segmented_control("Colour by", list(COLOURS), default="diff", required=True, key=COLOUR_KEY,
                                     persist_state=PERSIST, format_func=COLOURS.__getitem__)
    left, mid, right = st.columns([3, 2, 2])
    renderer = left.segmented_control("Drawing", list(RENDERERS), default="dot", required=True,
                                      key=RENDERER_KEY, persist_state=PERSIST, format_func=RENDERERS.__getitem__,
                                      help="Graphviz lays the graph out best; the clickable drawing lets you "
                                           "click a node to inspect it (or a folded box to open it), and zoom "
                                           "with the mouse wheel.")
    rankdir = mid.segmented_control("Direction", list(DIRECTIONS), default="TB", required=True, key=RANKDIR_KEY,
                                    persist_state=PERSIST, format_func=DIRECTIONS.__getitem__)
    scope_depth = right.number_input("Fold name scopes at depth", 0, 12, 0, key=SCOPE_KEY, persist_state=PERSIST,
                                     help="0 folds only as much as needed to stay under the node limit; 1 "
                                          "folds every top-level scope (`/encoder`), 2 the next level, ...")
    return ViewOptions(
        focus=str(focus), depth=int(depth), selected=selected, hits=hits, renderer=str(renderer), colour=str(colour),
        expand=tuple(st.session_state.get(EXPAND_KEY) or ()), expand_all=bool(st.session_state.get(EXPAND_ALL_KEY)),
        opened=tuple(st.session_state.get(OPENED_KEY) or ()), scope_depth=int(scope_depth), rankdir=str(rankdir))
