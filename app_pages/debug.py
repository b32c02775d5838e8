"""Debug page: where import, compile or run broke, numeric bisection over the passes, a reproducer, and a log
from real GE read into its chain of errors."""

from __future__ import annotations

import streamlit as st

from workbench_ui.debug_view import (
    first_failure,
    numerics_controls,
    numerics_outcome,
    show_bisection,
    show_failure,
    show_phases,
    show_reproducer,
)
from workbench_ui.ge_dump_view import show_dump_debug
from workbench_ui.ge_log_view import show_ge_log_section
from workbench_ui.router import page_start
from workbench_ui.session import compile_outcome
from workbench_ui.text import md_escape

INTRO = (
    "**What am I looking at?** A model goes through three phases: **import** (the legality check: every "
    "operator needs a kernel, every shape must add up), **compile** (the passes, with `graph.verify()` after "
    "each) and **run** (the CPU executor). When one fails, this page says which, in plain words: the "
    "failing pass and its stage, and the nodes concerned, outlined in the graph as it was *before* the "
    "failing pass. **Numeric bisection** runs the graph kept after every pass on the same inputs and finds "
    "the first pass whose outputs drift from the imported model's. The **reproducer** zip replays it all "
    "with `python -m ge_core`. **A log from real GE** (ATC, torch_npu, a plog) is read into the chain of "
    "errors it reports, the first cause on top, each error code in plain words. With a **GE dump** open, "
    "the ops and kernels the log names are marked on the dumped graph."
)

config, choice = page_start("Debug", INTRO)
st.subheader(md_escape(choice.title))
outcome = compile_outcome(config)
if choice.is_ge_dump and outcome.compiled is not None:
    show_dump_debug(config.cache_key, outcome.compiled, choice.title)
    st.stop()
overview, body = st.container(), st.container()  # the overview needs the bisection, drawn below it
with body:
    st.markdown("#### Numeric bisection")
    tolerance, seed = numerics_controls()
    numerics = numerics_outcome(outcome, tolerance, seed)
    if numerics is None:
        st.info("Nothing compiled, so there is nothing to run: fix the failure above first.")
    else:
        show_bisection(numerics, tolerance)
    st.markdown("#### Reproducer")
    failure = first_failure(outcome, numerics)
    show_reproducer(config, outcome, failure, seed, numerics.result if numerics is not None else None)
    graph = outcome.compiled.input_graph if outcome.compiled is not None else None
    show_ge_log_section({n.name for n in graph.nodes} if graph is not None else set(), choice.title)
with overview:
    show_phases(failure, ran=numerics is not None and numerics.failure is None)
    if failure is not None:
        show_failure(config.cache_key, failure, outcome.exception)
    else:
        st.success("Import, compile and run all worked on this model: nothing to debug. The numeric "
                   "bisection below still shows how far each pass moved the outputs.")
