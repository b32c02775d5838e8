"""The router (what app.py runs): page config, the menu (st.navigation), the shared sidebar, then the picked page.

Addresses. Streamlit serves the default page at `/` and at no other address, so the first page cannot be
the default page and keep `/Model` too. The landing page is therefore a page of its own: at `/`, running
the first page's file, and standing for it in the menu; the same file is also a hidden page at `/Model`.
An address naming no page gets Streamlit's "Page not found" and the landing page.

History. A click in the menu sends the new page without the address's query (Streamlit keeps only widgets
bound to it); the sidebar writes the model back (`?sample=`, `?upload=`, `?hardware=`). Drawn after
st.navigation, that write reached the browser after the page change, which then could add two history
entries, `/Profile` and `/Profile?sample=...` (depending on timing: a slow sidebar, a loaded machine), and
Back went from the one to the other, staying on the page. Drawn before it, the browser knows the query when
it adds the page's one entry. So the sidebar must not st.rerun() or st.stop(): before st.navigation, a
session's first run does not know its page yet, and a rerun from there opens the landing page.
"""

from __future__ import annotations

import contextvars

import streamlit as st

import ge_core
from workbench_ui.heavy import worker_pool
from workbench_ui.navigation import PAGES
from workbench_ui.session import ModelChoice, WorkbenchConfig, draw_sidebar, require_model

# The sidebar drawn by the router in this run, for the page it runs. Not in st.session_state: a page that
# stops (st.stop) stops the run at the next session-state access too, so a `finally` could not clear it.
_THIS_RUN: contextvars.ContextVar[WorkbenchConfig | None] = contextvars.ContextVar("ge_config_this_run", default=None)


def run_router() -> None:
    st.set_page_config(page_title="GE Workbench", page_icon="🧭", layout="wide")
    worker_pool()  # made (its forkserver warmed in the background) on the server's first page
    config = draw_sidebar()  # before the menu (see History above) and the page: its widgets live on every page
    page = st.navigation(menu())
    token = _THIS_RUN.set(config)
    compiles = ge_core.kernel_compiles()
    try:
        page.run()
    finally:
        _THIS_RUN.reset(token)
    _say_kernel_compiles(ge_core.kernel_compiles() - compiles)


def _say_kernel_compiles(count: int) -> None:
    """When this page's work compiled fast CPU kernels (none after the install's `python -m ge_core warmup`):
    why it took longer, once, and how to avoid it."""
    if count:
        st.toast(f"This page compiled {count} CPU kernel signatures for this machine on first use; later pages "
                 "load them from numba's cache. `python3 -m ge_core warmup` compiles them ahead.",
                 icon=":material/memory:")


def menu() -> list[st.Page]:
    """The landing page (at `/`, titled as the first page), the other pages, then the first page's own
    address (hidden: the landing page stands for it in the menu)."""
    first, *rest = PAGES
    landing = st.Page(first.path, title=first.title, icon=first.icon, url_path="", default=True)
    pages = [st.Page(p.path, title=p.title, icon=p.icon, url_path=p.url_path) for p in rest]
    first_page = st.Page(first.path, title=first.title, icon=first.icon, url_path=first.url_path,
                         visibility="hidden")
    return [landing, *pages, first_page]


def sidebar_config() -> WorkbenchConfig:
    """For a page: the sidebar's choices. The router drew the sidebar in this run; a page run as an app of
    its own (`streamlit run app_pages/passes.py`) draws it itself."""
    drawn = _THIS_RUN.get()
    return drawn if drawn is not None else draw_sidebar()


def page_start(title: str, intro: str) -> tuple[WorkbenchConfig, ModelChoice]:
    """A page's first lines: the sidebar's choices, the title, the learner's "What am I looking at?", and the
    picked model (while there is none, the page says how to get one and stops)."""
    config = sidebar_config()
    st.title(title)
    st.markdown(intro)
    return config, require_model(config)
