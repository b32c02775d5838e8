"""The Compare page's sweep charts, drawn from ge_core.sweep's frames (no numbers computed here): a heat map
model x config whose cells are clickable (selection PICK over model, config and hardware), and latency
against arena bytes with the Pareto front."""

from __future__ import annotations

import altair as alt
import pandas as pd

PICK = "pick"  # the heat map's point selection (st.altair_chart(selection_mode=PICK))
PICK_FIELDS = ["model", "config_name", "hardware"]
EMPTY_CELL = "#e6e6e6"  # a cell with no "ok" row: its status is written in it
FRONT = "#d62728"
CELL_HEIGHT = 34  # px per model row of the heat map


def heat_map(cells: pd.DataFrame, title: str) -> alt.LayerChart:
    """grid_cells' frame: a rect per (model, column) coloured by `value`, its value (or status) written in it."""
    values = cells["value"].astype("float64")
    frame = cells.assign(value=values, has_value=values.notna(),
                         # Vega-Lite drops a mark whose colour field is missing: an empty cell gets the smallest
                         # value there (leaving the scale as it is) and is drawn grey by the condition below.
                         shade=values.fillna(values.min() if values.notna().any() else 0.0),
                         label=[_label(v, s) for v, s in zip(cells["value"], cells["status"], strict=True)])
    low, high = frame["shade"].min(), frame["shade"].max()
    frame["light"] = frame["has_value"] & (frame["shade"] >= low + 0.6 * (high - low))  # viridis' yellow end
    pick = alt.selection_point(name=PICK, fields=PICK_FIELDS, on="click", clear=False)
    models, columns = list(dict.fromkeys(frame["model"])), list(dict.fromkeys(frame["column"]))
    base = alt.Chart(frame).encode(
        x=alt.X("column:N", sort=columns, title=None, axis=alt.Axis(labelAngle=-30, labelLimit=240, orient="top")),
        y=alt.Y("model:N", sort=models, title=None, axis=alt.Axis(labelLimit=320)))
    legend = alt.Legend(gradientLength=max(40, CELL_HEIGHT * len(models) - 40))
    rects = base.mark_rect(stroke="white", strokeWidth=1).encode(
        color=alt.condition("datum.has_value", alt.Color("shade:Q", title=title, legend=legend,
                                                         scale=alt.Scale(scheme="viridis")), alt.value(EMPTY_CELL)),
        tooltip=["model", "config_name", "hardware", "status", alt.Tooltip("value:Q", title=title, format=",.4~g")],
    ).add_params(pick)
    text = base.mark_text(fontSize=11).encode(
        text="label:N", color=alt.condition("datum.has_value && !datum.light", alt.value("white"), alt.value("#222")))
    return alt.LayerChart(layer=[rects, text]).properties(height=alt.Step(CELL_HEIGHT), width="container")


def _label(value: object, status: str) -> str:
    if pd.isna(value):
        return str(status or "")
    number = float(value)  # type: ignore[arg-type]
    return f"{number:,.0f}" if abs(number) >= 100 else f"{number:.3g}"


def pareto_chart(points: pd.DataFrame) -> alt.LayerChart:
    """pareto_points' frame: a point per (config, hardware), the front joined by a line and named."""
    frame = points.assign(front=points["on_front"].map({True: "on the Pareto front", False: "dominated"}))
    tooltip = ["config_name", "hardware", alt.Tooltip("simulated_us:Q", format=",.2f", title="simulated µs"),
               alt.Tooltip("arena_bytes:Q", format=",.0f", title="arena bytes"), "models"]
    dots = alt.Chart(frame).mark_point(size=90, filled=True).encode(
        x=alt.X("arena_bytes:Q", title="arena bytes", axis=alt.Axis(format="~s"), scale=alt.Scale(zero=True)),
        y=alt.Y("simulated_us:Q", title="simulated µs"),
        color=alt.Color("hardware:N", legend=alt.Legend(orient="top")),
        shape=alt.Shape("front:N", legend=alt.Legend(orient="top", title=None)),
        tooltip=tooltip)
    labels = alt.Chart(frame).mark_text(align="left", dx=7, dy=-7, fontSize=11).encode(
        x="arena_bytes:Q", y="simulated_us:Q", text="config_name:N")
    front = alt.Chart(frame[frame["on_front"]].sort_values("arena_bytes")).mark_line(
        color=FRONT, strokeDash=[4, 3]).encode(x="arena_bytes:Q", y="simulated_us:Q", order="arena_bytes:Q")
    return alt.LayerChart(layer=[front, dots, labels]).properties(height=340, width="container")
