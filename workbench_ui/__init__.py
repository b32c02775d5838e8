"""Streamlit helpers shared by app.py and pages/: the sidebar model picker, cached loading, sections.

This package imports streamlit; `ge_core` never does. Helpers here hold widgets and ge_core calls only:
anything computed (DOT text, tables, formats) comes from `ge_core`.
"""
