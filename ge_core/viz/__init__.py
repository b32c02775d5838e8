"""Pure builders for the UI: DOT text of graphs and data frames for charts (no streamlit here).

The UI reaches this package only through the names below. The Graph page's pieces: pass_steps and
graphs_around (the stepper), diff_graphs (what a pass changed), neighbourhood, find_nodes and node_choices
(search, the node picker), node_details and inspect_node (inspector), build_view (folding to a budget,
fused bodies), graph_to_dot / view_to_dot (the one DOT writer) and view_to_echarts, and step_data, which
puts them together for one pass.
"""

from ge_core.viz.diff_style import diff_legend
from ge_core.viz.dot import DotView, category_legend, graph_to_dot, legend_to_dot, view_to_dot
from ge_core.viz.graph_diff import GraphDiff, diff_graphs
from ge_core.viz.graph_view import GraphView, build_view
from ge_core.viz.inspector import NodeDetails, node_details
from ge_core.viz.memory import alive_at_peak, allocation_rectangles, live_bytes_timeline
from ge_core.viz.neighbourhood import neighbourhood
from ge_core.viz.node_picker import Inspection, inspect_node, node_choices
from ge_core.viz.pass_steps import PassStep, graphs_around, pass_steps
from ge_core.viz.pass_table import decision_table, pass_table
from ge_core.viz.search import find_nodes
from ge_core.viz.step_view import FOCUS_ALL, FOCUSES, Side, StepData, ViewOptions, step_data
from ge_core.viz.tables import format_bytes, format_count, op_table, tensor_table
from ge_core.viz.view_chart import view_to_echarts

__all__ = [
    "FOCUSES",
    "FOCUS_ALL",
    "DotView",
    "GraphDiff",
    "GraphView",
    "Inspection",
    "NodeDetails",
    "PassStep",
    "Side",
    "StepData",
    "ViewOptions",
    "alive_at_peak",
    "allocation_rectangles",
    "build_view",
    "category_legend",
    "decision_table",
    "diff_graphs",
    "diff_legend",
    "find_nodes",
    "format_bytes",
    "format_count",
    "graph_to_dot",
    "graphs_around",
    "inspect_node",
    "legend_to_dot",
    "live_bytes_timeline",
    "neighbourhood",
    "node_choices",
    "node_details",
    "op_table",
    "pass_steps",
    "pass_table",
    "step_data",
    "tensor_table",
    "view_to_dot",
    "view_to_echarts",
]
