"""The pages of the workbench, in menu order (read by the router, the links between pages, and the tests).

Each page is one file of app_pages/ (not `pages/`: a folder of that name next to app.py would start Streamlit
in its legacy multipage mode). Its address is its `url_path`: `/Graph?sample=resnet50`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class PageSpec:
    path: str  # relative to the repository root, as st.Page, st.switch_page and AppTest.switch_page take it
    title: str
    icon: str
    url_path: str  # the page's address (`/Graph`); the addresses users have shared and bookmarked: keep them


# The first is also the landing page (at `/`).
PAGES = (
    PageSpec("app_pages/model.py", "Model", ":material/info:", "Model"),
    PageSpec("app_pages/graph.py", "Graph", ":material/account_tree:", "Graph"),
    PageSpec("app_pages/passes.py", "Passes", ":material/checklist:", "Passes"),
    PageSpec("app_pages/debug.py", "Debug", ":material/bug_report:", "Debug"),
    PageSpec("app_pages/fusion.py", "Fusion", ":material/merge:", "Fusion"),
    PageSpec("app_pages/memory.py", "Memory", ":material/memory:", "Memory"),
    PageSpec("app_pages/profile.py", "Profile", ":material/speed:", "Profile"),
    PageSpec("app_pages/compare.py", "Compare", ":material/compare_arrows:", "Compare"),
    PageSpec("app_pages/dynamic.py", "Dynamic shapes", ":material/expand:", "Dynamic"),
)
GRAPH_PAGE = "app_pages/graph.py"
DEBUG_PAGE = "app_pages/debug.py"
