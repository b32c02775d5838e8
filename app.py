"""GE Workbench: the router. Run with `streamlit run app.py`.

Draws the shared sidebar (model, input shapes, opt level, passes switched off) once, then runs the page
picked in the navigation (workbench_ui.router). It opens on the Model page with a sample already imported:
a learner sees a GE Graph without a click. Everything shown is computed by ge_core; the helpers in
workbench_ui hold widgets.
"""

from __future__ import annotations

from workbench_ui.router import run_router

# Streamlit runs this file as __main__; a worker process (workbench_ui.workers) imports it as __mp_main__,
# as multiprocessing does with a main module, and must not start the app there.
if __name__ == "__main__":
    run_router()
