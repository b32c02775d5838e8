"""Fusion page: every fusion decision (filterable, reasons in full), the per-pattern counts of GE's
fusion_result.json, the picked decision's graph before and after its pass, a node's fusion history, and a
fusion_result.json from real GE beside ours."""

from __future__ import annotations

import streamlit as st

from workbench_ui.analysis import BEST_SAMPLE, compiled_or_stop, table
from workbench_ui.fusion_view import (
    SHOWN_COLUMNS,
    decisions_of,
    on_screen,
    pick_decision,
    picked_decision,
    show_decision,
    show_filters,
    show_final_graph,
    show_headline,
    show_node_fusions,
    show_summary,
    summary_of,
)
from workbench_ui.ge_dump_view import heading
from workbench_ui.ge_fusion_view import show_ge_fusion_result
from workbench_ui.router import page_start

INTRO = (
    "**What am I looking at?** Every candidate a fusion pass matched, and what it decided: **applied** (the "
    "ops became one fused node, one kernel) or **rejected**, with the pass's reason in full. The bars count "
    "candidates per pattern, as GE's `fusion_result.json` does (matched, applied). Pick a row: the graph "
    "before its pass outlines the candidate's nodes, the graph after it the fused node. Pick a node on the "
    f"graph to see every fusion that took it or refused it. **{BEST_SAMPLE}** at O3 shows it best: hundreds "
    "of candidates, most of them refused, each for a reason you can read (the numbers below are the model's "
    "on screen)."
)

config, choice = page_start("Fusion", INTRO)
compiled = compiled_or_stop(config)
key = config.cache_key
decisions = decisions_of(key, compiled)
st.markdown(on_screen(choice.title, config.opt_level, decisions))  # the intro's numbers, for this model
st.subheader(heading(choice, config))
show_headline(decisions)
show_summary(summary_of(key, compiled))
shown = show_filters(decisions)
st.markdown("#### The decision log")
table(shown[SHOWN_COLUMNS], "ge_fusion_table", wide=("reason", "nodes"), on_pick=pick_decision,
      config={"accepted": st.column_config.CheckboxColumn("applied")})
picked = picked_decision(decisions)  # the address's, else the first rejected one
if picked is not None:
    show_decision(key, compiled, picked)
else:
    show_final_graph(key, compiled)
show_node_fusions(compiled)
show_ge_fusion_result(key, compiled)
