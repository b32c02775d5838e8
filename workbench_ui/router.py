"""The router (what app.py runs): page config, the navigation menu, the shared sidebar, then the picked page.

A `pages/` folder next to app.py makes Streamlit start in its legacy mode, where it discovers the pages in
that folder itself and runs the one the address names *without* app.py; it leaves that mode (for every
session) once any session has called `st.navigation`. So on a fresh server, opening a page's address
first (`/Graph`) ran that page under Streamlit's own menu ("app", Model, ...) in the narrow layout, and
kept doing so until someone opened `/`. `sidebar_config()` notices such a run and runs the router
from there: `st.navigation` ends the legacy mode and picks the same page by its address.
(AppTest starts every run in the legacy mode, so there this happens on every run after the first.)
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from workbench_ui.navigation import ROOT, present_pages
from workbench_ui.session import shared_sidebar

ROUTER = ROOT / "app.py"


def run_router() -> None:
    st.set_page_config(page_title="GE Workbench", page_icon="🧭", layout="wide")
    navigation = st.navigation([st.Page(p.path, title=p.title, icon=p.icon, default=i == 0)
                                for i, p in enumerate(present_pages())])
    with shared_sidebar():
        navigation.run()


def hand_over_to_router() -> None:
    """In a page that `streamlit run app.py` ran without app.py (the legacy `pages/` mode): run the router,
    which runs this page again inside it, then end the run (does not return). Returns at once anywhere
    else: a page run by the router does not call this, a page run as a script of its own (`streamlit run
    pages/3_Passes.py`) draws its sidebar itself."""
    ctx = get_script_run_ctx()
    if ctx is None or Path(ctx.main_script_path).resolve() != ROUTER:
        return
    run_router()
    st.stop()
