"""The canvas's panes, built once and shared by every session: a snapshot's graph JSON and its overlays.

A snapshot's JSON does not depend on the pass it is shown for (the pass's marks are an overlay), so the
graph after pass k, drawn again as the "before" of pass k + 1, is not built twice. Keys name the compile
(WorkbenchConfig.cache_key) and the snapshot; the graphs themselves are never hashed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

from ge_core import Graph
from ge_core.viz import Focus, Overlay, overlay_json, pane_json_and_layers
from workbench_ui.canvas.component import Pane
from workbench_ui.shared_cache import SharedCache, shared_cache

GRAPH_ENTRIES = 24  # snapshots kept (a 10k-node graph's JSON is a few MB)
OVERLAY_ENTRIES = 256
FIT_WHOLE_UP_TO = 40  # items (nodes, inputs, outputs): a graph this small is readable fitted whole


@dataclass(frozen=True)
class GraphJson:
    text: str
    digest: str
    layers: Mapping[str, str] = field(default_factory=dict)  # node id -> its layer (namespace) on the canvas


GraphCache = SharedCache[tuple[Hashable, str], GraphJson]
OverlayCache = SharedCache[Hashable, tuple[str, str]]


def graph_cache() -> GraphCache:
    """The snapshots' JSON (get it in the script thread: a thread of ours then builds into it too)."""
    return shared_cache("canvas_graphs", GRAPH_ENTRIES)


def overlay_cache() -> OverlayCache:
    return shared_cache("canvas_overlays", OVERLAY_ENTRIES)


def graph_json(key: Hashable, graph: Graph, graph_id: str) -> GraphJson:
    """The snapshot's Model Explorer JSON (cached under `key`)."""
    return build_graph_json(graph_cache(), key, graph, graph_id)


def build_graph_json(cache: GraphCache, key: Hashable, graph: Graph, graph_id: str) -> GraphJson:
    """graph_json into a cache at hand (safe in any thread: it draws nothing and calls no st.*)."""
    found = cache.get((key, graph_id))
    if found is None:
        text, layers = pane_json_and_layers(graph, graph_id)
        found = GraphJson(text, hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest(), layers)
        cache.put((key, graph_id), found)
    return found


def overlay_text(key: Hashable, make: Callable[[], Overlay]) -> tuple[str, str]:
    """(name, node data JSON) of the overlay `make()` builds (cached under `key`)."""
    return build_overlay_text(overlay_cache(), key, make)


def build_overlay_text(cache: OverlayCache, key: Hashable, make: Callable[[], Overlay]) -> tuple[str, str]:
    found = cache.get(key)
    if found is None:
        overlay = make()
        found = (overlay.name, overlay_json(overlay))
        cache.put(key, found)
    return found


def make_pane(label: str, graph_id: str, graph: GraphJson, overlays: Sequence[tuple[str, str]] = (),
              focus: Focus | None = None) -> Pane:
    """A pane of `graph`; it opens on `focus` (default: the graph's first op, framed at a readable zoom)."""
    return Pane(label, graph_id, graph.text, tuple(overlays), graph.digest, focus or _first_op(graph))


def _first_op(graph: GraphJson) -> Focus:
    """A graph of a few items is framed whole (readable as it is); a bigger one on its first op."""
    if len(graph.layers) <= FIT_WHOLE_UP_TO:
        return Focus()
    first = next((node for node in graph.layers if not node.startswith(("input:", "output:", "captured:"))), "")
    return Focus((first,)) if first else Focus()


def shown_last(overlays: dict[str, tuple[str, str]], shown: str) -> list[tuple[str, str]]:
    """The overlays in load order, `shown` last (Model Explorer shows the last one loaded)."""
    return [o for name, o in overlays.items() if name != shown] + ([overlays[shown]] if shown in overlays else [])
