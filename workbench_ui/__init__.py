"""Streamlit helpers shared by app.py and the pages (app_pages/): the router, the sidebar, cached loading,
each page's sections.

This package imports streamlit; `ge_core` never does. Helpers here hold widgets and ge_core calls only:
anything computed (DOT text, tables, formats) comes from `ge_core`.
"""

# First, before anything here loads numpy: importing ge_core sets OpenBLAS's thread policy, which OpenBLAS reads
# only when numpy loads it (ge_core/openblas_env.py; streamlit itself does not import numpy).
import ge_core  # noqa: F401
