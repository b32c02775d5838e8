"""The shared state of every page: the sidebar's configuration and the cached import and compile.

    config = sidebar_config()              # (workbench_ui.router) the sidebar's choices, a WorkbenchConfig
    choice = require_model(config)         # the picked model, or an info box and st.stop()
    load = load_outcome(config)            # LoadOutcome: the import (cached), or why it failed
    outcome = compile_outcome(config)      # CompileOutcome: .compiled, or .failure (ge_core.debugging)

`draw_sidebar()` draws the sidebar; the router calls it once per run, before the page (see
workbench_ui.router). Compiles are cached by hand (workbench_ui.shared_cache), since they show a progress bar;
a big graph's compile runs in a worker process (workbench_ui.heavy), the page showing its place in the queue.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

from ge_core import CompileConfig, CompiledModel, Graph, pass_names
from ge_core import compile as ge_compile
from ge_core.debugging import Failure, bug_failure, error_failure, import_failure
from ge_core.errors import GEError
from workbench_ui.hardware_picker import NO_HARDWARE, HardwareChoice, pick_hardware
from workbench_ui.heavy import is_heavy, run_heavy
from workbench_ui.jobs import compile_job, disk_cache
from workbench_ui.loading import LoadOutcome, load_model
from workbench_ui.model_picker import ModelChoice, pick_model
from workbench_ui.persist import keep
from workbench_ui.shapes import current_spec, shape_box
from workbench_ui.shared_cache import SharedCache, budget_line, memory_budget, say_if_recomputed, shared_cache

ConfigKey = tuple[str, str, str]  # WorkbenchConfig.cache_key: model bytes, shapes as typed, CompileConfig.key()
OPT_KEY = "ge_opt_level"
DISABLED_KEY = "ge_disabled_passes"
OPT_LEVELS = ("O0", "O1", "O3")
DEFAULT_OPT_LEVEL = "O3"
COMPILE_CACHE_ENTRIES = 4  # a compile keeps a graph snapshot per changed pass: keep only a few
OPT_HELP = ("Which passes run, as GE's opt levels: O0 none (the graph as imported), O1 the cleanups "
            "(constant folding, no-op removal, CSE, pruning), O3 everything (folds and fusion too).")
DISABLED_HELP = ("Passes to switch off, as a GE fusion switch file does (`CsePass:off`). A switched-off "
                 "fusion pass still logs what it would have fused.")


@dataclass(frozen=True)
class WorkbenchConfig:
    """What the sidebar chose. `choice` is None while "Upload" is picked and no file is uploaded yet.

    `settings` is the sidebar's CompileConfig without the input shapes: the shapes box holds text as typed,
    checked when the model loads, so `compile_config()` (settings plus shapes) is asked for only then."""

    choice: ModelChoice | None
    input_shapes: str  # ATC-style spec for symbolic dims ("" when none), as typed
    settings: CompileConfig
    hardware: HardwareChoice = NO_HARDWARE  # what settings.hardware names, for people and the address

    def with_hardware(self, hardware: HardwareChoice) -> WorkbenchConfig:
        """The same model and settings for another target (the Profile page when the sidebar names none)."""
        return replace(self, settings=replace(self.settings, hardware=hardware.target), hardware=hardware)

    @property
    def opt_level(self) -> str:
        return str(self.settings.opt_level)

    @property
    def disabled(self) -> tuple[str, ...]:
        return tuple(sorted(self.settings.disabled_passes))

    @property
    def cache_key(self) -> ConfigKey:
        """Names the model bytes and every compile setting: equal keys give equal compiles."""
        return (self.choice.key if self.choice else "", self.input_shapes, self.settings.key())

    def compile_config(self) -> CompileConfig:
        """The whole CompileConfig (a UsageError for a malformed shape spec)."""
        return replace(self.settings, input_shapes=self.input_shapes)


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


def require_model(config: WorkbenchConfig) -> ModelChoice:
    """The picked model; while there is none, say how to get one and stop the page here."""
    if config.choice is None:
        st.info("Upload an `.onnx` file in the sidebar (weights inside the file), or switch back to a sample.")
        st.stop()
    assert config.choice is not None  # st.stop() does not return
    return config.choice


# The import's spinner and the compile's progress bar are drawn in a container of their own, made on every
# call, hit or miss: an element only a first run draws would shift every later element's place on the page,
# and the graph canvas below it would be made anew (Model Explorer started again) on the next run.


def load_outcome(config: WorkbenchConfig) -> LoadOutcome:
    """The import of the picked model with the sidebar's input shapes (cached)."""
    choice = require_model(config)
    with st.container():
        return load_model(choice, config.input_shapes)


