"""GE Workbench: the router. Run with `streamlit run app.py`.

Draws the shared sidebar (model, input shapes, opt level, passes switched off) once, then runs the page
picked in the navigation. It opens on the Model page with a sample already imported: a learner sees a GE
Graph without a click. Everything shown is computed by ge_core; the helpers in workbench_ui hold widgets.
"""

from __future__ import annotations

import streamlit as st

from workbench_ui.navigation import present_pages
from workbench_ui.session import shared_sidebar

st.set_page_config(page_title="GE Workbench", page_icon="🧭", layout="wide")
navigation = st.navigation([st.Page(p.path, title=p.title, icon=p.icon, default=i == 0)
                            for i, p in enumerate(present_pages())])
with shared_sidebar():
    navigation.run()
