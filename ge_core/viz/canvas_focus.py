"""Where a canvas pane opens: on what the pass changed, at a zoom where op names are readable.

Model Explorer opens a pane on a selected node by opening the layers down to it and framing it at a
readable size (its uiState `selectedNodeId`); the layers in `deepestExpandedGroupNodeIds` open too. So a
pane is handed the first node the pass changed on its side (the "before" pane: removed or changed; the
"after" pane: added or changed, in graph order) and the layers holding the changes. A pane the pass did
not change opens on its first op, framed the same way: a big graph is never drawn whole as specks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ge_core.ir.graph import Graph
from ge_core.viz.graph_diff import GraphDiff

MAX_OPEN_LAYERS = 8  # layers opened at once: each one opened is laid out (a dense block holds ~100 nodes)
GROUP_SUFFIX = "___group___"  # Model Explorer's id of the layer (group node) of a namespace


@dataclass(frozen=True)
class Focus:
    """The nodes a pane shows the change on (graph order; the first is selected and framed) and the
    Model Explorer ids of the layers to open."""

    nodes: tuple[str, ...] = ()
    layers: tuple[str, ...] = ()
    changed: bool = False  # the nodes are what a pass changed (not a pane's first op)
    places: tuple[float, ...] = ()  # each node's place in its graph's order: 0 the first node, 1 the last

    @property
    def first(self) -> str:
        return self.nodes[0] if self.nodes else ""


def change_focus(graph: Graph, diff: GraphDiff, side: Literal["before", "after"],
                 namespaces: Mapping[str, str]) -> Focus:
    """The nodes `diff` marks on `side`'s `graph`, with the layers (`namespaces`: node -> its layer, as
    the pane's JSON has them) holding them; the first op when the pass marks none there."""
    marked = {*(diff.removed if side == "before" else diff.added), *diff.changed}
    last = max(len(graph.nodes) - 1, 1)
    found = [(n.name, k / last) for k, n in enumerate(graph.nodes) if n.name in marked]
    if not found:
        return start_focus(graph)
    nodes = tuple(name for name, _ in found)
    return Focus(nodes, open_layers(nodes, namespaces), changed=True, places=tuple(place for _, place in found))


def start_focus(graph: Graph) -> Focus:
    """A pane with nothing marked: its first op, framed readably (not the whole graph fitted)."""
    return Focus((graph.nodes[0].name,)) if graph.nodes else Focus()


def open_layers(nodes: tuple[str, ...], namespaces: Mapping[str, str], limit: int = MAX_OPEN_LAYERS) -> tuple[str, ...]:
    """The layers holding `nodes` (the first `limit` of them, in the nodes' order) as group ids."""
    layers = dict.fromkeys(namespaces.get(n, "") for n in nodes)
    return tuple(f"{ns}{GROUP_SUFFIX}" for ns in layers if ns)[:limit]
