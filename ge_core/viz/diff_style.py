"""The workbench's palette: op-category colours and the colours of what a pass did (added, removed,
changed), shared by the canvas (node styles and overlays), the DOT export and the op chart."""

from __future__ import annotations

from ge_core.ops import Category
from ge_core.viz.graph_diff import ADDED, CHANGED, REMOVED

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
UNCHANGED_FILL = "#f1f1f1"


def category_legend() -> list[tuple[str, str]]:
    """(category, fill colour) pairs in legend order, ending with unsupported ops."""
    return [(c.value, CATEGORY_COLOURS[c]) for c in Category] + [("unsupported", UNSUPPORTED_FILL)]


def diff_legend() -> list[tuple[str, str]]:
    """(status, fill colour) pairs for the page's legend."""
    return [(ADDED, DIFF_FILL[ADDED]), (REMOVED, DIFF_FILL[REMOVED]), (CHANGED, DIFF_FILL[CHANGED]),
            ("unchanged", UNCHANGED_FILL)]
