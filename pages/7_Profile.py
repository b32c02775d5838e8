"""Profile page: the compiled model simulated on a hardware profile, per op, per unit and on the roofline."""

from __future__ import annotations

import streamlit as st

from workbench_ui.profile_page import PROFILE_INTRO, show_profile_page
from workbench_ui.router import sidebar_config

config = sidebar_config()
st.title("Profile")
st.markdown(PROFILE_INTRO)
show_profile_page(config)
