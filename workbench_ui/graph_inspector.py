"""The Graph page's node inspector: op, attributes, input/output TensorDescs, neighbours, fused body."""

from __future__ import annotations

import streamlit as st

from ge_core import Graph
from ge_core.viz import GraphDiff, Inspection, inspect_node
from workbench_ui.graph_controls import EXPAND_KEY, NODE_KEY
from workbench_ui.text import code_span, md_escape

PRODUCERS_KEY = "ge_graph_go_producer"
CONSUMERS_KEY = "ge_graph_go_consumer"
MAX_NEIGHBOURS = 40  # pills shown per list
STATUS_BADGES = {"added": ":green-badge[added by this pass]", "removed": ":red-badge[removed by this pass]",
                 "changed": ":orange-badge[changed by this pass]"}


def show_inspector(before: Graph, after: Graph, selected: str, diff: GraphDiff) -> None:
    """The selected node as it is after the pass (or before it, when the pass removed it)."""
    st.markdown("#### Node inspector")
    if not selected:
        st.caption("Pick a node to inspect it: search above, click it in the clickable drawing, or click a row "
                   "of the change table.")
        return
    inspection = inspect_node(before, after, selected, diff)
    if inspection is None:
        st.warning(f"{code_span(selected)} is in neither the graph before nor after this pass.")
        return
    d = inspection.details
    _header(inspection)
    if inspection.changes:
        st.dataframe([{"what": c.what, "change": c.kind, "before": c.before, "after": c.after}
                      for c in inspection.changes], hide_index=True)
    st.code(d.text, language=None, wrap_lines=True)
    left, right = st.columns([2, 3])
    with left:
        st.markdown("**Attributes**")
        if d.attrs:
            st.dataframe(d.attrs, hide_index=True)
        else:
            st.caption("none")
        _neighbours("Producers (click to go)", d.producers, PRODUCERS_KEY)
        _neighbours("Consumers (click to go)", d.consumers, CONSUMERS_KEY)
    with right:
        st.markdown("**Inputs** (TensorDesc: shape, dtype, format)")
        st.dataframe(d.inputs, hide_index=True)
        st.markdown("**Outputs**")
        st.dataframe(d.outputs, hide_index=True)
    if d.fused:
        _body(inspection)


def _header(inspection: Inspection) -> None:
    d = inspection.details
    op = f"{d.domain}::{d.op_type}" if d.domain else d.op_type
    parts = [f"**{md_escape(op)}** {code_span(d.name)}", f":gray-badge[{d.category}]"]
    if not d.launches_kernel:
        parts.append(":gray-badge[view: launches no kernel]")
    if inspection.status in STATUS_BADGES:
        parts.append(STATUS_BADGES[inspection.status])
    if d.parent:
        parts.append(f"inside fused node {code_span(d.parent)}")
    st.markdown(" ".join(parts))
    if inspection.side == "before":
        st.caption("This node is gone after the pass: shown as it was before it.")


def _neighbours(label: str, refs: list[str], key: str) -> None:
    if not refs:
        st.caption(f"{label.split(' (')[0]}: none")
        return
    shown = refs[:MAX_NEIGHBOURS]
    st.pills(label, shown, key=key, on_change=_go, args=(key,))
    if len(refs) > len(shown):
        st.caption(f"… and {len(refs) - len(shown)} more")


def _go(key: str) -> None:
    target = st.session_state.get(key)
    if target:
        st.session_state[NODE_KEY] = target
    st.session_state[key] = None  # a pill is a link, not a state


def _body(inspection: Inspection) -> None:
    d = inspection.details
    st.markdown(f"**Fused body**: {len(d.body)} ops run as one kernel")
    st.dataframe(d.body, hide_index=True)
    expanded = list(st.session_state.get(EXPAND_KEY) or [])
    if d.ref not in expanded and inspection.side == "after":
        st.button("Draw its body in the graph", key="ge_graph_expand_selected", on_click=_expand, args=(d.ref,))


def _expand(ref: str) -> None:
    st.session_state[EXPAND_KEY] = [*(st.session_state.get(EXPAND_KEY) or []), ref]
