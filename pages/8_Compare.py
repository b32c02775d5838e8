"""Compare page: the model under two to four configurations side by side, aligned by original node names."""

from __future__ import annotations

import streamlit as st

from workbench_ui.compare_page import COMPARE_INTRO, show_compare_page
from workbench_ui.router import sidebar_config

config = sidebar_config()
st.title("Compare")
st.markdown(COMPARE_INTRO)
show_compare_page(config)
