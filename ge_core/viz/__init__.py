"""Pure builders for the UI: graph data for the canvas, diffs, tables for charts (no streamlit here).

The UI reaches this package only through the names below. The Graph page's pieces: pass_steps and
graphs_around (the stepper), diff_graphs (what a pass changed), find_nodes and node_choices (search, the
node picker), node_details and inspect_node (the inspector beside the canvas); graph_to_dot is the
graphviz export (a download, not the view).

The graph canvas (Model Explorer, embedded by the UI): canvas_graph / canvas_graphs / canvas_collection
(Model Explorer graph JSON of a GE Graph, hierarchy by canvas_hierarchy's rule, MAX_LAYER), Overlay and
node_data with the overlay builders (category, change, fusion group, memory, latency), and canvas_json
(a file Model Explorer opens, for "Download graph JSON" and the dumps). What the embedded canvas is
handed (embed.py): pane_json (a snapshot's graphs, lean past LEAN_ABOVE nodes; pane_json_and_layers with
each node's layer), where a pane opens (canvas_focus: Focus, change_focus, start_focus), overlay_json,
snapshot_id, explorer_graphs (a tab of its own), graph_file (an imported graph's file) and
marked_overlay (some nodes in one colour: a failure's).

The Fusion, Memory, Profile and Compare pages' data (tables as DataFrames, the CLI's `compile --tables`):
fusion_decisions / fusion_summary / fusions_of_node; memory_timeline, reference_lines, allocation_table,
peak_table, step_index, device_totals, strategy_arenas / strategy_timelines, memory_switch_plans and
plan_for (re-planning without the passes); profile_table, top_ops, unit_timeline, roofline_points /
roofline_lines, latency_by_node, output_comparison, profile_problems (every field of a hardware profile
JSON at once); measured_against -> Measured (an msprof op_summary beside the simulation), stream_timeline /
stream_order, calibrated and calibration_table (a profile fitted to it), trust_line; compare -> Comparison
(metrics, node_alignment, latency_delta) and ComparisonSpec (JSON,
address); fates (where each original node went); compile_tables (every table by its file name); beside_ge
(our compile beside GE's Build graph: kernels by type, TransData, formats, fused groups).

A PyTorch model's module tree (the Model page): torch_modules, node_origins, module_table.
"""

from ge_core.compiler import plan_for
from ge_core.hardware.loader import profile_problems
from ge_core.sim.tables import op_table as profile_table
from ge_core.sim.tables import roofline_lines, roofline_points, unit_timeline, unit_totals
from ge_core.viz.canvas import canvas_collection, canvas_graph, canvas_graphs
from ge_core.viz.canvas_export import canvas_json
from ge_core.viz.canvas_focus import Focus, change_focus, start_focus
from ge_core.viz.canvas_hierarchy import MAX_LAYER
from ge_core.viz.canvas_overlays import (
    Overlay,
    category_overlay,
    change_overlay,
    fusion_group_overlay,
    latency_overlay,
    memory_overlay,
    node_data,
)
from ge_core.viz.compare import Comparison, compare, run_spec
from ge_core.viz.compare import Entry as ComparisonEntry
from ge_core.viz.compare_spec import ComparisonSpec
from ge_core.viz.diff_style import category_legend, diff_legend
from ge_core.viz.dot import DotView, graph_to_dot
from ge_core.viz.embed import (
    LEAN_ABOVE,
    explorer_graphs,
    graph_file,
    marked_overlay,
    overlay_json,
    pane_json,
    pane_json_and_layers,
    snapshot_id,
)
from ge_core.viz.exports import TABLE_FILES, compile_tables
from ge_core.viz.fusion_views import NodeFusion, filter_decisions, fusion_decisions, fusion_summary, fusions_of_node
from ge_core.viz.ge_compare import BesideGE, beside_ge, ge_type
from ge_core.viz.graph_diff import GraphDiff, diff_graphs
from ge_core.viz.inspector import NodeDetails, node_details
from ge_core.viz.measured import (
    Measured,
    calibrated,
    calibration_table,
    measured_against,
    measured_overlay,
    stream_order,
    stream_timeline,
    trust_line,
)
from ge_core.viz.memory import alive_at_peak, allocation_rectangles, live_bytes_timeline
from ge_core.viz.memory_switches import (
    ALIGNMENTS,
    ORDER_CHOICES,
    STRATEGY_CHOICES,
    memory_switch_plans,
    strategy_arenas,
    strategy_timelines,
)
from ge_core.viz.memory_views import (
    StepIndex,
    allocation_table,
    device_totals,
    memory_timeline,
    peak_of,
    peak_table,
    reference_lines,
    step_index,
)
from ge_core.viz.node_picker import Inspection, inspect_node, node_choices
from ge_core.viz.origins import Fate, fates
from ge_core.viz.pass_steps import PassStep, graphs_around, pass_steps
from ge_core.viz.pass_table import decision_table, pass_table
from ge_core.viz.profile_views import (
    cpu_reference,
    latency_by_node,
    output_comparison,
    profile_summary,
    top_ops,
    unit_order,
)
from ge_core.viz.search import find_nodes
from ge_core.viz.tables import GRAPH_IO, format_bytes, format_count, op_table, tensor_table
from ge_core.viz.torch_modules import module_table, node_origins, torch_modules

