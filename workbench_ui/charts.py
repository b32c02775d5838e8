"""The analysis pages' Altair charts, built from ge_core.viz's frames (no numbers computed here). A click on
a mark selects its node: every chart with one names its point selection PICK, over the field `node`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import altair as alt
import pandas as pd

PICK = "pick"  # the point selection of every clickable chart (st.altair_chart(selection_mode=PICK))
HIGHLIGHT = "#d62728"
KIND_COLOURS = {"tensor": "#4c78a8", "view": "#f58518", "concat part": "#54a24b"}
BOUND_COLOURS = {"compute": "#f58518", "memory": "#4c78a8", "overhead": "#bab0ac"}
# Vega's tableau10 without its red: red is the selected node's colour (HIGHLIGHT) on every chart.
CATEGORY_COLOURS = ["#4c78a8", "#f58518", "#54a24b", "#72b7b2", "#eeca3b", "#b279a2", "#9d755d", "#bab0ac",
                    "#ff9da6"]


def _pick(nearest: bool = True) -> alt.Parameter:
    """`nearest` (points and lines: a click near a mark takes it) costs a Voronoi diagram over every mark,
    computed in the browser: bars and rectangles are clicked on themselves instead."""
    return alt.selection_point(name=PICK, fields=["node"], on="click", nearest=nearest, clear=False)


def pattern_chart(summary: pd.DataFrame) -> alt.Chart:
    """Per pattern: candidates applied and rejected, stacked."""
    long = summary.melt(id_vars=["pass", "pattern"], value_vars=["applied", "rejected"], var_name="outcome",
                        value_name="candidates")
    long["label"] = long["pattern"] + " (" + long["pass"] + ")"
    return alt.Chart(long).mark_bar().encode(
        x=alt.X("candidates:Q", stack=True, title="candidates"),
        y=alt.Y("label:N", sort=None, title=None, axis=alt.Axis(labelLimit=420, labelOverlap=False)),
        color=alt.Color("outcome:N", scale=alt.Scale(domain=["applied", "rejected"], range=["#54a24b", "#e45756"]),
                        legend=alt.Legend(orient="top", title=None)),
        tooltip=["pass", "pattern", "outcome", "candidates"],
    ).properties(height=alt.Step(22))


def timeline_chart(timeline: pd.DataFrame, lines: pd.DataFrame, strategies: pd.DataFrame,
                   selected_step: int | None) -> alt.LayerChart:
    """Live bytes per step (click a step: its node), the peak, the reference lines (labelled), each chosen
    strategy's highest arena byte in use, and the selected node's step."""
    pick = _pick()
    base = alt.Chart(timeline)
    live = base.mark_line(interpolate="step-after", color="#4c78a8").encode(
        x=alt.X("step:Q", title="execution step"), y=alt.Y("live_bytes:Q", title="bytes", axis=alt.Axis(format="~s")))
    points = base.mark_point(size=40, opacity=0).encode(
        x="step:Q", y="live_bytes:Q", tooltip=["step", "node", alt.Tooltip("live_bytes:Q", format=",")],
    ).add_params(pick)
    peak = base.transform_filter("datum.is_peak").mark_point(shape="triangle-down", size=140, filled=True,
                                                              color=HIGHLIGHT).encode(
        x="step:Q", y="live_bytes:Q", tooltip=["step", "node", alt.Tooltip("live_bytes:Q", format=",")])
    rules = alt.Chart(lines).mark_rule(strokeDash=[6, 3]).encode(
        y="bytes:Q", color=alt.Color("line:N", legend=alt.Legend(orient="bottom", title="reference lines")),
        tooltip=["line", alt.Tooltip("bytes:Q", format=","), "note"])
    layers: list[alt.Chart] = [live, points, peak, rules]
    if len(strategies):
        layers.append(alt.Chart(strategies).mark_line(interpolate="step-after", strokeWidth=1, opacity=0.8).encode(
            x="step:Q", y="top_bytes:Q",
            strokeDash=alt.StrokeDash("strategy:N", legend=alt.Legend(orient="bottom", title="arena in use by")),
            tooltip=["strategy", "step", "node", alt.Tooltip("top_bytes:Q", format=",")]))
    if selected_step is not None:
        layers.append(alt.Chart(pd.DataFrame({"step": [selected_step]})).mark_rule(color=HIGHLIGHT).encode(x="step:Q"))
    return alt.LayerChart(layer=layers, height=320)


def planner_chart(rectangles: pd.DataFrame, highlighted: Sequence[str]) -> alt.Chart | alt.LayerChart:
    """Each tensor a rectangle: x its lifetime in steps, y its byte range in the arena; views and no-copy
    Concat parts inside their base; the selected node's tensors outlined (a layer of their own). A click
    selects the producer."""
    frame = rectangles.assign(step_end=rectangles["last_step"] + 1, node=rectangles["producer"])
    tooltip = ["tensor", "kind", "inside", "producer", "consumers", "shape", "dtype",
               alt.Tooltip("size:Q", format=","), alt.Tooltip("offset:Q", format=","), "first_step", "last_step"]
    if "device_bytes" in frame:
        tooltip += ["format", alt.Tooltip("device_bytes:Q", format=",")]
    x, x2 = alt.X("first_step:Q", title="execution step"), alt.X2("step_end:Q")
    y, y2 = alt.Y("offset:Q", title="arena offset (bytes)", axis=alt.Axis(format="~s")), alt.Y2("end:Q")
    kinds = list(KIND_COLOURS)
    rects = alt.Chart(frame).mark_rect(stroke="white", strokeWidth=2).encode(
        x=x, x2=x2, y=y, y2=y2,
        color=alt.Color("kind:N", scale=alt.Scale(domain=kinds, range=list(KIND_COLOURS.values())),
                        legend=alt.Legend(orient="top", title=None)),
        opacity=alt.Opacity("kind:N", scale=alt.Scale(domain=kinds, range=[0.55 if k == "tensor" else 0.85
                                                                            for k in kinds]), legend=None),
        tooltip=tooltip,
    ).add_params(_pick(nearest=False)).properties(height=420)
    outlined = frame[frame["tensor"].isin(list(highlighted))]
    if outlined.empty:
        return rects
    outline = alt.Chart(outlined).mark_rect(fill=None, stroke=HIGHLIGHT, strokeWidth=2).encode(x=x, x2=x2, y=y, y2=y2)
    return alt.LayerChart(layer=[rects, outline])


def utilisation_chart(utilisation: Mapping[str, float]) -> alt.Chart:
    frame = pd.DataFrame({"unit": list(utilisation), "busy": list(utilisation.values())})
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("busy:Q", title="busy share of the total time", axis=alt.Axis(format="%")),
        y=alt.Y("unit:N", sort=None, title=None), tooltip=["unit", alt.Tooltip("busy:Q", format=".1%")],
    ).properties(height=alt.Step(22))


def gantt_chart(units: pd.DataFrame, order: Sequence[str], selected: str) -> alt.Chart | alt.LayerChart:
    """One row per unit, a bar per kernel keeping it busy; the wheel zooms and dragging pans the time axis.
    The selected node's bars are a layer of their own (a condition would be evaluated for every bar)."""
    zoom = alt.selection_interval(bind="scales", encodings=["x"])
    x, x2 = alt.X("start_us:Q", title="µs"), alt.X2("end_us:Q")
    y = alt.Y("unit:N", sort=list(order), title=None)
    tooltip = ["unit", "node", "op_type", alt.Tooltip("start_us:Q", format=".2f"),
               alt.Tooltip("busy_us:Q", format=".2f")]
    bars = alt.Chart(units).mark_bar(height=16).encode(
        x=x, x2=x2, y=y, color=alt.Color("op_type:N", scale=alt.Scale(range=CATEGORY_COLOURS),
                                         legend=alt.Legend(title="op type", orient="bottom", columns=6,
                                                           symbolLimit=0, labelLimit=160)),
        tooltip=tooltip,
    ).add_params(zoom, _pick(nearest=False)).properties(height=alt.Step(26))
    chosen = units[units["node"] == selected] if selected else units.iloc[:0]
    if chosen.empty:
        return bars
    mark = alt.Chart(chosen).mark_bar(height=16, color=HIGHLIGHT).encode(x=x, x2=x2, y=y, tooltip=tooltip)
    return alt.LayerChart(layer=[bars, mark])


