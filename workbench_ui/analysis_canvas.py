"""The graph on the Fusion, Memory, Profile and Compare pages: one or two panes of the canvas with the
page's overlays, the address's node selected, and a click selecting a node (the page's charts and tables
follow it)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from ge_core import Graph
from ge_core.viz import Overlay, marked_overlay
from workbench_ui.analysis import select_node
from workbench_ui.canvas import Pane, graph_json, make_pane, overlay_text, show_canvas


@dataclass(frozen=True)
class PaneSpec:
    """A graph to draw: `key` names its compile (WorkbenchConfig.cache_key), `graph_id` the snapshot."""

    label: str
    key: Hashable
    graph: Graph
    graph_id: str
    overlays: tuple[tuple[Hashable, Callable[[], Overlay]], ...] = ()  # (cache key, builder); the last is shown


def pane(spec: PaneSpec) -> Pane:
    overlays = [overlay_text((spec.key, spec.graph_id, *_tuple(k)), make) for k, make in spec.overlays]
    return make_pane(spec.label, spec.graph_id, graph_json(spec.key, spec.graph, spec.graph_id), overlays)


def outlined(name: str, nodes: Sequence[str]) -> tuple[Hashable, Callable[[], Overlay]]:
    """An overlay marking `nodes` under `name`, in marked_overlay's light red (their op names stay legible
    on it: a strong red made Model Explorer write them white, drawn as white bars without a GPU)."""
    return (name, tuple(nodes)), functools.partial(marked_overlay, name, tuple(nodes), name)


def show_graphs(specs: Sequence[PaneSpec], *, canvas_key: str, selected: str = "", selected_pane: int = 0,
                caption: str = "", sync: bool = True) -> None:
    """One or two panes; a click selects the node (in the address) and the page reruns with it."""
    show_canvas([pane(s) for s in specs], key=canvas_key, selected=selected, selected_pane=selected_pane,
                sync=sync, caption=caption, on_click=select_node)


def _tuple(key: Hashable) -> tuple[Hashable, ...]:
    return key if isinstance(key, tuple) else (key,)