__all__ = [
    "ALIGNMENTS",
    "GRAPH_IO",
    "LEAN_ABOVE",
    "MAX_LAYER",
    "ORDER_CHOICES",
    "STRATEGY_CHOICES",
    "TABLE_FILES",
    "BesideGE",
    "Comparison",
    "ComparisonEntry",
    "ComparisonSpec",
    "DotView",
    "Fate",
    "Focus",
    "GraphDiff",
    "Inspection",
    "Measured",
    "NodeDetails",
    "NodeFusion",
    "Overlay",
    "PassStep",
    "StepIndex",
    "alive_at_peak",
    "allocation_rectangles",
    "allocation_table",
    "beside_ge",
    "calibrated",
    "calibration_table",
    "canvas_collection",
    "canvas_graph",
    "canvas_graphs",
    "canvas_json",
    "category_legend",
    "category_overlay",
    "change_focus",
    "change_overlay",
    "compare",
    "compile_tables",
    "cpu_reference",
    "decision_table",
    "device_totals",
    "diff_graphs",
    "diff_legend",
    "explorer_graphs",
    "fates",
    "filter_decisions",
    "find_nodes",
    "format_bytes",
    "format_count",
    "fusion_decisions",
    "fusion_group_overlay",
    "fusion_summary",
    "fusions_of_node",
    "ge_type",
    "graph_file",
    "graph_to_dot",
    "graphs_around",
    "inspect_node",
    "latency_by_node",
    "latency_overlay",
    "live_bytes_timeline",
    "marked_overlay",
    "measured_against",
    "measured_overlay",
    "memory_overlay",
    "memory_switch_plans",
    "memory_timeline",
    "module_table",
    "node_choices",
    "node_data",
    "node_details",
    "node_origins",
    "op_table",
    "output_comparison",
    "overlay_json",
    "pane_json",
    "pane_json_and_layers",
    "pass_steps",
    "pass_table",
    "peak_of",
    "peak_table",
    "plan_for",
    "profile_problems",
    "profile_summary",
    "profile_table",
    "reference_lines",
    "roofline_lines",
    "roofline_points",
    "run_spec",
    "snapshot_id",
    "start_focus",
    "step_index",
    "strategy_arenas",
    "strategy_timelines",
    "stream_order",
    "stream_timeline",
    "tensor_table",
    "top_ops",
    "torch_modules",
    "trust_line",
    "unit_order",
    "unit_timeline",
    "unit_totals",
]
