"""Model page: the imported model's summary, legality report and GE Graph on the canvas."""

from __future__ import annotations

import streamlit as st

from workbench_ui.router import sidebar_config
from workbench_ui.sections import INTRO, show_model
from workbench_ui.session import load_outcome, require_model
from workbench_ui.status import failure_link

config = sidebar_config()
st.title("GE Workbench")
st.markdown(INTRO)
choice = require_model(config)
outcome = load_outcome(config)
show_model(choice, outcome, (choice.key, config.input_shapes))
failure_link(outcome)
