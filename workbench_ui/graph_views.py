"""The Graph page's drawings: before/after side by side (Graphviz or clickable ECharts), the fold controls,
the change table. Clicks (chart items, table rows) select a node by writing NODE_KEY."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from ge_core import Graph
from ge_core.viz import PassStep, Side, StepData, ViewOptions, diff_legend, legend_to_dot, step_data
from workbench_ui.graph_controls import EXPAND_ALL_KEY, EXPAND_KEY, NODE_KEY, OPENED_KEY, PERSIST
from workbench_ui.text import md_escape

CHART_KEYS = {"before": "ge_graph_chart_before", "after": "ge_graph_chart_after"}
TABLE_KEY = "ge_graph_changes"
LEGEND_BADGES = {"added": "green", "removed": "red", "changed": "orange", "unchanged": "gray"}


def step_drawings(key: tuple[Any, ...], step: PassStep | None, options: ViewOptions, before: Graph,
                  after: Graph) -> StepData:
    """The page's data for one pass (diff, folding, layout, drawing text), cached per compile, pass and
    view options. `key` names the compile (model bytes and settings); the graphs are not hashed."""
    index, name = (step.index, step.name) if step is not None else (-1, "import")
    return _cached_step_data(key, index, name, options, before, after)


@st.cache_data(max_entries=64, show_spinner="Drawing the graph…")
def _cached_step_data(key: tuple[Any, ...], step: int, pass_name: str, options: ViewOptions, _before: Graph,
                      _after: Graph) -> StepData:
    return step_data(_before, _after, options, pass_name=pass_name)  # pure: draws nothing


def show_drawings(data: StepData, options: ViewOptions) -> None:
    _legend(data, options)
    if data.before is None:
        _draw(data.after, "after")
        return
    left, right = st.columns(2)
    with left:
        _draw(data.before, "before")
    with right:
        _draw(data.after, "after")


def _legend(data: StepData, options: ViewOptions) -> None:
    if options.colour == "diff" and not data.diff.empty:
        badges = " ".join(f":{LEGEND_BADGES[s]}-background[{s}]" for s, _ in diff_legend())
        st.markdown(f"Colours: {badges}. A folded box takes the colour of what it holds (amber when mixed); "
                    "the selected node has a thick blue outline; dashed boxes have neighbours not drawn.")
    else:
        st.graphviz_chart(legend_to_dot())


def _draw(side: Side, which: str) -> None:
    st.markdown(f"**{md_escape(side.title)}**: {side.shown:,} boxes drawn for {side.nodes:,} of "
                f"{side.total:,} nodes")
    if side.focus_note:
        st.caption(md_escape(side.focus_note))
    if side.note:
        st.info(md_escape(side.note), icon=":material/unfold_less:")
    if side.chart is not None:
        st.echarts_chart(side.chart, key=CHART_KEYS[which], height=side.height,
                         on_select=functools.partial(_on_chart_click, CHART_KEYS[which], side.items, side.kinds))
    else:
        fresh_graphviz_chart(side.dot, which)


def fresh_graphviz_chart(source: str, slot: str) -> None:
    """st.graphviz_chart, drawn afresh whenever its source changes. Updating a drawn graph in place (the
    browser matches old and new elements) takes seconds on a graph of a few hundred nodes; a new chart
    renders in under one. An empty element before the chart, present every other change, moves it to
    a new place in the page, which makes the browser mount a new one."""
    digest = hashlib.sha1(source.encode("utf-8", "surrogatepass")).hexdigest()
    state = st.session_state.setdefault(f"_ge_graph_dot_{slot}", {"digest": "", "changes": 0})
    if state["digest"] != digest:
        state["digest"], state["changes"] = digest, state["changes"] + 1
    if state["changes"] % 2:
        st.empty()
    st.graphviz_chart(source)


def clicked_item(event: Any, items: Sequence[str]) -> str | None:
    """The item id an ECharts selection event points at (the last node clicked), or None."""
    selection = _get(event, "selection") or {}
    for group in reversed(list(_get(selection, "selected") or [])):
        indices = _get(group, "data_indices") or []
        if _get(group, "data_type") in (None, "node") and indices and 0 <= int(indices[-1]) < len(items):
            return items[int(indices[-1])]
    return None


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _on_chart_click(chart_key: str, items: Sequence[str], kinds: Sequence[str]) -> None:
    item = clicked_item(st.session_state.get(chart_key), items)
    if item is None:
        return
    kind = kinds[items.index(item)]
    if kind == "op":
        st.session_state[NODE_KEY] = item
    elif kind in ("scope", "block", "chunk"):
        opened = list(st.session_state.get(OPENED_KEY) or [])
        st.session_state[OPENED_KEY] = [*opened, item] if item not in opened else opened


def show_fold_controls(data: StepData) -> None:
    """Open folded boxes, expand fused nodes to their bodies (options: what the drawings hold)."""
    sides = [s for s in (data.before, data.after) if s is not None]
    boxes = {box: f"scope {title}" if box.startswith("scope:") else title for s in sides for box, title in s.boxes}
    fused = [r for s in sides for r in s.fused]
    opened = list(st.session_state.get(OPENED_KEY) or [])
    expanded = list(st.session_state.get(EXPAND_KEY) or [])
    left, right = st.columns(2)
    left.multiselect("Open folded boxes", list(dict.fromkeys([*opened, *boxes])), key=OPENED_KEY, persist_state=PERSIST,
                     format_func=lambda b: boxes.get(b) or box_label(b), placeholder="none opened",
                     help="A folded box stands for many nodes (a name scope, a structural block or a run of "
                          "nodes). Opening one draws its nodes; other parts fold further to stay in the limit.")
    with right:
        st.multiselect("Expand fused nodes to their bodies", list(dict.fromkeys([*expanded, *fused])),
                       key=EXPAND_KEY, persist_state=PERSIST, placeholder="none expanded",
                       help="A fused node keeps the ops it replaced as its body; expanded, they are drawn "
                            "inside a dashed cluster.")
        st.checkbox("Expand every fused node", key=EXPAND_ALL_KEY, persist_state=PERSIST)


def box_label(box: str) -> str:
    """An opened box (no longer drawn, so without its title): `scope m/encoder`, `block from n8`."""
    kind, _, first = box.partition(":")
    return f"scope {first}" if kind == "scope" else f"{kind} from {first}"


def show_changes(data: StepData) -> None:
    st.markdown("#### What the pass changed")
    if data.diff.empty:
        st.success("This pass left the graph as it was.")
        return
    rows = data.diff.rows()
    st.caption(f"{md_escape(data.diff.summary())}. Click a row to inspect its node.")
    st.dataframe(rows, hide_index=True, key=TABLE_KEY, on_select=functools.partial(_on_row, rows),
                 selection_mode="single-row")


def _on_row(rows: list[dict[str, str]]) -> None:
    event = st.session_state.get(TABLE_KEY)
    picked = _get(_get(event, "selection") or {}, "rows") or []
    if picked and 0 <= int(picked[0]) < len(rows):
        st.session_state[NODE_KEY] = rows[int(picked[0])]["node"]
