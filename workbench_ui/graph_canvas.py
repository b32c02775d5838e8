"""The Graph page's canvas: the graph before and after the picked pass in two panes kept in step by node
name, coloured by the chosen overlay; the downloads of the snapshot on screen."""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

import streamlit as st

from ge_core import Graph
from ge_core.viz import (
    Focus,
    GraphDiff,
    PassStep,
    canvas_json,
    category_overlay,
    change_focus,
    change_overlay,
    explorer_graphs,
    fusion_group_overlay,
    graph_file,
    graph_to_dot,
    snapshot_id,
)
from workbench_ui import address
from workbench_ui.canvas import OpenInExplorer, Pane, make_pane, show_canvas, shown_last
from workbench_ui.canvas.panes import (
    GraphCache,
    GraphJson,
    OverlayCache,
    build_graph_json,
    build_overlay_text,
    graph_cache,
    overlay_cache,
)
from workbench_ui.graph_controls import (
    CATEGORY,
    CHANGE,
    FUSION,
    DiffCache,
    Pipeline,
    build_step_diff,
    colour_for,
    diff_cache,
    graphs_at,
    neighbour_steps,
    next_step,
)
from workbench_ui.session import ConfigKey
from workbench_ui.shared_cache import NotBuiltYet, PeekCache

CANVAS_KEY = "ge_graph_canvas"
Side = Literal["before", "after"]


@dataclass(frozen=True)
class Caches:
    """The shared caches a step's panes are built into (got in the script thread, used from any thread)."""

    graphs: GraphCache
    overlays: OverlayCache
    diffs: DiffCache

    @classmethod
    def here(cls) -> Caches:
        return cls(graph_cache(), overlay_cache(), diff_cache())

    def peek(self) -> Caches:
        """The same caches, only looked into (a miss raises NotBuiltYet)."""
        return Caches(PeekCache(self.graphs), PeekCache(self.overlays), PeekCache(self.diffs))


def step_panes(key: ConfigKey, pipeline: Pipeline, step: PassStep | None, before: Graph, after: Graph,
               diff: GraphDiff, colour: str) -> list[Pane]:
    """Before and after the pass; one pane when it changed nothing (or at O0)."""
    return _panes(build_sides(Caches.here(), key, pipeline, step, before, after, diff), colour)


def panes_ahead(key: ConfigKey, pipeline: Pipeline, step: PassStep | None) -> list[Pane] | None:
    """The panes ▶ leads to, as that step's page will show them, for the canvas to draw out of sight; []
    while the background builds them (nothing is built in the page's run), None on the last pass."""
    ahead = next_step(pipeline.records, step)
    if ahead is None:
        return None
    before, after = graphs_at(ahead, pipeline)
    peek = Caches.here().peek()
    try:
        diff = build_step_diff(peek.diffs, key, ahead, before, after)
        sides = build_sides(peek, key, pipeline, ahead, before, after, diff)
    except NotBuiltYet:
        return []
    return _panes(sides, colour_for(ahead.changed))


def build_neighbours_ahead(key: ConfigKey, pipeline: Pipeline, step: PassStep | None) -> None:
    """The panes of the steps ◀ and ▶ lead to (and the one after the next), built in the background so
    stepping finds them ready. The page calls it last: a thread building them during the run would take the
    GIL from the run itself."""
    if step is not None:
        prefetch(Caches.here(), key, pipeline, neighbour_steps(pipeline.records, step))


# label, graph id, its JSON, its overlays, where it opens (None: as any pane does)
Side_ = tuple[str, str, GraphJson, dict[str, tuple[str, str]], Focus | None]


def _panes(sides: list[Side_], colour: str) -> list[Pane]:
    return [make_pane(label, graph_id, graph, shown_last(overlays, colour), focus)
            for label, graph_id, graph, overlays, focus in sides]


def build_sides(caches: Caches, key: ConfigKey, pipeline: Pipeline, step: PassStep | None, before: Graph,
                after: Graph, diff: GraphDiff) -> list[Side_]:
    """What each pane shows (pure: safe in any thread)."""
    if step is None:
        overlays = {CATEGORY: build_overlay_text(caches.overlays, (key, "input", CATEGORY),
                                                 functools.partial(category_overlay, after))}
        imported = build_graph_json(caches.graphs, key, after, snapshot_id(None))
        return [("graph", snapshot_id(None), imported, overlays, None)]
    records = pipeline.records
    sides: list[tuple[Side, Graph, int]] = [("after", after, step.index)]
    if step.changed:
        sides.insert(0, ("before", before, step.index - 1))
    out: list[Side_] = []
    for side, graph, index in sides:
        graph_id = snapshot_id(records[index] if index >= 0 else None)
        decisions = [d for r in records[:index + 1] for d in r.decisions]
        overlays = {
            FUSION: build_overlay_text(caches.overlays, (key, graph_id, FUSION),
                                       functools.partial(fusion_group_overlay, graph, decisions)),
            CATEGORY: build_overlay_text(caches.overlays, (key, graph_id, CATEGORY),
                                         functools.partial(category_overlay, graph)),
        }
        if step.changed:
            overlays[CHANGE] = build_overlay_text(caches.overlays, (key, step.index, side),
                                                  functools.partial(change_overlay, diff, side))
        graph_json = build_graph_json(caches.graphs, key, graph, graph_id)
        focus = change_focus(graph, diff, side, graph_json.layers) if step.changed else None
        out.append((side, graph_id, graph_json, overlays, focus))
    return out


