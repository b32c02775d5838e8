"""Debug page: where import, compile or run broke, numeric bisection over the passes, a reproducer."""

from __future__ import annotations

import streamlit as st

from workbench_ui.debug_view import (
    DEBUG_INTRO,
    first_failure,
    numerics_controls,
    numerics_outcome,
    show_bisection,
    show_failure,
    show_phases,
    show_reproducer,
)
from workbench_ui.router import sidebar_config
from workbench_ui.session import compile_outcome, require_model
from workbench_ui.text import md_escape

config = sidebar_config()
st.title("Debug")
st.markdown(DEBUG_INTRO)
choice = require_model(config)
st.subheader(md_escape(choice.title))
overview, body = st.container(), st.container()  # the overview needs the bisection, drawn below it
outcome = compile_outcome(config)
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
    show_reproducer(config, outcome, failure, seed)
with overview:
    show_phases(failure, ran=numerics is not None and numerics.failure is None)
    if failure is not None:
        show_failure(config.cache_key, failure, outcome.exception)
    else:
        st.success("Import, compile and run all worked on this model: nothing to debug. The numeric "
                   "bisection below still shows how far each pass moved the outputs.")
