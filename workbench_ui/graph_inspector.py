"""The node inspector beside the canvas: a node finder, then the selected node's op, attributes,
input/output TensorDescs with producers and consumers, fused body and the fusion decisions about it.

The selection lives in the address (`?node=conv1`): the canvas, the finder, the neighbour pills and the
change table all write it there, and the inspector reads it."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import pandas as pd
import streamlit as st

from ge_core import Graph, PassRecord
from ge_core.viz import GraphDiff, Inspection, fusions_of_node, inspect_node, node_choices
from workbench_ui import address
from workbench_ui.shared_cache import SharedCache, shared_cache
from workbench_ui.text import code_span, md_escape

PRODUCERS_KEY = "ge_graph_go_producer"
CONSUMERS_KEY = "ge_graph_go_consumer"
MAX_NEIGHBOURS = 40  # pills shown per list
CHOICE_ENTRIES = 16
MAX_CHOICES = 1_000_000  # the finder lists every node (type to search them): no silent cap
STATUS_BADGES = {"added": ":green-badge[added by this pass]", "removed": ":red-badge[removed by this pass]",
                 "changed": ":orange-badge[changed by this pass]"}


def selected_node(before: Graph, after: Graph) -> tuple[str, str]:
    """The node the address names and the side it is on ("after", or "before" when the pass removed it);
    ("", "") when it names none of them."""
    node = address.read(address.NODE)
    for side, graph in (("after", after), ("before", before)):
        if node and graph.has_node(node.split(" › ")[0]):
            return node, side
    return "", ""


def show_finder(before: Graph, after: Graph, selected: str, key: str, cache_key: Hashable | None = None) -> None:
    """A searchable list of every node (after the pass, then those it removed): picking one selects it.
    `cache_key` names the pair of graphs (the list of a 10,000-node graph takes a while to build)."""
    choices = _choices(before, after, cache_key)
    options = list(choices)
    if selected and selected not in choices:
        options.insert(0, selected)
    widget = f"{key}:{selected}"  # a new widget for each selection: it opens on the node selected elsewhere
    st.selectbox(f"Go to a node ({len(choices):,})", options, key=widget, on_change=_picked, args=(widget,),
                 index=options.index(selected) if selected else None, placeholder="type a name or an op type",
                 format_func=lambda r: choices.get(r, r),
                 help="Or click it on the canvas (its own search box, top left of each pane, finds nodes too).")


def _choices(before: Graph, after: Graph, cache_key: Hashable | None) -> dict[str, str]:
    if cache_key is None:
        return node_choices(after, before, limit=MAX_CHOICES)
    cache: SharedCache[Hashable, dict[str, str]] = shared_cache("node_choices", CHOICE_ENTRIES)
    choices = cache.get(cache_key)
    if choices is None:
        choices = node_choices(after, before, limit=MAX_CHOICES)
        cache.put(cache_key, choices)
    return choices


def _picked(key: str) -> None:
    address.write(address.NODE, st.session_state.get(key) or "")


def show_inspector(before: Graph, after: Graph, selected: str, diff: GraphDiff | None = None,
                   records: Sequence[PassRecord] = ()) -> None:
    """The selected node as it is after the pass (or before it, when the pass removed it). `records`: the
    passes so far, for the fusion decisions that took or refused the node."""
    if not selected:
        st.caption("Click a node on the canvas to inspect it (or pick one above).")
        return
    inspection = inspect_node(before, after, selected, diff)
    if inspection is None:
        st.warning(f"{code_span(selected)} is in neither the graph before nor after this pass.")
        return
    d = inspection.details
    _header(inspection)
    if inspection.changes:
        _table([{"what": c.what, "change": c.kind, "before": c.before, "after": c.after}
                for c in inspection.changes])
    st.code(d.text, language=None, wrap_lines=True)
    st.markdown("**Attributes**")
    if d.attrs:
        _table(d.attrs)
    else:
        st.caption("none")
    st.markdown("**Inputs** (TensorDesc: shape, dtype, format)")
    _tensors(d.inputs)
    st.markdown("**Outputs**")
    _tensors(d.outputs)
    _neighbours("Producers (click to go)", d.producers, PRODUCERS_KEY)
    _neighbours("Consumers (click to go)", d.consumers, CONSUMERS_KEY)
    if d.fused:
        st.markdown(f"**Fused body**: {len(d.body)} ops run as one kernel (open it on the canvas with the "
                    "node's subgraph button)")
        _table(d.body)
    if records:
        _fusions(records, d.ref)


def _table(rows: Sequence[dict[str, str]]) -> None:
    """A small table shown whole: every cell's text wraps (the panel beside the canvas is narrow, and a
    grid's cut-off cells hid the values that matter: shapes, reasons)."""
    st.table(pd.DataFrame(list(rows)), hide_index=True)


TENSOR_FIELDS = ("shape", "dtype", "format", "kind", "origin", "producer", "consumers", "graph output")


def _tensors(rows: Sequence[dict[str, str]]) -> None:
    """The TensorDescs, one per row: `#`, slot and tensor as the row's name, then its fields, transposed
    (fields down, tensors across), so a few tensors fit the panel's width."""
    if not rows:
        st.caption("none")
        return
    columns = {" ".join(v for v in (r.get("#", ""), r.get("slot", ""), r.get("tensor", "")) if v):
               {f: r[f] for f in TENSOR_FIELDS if f in r} for r in rows}
    st.table(pd.DataFrame(columns).fillna(""), hide_index=False)


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
        address.write(address.NODE, target)
    st.session_state[key] = None  # a pill is a link, not a state


def _fusions(records: Sequence[PassRecord], node: str) -> None:
    rows = [{"pass": f.pass_name, "pattern": f.pattern, "fused": "yes" if f.accepted else "no", "role": f.role,
             "reason": f.reason, "fused node": f.fused_node} for f in fusions_of_node(records, node.split(" › ")[-1])]
    st.markdown("**Fusion decisions about it**")
    if rows:
        _table(rows)
    else:
        st.caption("No fusion pass so far considered it.")
