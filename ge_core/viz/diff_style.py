"""How the drawings mark things, shared by DOT and ECharts: op-category and diff colours, each item's
status, the selected node and search hits."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ge_core.ops import Category
from ge_core.viz.graph_diff import ADDED, CHANGED, REMOVED
from ge_core.viz.graph_view import GraphView, ViewItem
from ge_core.viz.node_index import top_level

CATEGORY_COLOURS: dict[Category, str] = {
    Category.CUBE: "#f6b26b",  # Conv/MatMul: the heavy hitters stand out
    Category.ELEMENTWISE: "#b6e3c6",
    Category.BROADCAST: "#a4d4e6",
    Category.INJECTIVE: "#d5c4ec",
    Category.REDUCE: "#ffe08a",
    Category.OPAQUE: "#d9d9d9",
}
UNSUPPORTED_FILL = "#f7a1a1"
UNSUPPORTED_BORDER = "#c62828"
INPUT_FILL = "#e3ecfa"
OUTPUT_FILL = "#e6f4e6"
HIGHLIGHT_BORDER = "#1565c0"
DIFF_FILL = {ADDED: "#b9e4bc", REMOVED: "#f8c1c1", CHANGED: "#ffd699"}
DIFF_BORDER = {ADDED: "#2e7d32", REMOVED: "#c62828", CHANGED: "#e65100"}
UNCHANGED_FILL = "#f1f1f1"  # in diff colours, what the pass left alone steps back
UNCHANGED_BORDER = "#a0a0a0"
BOX_FILL = "#e8e8e8"
SELECTED, HIT = "selected", "hit"


def category_legend() -> list[tuple[str, str]]:
    """(category, fill colour) pairs in legend order, ending with unsupported ops."""
    return [(c.value, CATEGORY_COLOURS[c]) for c in Category] + [("unsupported", UNSUPPORTED_FILL)]


def diff_legend() -> list[tuple[str, str]]:
    """(status, fill colour) pairs for the page's legend."""
    return [(ADDED, DIFF_FILL[ADDED]), (REMOVED, DIFF_FILL[REMOVED]), (CHANGED, DIFF_FILL[CHANGED]),
            ("unchanged", UNCHANGED_FILL)]


def status_of(ref: str, status: Mapping[str, str] | None) -> str:
    """A node's status in the pass; a node inside a fused body takes its fused node's."""
    if not status:
        return ""
    return status.get(ref) or status.get(top_level(ref), "")


def box_status(item: ViewItem, status: Mapping[str, str] | None) -> str:
    """The members' common status, or "changed" when a box mixes statuses."""
    states = {status_of(r, status) for r in item.refs}
    if states == {""}:
        return ""
    return states.pop() if len(states) == 1 else CHANGED


def diff_colours(state: str) -> tuple[str, str]:
    """(fill, border) for a status ("" = unchanged)."""
    return (DIFF_FILL[state], DIFF_BORDER[state]) if state else (UNCHANGED_FILL, UNCHANGED_BORDER)


def item_marks(view: GraphView, selected: str, hits: Iterable[str]) -> dict[str, str]:
    """Item id -> SELECTED or HIT: the items drawing the selected node and the search hits."""
    marks = {view.item_of[r]: HIT for r in hits if r in view.item_of}
    chosen = view.item_of.get(selected, selected)
    if chosen:
        marks[chosen] = SELECTED
    return marks
