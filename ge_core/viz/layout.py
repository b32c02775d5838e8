"""A layered drawing of a GraphView in pure Python (no Graphviz binary): positions for the clickable chart.

Sugiyama's recipe, kept small: each item goes one layer below its lowest producer (longest path from
the inputs), then a few barycenter sweeps order each layer by the mean position of its neighbours in
the layers above (then below), which removes most edge crossings. Edges pointing backwards in the view's
order (possible between folded boxes) are ignored for layering.
"""

from __future__ import annotations

from dataclasses import dataclass

from ge_core.viz.graph_view import GraphView

X_GAP = 150.0  # distance between neighbours in a layer (data units; the chart scales them to fit)
Y_GAP = 80.0
SWEEPS = 4


@dataclass(frozen=True)
class Layout:
    positions: dict[str, tuple[float, float]]  # item id -> (x, y)
    layer: dict[str, int]  # item id -> its layer (0: the inputs)
    layers: int
    width: int  # items in the widest layer


def layered_layout(view: GraphView, rankdir: str = "TB") -> Layout:
    """Positions for every item of `view`: top to bottom ("TB") or left to right ("LR")."""
    order = {item.id: i for i, item in enumerate(view.items)}
    preds: dict[str, list[str]] = {i: [] for i in order}
    succs: dict[str, list[str]] = {i: [] for i in order}
    for e in view.edges:
        if e.src in order and e.dst in order and order[e.src] < order[e.dst]:
            preds[e.dst].append(e.src)
            succs[e.src].append(e.dst)
    layer: dict[str, int] = {}
    for item in view.items:  # the view's order is topological for forward edges
        layer[item.id] = max((layer[p] + 1 for p in preds[item.id]), default=0)
    rows: list[list[str]] = [[] for _ in range(max(layer.values(), default=-1) + 1)]
    for item in view.items:
        rows[layer[item.id]].append(item.id)
    _order_layers(rows, preds, succs)
    positions: dict[str, tuple[float, float]] = {}
    for y, row in enumerate(rows):
        for x, item_id in enumerate(row):
            across, down = (x - (len(row) - 1) / 2) * X_GAP, y * Y_GAP
            positions[item_id] = (across, down) if rankdir == "TB" else (down, across)
    return Layout(positions, layer, len(rows), max((len(r) for r in rows), default=0))


def _order_layers(rows: list[list[str]], preds: dict[str, list[str]], succs: dict[str, list[str]]) -> None:
    """Barycenter sweeps, down then up: each item moves to the mean slot of its neighbours."""
    slot = {item: i - (len(row) - 1) / 2 for row in rows for i, item in enumerate(row)}
    for sweep in range(SWEEPS):
        down = sweep % 2 == 0
        layer_range = range(1, len(rows)) if down else range(len(rows) - 2, -1, -1)
        for li in layer_range:
            row = rows[li]
            near = preds if down else succs
            keys = {item: _mean([slot[n] for n in near[item]], slot[item]) for item in row}
            row.sort(key=lambda item: keys[item])  # stable: ties keep their order
            for i, item in enumerate(row):
                slot[item] = i - (len(row) - 1) / 2  # centred, so layers of different widths align


def _mean(values: list[float], default: float) -> float:
    return sum(values) / len(values) if values else default