def compile_outcome(config: WorkbenchConfig) -> CompileOutcome:
    """The compile at the sidebar's settings (cached per model bytes and settings), or why it failed."""
    load = load_outcome(config)
    if load.exception is not None:
        return CompileOutcome(config, load, None, bug_failure(load.exception, "load"), load.exception)
    if load.result is None:  # a refusal before anything was imported (unreadable file, bad spec)
        return CompileOutcome(config, load, None, error_failure(GEError(load.error), "load"))
    if load.dump is not None:  # a GE dump is shown as GE compiled it: nothing compiles here
        return CompileOutcome(config, load, replace(load.dump, config=config.settings))
    if not load.result.ok:
        return CompileOutcome(config, load, None, import_failure(load.result))
    cache: SharedCache[ConfigKey, CompileOutcome] = shared_cache("compiles", COMPILE_CACHE_ENTRIES)
    progress = st.container()
    cached = cache.get(config.cache_key)
    if cached is not None:
        return cached
    with progress:
        say_if_recomputed(cache, config.cache_key, "Compiled")
    try:
        with progress:
            outcome = _compile_with_progress(config, load, load.result.graph)
    except Exception as exc:  # a bug of ours: not cached, traceback shown tucked away
        return CompileOutcome(config, load, None, bug_failure(exc, "compile"), exc)
    cache.put(config.cache_key, outcome)
    return outcome


def _compile_with_progress(config: WorkbenchConfig, load: LoadOutcome, graph: Graph) -> CompileOutcome:
    if is_heavy(graph):
        return _compile_in_worker(config, load, graph)
    bar = st.progress(0.0, text="Compiling…")

    def report(done: int, total: int, name: str) -> None:
        bar.progress(done / max(total, 1), text=f"Compiling: pass {done + 1} of {total}, {name}")

    try:
        compiled = ge_compile(graph, config.compile_config(), progress=report, cache=disk_cache())
    except GEError as err:  # the model's fault (or a pass's refusal): cached like a success
        return CompileOutcome(config, load, None, error_failure(err, "compile", graph))
    finally:
        bar.empty()
    return CompileOutcome(config, load, compiled)


def _compile_in_worker(config: WorkbenchConfig, load: LoadOutcome, graph: Graph) -> CompileOutcome:
    """A big graph's compile, in a worker process (the page shows its place in the queue, then the passes).
    A compile stopped at its time or memory limit is cached like the model's failure: not tried on every visit."""
    try:
        made = run_heavy(compile_job, graph, config.compile_config(), what="Compiling")
    except GEError as err:  # a malformed shape spec, or JobStopped
        return CompileOutcome(config, load, None, error_failure(err, "compile", graph))
    if isinstance(made, Failure):
        return CompileOutcome(config, load, None, made)
    return CompileOutcome(config, load, made)


def compile_note(compiled: CompiledModel) -> str:
    """How this compile came about: compiled now, or loaded from the disk cache (and what it saved)."""
    seconds = float(compiled.report.get("compile_seconds", 0.0))
    cache = compiled.report.get("cache", {})
    if cache.get("hit"):
        return (f"Loaded from the compile cache in {float(cache.get('load_seconds', 0.0)):.2f} s (entry "
                f"{str(cache.get('key', ''))[:12]}; the compile it saved took {seconds:.2f} s).")
    if cache.get("why"):  # loading it would cost more than compiling
        return f"Compiled in {seconds:.2f} s; not kept in the compile cache: {cache['why']}."
    if cache.get("key") is None:
        return f"Compiled in {seconds:.2f} s (the compile cache folder cannot be written: not kept on disk)."
    return f"Compiled in {seconds:.2f} s; kept in the compile cache, so the next server start loads it."


def draw_sidebar() -> WorkbenchConfig:
    """The sidebar: model, input shapes, opt level, passes switched off, hardware target. Drawn before the
    menu (workbench_ui.router): it never reruns or stops the script."""
    choice = pick_model()
    spec = current_spec(choice) if choice is not None else ""
    dump = choice is not None and choice.is_ge_dump
    if choice is not None and not dump:
        shape_box(choice, load_model(choice, spec))  # drawn only for symbolic dims (or a spec to fix)
        spec = current_spec(choice)  # an upload's box may have been prefilled just now: import with that
    st.sidebar.header("Compile")
    if dump:
        st.sidebar.caption("A GE dump is shown as GE compiled it: the opt level and the pass switches apply to "
                           "models compiled here, not to a dump.")
    keep(OPT_KEY, DEFAULT_OPT_LEVEL)
    opt = st.sidebar.segmented_control("Opt level", OPT_LEVELS, required=True, key=OPT_KEY, disabled=dump,
                                       persist_state="session", help=OPT_HELP)
    keep(DISABLED_KEY, [])
    disabled = st.sidebar.multiselect("Passes switched off", pass_names(), key=DISABLED_KEY, disabled=dump,
                                      persist_state="session", help=DISABLED_HELP,
                                      placeholder="none: every pass of the level runs")
    hardware = pick_hardware()
    budget = memory_budget()
    # One budget in bytes for everything the server keeps (GE_WORKBENCH_MEMORY_BUDGET): see memory_budget.
    st.sidebar.progress(min(budget.used / max(budget.capacity, 1), 1.0), text=budget_line())
    settings = CompileConfig(opt_level=str(opt or DEFAULT_OPT_LEVEL), disabled_passes=frozenset(disabled),
                             hardware=hardware.target,
                             verify=True)  # the workbench checks every pass: a broken rewrite is caught at once
    return WorkbenchConfig(choice, spec.strip(), settings, hardware)
