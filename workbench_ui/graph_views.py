"""The Graph page's table of what the pass changed (a row click selects its node) and the colour key."""

from __future__ import annotations

import functools

import streamlit as st

from ge_core.viz import GraphDiff, diff_legend
from workbench_ui import address
from workbench_ui.text import md_escape

TABLE_KEY = "ge_graph_changes"
LEGEND_BADGES = {"added": "green", "removed": "red", "changed": "orange", "unchanged": "gray"}


def show_legend(colour_by_change: bool) -> None:
    if colour_by_change:
        badges = " ".join(f":{LEGEND_BADGES[s]}-background[{s}]" for s, _ in diff_legend())
        st.caption(f"Colours: {badges}. The two panes follow each other: a node selected on one side is "
                   "selected on the other. Layers (name scopes, blocks, chunks) open with a click.")
    else:
        st.caption("The canvas's legend (bottom left) names the colours; its node-data menu switches between "
                   "the overlays. Layers (name scopes, blocks, chunks) open with a click.")


def show_changes(diff: GraphDiff) -> None:
    st.markdown("#### What the pass changed")
    if diff.empty:
        st.success("This pass left the graph as it was.")
        return
    rows = diff.rows()
    st.caption(f"{md_escape(diff.summary())}. Click a row to inspect its node.")
    st.dataframe(rows, hide_index=True, key=TABLE_KEY, on_select=functools.partial(_on_row, rows),
                 selection_mode="single-row")


def _on_row(rows: list[dict[str, str]]) -> None:
    event = st.session_state.get(TABLE_KEY)
    selection = getattr(event, "selection", None) or (event or {}).get("selection", {})
    picked = selection.get("rows") if isinstance(selection, dict) else getattr(selection, "rows", [])
    if picked and 0 <= int(picked[0]) < len(rows):
        address.write(address.NODE, rows[int(picked[0])]["node"])
