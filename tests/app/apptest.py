"""Driving the workbench with Streamlit's AppTest: open a page, read charts, press a download."""

from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path
from typing import Any, cast

import streamlit as st
from streamlit.components.v2.bidi_component.constants import EVENT_DELIM
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.media_file_storage import MediaFileKind
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.runtime.state.session_state import STREAMLIT_INTERNAL_KEY_PREFIX
from streamlit.testing.v1 import AppTest

from workbench_ui.model_picker import SAMPLE_KEY

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
TIMEOUT = 60


def open_app(sample: str | None = None) -> AppTest:
    """A fresh session on the landing page (Model), optionally opened with ?sample=NAME."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if sample is not None:
        at.query_params[SAMPLE_KEY] = sample
    return at.run()


def open_page(path: str, sample: str | None = None) -> AppTest:
    """A fresh session, then a switch to `path` (e.g. "app_pages/passes.py"), as a click in the menu does."""
    return open_app(sample).switch_page(path).run()


def download_buttons(at: AppTest) -> dict[str, Any]:
    """Download buttons by label (AppTest has no accessor for them: they are read as protos)."""
    return {el.proto.label: el.proto for el in at.get("download_button")}


class Downloads:
    """Records what pages hand to `st.download_button`, so a test can "press" it: AppTest runs the script
    in this process but drops its runtime (and the on-demand data) after every run.

    Use with monkeypatch: `monkeypatch.setattr(st, "download_button", downloads.button)`.
    """

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self._original = st.download_button

    def button(self, label: str, data: Any, *args: Any, **kwargs: Any) -> Any:
        self.data[label] = data
        return self._original(label, data, *args, **kwargs)

    def press(self, label: str) -> bytes:
        data = self.data[label]
        result = data() if callable(data) else data
        return result if isinstance(result, bytes) else str(result).encode()


def canvas(at: AppTest, key: str) -> dict[str, Any]:
    """What the page handed to the canvas component `key` (workbench_ui.canvas.show_canvas): its panes
    (label, graph_id, graphs as Model Explorer JSON text, overlays), the selected node, the caption."""
    (element,) = [el for el in at.get("bidi_component") if el.proto.id.endswith(f"-{key}")]
    return cast(dict[str, Any], json.loads(element.proto.json))


# The JSON files pages put in Streamlit's media storage (the canvas's graphs and overlays), by file id: AppTest
# drops its runtime, and the storage with it, after every run.
_MEDIA: OrderedDict[str, bytes] = OrderedDict()
_MEDIA_KEPT = 64
_load_and_get_id = MemoryMediaFileStorage.load_and_get_id


def _recording_load_and_get_id(self: MemoryMediaFileStorage, path_or_data: bytes | str, mimetype: str,
                               kind: MediaFileKind, filename: str | None = None) -> str:
    file_id = _load_and_get_id(self, path_or_data, mimetype, kind, filename)
    if mimetype == "application/json" and isinstance(path_or_data, bytes):
        _MEDIA[file_id] = path_or_data
        _MEDIA.move_to_end(file_id)
        while len(_MEDIA) > _MEDIA_KEPT:
            _MEDIA.popitem(last=False)
    return file_id


MemoryMediaFileStorage.load_and_get_id = _recording_load_and_get_id  # type: ignore[method-assign]


def handed(item: str | dict[str, str]) -> str:
    """JSON text the page handed to the canvas: inline, or a media file of the session (`{"url": ...}`)."""
    if isinstance(item, str):
        return item
    file_id = item["url"].rsplit("/", 1)[-1].split(".")[0]
    return _MEDIA[file_id].decode("utf-8", "surrogatepass")


def pane_graphs(pane: dict[str, Any]) -> list[dict[str, Any]]:
    """A pane's collection: its graph, then the fused bodies."""
    return cast(list[dict[str, Any]], json.loads(handed(pane["graphs"]))["graphs"])


def pane_graph(pane: dict[str, Any]) -> dict[str, Any]:
    """A pane's main graph (the first of its collection; fused bodies follow it)."""
    return pane_graphs(pane)[0]


def pane_nodes(pane: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A pane's main graph's nodes by id."""
    return {n["id"]: n for n in pane_graph(pane)["nodes"]}


def overlay(pane: dict[str, Any], name: str) -> dict[str, Any]:
    """A pane's overlay (node data) `name`: node id -> {value, bgColor}."""
    texts = dict(pane["overlays"])
    return cast(dict[str, Any], json.loads(handed(texts[name]))["results"])


def click_canvas(at: AppTest, key: str, node: str) -> AppTest:
    """A click on node `node` of the canvas `key`, as the browser reports it: the component's "clicked"
    trigger (canvas.js sends it when Model Explorer says a node was selected), then the rerun."""
    (element,) = [el for el in at.get("bidi_component") if el.proto.id.endswith(f"-{key}")]
    states = at._tree.get_widget_states()
    trigger = WidgetState(id=f"{STREAMLIT_INTERNAL_KEY_PREFIX}_{element.proto.id}{EVENT_DELIM}events")
    trigger.json_trigger_value = json.dumps([{"event": "clicked", "value": node}])
    states.widgets.append(trigger)
    return at._run(states)
