"""Compare page: the model under two to four configurations side by side, aligned by original node names;
a sweep's results in a tab of their own."""

from __future__ import annotations

import streamlit as st

from workbench_ui.analysis import BEST_SAMPLE, show_tabs
from workbench_ui.compare_view import (
    SIDE_BY_SIDE_TAB,
    SWEEP_TAB,
    model_reference,
    on_screen,
    run_comparison,
    show_alignment,
    show_editor,
    show_graphs_side_by_side,
    show_latency,
    show_metrics,
    show_save_load,
    spec_from_address,
)
from workbench_ui.ge_compare_view import GE_TAB, show_beside_ge, wants_ge_tab
from workbench_ui.ge_dump_view import not_for_dumps
from workbench_ui.router import sidebar_config
from workbench_ui.session import require_model
from workbench_ui.sweep_view import show_sweep_results, sweep_loaded
from workbench_ui.text import md_escape

INTRO = (
    "**What am I looking at?** The model in the sidebar compiled under two to four configurations (opt "
    "level, passes switched off, hardware target, memory strategy, precision mode), side by side: how many "
    "nodes and kernels each leaves, its arena against the lower bound, its simulated latency, its compile "
    "time and, when asked, its numeric error against the graph as imported (O0). In the **Graphs side by "
    "side** tab the graphs are aligned by the nodes' original names: pick a node to see where it went in each "
    f"(kept, fused into which node, removed). **{BEST_SAMPLE}** at O1 against O3 on ascend910 shows it best "
    "(the numbers below are the model's on screen). The address holds the comparison and the open tab: share "
    "it, or save it as JSON (**Save or load**). **Ours beside GE's** puts our compile next to GE's Build graph "
    "of the same architecture (a GE dump): kernels, TransData, formats, fused groups."
)

config = sidebar_config()
st.title("Compare")
st.markdown(INTRO)
opened = SWEEP_TAB if sweep_loaded() else GE_TAB if wants_ge_tab() else None
side_by_side, sweep, beside = st.tabs([SIDE_BY_SIDE_TAB, SWEEP_TAB, GE_TAB], default=opened)
with sweep:  # first: it needs no model, and a click there switches pages before anything compiles
    show_sweep_results()
with beside:  # before the tab that stops the page without a model (or with a dump)
    show_beside_ge(config)
with side_by_side:
    choice = require_model(config)
    not_for_dumps(choice, "comparing configurations compiles a model several ways, and a dump is one graph GE "
                          f"already compiled. The **{GE_TAB}** tab puts it beside our compile of the same model.")
    intro = st.container()  # the intro's numbers, for the comparison below
    spec = spec_from_address(config, model_reference(choice))
    st.subheader(md_escape(choice.title))
    spec = show_editor(config, spec)
    numerics = st.toggle("Numeric error against O0 (runs every configuration on the same seeded inputs: slower)",
                         key="ge_compare_numerics")
    comparison = run_comparison(choice, spec, numerics)
    metrics = comparison.metrics()
    intro.markdown(on_screen(choice.title, metrics))
    show_tabs({  # only the open tab runs: the first view draws the metrics, not the whole comparison
        "Metrics": lambda: show_metrics(metrics),
        "Graphs side by side": lambda: show_graphs_side_by_side(choice, comparison),
        "Where each node went": lambda: show_alignment(comparison),
        "Latency per op": lambda: show_latency(comparison),
        "Save or load": lambda: show_save_load(spec),
    })
