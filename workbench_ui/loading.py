"""Importing the chosen model, cached per (model bytes, input shapes) across reruns and sessions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from ge_core import Graph, ImportResult, ModelSummary, import_onnx, summarize
from ge_core.errors import GEError
from workbench_ui.model_picker import ModelChoice

CACHE_ENTRIES = 6  # a zoo model's graph holds its weights (VGG-19: ~570 MB): keep only a few


@dataclass(frozen=True)
class LoadOutcome:
    """An import, or why there is none. Cached and shared by every session: never edit `result.graph`
    in place (copy it first with `graph.copy()`)."""

    result: ImportResult | None
    summary: ModelSummary | None
    error: str = ""  # a GEError's text, shown as is
    exception: Exception | None = None  # set only for a bug of ours (not the model's fault)


def import_model_bytes(data: bytes, input_shapes: str = "") -> ImportResult:
    """Import model bytes (uploads and samples alike). Bytes never read external data: a model that
    marks any tensor as external is refused with a ModelError, so an upload cannot read server files."""
    return import_onnx(bytes(data), input_shapes.strip() or None)


@st.cache_resource(max_entries=CACHE_ENTRIES, show_spinner="Importing the model…")
def _load_cached(key: str, input_shapes: str, _fetch: Callable[[], bytes]) -> LoadOutcome:
    # `_fetch` is left out of the cache key (leading underscore): `key` already names the bytes.
    try:
        result = import_model_bytes(_fetch(), input_shapes)
    except GEError as err:  # the model's or the user's fault: cached like a success
        return LoadOutcome(None, None, str(err))
    return LoadOutcome(result, summarize(result))


def load_model(choice: ModelChoice, input_shapes: str) -> LoadOutcome:
    try:
        return _load_cached(choice.key, input_shapes.strip(), choice.fetch)
    except Exception as exc:  # a bug of ours: not cached, shown with its traceback tucked away
        return LoadOutcome(None, None, f"Internal error while importing the model ({type(exc).__name__}: "
                                       f"{exc}). This is a bug in GE Workbench; please report it.", exc)


def symbolic_inputs(graph: Graph) -> dict[str, list[str]]:
    """Inputs declared with symbolic dims ({"x": ["batch"]}), whether or not shapes were given."""
    return {name: [p for p in params if isinstance(p, str)]
            for name, params in graph.input_dim_params.items() if any(isinstance(p, str) for p in params)}
