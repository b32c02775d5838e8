"""Pure builders for the UI: DOT text of graphs and data frames for charts (no streamlit here).

The Graph page's pieces: diff_graphs (what a pass changed), neighbourhood, find_nodes (search),
node_details (inspector), build_view (folding to a budget, fused bodies), view_to_dot / view_to_echarts,
and step_data, which puts them together for one pass.
"""

from ge_core.viz.dot import DotView, category_legend, graph_to_dot, legend_to_dot
from ge_core.viz.graph_diff import GraphDiff, diff_graphs
from ge_core.viz.graph_view import GraphView, build_view
from ge_core.viz.inspector import NodeDetails, node_details
from ge_core.viz.memory import alive_at_peak, allocation_rectangles, live_bytes_timeline
from ge_core.viz.neighbourhood import neighbourhood
from ge_core.viz.search import find_nodes
from ge_core.viz.step_view import ViewOptions, step_data
from ge_core.viz.tables import format_bytes, format_count, op_table, tensor_table

__all__ = [
    "DotView",
    "GraphDiff",
    "GraphView",
    "NodeDetails",
    "ViewOptions",
    "alive_at_peak",
    "allocation_rectangles",
    "build_view",
    "category_legend",
    "diff_graphs",
    "find_nodes",
    "format_bytes",
    "format_count",
    "graph_to_dot",
    "legend_to_dot",
    "live_bytes_timeline",
    "neighbourhood",
    "node_details",
    "op_table",
    "step_data",
    "tensor_table",
]
