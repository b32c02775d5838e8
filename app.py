"""GE Workbench: the router. Run with `streamlit run app.py`.

Draws the shared sidebar (model, input shapes, opt level, passes switched off) once, then runs the page
picked in the navigation (workbench_ui.router). It opens on the Model page with a sample already imported:
a learner sees a GE Graph without a click. Everything shown is computed by ge_core; the helpers in
workbench_ui hold widgets.
"""

from __future__ import annotations

from workbench_ui.router import run_router

run_router()
