"""What the Fusion, Memory, Profile and Compare pages share: the compile or a stop, options read from the
address (an unknown value says so), the selected node, paginated tables and chart clicks that select a node.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Literal, TypeVar

import pandas as pd
import streamlit as st

from ge_core import CompiledModel, Graph
from workbench_ui import address
from workbench_ui.session import WorkbenchConfig, compile_outcome
from workbench_ui.shared_cache import SharedCache, shared_cache
from workbench_ui.status import show_compile_failure
from workbench_ui.text import code_span

VIEW = "view"  # ?view=Roofline: a page's open tab (st.tabs bound to the address)
PAGE_ROWS = 100  # rows per page of a long table
TABLE_HEIGHT = 420  # px: a table page scrolls inside this
BEST_SAMPLE = "densenet121"  # the sample each page's "What am I looking at?" points learners to
MEMO_ENTRIES = 64
T = TypeVar("T")


def compiled_or_stop(config: WorkbenchConfig) -> CompiledModel:
    """The compile at `config`; when it did not finish, say why (and where to look) and stop the page."""
    outcome = compile_outcome(config)
    if outcome.compiled is None:
        show_compile_failure(outcome)
        st.stop()
    assert outcome.compiled is not None  # st.stop() does not return
    return outcome.compiled


def memo(key: Hashable, make: Callable[[], T]) -> T:
    """`make()` once per `key` for every session (page data of a cached compile: never edit the result).
    Nothing drawn inside: it is not st.cache_data (see workbench_ui.shared_cache)."""
    cache: SharedCache[Hashable, Any] = shared_cache("analysis_pages", MEMO_ENTRIES)
    found = cache.get(key)
    if found is None:
        found = make()
        cache.put(key, found)
    return found


def address_option(name: str, options: Sequence[str], default: str, what: str) -> str:
    """The address's value for `name` when it is one of `options`; an unknown one is named on the page
    (with the known ones) and the default is used instead."""
    wanted = str(st.query_params.get(name, default))
    if wanted in options:
        return wanted
    st.warning(f"The address asks for {what} {code_span(wanted)}, which does not exist (known: "
               f"{', '.join(code_span(o) for o in options)}): showing {code_span(default)}.",
               icon=":material/warning:")
    return default


def show_tabs(sections: Mapping[str, Callable[[], None]]) -> None:
    """One tab per section, its label the key; only the open tab's section runs (the first view draws one
    tab's charts and tables, not the whole page's), and the address holds the open tab (?view=LABEL; an
    unknown one is named on the page). Switching tabs reruns the page."""
    labels = list(sections)
    address_option(VIEW, labels, labels[0], "tab")
    for label, tab in zip(labels, st.tabs(labels, key=VIEW, bind="query-params"), strict=True):
        with tab:
            if tab.open:
                sections[label]()


def selected_node(*graphs: Graph) -> str:
    """The node the address selects, when one of `graphs` has it ("" otherwise)."""
    node = address.read(address.NODE).split(" › ")[0]
    return node if node and any(g.has_node(node) for g in graphs) else ""


def select_node(node: str) -> None:
    address.write(address.NODE, node)


def paginated(frame: pd.DataFrame, key: str, rows: int = PAGE_ROWS) -> pd.DataFrame:
    """The rows of the page picked below the table's caption (a pager only when there is more than one)."""
    pages = max(1, math.ceil(len(frame) / rows))
    if pages == 1:
        return frame
    page = st.number_input(f"Page (of {pages}; {len(frame):,} rows, {rows} a page)", min_value=1,
                           max_value=pages, step=1, key=key)
    start = (int(page) - 1) * rows
    return frame.iloc[start:start + rows]


def table(frame: pd.DataFrame, key: str, *, wide: Sequence[str] = (), config: Mapping[str, Any] | None = None,
          on_pick: Callable[[pd.Series], None] | None = None) -> None:
    """A long table a page at a time; `wide` columns are drawn wide (reasons and notes in full: a cell
    shows its whole text on hover and the column can be widened further). With `on_pick`, picking a row
    calls it with the row before the rerun."""
    shown = paginated(frame, f"{key}_page")
    columns: dict[str, Any] = {c: st.column_config.TextColumn(c, width="large") for c in wide if c in frame}
    columns.update(config or {})
    if on_pick is None:
        st.dataframe(shown, hide_index=True, column_config=columns, height=_height(shown))
        return
    st.dataframe(shown, hide_index=True, column_config=columns, height=_height(shown), key=key,
                 on_select=lambda: _picked_row(key, shown, on_pick), selection_mode="single-row")


def _height(frame: pd.DataFrame) -> int | Literal["auto"]:
    return "auto" if len(frame) <= 12 else TABLE_HEIGHT


def _picked_row(key: str, shown: pd.DataFrame, on_pick: Callable[[pd.Series], None]) -> None:
    rows = getattr(getattr(st.session_state.get(key), "selection", None), "rows", None) or []
    if rows and rows[0] < len(shown):
        on_pick(shown.iloc[rows[0]])


def chart_pick(key: str, param: str, field: str, then: Callable[[str], None] = select_node) -> Callable[[], None]:
    """An on_select callback for st.altair_chart(key=key): the clicked mark's `field` (selection `param`)
    handed to `then` (by default: select that node)."""
    def picked() -> None:
        selection = getattr(st.session_state.get(key), "selection", None) or {}
        points = selection.get(param) if isinstance(selection, Mapping) else None
        if isinstance(points, list) and points and isinstance(points[0], Mapping) and points[0].get(field):
            then(str(points[0][field]))
    return picked
