"""The canvas as a Streamlit component: `show_canvas(panes, ...)` draws one or two panes of Model Explorer
and returns the node the user just clicked.

The component is st.components.v2 with inline JavaScript (canvas.js, no build step). Its data is small:
the panes' graph JSON and overlays (megabytes on a 10,000-node model; built once per snapshot by
workbench_ui.canvas.panes) are not sent through the page's websocket but put in Streamlit's media storage
(in memory, held for this session while the element is shown, served at `/media/<content hash>.json`),
and the canvas fetches them from there; the iframe reloads only when they change.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st
from streamlit import runtime

from ge_core.viz import Focus
from workbench_ui.canvas.serving import entry_url, serving_problem, site_path

CANVAS_HEIGHT = 640  # px: the canvas and the inspector beside it share this height (no 14,000 px pages)
CANVAS_COLUMNS = (5, 2)  # widths of the canvas and the inspector beside it
# changes.js (the change walker and strip) first: canvas.js, a module, makes one and exports the component
_JS = "\n".join(Path(__file__).with_name(name).read_text() for name in ("changes.js", "canvas.js"))
_CSS = Path(__file__).with_name("canvas.css").read_text()
_component = st.components.v2.component("ge_workbench.canvas", js=_JS, css=_CSS, isolate_styles=False)
MAX_CHANGES = 2000  # changed nodes a pane lists for "next change" (the first ones, in graph order)
_OPEN_REQUESTS = "_ge_canvas_open_requests"  # canvas key -> token of a tab waiting for its data


@dataclass(frozen=True)
class Pane:
    """What one pane shows: a collection (`label`, unique on the canvas) holding the graph `graph_id` and
    its fused bodies (`graphs`: Model Explorer JSON text `{"graphs": [...]}`), with overlays as node data
    (name, GraphNodeData JSON text); the last overlay is the one shown, the others are a click away. The
    pane opens on `focus` (its first node selected and framed readably, its layers open) unless the page
    selected a node."""

    label: str
    graph_id: str
    graphs: str
    overlays: tuple[tuple[str, str], ...] = ()
    digest: str = field(default="", compare=False)  # names `graphs` (set by panes.py, which builds it)
    focus: Focus = field(default_factory=Focus)

    def with_overlays(self, overlays: Sequence[tuple[str, str]]) -> Pane:
        return Pane(self.label, self.graph_id, self.graphs, tuple(overlays), self.digest, self.focus)

    def fingerprint(self) -> str:
        overlays = "|".join(f"{name}:{_sha(text)}" for name, text in self.overlays)
        focus = _sha("\n".join([*self.focus.nodes[:1], *self.focus.layers]))
        return f"{self.label}|{self.graph_id}|{self.digest or _sha(self.graphs)}|{overlays}|{focus}"


@dataclass(frozen=True)
class OpenInExplorer:
    """The "Open in Model Explorer" button: a tab of its own with a collection (`label`) of the graphs
    `build()` returns as JSON text (built only when the button is pressed) and these overlays."""

    label: str
    overlays: tuple[tuple[str, str], ...]
    build: Callable[[], str]


def show_canvas(panes: Sequence[Pane], *, key: str, selected: str = "", selected_pane: int = 0,
                sync: bool = True, caption: str = "", on_click: Callable[[str], None] | None = None,
                open_tab: OpenInExplorer | None = None, height: int = CANVAS_HEIGHT,
                ahead: Sequence[Pane] | None = None) -> str | None:
    """One pane, or two side by side kept in step by node id (`sync`). `selected` (a node id, in pane
    `selected_pane`) is selected and centred. A click calls `on_click(node id)` before the page reruns
    (so the page reads the new selection from the start) and is returned in that run; else None.
    `open_tab` adds the "Open in Model Explorer" button. `ahead`: the panes a later run will most likely
    show (the next pass); once these are drawn and calm the canvas draws those out of sight, and shows
    them at once when that run asks for them. Empty: they are being built; the canvas asks again (a
    rerun) once it is calm, a few times."""
    problem = serving_problem()
    if problem:
        st.error(problem, icon=":material/hub:")
        return None
    if not 1 <= len(panes) <= 2:
        raise ValueError(f"the canvas shows one or two panes, not {len(panes)}")
    data = {
        "src": entry_url(), "height": height, "sync": sync, "caption": caption,
        "version": _version(panes, sync),
        "panes": [_pane_data(p, f"{key}.{i}") for i, p in enumerate(panes)],
        "ahead": _ahead_data(ahead, key, sync),
        "selected": {"id": selected, "pane": selected_pane} if selected else None,
        "open": _open_data(open_tab), "open_payload": _open_payload(key, open_tab),
    }
    result = _component(key=key, data=data, height="content",
                        on_clicked_change=functools.partial(_clicked, key, on_click),
                        on_open_change=functools.partial(_remember_open, key),
                        on_ahead_change=_look_ahead_again)
    clicked = result.clicked if result is not None else None
    return str(clicked) if clicked else None


def _ahead_data(ahead: Sequence[Pane] | None, key: str, sync: bool) -> dict[str, object] | None:
    if ahead is None:
        return None
    if not ahead:
        return {"coming": True}
    return {"version": _version(ahead, sync), "panes": [_pane_data(p, f"{key}.ahead.{i}") for i, p in enumerate(ahead)]}


def _look_ahead_again() -> None:
    """The canvas asked for the panes ahead again: the rerun this trigger starts looks for them."""


def _version(panes: Sequence[Pane], sync: bool) -> str:
    """Names what the panes show: the canvas reloads when it changes."""
    return _sha("\n".join([*(p.fingerprint() for p in panes), str(sync)]))


def _pane_data(pane: Pane, where: str) -> dict[str, object]:
    return {"label": pane.label, "graph_id": pane.graph_id, "graphs": _handed(pane.graphs, f"{where}.graphs"),
            "focus": {"node": pane.focus.first, "layers": list(pane.focus.layers),
                      "changes": list(pane.focus.nodes[:MAX_CHANGES]) if pane.focus.changed else [],
                      "places": list(pane.focus.places[:MAX_CHANGES]) if pane.focus.changed else []},
            "overlays": [[name, _handed(text, f"{where}.overlay.{k}")] for k, (name, text) in enumerate(pane.overlays)]}


def _handed(text: str, where: str) -> str | dict[str, str]:
    """JSON text as the canvas gets it: `{"url": ...}` of a media file of this session (`where` names the
    file's place on the page: the next run that puts another file there, or none, lets the old one go);
    the text itself when there is no media storage (a page run as a bare script)."""
    if not runtime.exists():
        return text
    url = runtime.get_instance().media_file_mgr.add(text.encode("utf-8", "surrogatepass"), "application/json",
                                                    f"ge_canvas.{where}")
    return {"url": site_path(url)}


def _open_data(open_tab: OpenInExplorer | None) -> dict[str, object] | None:
    if open_tab is None:
        return None
    return {"label": open_tab.label, "overlays": [name for name, _ in open_tab.overlays]}


def _open_payload(key: str, open_tab: OpenInExplorer | None) -> dict[str, object] | None:
    """The data a just-opened tab waits for (built once, when the button was pressed)."""
    token = st.session_state.get(_OPEN_REQUESTS, {}).pop(key, None)
    if token is None or open_tab is None:
        return None
    return {"token": token, "data": {"graphs": [open_tab.build()], "nodeData": [text for _, text in open_tab.overlays]}}


def _remember_open(key: str) -> None:
    token = (st.session_state.get(key) or {}).get("open")
    if token:
        st.session_state.setdefault(_OPEN_REQUESTS, {})[key] = str(token)


def _clicked(key: str, on_click: Callable[[str], None] | None) -> None:
    node = (st.session_state.get(key) or {}).get("clicked")
    if node and on_click is not None:
        on_click(str(node))


def _sha(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
