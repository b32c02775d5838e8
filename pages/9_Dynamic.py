"""Dynamic shapes page: requests of varying size through static recompiles, gears, ranges and online fusion."""

from __future__ import annotations

import streamlit as st

from workbench_ui.dynamic_page import show_dynamic_page
from workbench_ui.router import sidebar_config
from workbench_ui.session import require_model
from workbench_ui.text import md_escape

config = sidebar_config()
st.title("Dynamic shapes")
choice = require_model(config)
st.subheader(f"{md_escape(choice.title)} at {config.opt_level}")  # as every page names the model on screen
show_dynamic_page(config, choice)
