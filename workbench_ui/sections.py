"""The Model page's sections: the import's error, the legality report, the summary, the graph on the canvas
and its text form."""

from __future__ import annotations

from collections.abc import Hashable

import altair as alt
import streamlit as st

from ge_core import Graph, ModelSummary
from ge_core.viz import GRAPH_IO, category_legend, format_bytes, format_count, op_table, tensor_table
from workbench_ui.loading import LoadOutcome
from workbench_ui.model_canvas import show_graph_canvas
from workbench_ui.text import SHAPE_BOX, code_span, head_lines, md_escape, problems_markdown, web_words

TEXT_FORM_LINES = 3000


def show_load_error(outcome: LoadOutcome) -> None:
    st.error("  \n".join(md_escape(web_words(line)) for line in outcome.error.splitlines()))  # keep its lines
    if outcome.exception is not None:
        with st.expander("Traceback (for the bug report)"):
            st.exception(outcome.exception)


def show_legality(summary: ModelSummary) -> None:
    if not summary.ok:
        st.error(problems_markdown(summary))
        return
    open_dims = [t for t in [*summary.inputs, *summary.outputs] if not all(d.isdigit() for d in t.dims)]
    if not open_dims:  # one line, not a box: the graph below opens in the first screen (issue 40)
        st.markdown(":green[:material/check_circle: **Legality check passed**: every operator has a kernel and "
                    "every shape is known.]")
        return
    shown = ", ".join(f"{code_span(t.name)} [{md_escape(', '.join(t.dims))}]" for t in open_dims[:6])
    more = f" and {len(open_dims) - 6} more" if len(open_dims) > 6 else ""
    st.success("Legality check passed: every operator has a kernel and the shapes fit together.")
    st.info(f"Some sizes are known only when the model runs: {shown}{more}. Set the symbolic dims in "
            f"{SHAPE_BOX} (`name:d0,d1,...`) and shape inference works out every shape from them.",
            icon=":material/straighten:")


def show_counts(summary: ModelSummary) -> None:
    """One row of counts: short enough that the graph below it opens in the first screen (issue 40)."""
    cols = st.columns(4)
    cols[0].metric("Nodes", f"{summary.nodes:,}")
    cols[1].metric("Operator types", len(summary.op_histogram))
    cols[2].metric("Parameters", format_count(summary.parameters),
                   help=f"{summary.parameters:,} elements held by constants (weights, biases, shapes)")
    cols[3].metric("Weights", format_bytes(summary.parameter_bytes), help=f"{summary.parameter_bytes:,} bytes")


def show_tensors_and_ops(summary: ModelSummary) -> None:
    left, right = st.columns(2)
    with left:
        st.markdown("**Inputs**")
        st.dataframe(tensor_table(summary.inputs), hide_index=True)
    with right:
        st.markdown("**Outputs**")
        st.dataframe(tensor_table(summary.outputs), hide_index=True)
    if summary.op_histogram:
        show_op_chart(summary)


def show_op_chart(summary: ModelSummary) -> None:
    """Op histogram as bars coloured like the graph's boxes (fusion category)."""
    st.markdown("**Operators** (nodes per type, coloured by fusion category)")
    ops = op_table(summary)
    io = ops[ops["category"] == GRAPH_IO]
    if not io.empty:  # a GE dump's Data, Const and NetOutput: counted above, not bars among the kernels
        ops = ops[ops["category"] != GRAPH_IO]
        st.caption("Besides the ops below, the dump lists " + ", ".join(f"{int(c):,} {code_span(str(o))}"
                   for o, c in zip(io["op"], io["count"], strict=True)) + " (the graph's inputs, constants and "
                   "outputs: GE writes them as ops).")
    names, colours = zip(*category_legend(), strict=True)
    chart = alt.Chart(ops).mark_bar().encode(
        x=alt.X("count:Q", title="nodes", axis=alt.Axis(format="d", tickMinStep=1)),
        y=alt.Y("op:N", sort=None, title=None,  # op_table is already sorted by count
                axis=alt.Axis(labelOverlap=False, labelLimit=240)),
        color=alt.Color("category:N", scale=alt.Scale(domain=list(names), range=list(colours)),
                        legend=alt.Legend(title=None, orient="top")),
        tooltip=["op", "count", "category"],
    ).properties(height=alt.Step(20))  # 20 px per op type, however many there are
    st.altair_chart(chart)


def show_graph(key: Hashable, graph: Graph) -> None:
    st.markdown("#### The GE Graph")
    show_graph_canvas(key, graph, "input", canvas_key="ge_model_canvas")
    st.caption("Each box is an op, coloured by its category (the legend is in the canvas's node-data menu); "
               "ops without a kernel are red. Constants are not boxes: they are listed with the op that reads "
               "them. Big models open folded into layers (name scopes, structural blocks or runs of nodes): "
               "double-click a layer, or its ⌄ icon, to open it. Ctrl + mouse wheel zooms, a drag pans. Click "
               "an op to inspect it on the right.")  # below the canvas: the graph opens in the first screen
    show_text_form(graph)


TEXT_FORM_KEY = "text"  # also its query parameter (?text=...): a reload or a shared link keeps it open


def show_text_form(graph: Graph) -> None:
    """Drawn only once opened: the browser highlights a code block even inside a closed expander, ~0.4 s of
    the page's main thread on densenet121's text."""
    with st.expander("Text form of the GE Graph (what tests, dumps and error messages use)",
                     key=TEXT_FORM_KEY, on_change="rerun", bind="query-params") as expander:
        if not expander.open:
            return
        text, cut = head_lines(graph.to_text(), TEXT_FORM_LINES)
        st.code(text, language=None, wrap_lines=True)
        if cut:
            st.caption(f"The last {cut:,} lines are not shown here; `python -m ge_core inspect` and the "
                       "dumps have the full text.")
