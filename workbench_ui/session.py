"""The shared state of every page: the sidebar's configuration and the cached import and compile.

    config = sidebar_config()              # draws the sidebar once per run; a frozen WorkbenchConfig
    choice = require_model(config)         # the picked model, or an info box and st.stop()
    load = load_outcome(config)            # LoadOutcome: the import (cached), or why it failed
    outcome = compile_outcome(config)      # CompileOutcome: .compiled, or .failure (ge_core.debugging)

The router (app.py) draws the sidebar before the page runs (`shared_sidebar()`), so its widgets are never
unmounted and keep their values on every page; a page calling `sidebar_config()` in the same run gets the
same object without drawing twice. A page run on its own (`streamlit run pages/3_Passes.py`) draws it; a
page Streamlit ran without the router (see workbench_ui.router) hands the run over to the router.
"""

from __future__ import annotations

import contextvars
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import streamlit as st

from ge_core.compiler import CompiledModel
from ge_core.compiler import compile as ge_compile
from ge_core.debugging import Failure, bug_failure, error_failure, import_failure
from ge_core.errors import GEError
from ge_core.ir.graph import Graph
from ge_core.passes.infra.pipeline import all_passes
from workbench_ui.loading import LoadOutcome, load_model
from workbench_ui.model_picker import ModelChoice, pick_model
from workbench_ui.persist import keep
from workbench_ui.shapes import current_spec, shape_box

OPT_KEY = "ge_opt_level"
DISABLED_KEY = "ge_disabled_passes"
OPT_LEVELS = ("O0", "O1", "O3")
DEFAULT_OPT_LEVEL = "O3"
COMPILE_CACHE_ENTRIES = 4  # a compile keeps a graph snapshot per changed pass: keep only a few
# Set by the router while the page runs. Not in st.session_state: a page that stops (st.stop) stops the run
# at the next session-state access too, so a `finally` there could not clear it.
_THIS_RUN: contextvars.ContextVar[WorkbenchConfig | None] = contextvars.ContextVar("ge_config_this_run", default=None)
OPT_HELP = ("Which passes run, as GE's opt levels: O0 none (the graph as imported), O1 the cleanups "
            "(constant folding, no-op removal, CSE, pruning), O3 everything (folds and fusion too).")
DISABLED_HELP = ("Passes to switch off, as a GE fusion switch file does (`CsePass:off`). A switched-off "
                 "fusion pass still logs what it would have fused.")


@dataclass(frozen=True)
class WorkbenchConfig:
    """What the sidebar chose. `choice` is None while "Upload" is picked and no file is uploaded yet."""

    choice: ModelChoice | None
    input_shapes: str  # ATC-style spec for symbolic dims ("" when none)
    opt_level: str  # "O0", "O1" or "O3"
    disabled: tuple[str, ...]  # pass names switched off, sorted

    @property
    def cache_key(self) -> tuple[str, str, str, tuple[str, ...]]:
        """Names the model bytes and every compile setting: equal keys give equal compiles."""
        return (self.choice.key if self.choice else "", self.input_shapes, self.opt_level, self.disabled)


@dataclass(frozen=True)
class CompileOutcome:
    """A compile, or why there is none. Cached and shared by every session: never edit `compiled`.

    `failure` says what went wrong in plain words (load or compile phase, failing pass and stage, the
    nodes concerned, the graph to draw); `exception` is set only for a bug of ours (not the model's fault).
    """

    config: WorkbenchConfig
    load: LoadOutcome | None
    compiled: CompiledModel | None
    failure: Failure | None = None
    exception: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.compiled is not None


def sidebar_config() -> WorkbenchConfig:
    """The shared configuration, drawing the sidebar unless the router already drew it in this run."""
    drawn = _THIS_RUN.get()
    if drawn is not None:
        return drawn
    from workbench_ui.router import hand_over_to_router  # imports this module

    hand_over_to_router()  # e.g. a page's address opened first on a fresh server
    return _draw_sidebar()


