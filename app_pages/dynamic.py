"""Dynamic shapes page: requests of varying size through static recompiles, gears, ranges and online fusion."""

from __future__ import annotations

import streamlit as st

from workbench_ui.dynamic_view import (
    coinciding_note,
    dynamic_model,
    intro_text,
    pick_settings,
    play_caption,
    play_or_stop,
    request_chart,
    request_table,
    strategy_table,
)
from workbench_ui.ge_dump_view import not_for_dumps
from workbench_ui.router import sidebar_config
from workbench_ui.session import require_model
from workbench_ui.text import md_escape

INTRO = ("**What am I looking at?** Requests of varying shape played through four dynamic-shape strategies "
         "(static recompiles, gears, ranges, online fusion): compiles, compile time, cache hits and latency.")

config = sidebar_config()
st.title("Dynamic shapes")
choice = require_model(config)
not_for_dumps(choice, "it is one graph GE compiled for fixed shapes, so there is nothing to recompile for other "
                      "request sizes here. Pick a model in the sidebar to play requests through the strategies.")
heading = st.empty()  # as every page, it names the model on screen: the one played, once known
intro = st.empty()
intro.markdown(INTRO)  # until the play's numbers replace it
model = dynamic_model(choice)  # the picked model, or a BERT-style layer when it has no symbolic dim
played = md_escape(model.title if model.title == choice.title else f"{model.title}, in place of {choice.title},")
heading.subheader(f"{played} at {config.opt_level}")
settings = pick_settings(model)
play = play_or_stop(model, settings, config)
intro.markdown(intro_text(play))
st.caption(play_caption(play))
st.dataframe(strategy_table(play.plays), hide_index=True)
requests = request_table(play.plays)
st.altair_chart(request_chart(requests, "simulated µs", "Simulated NPU latency per request"))
if note := coinciding_note(requests, "simulated µs"):
    st.caption(note)
st.altair_chart(request_chart(requests, "request ms", "Request time (compiles and decisions included), log scale",
                              log=True))
