"""Passes page: the compile pipeline pass by pass, each pass explained and switchable, dumps to download."""

from __future__ import annotations

import streamlit as st

from workbench_ui.ge_dump_view import heading, show_dump_stages
from workbench_ui.passes_view import (
    show_dump_download,
    show_headline,
    show_pass_details,
    show_pipeline_table,
)
from workbench_ui.router import page_start
from workbench_ui.session import compile_note, compile_outcome
from workbench_ui.status import show_compile_failure

INTRO = (
    "**What am I looking at?** The compiler runs the GE Graph through a pipeline of **passes**, grouped in "
    "GE's stages (AfterInfershape → OptimizeOriginalGraph → OptimizeStage1 → PreRunAfterOptimize2). Each "
    "pass rewrites the graph a little: folds constants, removes no-ops, merges duplicates, folds BatchNorm "
    "into the Conv before it, fuses ops into one kernel. The table has one row per pass: whether it changed "
    "the graph, the node count before and after, and how long it took. Below, each pass says what it does "
    "and can be switched off, so you can see what the graph looks like without it."
)

config, choice = page_start("Passes", INTRO)
outcome = compile_outcome(config)
if outcome.compiled is None:
    show_compile_failure(outcome)
    st.stop()
compiled = outcome.compiled
st.subheader(heading(choice, config))
show_dump_stages(choice, compiled)  # a GE dump: its stages, and why no pass can be switched here (stops)
show_headline(compiled, config.disabled)
st.caption(compile_note(compiled))
show_pipeline_table(compiled)
weights = outcome.load.summary.parameter_bytes if outcome.load and outcome.load.summary else 0
show_dump_download(compiled, config, weights)
show_pass_details(compiled, config)
