"""Streamlit helpers shared by app.py and the pages (app_pages/): the router, the sidebar, cached loading,
each page's sections.

This package imports streamlit; `ge_core` never does. Helpers here hold widgets and ge_core calls only:
anything computed (DOT text, tables, formats) comes from `ge_core`.
"""

import ge_core

# The app's process settings (ge_core/runtime/process.py): freed activation buffers kept for the next run, small
# BLAS products on one thread. ge_core itself never makes them on import.
ge_core.tune_process()
