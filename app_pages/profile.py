"""Profile page: the compiled model simulated on a hardware profile, per op, per unit and on the roofline,
latency on the graph, the NPU's outputs against the CPU's, and the downloads."""

from __future__ import annotations

import streamlit as st

from workbench_ui.analysis import BEST_SAMPLE, compiled_or_stop, selected_node, show_tabs
from workbench_ui.ge_dump_view import NO_RUN, costed, for_models_only, heading, show_unpriced
from workbench_ui.measured_view import show_measured
from workbench_ui.profile_view import (
    default_precision,
    fallback_note,
    on_screen,
    pick_precision,
    profile_target,
    show_files,
    show_graph,
    show_headline,
    show_numbers,
    show_operators,
    show_roofline,
    show_timeline,
    show_trust,
    simulated,
)
from workbench_ui.router import page_start
from workbench_ui.text import md_escape

INTRO = (
    "**What am I looking at?** The compiled model run on a simulated Ascend NPU, one kernel after another "
    "on one stream. Each kernel's time comes from its FLOPs on the **cube** (matrix) or **vector** unit, the "
    "bytes the **MTE** engines move between DDR and the on-chip buffers, and the **scalar** unit's "
    "overhead; whichever takes longest **bounds** it (compute, memory or overhead). The tabs below hold the "
    "per-op tables, the timeline of each unit, the roofline (each kernel under the profile's roofs: left of "
    "the ridge is memory-bound, right of it compute-bound), latency on the graph, the NPU's numbers against "
    "the CPU's, a measured msprof profile beside the simulation (and a calibration on it), and the downloads; "
    "the address keeps the open tab. Click a row, a bar or a point to select its "
    "node (the graph tab shows it). Pick the target in the sidebar's **Hardware**. "
    f"**{BEST_SAMPLE}** at O3 on ascend910 shows it best: hundreds of small kernels, where launch "
    "overhead adds up (the numbers below are the model's on screen)."
)

config, choice = page_start("Profile", INTRO)
target = profile_target(config)  # the sidebar's hardware, or the library's default one
if target is not config:
    st.info(fallback_note(), icon=":material/memory:")
compiled = compiled_or_stop(target)
key = target.cache_key
intro = st.container()  # the intro's numbers, for the precision mode picked below
st.subheader(f"{heading(choice, target)} on {md_escape(target.hardware.label)}")
precision = pick_precision(default_precision(compiled))
result, ops, summary = simulated(key, costed(key, compiled), precision)  # a GE dump: its ops mapped to ours
intro.markdown(on_screen(choice.title, summary, ops))
show_headline(summary)
show_trust(result.profile)
show_unpriced(key, compiled)
node = selected_node(compiled.graph)
show_tabs({  # only the open tab's section runs
    "Operators": lambda: show_operators(result, ops),
    "Timeline per unit": lambda: show_timeline(result, node, summary),
    "Roofline": lambda: show_roofline(result, node),
    "On the graph": lambda: show_graph(key, compiled, result, precision, node),
    "NPU vs CPU": for_models_only(choice, NO_RUN, lambda: show_numbers(key, compiled, result, precision)),
    "Measured vs simulated": lambda: show_measured(key, compiled, result, node, choice.title),
    "Downloads and profile": lambda: show_files(compiled, result, target),
})