def roofline_chart(points: pd.DataFrame, roof: pd.DataFrame, selected: str) -> alt.LayerChart:
    """Kernels as points (FLOP per byte, attained FLOP/s, log-log) under the profile's roof."""
    pick = _pick()
    roof_line = alt.Chart(roof).mark_line(color="black").encode(
        x=alt.X("intensity:Q", scale=alt.Scale(type="log"), title="arithmetic intensity (FLOP per DDR byte)"),
        y=alt.Y("attainable_flops:Q", scale=alt.Scale(type="log"), title="FLOP/s", axis=alt.Axis(format="~s")),
        tooltip=[alt.Tooltip("intensity:Q", format=".3g"), alt.Tooltip("attainable_flops:Q", format=".3s")])
    frame = points.assign(chosen=points["node"] == selected)
    dots = alt.Chart(frame).mark_circle().encode(
        x="intensity:Q", y="attained_flops:Q",
        size=alt.Size("latency_us:Q", legend=None, scale=alt.Scale(range=[20, 400])),
        color=alt.condition("datum.chosen", alt.value(HIGHLIGHT),
                            alt.Color("bound:N", scale=alt.Scale(domain=list(BOUND_COLOURS),
                                                                 range=list(BOUND_COLOURS.values())),
                                      legend=alt.Legend(orient="top", title="bound by"))),
        tooltip=["node", "op_type", "unit", "bound", alt.Tooltip("latency_us:Q", format=".2f"),
                 alt.Tooltip("intensity:Q", format=".3g"), alt.Tooltip("attained_flops:Q", format=".3s")],
    ).add_params(pick)
    return alt.LayerChart(layer=[roof_line, dots], height=380)


def delta_chart(metrics: pd.DataFrame, metric: str, title: str) -> alt.Chart:
    """One bar per configuration for one metric of a comparison, in the comparison's (the table's) order."""
    return alt.Chart(metrics).mark_bar().encode(
        x=alt.X(f"{metric}:Q", title=title), y=alt.Y("config:N", sort=[str(c) for c in metrics["config"]], title=None),
        tooltip=["config", alt.Tooltip(f"{metric}:Q", format=",.4g")],
    ).properties(height=alt.Step(22), width="container")