@contextmanager
def shared_sidebar() -> Iterator[WorkbenchConfig]:
    """For the router: draw the sidebar, then run the page inside this block."""
    config = _draw_sidebar()
    token = _THIS_RUN.set(config)
    try:
        yield config
    finally:
        _THIS_RUN.reset(token)


def require_model(config: WorkbenchConfig) -> ModelChoice:
    """The picked model; while there is none, say how to get one and stop the page here."""
    if config.choice is None:
        st.info("Upload an `.onnx` file in the sidebar (weights inside the file), or switch back to a sample.")
        st.stop()
    assert config.choice is not None  # st.stop() does not return
    return config.choice


def load_outcome(config: WorkbenchConfig) -> LoadOutcome:
    """The import of the picked model with the sidebar's input shapes (cached)."""
    return load_model(require_model(config), config.input_shapes)


def compile_outcome(config: WorkbenchConfig) -> CompileOutcome:
    """The compile at the sidebar's settings (cached per model bytes and settings), or why it failed."""
    load = load_outcome(config)
    if load.exception is not None:
        return CompileOutcome(config, load, None, bug_failure(load.exception, "load"), load.exception)
    if load.result is None:  # a refusal before anything was imported (unreadable file, bad spec)
        return CompileOutcome(config, load, None, error_failure(GEError(load.error), "load"))
    if not load.result.ok:
        return CompileOutcome(config, load, None, import_failure(load.result))
    cache = _compile_cache()
    with cache.lock:
        cached = cache.entries.get(config.cache_key)
    if cached is not None:
        return cached
    try:
        outcome = _compile_with_progress(config, load, load.result.graph)
    except Exception as exc:  # a bug of ours: not cached, traceback shown tucked away
        return CompileOutcome(config, load, None, bug_failure(exc, "compile"), exc)
    with cache.lock:
        cache.entries[config.cache_key] = outcome
        while len(cache.entries) > COMPILE_CACHE_ENTRIES:
            cache.entries.popitem(last=False)  # the oldest compile goes first
    return outcome


@dataclass
class _CompileCache:
    """Compiles shared by every session, newest last. Kept by hand rather than by st.cache_resource: a
    cached function may not draw into the page's progress bar (Streamlit replays what it draws)."""

    entries: OrderedDict[tuple[str, str, str, tuple[str, ...]], CompileOutcome] = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)


@st.cache_resource
def _compile_cache() -> _CompileCache:
    return _CompileCache()


def _compile_with_progress(config: WorkbenchConfig, load: LoadOutcome, graph: Graph) -> CompileOutcome:
    bar = st.progress(0.0, text="Compiling…")

    def report(done: int, total: int, name: str) -> None:
        bar.progress(done / max(total, 1), text=f"Compiling: pass {done + 1} of {total}, {name}")

    try:
        compiled = ge_compile(graph, opt_level=config.opt_level, disabled=config.disabled, verify=True,
                              progress=report)
    except GEError as err:  # the model's fault (or a pass's refusal): cached like a success
        return CompileOutcome(config, load, None, error_failure(err, "compile", graph))
    finally:
        bar.empty()
    return CompileOutcome(config, load, compiled)


def pass_names() -> list[str]:
    """Every pass the O3 pipeline runs, once each, in pipeline order."""
    return [p.name for p in all_passes()]


def _draw_sidebar() -> WorkbenchConfig:
    choice = pick_model()
    spec = current_spec(choice) if choice is not None else ""
    if choice is not None:
        shape_box(choice, load_model(choice, spec))  # drawn only for symbolic dims (or a spec to fix)
    st.sidebar.header("Compile")
    keep(OPT_KEY, DEFAULT_OPT_LEVEL)
    opt = st.sidebar.segmented_control("Opt level", OPT_LEVELS, required=True, key=OPT_KEY,
                                       persist_state="session", help=OPT_HELP)
    keep(DISABLED_KEY, [])
    disabled = st.sidebar.multiselect("Passes switched off", pass_names(), key=DISABLED_KEY,
                                      persist_state="session", help=DISABLED_HELP,
                                      placeholder="none: every pass of the level runs")
    return WorkbenchConfig(choice, spec.strip(), str(opt or DEFAULT_OPT_LEVEL), tuple(sorted(disabled)))
