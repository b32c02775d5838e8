"""Keeping the sidebar's widget values when the user switches pages.

Streamlit gives a widget a new id on every page (the page's script hash is part of it), even when the
router draws it, and on the first visit to a page `persist_state="session"` restores the value one run
late: the page would compute with the defaults while the widget shows the user's choice. Writing the
value back under the widget's key before drawing it (Streamlit's documented multipage idiom) hands it
to the new widget in the same run. The default goes in the same way, so the widget itself is drawn
without one (a widget given both logs a warning).
"""

from __future__ import annotations

import streamlit as st


def keep(key: str, default: object) -> None:
    """Call just before drawing the widget with this key; draw it without a default value."""
    st.session_state[key] = st.session_state.get(key, default)
