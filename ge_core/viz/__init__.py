"""Pure builders for the UI: DOT text of graphs and data frames for charts (no streamlit here)."""

from ge_core.viz.dot import DotView, category_legend, graph_to_dot, legend_to_dot
from ge_core.viz.memory import alive_at_peak, allocation_rectangles, live_bytes_timeline
from ge_core.viz.tables import format_bytes, format_count, op_table, tensor_table

__all__ = [
    "DotView",
    "alive_at_peak",
    "allocation_rectangles",
    "category_legend",
    "format_bytes",
    "format_count",
    "graph_to_dot",
    "legend_to_dot",
    "live_bytes_timeline",
    "op_table",
    "tensor_table",
]
