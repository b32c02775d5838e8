"""Fusion page: every fusion decision with its reason, the per-pattern counts, the decision on the graph."""

from __future__ import annotations

import streamlit as st

from workbench_ui.fusion_page import FUSION_INTRO, show_fusion_page
from workbench_ui.router import sidebar_config

config = sidebar_config()
st.title("Fusion")
st.markdown(FUSION_INTRO)
show_fusion_page(config)
