"""The router (what app.py runs): page config, the navigation menu, the shared sidebar, then the picked page.

Addresses. Streamlit serves the default page at `/` and at no other address, so the first page cannot be
the default page and keep `/Model` too. The landing page is therefore a page of its own: at `/`, running
the first page's file, and standing for it in the menu; the same file is also a hidden page at `/Model`.
Every page's url_path is the name Streamlit's legacy mode (below) gives its file, so an address names the
same page in both modes. An address naming no page gets Streamlit's "Page not found" and the landing page.

Legacy mode. A `pages/` folder next to app.py makes a fresh server start in Streamlit's legacy multipage
mode, where it runs the page the address names *without* app.py, until some session calls st.navigation
(the first request to a fresh server, e.g. `/Graph`). `sidebar_config()`, the first call of every page,
notices such a run and hands it to the router, which runs the same page inside it. (AppTest starts every
run in the legacy mode, so there this happens on every run after the first.)
"""

from __future__ import annotations

import contextvars
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from workbench_ui.navigation import ROOT, present_pages
from workbench_ui.session import WorkbenchConfig, draw_sidebar

ROUTER = ROOT / "app.py"
# The sidebar drawn by the router in this run, for the page it runs. Not in st.session_state: a page that
# stops (st.stop) stops the run at the next session-state access too, so a `finally` could not clear it.
_THIS_RUN: contextvars.ContextVar[WorkbenchConfig | None] = contextvars.ContextVar("ge_config_this_run", default=None)


def run_router() -> None:
    st.set_page_config(page_title="GE Workbench", page_icon="🧭", layout="wide")
    page = st.navigation(menu())
    token = _THIS_RUN.set(draw_sidebar())  # drawn before the page, so its widgets live on every page
    try:
        page.run()
    finally:
        _THIS_RUN.reset(token)


def menu() -> list[st.Page]:
    """The landing page (at `/`, titled as the first page), the other pages, then the first page's own
    address (hidden: the landing page stands for it in the menu)."""
    first, *rest = present_pages()
    landing = st.Page(first.path, title=first.title, icon=first.icon, url_path="", default=True)
    pages = [st.Page(p.path, title=p.title, icon=p.icon, url_path=p.url_path) for p in rest]
    first_page = st.Page(first.path, title=first.title, icon=first.icon, url_path=first.url_path,
                         visibility="hidden")
    return [landing, *pages, first_page]


def sidebar_config() -> WorkbenchConfig:
    """For a page: the sidebar's choices. The router drew the sidebar in this run; a page Streamlit ran
    without the router (legacy mode) hands the run to the router and ends (does not return); a page run
    as a script of its own (`streamlit run pages/3_Passes.py`) draws the sidebar itself."""
    drawn = _THIS_RUN.get()
    if drawn is not None:
        return drawn
    if _started_by_router_script():
        run_router()  # runs this page again, inside the router
        st.stop()
    return draw_sidebar()


def _started_by_router_script() -> bool:
    ctx = get_script_run_ctx()
    return ctx is not None and Path(ctx.main_script_path).resolve() == ROUTER
