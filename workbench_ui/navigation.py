"""The pages of the workbench, in menu order (read by the router, app.py, and by the tests)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class PageSpec:
    path: str  # relative to the repository root, as st.Page and AppTest.switch_page take it
    title: str
    icon: str

    @property
    def exists(self) -> bool:
        return (ROOT / self.path).is_file()

    @property
    def url_path(self) -> str:
        """`Graph` for pages/2_Graph.py: the address Streamlit's legacy pages/ mode gives the file too."""
        return re.sub(r"^\d+_", "", Path(self.path).stem)


# The first is also the landing page (at `/`). A page whose file is not there yet (pages land one change at
# a time) is left out of the menu.
PAGES = (
    PageSpec("pages/1_Model.py", "Model", ":material/info:"),
    PageSpec("pages/2_Graph.py", "Graph", ":material/account_tree:"),
    PageSpec("pages/3_Passes.py", "Passes", ":material/checklist:"),
    PageSpec("pages/4_Debug.py", "Debug", ":material/bug_report:"),
    PageSpec("pages/5_Fusion.py", "Fusion", ":material/merge:"),
    PageSpec("pages/6_Memory.py", "Memory", ":material/memory:"),
    PageSpec("pages/7_Profile.py", "Profile", ":material/speed:"),
    PageSpec("pages/8_Compare.py", "Compare", ":material/compare_arrows:"),
    PageSpec("pages/9_Dynamic.py", "Dynamic shapes", ":material/expand:"),
)
DEBUG_PAGE = "pages/4_Debug.py"


def present_pages() -> list[PageSpec]:
    return [p for p in PAGES if p.exists]
