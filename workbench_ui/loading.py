"""Importing the chosen model, cached per (model bytes, input shapes) across reruns and sessions within the
server's memory budget (workbench_ui.shared_cache); a GE dump is read once (every stage), its last stage
standing for the import."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from ge_core import CompiledModel, Graph, ImportResult, ModelSummary, import_onnx, summarize
from ge_core.debugging import final_stage, load_ge_dump
from ge_core.errors import GEError, ResourceLimitError
from workbench_ui.model_picker import ModelChoice
from workbench_ui.shared_cache import SharedCache, say_if_recomputed, shared_cache
from workbench_ui.upload_store import UploadGone

CACHE_ENTRIES = 6  # a zoo model's graph holds its weights (VGG-19: ~570 MB): keep only a few
MAX_DUMP_UPLOAD = 512 << 20  # bytes of one dump upload (file or zip), checked before it is read


@dataclass(frozen=True)
class LoadOutcome:
    """An import, or why there is none. Cached and shared by every session: never edit `result.graph`
    in place (copy it first with `graph.copy()`)."""

    result: ImportResult | None
    summary: ModelSummary | None
    error: str = ""  # a GEError's text, shown as is
    exception: Exception | None = None  # set only for a bug of ours (not the model's fault)
    dump: CompiledModel | None = None  # a GE dump: every stage read (result is its last one)


def import_model_bytes(data: bytes, input_shapes: str = "") -> ImportResult:
    """Import model bytes (uploads and samples alike). Bytes never read external data: a model that
    marks any tensor as external is refused with a ModelError, so an upload cannot read server files."""
    return import_onnx(bytes(data), input_shapes.strip() or None)


def _import(input_shapes: str, fetch: Callable[[], bytes]) -> LoadOutcome:
    try:
        result = import_model_bytes(fetch(), input_shapes)
    except UploadGone:  # the file went, not the model's fault: never cached (the same bytes may come back)
        raise
    except GEError as err:  # the model's or the user's fault: cached like a success
        return LoadOutcome(None, None, str(err))
    return LoadOutcome(result, summarize(result))


def _read_dump(file_name: str, fetch: Callable[[], bytes]) -> LoadOutcome:
    data = fetch()  # an UploadGone from here is not cached (outside the try)
    try:
        if len(data) > MAX_DUMP_UPLOAD:  # before anything is parsed
            raise ResourceLimitError(f"GE dump '{file_name}' is {len(data):,} bytes, over the {MAX_DUMP_UPLOAD:,} "
                                     "bytes a dump may have here.",
                                     hint="Dump fewer stages (DUMP_GRAPH_LEVEL=3: Build only) or without weights "
                                          "(DUMP_GE_GRAPH=2), or open it with `python -m ge_core inspect`.")
        compiled = load_ge_dump(data, file_name)
    except GEError as err:  # the file's fault: cached like a success
        return LoadOutcome(None, None, str(err))
    result = final_stage(compiled)
    return LoadOutcome(result, summarize(result), dump=compiled)


def load_model(choice: ModelChoice, input_shapes: str) -> LoadOutcome:
    """The import (or the dump read), cached per (model bytes, input shapes) within the server's memory
    budget; a spinner while it runs, and a word when it runs again because the budget had dropped it."""
    cache: SharedCache[tuple[str, str], LoadOutcome] = shared_cache("imports", CACHE_ENTRIES)
    key = (choice.key, "" if choice.is_ge_dump else input_shapes.strip())
    found = cache.get(key)
    if found is not None:
        return found
    say_if_recomputed(cache, key, "Read" if choice.is_ge_dump else "Imported")
    try:
        with st.spinner("Reading the GE dump…" if choice.is_ge_dump else "Importing the model…"):
            outcome = (_read_dump(choice.file_name, choice.fetch) if choice.is_ge_dump
                       else _import(key[1], choice.fetch))
    except UploadGone as gone:
        return LoadOutcome(None, None, str(gone))
    except Exception as exc:  # a bug of ours: not cached, shown with its traceback tucked away
        return LoadOutcome(None, None, f"Internal error while importing the model ({type(exc).__name__}: "
                                       f"{exc}). This is a bug in GE Workbench; please report it.", exc)
    cache.put(key, outcome)
    return outcome


def symbolic_inputs(graph: Graph) -> dict[str, list[str]]:
    """Inputs declared with symbolic dims ({"x": ["batch"]}), whether or not shapes were given."""
    return {name: [p for p in params if isinstance(p, str)]
            for name, params in graph.input_dim_params.items() if any(isinstance(p, str) for p in params)}