_PREFETCH = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ge_canvas_prefetch")
_QUEUED: set[tuple[ConfigKey, int]] = set()
_QUEUED_LOCK = threading.Lock()
_LOG = logging.getLogger(__name__)


def prefetch(caches: Caches, key: ConfigKey, pipeline: Pipeline, steps: Sequence[PassStep]) -> None:
    """Build the panes of `steps` in one background thread (each once, whoever asks), into the caches."""
    for step in steps:
        with _QUEUED_LOCK:
            if (key, step.index) in _QUEUED:
                continue
            _QUEUED.add((key, step.index))
        _PREFETCH.submit(_prefetch_one, caches, key, pipeline, step)


def _prefetch_one(caches: Caches, key: ConfigKey, pipeline: Pipeline, step: PassStep) -> None:
    # At the server's own OS priority: a lower one stalls every page run on a busy machine (this thread,
    # descheduled while it holds the GIL, keeps the run waiting for it: 9x slower under load, measured).
    try:
        before, after = graphs_at(step, pipeline)
        diff = build_step_diff(caches.diffs, key, step, before, after)
        build_sides(caches, key, pipeline, step, before, after, diff)
    except Exception as err:  # the page builds it in the foreground then, and shows what goes wrong there
        _LOG.warning("the canvas could not build pass %d ahead: %s", step.index, err)
    finally:
        with _QUEUED_LOCK:
            _QUEUED.discard((key, step.index))



def show_step_canvas(panes: list[Pane], pipeline: Pipeline, step: PassStep | None, selected: str,
                     selected_side: str, ahead: list[Pane] | None = None) -> None:
    """The canvas (with the panes ▶ leads to, drawn out of sight); a click selects the node (in the
    address, which the inspector reads)."""
    where = f"{step.label}: before | after" if step is not None and len(panes) == 2 else (
        step.label if step is not None else "as imported")
    side = next((i for i, p in enumerate(panes) if p.label == selected_side), 0)
    show_canvas(_as_shown(panes), key=CANVAS_KEY, selected=selected, selected_pane=side, sync=True,
                caption=f"{where} · click a node to inspect it", on_click=_select,
                open_tab=_open_tab(panes[-1], pipeline, step),
                ahead=_as_shown(ahead) if ahead is not None else None)


def _as_shown(panes: list[Pane]) -> list[Pane]:
    """Each pane loads the overlay shown only (the page's "Colour nodes by" switches): a 10,000-node overlay
    costs the canvas about a second to apply; "Open in Model Explorer" takes them all."""
    return [p.with_overlays(p.overlays[-1:]) for p in panes]


def _select(node: str) -> None:
    address.write(address.NODE, node)


def _open_tab(pane: Pane, pipeline: Pipeline, step: PassStep | None) -> OpenInExplorer:
    if pipeline.compiled is None or step is None:
        graph = pipeline.input_graph
        build = functools.partial(graph_file, graph, pane.graph_id, graph.name)
    else:
        build = functools.partial(explorer_graphs, pipeline.compiled, step.index)
    return OpenInExplorer(pane.label if step is None else f"after {step.name}", pane.overlays, build)


def show_downloads(pipeline: Pipeline, step: PassStep | None, after: Graph) -> None:
    """The snapshot on screen as Model Explorer JSON (with its overlays) and as graphviz DOT."""
    stem = snapshot_id(pipeline.records[step.index]) if step is not None else snapshot_id(None)
    left, right, _ = st.columns([2, 2, 3])
    left.download_button("Download graph JSON",
                         on_click="ignore", data=functools.partial(_snapshot_file, pipeline, step),
                         file_name=f"{stem}.json", mime="application/json", icon=":material/download:",
                         help="The graph after this pass with every detail and its overlays (ge_overlays), as "
                              "Model Explorer opens it: `model-explorer FILE.json`, or drop it on the canvas.")
    right.download_button("Download DOT",
                          on_click="ignore", data=functools.partial(_dot, after), file_name=f"{stem}.dot",
                          mime="text/vnd.graphviz", icon=":material/download:",
                          help="The same graph for graphviz: `dot -Tsvg FILE.dot -o graph.svg`.")


def _snapshot_file(pipeline: Pipeline, step: PassStep | None) -> str:
    if pipeline.compiled is None or step is None:
        graph = pipeline.input_graph
        return graph_file(graph, snapshot_id(None), graph.name)
    return json.dumps(canvas_json(pipeline.compiled, step.index), ensure_ascii=False)


def _dot(graph: Graph) -> str:
    return graph_to_dot(graph, max_nodes=len(graph)).source
