"""The Graph page's table of what the pass changed (a row click selects its node) and the colour key."""

from __future__ import annotations

import functools

import streamlit as st

from ge_core import Graph
from ge_core.viz import GraphDiff, diff_legend
from workbench_ui import address
from workbench_ui.text import code_span, md_escape

TABLE_KEY = "ge_graph_changes"
MAX_CONSTANTS_NAMED = 8
# The before/after texts are long (a node's text form): wide columns, the rest narrow; a cell's full text is
# in its tooltip and the inspector.
CHANGE_COLUMNS = {"node": st.column_config.TextColumn(width="small"),
                  "change": st.column_config.TextColumn(width="small"),
                  "before": st.column_config.TextColumn(width="large"),
                  "after": st.column_config.TextColumn(width="large")}
LEGEND_BADGES = {"added": "green", "removed": "red", "changed": "orange", "unchanged": "gray"}


def show_legend(colour_by_change: bool) -> None:
    if colour_by_change:
        badges = " ".join(f":{LEGEND_BADGES[s]}-background[{s}]" for s, _ in diff_legend())
        st.caption(f"Colours: {badges}. The two panes follow each other: a node selected on one side is "
                   "selected on the other. Layers (name scopes, blocks, chunks) open with a double click.")
    else:
        st.caption("The boxes are coloured by the choice above (the canvas's node-data menu, top left, has "
                   "its key); the legend (bottom left) names the kinds of box. Layers (name scopes, blocks, "
                   "chunks) open with a double click.")


def constants_note(diff: GraphDiff, before: Graph, after: Graph, pass_name: str) -> str:
    """What a pass did to the constants (markdown; "" when nothing): the canvas draws ops only, so a pass
    that changed no node but dropped or made constants would otherwise show nothing."""
    dropped = sorted(before.constants.keys() - after.constants.keys())
    made = sorted(after.constants.keys() - before.constants.keys())
    if not (dropped or made):
        return ""
    parts = []
    for verb, names in (("dropped", dropped), ("made", made)):
        if names:
            listed = ", ".join(code_span(n) for n in names[:MAX_CONSTANTS_NAMED])
            more = f" and {len(names) - MAX_CONSTANTS_NAMED:,} more" if len(names) > MAX_CONSTANTS_NAMED else ""
            parts.append(f"{verb} {len(names):,} constant{'s' if len(names) != 1 else ''} ({listed}{more})")
    nodes = diff.added or diff.removed or diff.changed
    lead = f"{md_escape(pass_name)} " + ("also " if nodes else "changed no node: it ")
    return lead + " and ".join(parts) + (". Constants (weights, shapes) are not boxes on the canvas: they are "
                                         "listed with the ops that read them." if not nodes else ".")


def show_changes(diff: GraphDiff, before: Graph, after: Graph, pass_name: str) -> None:
    st.markdown("#### What the pass changed")
    if diff.empty:
        st.success("This pass left the graph as it was.")
        return
    note = constants_note(diff, before, after, pass_name)
    if note:
        st.info(note, icon=":material/data_object:")
    rows = diff.rows()
    if not rows:
        return
    st.caption(f"{md_escape(diff.summary())}. Click a row to inspect its node.")
    st.dataframe(rows, hide_index=True, key=TABLE_KEY, on_select=functools.partial(_on_row, rows),
                 selection_mode="single-row", column_config=CHANGE_COLUMNS)


def _on_row(rows: list[dict[str, str]]) -> None:
    event = st.session_state.get(TABLE_KEY)
    selection = getattr(event, "selection", None) or (event or {}).get("selection", {})
    picked = selection.get("rows") if isinstance(selection, dict) else getattr(selection, "rows", [])
    if picked and 0 <= int(picked[0]) < len(rows):
        address.write(address.NODE, rows[int(picked[0])]["node"])
