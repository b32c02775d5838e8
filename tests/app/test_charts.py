"""The analysis pages' Altair charts: the selected node's marks drawn on top, clicks that take a mark."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd

from workbench_ui.charts import HIGHLIGHT, PICK, gantt_chart, planner_chart

UNITS = pd.DataFrame({"unit": ["cube", "mte2", "cube"], "node": ["a", "a", "b"], "op_type": ["Conv", "Conv", "MatMul"],
                      "start_us": [0.0, 0.0, 2.0], "end_us": [2.0, 1.5, 3.0], "busy_us": [2.0, 1.5, 1.0]})
RECTANGLES = pd.DataFrame({"tensor": ["t0", "t1"], "kind": ["tensor", "view"], "inside": ["", "t0"],
                           "producer": ["a", "b"], "consumers": ["b", ""], "shape": ["[4]", "[4]"],
                           "dtype": ["float32"] * 2, "size": [16, 16], "offset": [0, 0], "end": [16, 16],
                           "first_step": [0, 1], "last_step": [1, 1]})


def _layers(chart: alt.TopLevelMixin) -> list[dict[str, Any]]:
    spec = chart.to_dict()
    return list(spec.get("layer", [spec]))


def _rows(chart: alt.TopLevelMixin, layer: int) -> list[dict[str, Any]]:
    spec = chart.to_dict()
    name = _layers(chart)[layer]["data"]["name"]
    return list(spec["datasets"][name])


def _pick_param(chart: alt.TopLevelMixin) -> dict[str, Any]:
    spec = chart.to_dict()  # a layered chart's params are lifted to its top level
    (param,) = [p for where in (spec, *_layers(chart)) for p in where.get("params", []) if p["name"] == PICK]
    return dict(param)


def test_the_gantt_draws_the_selected_nodes_bars_in_red_on_top() -> None:
    plain = gantt_chart(UNITS, ["cube", "mte2"], "")
    assert len(_layers(plain)) == 1  # nothing selected: one layer, coloured by op type
    chosen = gantt_chart(UNITS, ["cube", "mte2"], "a")
    layers = _layers(chosen)
    assert len(layers) == 2 and layers[1]["mark"]["color"] == HIGHLIGHT
    assert {r["node"] for r in _rows(chosen, 1)} == {"a"} and len(_rows(chosen, 1)) == 2
    assert _pick_param(chosen)["select"]["nearest"] is False  # a bar is clicked on itself


def test_the_planner_outlines_the_selected_nodes_tensors() -> None:
    assert len(_layers(planner_chart(RECTANGLES, []))) == 1
    chart = planner_chart(RECTANGLES, ["t1"])
    layers = _layers(chart)
    assert len(layers) == 2 and layers[1]["mark"]["stroke"] == HIGHLIGHT
    assert [r["tensor"] for r in _rows(chart, 1)] == ["t1"]
    assert [r["node"] for r in _rows(chart, 0)] == ["a", "b"]  # a click selects the producer
    opacity = layers[0]["encoding"]["opacity"]["scale"]
    assert opacity["domain"][:2] == ["tensor", "view"] and opacity["range"][0] < opacity["range"][1]
