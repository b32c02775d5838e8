"""The Debug page's sections: where it broke, the numeric bisection, and the reproducer download."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from ge_core import CompiledModel, Graph, random_feeds
from ge_core.debugging import (
    DEFAULT_TOLERANCE,
    BisectResult,
    Failure,
    bisect_numerics,
    reference_failure,
    reproducer_zip,
)
from ge_core.errors import GEError
from workbench_ui.heavy import is_heavy, run_heavy
from workbench_ui.jobs import bisect_job
from workbench_ui.model_canvas import show_graph_canvas
from workbench_ui.session import CompileOutcome, ConfigKey, WorkbenchConfig
from workbench_ui.shared_cache import SharedCache, say_if_recomputed, shared_cache
from workbench_ui.status import PHASE_TITLES, show_failure_facts, show_failure_headline, show_failure_text
from workbench_ui.text import code_span, md_escape

TOLERANCE_KEY = "ge_debug_tolerance"
SEED_KEY = "ge_debug_seed"
NUMERICS_CACHE_ENTRIES = 4


@dataclass(frozen=True)
class NumericsOutcome:
    """The bisection on seeded random inputs, or why the imported graph itself could not run."""

    result: BisectResult | None
    failure: Failure | None


def numerics_controls() -> tuple[float, int]:
    """Tolerance and seed, side by side."""
    left, right, _ = st.columns([2, 2, 3])
    tolerance = left.number_input("Tolerance (max relative error)", min_value=0.0, max_value=1.0,
                                  value=DEFAULT_TOLERANCE, step=1e-5, format="%.1e", key=TOLERANCE_KEY,
                                  persist_state="session",
                                  help="A pass whose outputs move by more than this, relative to the output's "
                                       "largest magnitude, is flagged. Float32 rewrites usually stay below 1e-5.")
    seed = right.number_input("Input seed", min_value=0, max_value=2**31 - 1, value=0, step=1, key=SEED_KEY,
                              persist_state="session",
                              help="Seeded random inputs: floats ~ N(0,1), integers in {0, 1}.")
    return float(tolerance), int(seed)


def numerics_outcome(outcome: CompileOutcome, tolerance: float, seed: int) -> NumericsOutcome | None:
    """The bisection for this compile (cached, shared by every session), with a progress bar while it runs;
    None when nothing compiled."""
    compiled = outcome.compiled
    if compiled is None:
        return None
    cache: SharedCache[tuple[ConfigKey, float, int], NumericsOutcome] = shared_cache(
        "numerics", NUMERICS_CACHE_ENTRIES)
    key = (outcome.config.cache_key, tolerance, seed)
    numerics = cache.get(key)
    if numerics is None:
        say_if_recomputed(cache, key, "Bisected")
        numerics = _bisect_with_progress(compiled, tolerance, seed)
        cache.put(key, numerics)
    return numerics


def _bisect_with_progress(compiled: CompiledModel, tolerance: float, seed: int) -> NumericsOutcome:
    if is_heavy(compiled.input_graph):
        return _bisect_in_worker(compiled, tolerance, seed)
    bar = st.empty()

    def progress(done: int, total: int) -> None:
        bar.progress(done / total, text=f"Running the graph after each pass on the same inputs: {done} of {total}")

    try:
        feeds = random_feeds(compiled.input_graph, seed)
        return NumericsOutcome(bisect_numerics(compiled, feeds, tolerance, progress), None)
    except GEError as err:  # bad feeds, or the imported graph itself fails to run
        return NumericsOutcome(None, reference_failure(err, compiled))
    finally:
        bar.empty()


def _bisect_in_worker(compiled: CompiledModel, tolerance: float, seed: int) -> NumericsOutcome:
    """A big graph's bisection, in a worker process (workbench_ui.heavy); one stopped at its limits says so."""
    try:
        made = run_heavy(bisect_job, compiled, tolerance, seed, what="Running the graph after each pass")
    except GEError as err:  # JobStopped
        return NumericsOutcome(None, reference_failure(err, compiled))
    return NumericsOutcome(None, made) if isinstance(made, Failure) else NumericsOutcome(made, None)


def first_failure(outcome: CompileOutcome, numerics: NumericsOutcome | None) -> Failure | None:
    """What failed first: import or compile, then running the imported graph, then a step of the pipeline."""
    if outcome.failure is not None:
        return outcome.failure
    if numerics is None:
        return None
    if numerics.failure is not None:
        return numerics.failure
    return numerics.result.failure() if numerics.result is not None else None


