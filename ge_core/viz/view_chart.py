"""The clickable drawing: an ECharts graph series over `layered_layout`, as a JSON-compatible option dict.

Streamlit's `st.echarts_chart(option, on_select=...)` reports which item was clicked (its data index, the
item's position in `view.items`), which the Graph page turns into the selected node or an opened box.
Colours match the DOT drawing (diff or op category). Every string reaching the chart is plain text or
escaped HTML (tooltips are HTML), and braces are replaced so no name is read as an ECharts template.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import Any

from ge_core.ops import REGISTRY
from ge_core.viz.diff_style import (
    BOX_FILL,
    CATEGORY_COLOURS,
    HIGHLIGHT_BORDER,
    HIT,
    INPUT_FILL,
    OUTPUT_FILL,
    SELECTED,
    UNSUPPORTED_FILL,
    box_status,
    diff_colours,
    item_marks,
    status_of,
)
from ge_core.viz.dot import shorten
from ge_core.viz.graph_view import GraphView, ViewItem
from ge_core.viz.layout import Layout, layered_layout
from ge_core.viz.node_index import Located

OP_SIZE = [118, 34]
BOX_SIZE = [136, 42]
IO_SIZE = [100, 28]
PX_PER_UNIT = 0.8  # layout units to pixels: neighbours in a layer 120 px apart, layers 64 px apart
MARGIN = 24
MIN_HEIGHT, MAX_HEIGHT = 320, 900


def view_to_echarts(view: GraphView, index: Mapping[str, Located], *, status: Mapping[str, str] | None = None,
                    selected: str = "", rankdir: str = "TB", layout: Layout | None = None,
                    hits: Iterable[str] = ()) -> dict[str, Any]:
    """The ECharts option drawing `view`; data item i is `view.items[i]`. Opens centred on `selected`,
    which is outlined, as are search `hits` (lighter)."""
    layout = layout or layered_layout(view, rankdir)
    position = {item.id: i for i, item in enumerate(view.items)}
    chosen = view.item_of.get(selected, selected)
    marks = item_marks(view, selected, hits)
    data = [_node(item, index, layout, status, marks.get(item.id, "")) for item in view.items]
    links = [_link(position[e.src], position[e.dst], layout, e.src, e.dst, e.count)
             for e in view.edges if e.src in position and e.dst in position]
    series: dict[str, Any] = {
        "type": "graph", "layout": "none", "roam": True, "selectedMode": "single", "data": data, "links": links,
        "edgeSymbol": ["none", "arrow"], "edgeSymbolSize": 7,
        "scaleLimit": {"min": 0.05, "max": 4},
        "lineStyle": {"color": "#8a8a8a", "width": 1, "opacity": 0.8},
        "label": {"show": True, "fontSize": 10, "color": "#1f1f1f", "lineHeight": 12},
        "labelLayout": {"hideOverlap": True},
        "emphasis": {"focus": "adjacency", "lineStyle": {"width": 2}},
        "select": {"itemStyle": {"borderColor": HIGHLIGHT_BORDER, "borderWidth": 3}},
        "cursor": "pointer",
    }
    series.update(_placement(layout, chosen))
    return {"animation": False, "tooltip": {"confine": True, "enterable": False}, "series": [series]}


def _placement(layout: Layout, chosen: str) -> dict[str, Any]:
    """Where the drawing sits. ECharts stretches a graph's bounding box over its layout box, so the box is
    sized at PX_PER_UNIT on both axes (boxes keep their shape) and may be taller than the chart: the chart
    is a window onto it that opens on the inputs, or centred on the selected node, and pans and zooms."""
    xs = [x for x, _ in layout.positions.values()] or [0.0]
    ys = [y for _, y in layout.positions.values()] or [0.0]
    width, height = (max(xs) - min(xs)) * PX_PER_UNIT, (max(ys) - min(ys)) * PX_PER_UNIT
    place: dict[str, Any] = {"left": "center", "top": MARGIN, "width": max(1.0, width), "height": max(1.0, height)}
    if chosen in layout.positions:
        place["center"] = list(layout.positions[chosen])
    return place


def chart_height(layout: Layout) -> int:
    """Pixels for the chart: the whole drawing when it is short, else a window onto it."""
    ys = [y for _, y in layout.positions.values()] or [0.0]
    return int(min(MAX_HEIGHT, max(MIN_HEIGHT, (max(ys) - min(ys)) * PX_PER_UNIT + 2 * MARGIN + 20)))


def _node(item: ViewItem, index: Mapping[str, Located], layout: Layout, status: Mapping[str, str] | None,
          mark: str) -> dict[str, Any]:
    x, y = layout.positions[item.id]
    fill, border, label, tip = _look(item, index, status)
    style: dict[str, Any] = {"color": fill, "borderColor": border, "borderWidth": 1.5}
    if item.is_box or item.boundary:
        style["borderType"] = "dashed"
    if mark == SELECTED:
        style.update(borderColor=HIGHLIGHT_BORDER, borderWidth=4, shadowBlur=8, shadowColor=HIGHLIGHT_BORDER)
    elif mark == HIT:
        style.update(borderColor=HIGHLIGHT_BORDER, borderWidth=3)
    size = BOX_SIZE if item.is_box else IO_SIZE if item.kind in ("input", "output") else OP_SIZE
    return {"name": item.id, "x": x, "y": y, "symbol": "roundRect", "symbolSize": size, "itemStyle": style,
            "label": {"formatter": _plain(label)}, "tooltip": {"formatter": tip}}


def _look(item: ViewItem, index: Mapping[str, Located], status: Mapping[str, str] | None
          ) -> tuple[str, str, str, str]:
    """(fill, border, label, tooltip HTML) for an item."""
    if item.kind in ("input", "output"):
        fill = INPUT_FILL if item.kind == "input" else OUTPUT_FILL
        return fill, "#7a7a7a", shorten(item.title, 18), _tip(f"graph {item.kind}", item.title)
    if item.is_box:
        state = box_status(item, status)
        fill, border = diff_colours(state) if status is not None else (BOX_FILL, "#7a7a7a")
        ops = ", ".join(f"{op}×{n}" for op, n in item.ops[:4])
        return (fill, border, f"{shorten(item.title, 20)}\n{len(item.refs)} nodes",
                _tip(f"{item.kind} box, {len(item.refs)} nodes (click to open)", item.title, ops))
    node = index[item.id].node
    op = REGISTRY.for_node(node)
    if status is not None:
        fill, border = diff_colours(status_of(item.id, status))
    else:
        fill, border = (CATEGORY_COLOURS[op.category] if op else UNSUPPORTED_FILL), "#555555"
    what = op.category.value if op else "unsupported"
    return fill, border, f"{shorten(item.title, 18)}\n{shorten(node.name, 18)}", _tip(item.title, node.name, what)


def _link(src: int, dst: int, layout: Layout, a: str, b: str, count: int) -> dict[str, Any]:
    link: dict[str, Any] = {"source": src, "target": dst}
    span = abs(layout.layer[b] - layout.layer[a])
    style: dict[str, Any] = {}
    if span > 1:  # a long edge would run straight through the boxes between: bend it
        style["curveness"] = min(0.5, 0.1 * span)
    if count > 1:
        style["width"] = 2
    if style:
        link["lineStyle"] = style
    return link


def _tip(*lines: str) -> str:
    return "<br/>".join(_escape(line) for line in lines if line)


def _escape(text: str) -> str:
    return html.escape(text, quote=True).replace("{", "&#123;").replace("}", "&#125;")


def _plain(text: str) -> str:
    """Label text: rich-text markup characters of ECharts replaced."""
    return text.replace("{", "(").replace("}", ")").replace("|", "¦")
