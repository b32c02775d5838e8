"""Memory page: live bytes per step against the lower bound, the planner chart, the tensors alive at the
peak, the memory switches re-planning the compiled graph, the plan on the graph."""

from __future__ import annotations

import streamlit as st

from workbench_ui.analysis import BEST_SAMPLE, compiled_or_stop, selected_node, show_tabs
from workbench_ui.ge_dump_view import not_for_dumps
from workbench_ui.memory_view import (
    node_marks,
    on_screen,
    plan_view,
    show_graph,
    show_headline,
    show_live_bytes,
    show_planner,
    show_switch_table,
    show_switches,
)
from workbench_ui.router import page_start
from workbench_ui.text import md_escape

INTRO = (
    "**What am I looking at?** Every activation of the compiled graph lives in one **arena**. The top chart "
    "counts the bytes alive at each execution step: its highest point is the **peak**, and no plan can use "
    "less than that (the **lower bound**); the dashed lines are the arena the planner reached and what "
    "**no reuse** (every tensor its own bytes) would take. The **Planner chart** tab draws each tensor as a "
    "rectangle: from the step that makes it to the last one that reads it, at its byte range in the arena "
    "(views and no-copy Concat parts inside the tensor they share bytes with). Click a step or a "
    "rectangle to select its node (the **On the graph** tab shows it); flip the switches to re-plan. "
    f"**{BEST_SAMPLE}** shows it best: each dense block Concats every earlier feature map, and the no-copy "
    "Concat parts sit inside their output (the numbers below are the model's on screen)."
)

config, choice = page_start("Memory", INTRO)
not_for_dumps(choice, "GE planned its memory on the device and the dump does not hold that plan, and the "
                      "planner here plans graphs compiled here only. Open the model the dump came from to see a plan.")
compiled = compiled_or_stop(config)
if compiled.memory is None:
    st.warning(f"This compile has no memory plan: {md_escape(compiled.memory_skipped)} Set every symbolic "
               "dim in the sidebar's **Input shapes** box, then the plan appears here.", icon=":material/info:")
    st.stop()
key = config.cache_key
intro = st.container()  # the intro's numbers, for the plan the switches below make
st.subheader(f"{md_escape(choice.title)} at {config.opt_level}")
st.markdown("#### Switches")
memory = show_switches(compiled.config.memory)
view = plan_view(key, compiled, memory)
intro.markdown(on_screen(choice.title, view))
show_headline(view, compiled)
node = selected_node(compiled.graph)
step, tensors = node_marks(view, node)
show_tabs({  # only the open tab's section runs
    "Live bytes and the peak": lambda: show_live_bytes(key, compiled, view, memory, step),
    "Planner chart": lambda: show_planner(view, tensors),
    "On the graph": lambda: show_graph(key, compiled, node),
    "What each switch would do": lambda: show_switch_table(key, compiled, memory),
})