def show_phases(failure: Failure | None, ran: bool) -> None:
    """Import / Compile / Run, each passed, failed or not reached."""
    order = list(PHASE_TITLES)
    failed_at = order.index(failure.phase) if failure is not None else len(order)
    cols = st.columns(len(order))
    for i, (phase, title) in enumerate(PHASE_TITLES.items()):
        if i < failed_at and (phase != "run" or ran):
            cols[i].success(f"**{title}**: passed", icon=":material/check_circle:")
        elif i == failed_at:
            cols[i].error(f"**{title}**: failed", icon=":material/cancel:")
        else:
            cols[i].info(f"**{title}**: not reached", icon=":material/radio_button_unchecked:")


def show_failure(key: ConfigKey, failure: Failure, exception: BaseException | None) -> None:
    """What broke, in words, and the graph as it was before (the nodes concerned in red)."""
    st.markdown("#### Where it broke")
    show_failure_headline(failure)
    show_failure_facts(failure)
    if failure.graph is not None:
        where = (f"the graph as it was before {failure.pass_name} ran" if failure.pass_name
                 else "the graph as imported")
        st.markdown(f"**{where[0].upper()}{where[1:]}**, the nodes concerned in red (the canvas centres the first):")
        graph_id = f"before_{failure.pass_name}" if failure.pass_name else "input"
        show_graph_canvas((key, failure.phase, failure.pass_name), failure.graph, graph_id,
                          canvas_key="ge_debug_canvas", label="failure", marked=failure.nodes,
                          marked_name="failure")
    show_failure_text(failure, exception)


def show_bisection(numerics: NumericsOutcome, tolerance: float) -> None:
    result = numerics.result
    if result is None:
        return
    bad = result.first_bad
    if bad is None:
        st.success(f"Every pass keeps the outputs within {tolerance:.1e} of the imported model's "
                   f"({', '.join(result.outputs)}).")
    elif not bad.error:
        worst = max(bad.errors.items(), key=lambda kv: kv[1])
        st.error(md_escape(f"The outputs first drift after {bad.name} (step {bad.index}, stage {bad.stage}): "
                           f"output '{worst[0]}' moved by {worst[1]:.3g} (relative), over the tolerance "
                           f"{tolerance:.1e}.") + "  \n**What to do:** switch the pass off in the sidebar and "
                 "check that the drift goes away; the Graph page shows what it rewrote. The reproducer below "
                 "carries this finding: its `bisect` command replays it.")
    st.dataframe(result.table(), hide_index=True, height="content", column_config={
        "changed": st.column_config.CheckboxColumn(),
        "max error": st.column_config.NumberColumn(format="%.2e"),
        "over tolerance": st.column_config.CheckboxColumn(),
        **{f"error {t}": st.column_config.NumberColumn(format="%.2e") for t in result.outputs},
    })
    st.caption("Errors are max |got − want| / max |want| against the graph as imported, on the same seeded "
               "inputs. The last row is the compiled plan run on its memory arena, where a wrong memory plan "
               "would show.")


def show_reproducer(config: WorkbenchConfig, outcome: CompileOutcome, failure: Failure | None, seed: int,
                    bisection: BisectResult | None = None) -> None:
    """The reproducer zip (model, settings, inputs, the bisection's finding, README with the commands), built
    when pressed."""
    choice = config.choice
    if choice is None:
        return
    graph = _feed_graph(outcome)
    build = functools.partial(_reproducer_bytes, choice.fetch, config, graph, seed, failure, bisection)
    st.download_button("Download a reproducer (zip)", on_click="ignore", data=build, file_name="ge_reproducer.zip",
                       mime="application/zip", icon=":material/download:",
                       help="model.onnx, config.json (the compile configuration: opt level, passes switched off, "
                            "input shapes), switches.txt, inputs.npz and a README.txt with the exact commands.")
    shape = f" --input-shape {code_span(config.input_shapes)}" if config.input_shapes else ""
    st.caption(f"Unzip it and run `python3 -m ge_core compile model.onnx --opt-level {config.opt_level} "
               f"--config config.json`{shape}, then `run … --inputs inputs.npz`: README.txt has the exact "
               "commands and the exit codes to expect.")


def _feed_graph(outcome: CompileOutcome) -> Graph | None:
    if outcome.compiled is not None:
        return outcome.compiled.input_graph
    load = outcome.load
    return load.result.graph if load is not None and load.result is not None else None


def _reproducer_bytes(fetch: Callable[[], bytes], config: WorkbenchConfig, graph: Graph | None,
                      seed: int, failure: Failure | None, bisection: BisectResult | None) -> bytes:
    feeds = None
    if graph is not None:
        try:
            feeds = random_feeds(graph, seed)
        except GEError:  # e.g. symbolic dims without shapes: the run command makes its own inputs
            feeds = None
    return reproducer_zip(fetch(), config.compile_config(), feeds=feeds, seed=seed, failure=failure,
                          bisection=bisection if feeds is not None else None)
