"""Model page: the imported model's summary, legality report and GE Graph on the canvas."""

from __future__ import annotations

import streamlit as st

from workbench_ui.router import sidebar_config
from workbench_ui.sections import INTRO, show_model
from workbench_ui.session import load_outcome, require_model
from workbench_ui.status import failure_link
from workbench_ui.torch_origins import show_torch_origins

config = sidebar_config()
st.title("GE Workbench")
st.markdown(INTRO)
choice = require_model(config)
outcome = load_outcome(config)
show_model(choice, outcome, (choice.key, config.input_shapes))
show_torch_origins(outcome)
failure_link(outcome)
