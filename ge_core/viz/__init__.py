"""Pure builders for the UI: DOT text of graphs and data frames for charts (no streamlit here)."""

from ge_core.viz.dot import DotView, category_legend, graph_to_dot, legend_to_dot

__all__ = ["DotView", "category_legend", "graph_to_dot", "legend_to_dot"]
