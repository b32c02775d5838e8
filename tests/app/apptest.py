"""Driving the workbench with Streamlit's AppTest: open a page, read charts, press a download."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st
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
    """A fresh session, then a switch to `path` (e.g. "pages/3_Passes.py"), as a click in the menu does."""
    return open_app(sample).switch_page(path).run()


def graphviz_sources(at: AppTest) -> list[str]:
    return [el.proto.spec for el in at.get("graphviz_chart")]


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
