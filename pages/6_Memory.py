"""Memory page: live bytes per step, the planner chart, the tensors alive at the peak, the memory switches."""

from __future__ import annotations

import streamlit as st

from workbench_ui.memory_page import MEMORY_INTRO, show_memory_page
from workbench_ui.router import sidebar_config

config = sidebar_config()
st.title("Memory")
st.markdown(MEMORY_INTRO)
show_memory_page(config)
