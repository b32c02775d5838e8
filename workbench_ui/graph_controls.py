"""The Graph page's controls: the pass stepper and the overlay choice, both kept in the address
(`?step=4&colour=fusion`) so a view can be shared, survives a reload and steps without reloading the page."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import streamlit as st

from ge_core import CompiledModel, Graph, PassRecord
from ge_core.viz import GraphDiff, PassStep, diff_graphs, graphs_around, pass_steps
from workbench_ui import address
from workbench_ui.session import ConfigKey, WorkbenchConfig, compile_outcome, load_outcome
from workbench_ui.shared_cache import SharedCache, shared_cache
from workbench_ui.status import show_compile_failure
from workbench_ui.text import md_escape

HIDE_KEY = "ge_graph_hide_unchanged"
STEP_KEY = "ge_graph_step"
COLOUR_KEY = "ge_graph_colour"
CHANGE, FUSION, CATEGORY = "change", "fusion", "category"
COLOURS = {CHANGE: "What the pass changed", FUSION: "Fusion group", CATEGORY: "Op category"}
PERSIST: Final = "session"  # kept when the user visits another page and comes back
DIFF_ENTRIES = 32


@dataclass(frozen=True)
class Pipeline:
    """What the stepper steps through: the compile (None at O0, where no pass runs), its records and the
    graph as imported."""

    compiled: CompiledModel | None
    records: Sequence[PassRecord]
    input_graph: Graph


def pass_records(config: WorkbenchConfig) -> Pipeline:
    """The pass records to step through; when the compile did not finish, says so and stops the page. O0
    runs no pass, so there the page does not wait for the compile (its memory plan takes a while)."""
    load = load_outcome(config)
    if config.opt_level == "O0" and load.dump is None and load.result is not None and load.result.ok:
        return Pipeline(None, [], load.result.graph)
    outcome = compile_outcome(config)
    if outcome.compiled is None:
        show_compile_failure(outcome)
        st.stop()
    assert outcome.compiled is not None  # st.stop() does not return
    return Pipeline(outcome.compiled, outcome.compiled.records, outcome.compiled.input_graph)


def pick_step(records: Sequence[PassRecord], empty_note: str | None = None) -> PassStep | None:
    """The stepper (Previous, a slider over the passes, Next); None when no pass ran (O0), or a GE dump has a
    single stage (`empty_note` says so)."""
    if not records:
        st.info(empty_note or "No pass ran at this opt level (O0): this is the GE Graph as imported. Pick O1 or "
                              "O3 in the sidebar to step through the passes.")
        return None
    hide = st.checkbox("Hide passes that changed nothing", value=True, key=HIDE_KEY, persist_state=PERSIST)
    steps = pass_steps(records, changed_only=hide) or pass_steps(records)
    by_number = {s.index + 1: s for s in steps}  # the address and the labels count passes from 1
    numbers = list(by_number)
    wanted = address.read_int(address.STEP)
    current = wanted if wanted in by_number else _nearest(wanted, numbers)
    if st.session_state.get(STEP_KEY) != current:
        st.session_state[STEP_KEY] = current
    address.write(address.STEP, current, numbers[0])
    if len(steps) == 1:
        st.caption(f"Pass: {md_escape(steps[0].label)} (the only one to show)")
        return steps[0]
    back, slider, ahead = st.columns([1, 10, 1], vertical_alignment="bottom")
    at = numbers.index(current)
    back.button("◀", key="ge_graph_prev", help="The pass before", disabled=at == 0,
                on_click=_go_to, args=(numbers[max(at - 1, 0)],))
    ahead.button("▶", key="ge_graph_next", help="The next pass", disabled=at == len(numbers) - 1,
                 on_click=_go_to, args=(numbers[min(at + 1, len(numbers) - 1)],))
    slider.select_slider("Pass", numbers, key=STEP_KEY, format_func=lambda n: by_number[n].label,
                         on_change=_step_moved, help="Each position shows the graph before and after one pass. "
                                                     "Arrow keys move one pass at a time.")
    return by_number[int(st.session_state[STEP_KEY])]


def _go_to(number: int) -> None:
    st.session_state[STEP_KEY] = number
    address.write(address.STEP, number)


def _step_moved() -> None:
    address.write(address.STEP, st.session_state[STEP_KEY])


def _nearest(wanted: int | None, numbers: list[int]) -> int:
    if wanted is None:
        return numbers[0]
    return min(numbers, key=lambda n: (abs(n - wanted), n))


def graphs_at(step: PassStep | None, pipeline: Pipeline) -> tuple[Graph, Graph]:
    """The graphs (before, after) the picked pass; the graph as imported, twice, when no pass ran."""
    if step is None:
        return pipeline.input_graph, pipeline.input_graph
    return graphs_around(pipeline.input_graph, pipeline.records, step.index)


DiffCache = SharedCache[tuple[ConfigKey, int], GraphDiff]


def diff_cache() -> DiffCache:
    return shared_cache("graph_diffs", DIFF_ENTRIES)


def step_diff(key: ConfigKey, step: PassStep | None, before: Graph, after: Graph) -> GraphDiff:
    """What the pass changed (cached per compile and pass, shared by every session)."""
    return build_step_diff(diff_cache(), key, step, before, after)


def build_step_diff(cache: DiffCache, key: ConfigKey, step: PassStep | None, before: Graph,
                    after: Graph) -> GraphDiff:
    """step_diff into a cache at hand (safe in any thread)."""
    index = step.index if step is not None else -1
    diff = cache.get((key, index))
    if diff is None:
        diff = diff_graphs(before, after)
        cache.put((key, index), diff)
    return diff


def neighbour_steps(records: Sequence[PassRecord], step: PassStep | None) -> list[PassStep]:
    """The steps ◀ and ▶ go to from `step`, and the one after the next (the page there sends its own ▶
    ahead to the canvas only once it is built): the next first, what a user steps to most."""
    return _steps_from(records, step, (1, 2, -1))


def next_step(records: Sequence[PassRecord], step: PassStep | None) -> PassStep | None:
    """The step ▶ goes to from `step` (None on the last)."""
    ahead = _steps_from(records, step, (1,))
    return ahead[0] if ahead else None


def _steps_from(records: Sequence[PassRecord], step: PassStep | None, offsets: Sequence[int]) -> list[PassStep]:
    if step is None:
        return []
    hide = bool(st.session_state.get(HIDE_KEY, True))
    steps = pass_steps(records, changed_only=hide) or pass_steps(records)
    at = next((i for i, s in enumerate(steps) if s.index == step.index), None)
    if at is None:
        return []
    return [steps[at + k] for k in offsets if 0 <= at + k < len(steps)]


def pick_colour(changed: bool) -> str:
    """The overlay the canvas shows (the others stay a click away in the canvas's node-data menu)."""
    default, options = _colour_options(changed)
    wanted = colour_for(changed)
    if st.session_state.get(COLOUR_KEY) != wanted:
        st.session_state[COLOUR_KEY] = wanted
    colour = st.segmented_control("Colour nodes by", options, key=COLOUR_KEY, required=True,
                                  format_func=COLOURS.__getitem__, on_change=_colour_moved,
                                  help="An overlay on the canvas. Nodes only one side has are outlined as well.")
    address.write(address.COLOUR, colour or default, default)
    return str(colour or default)


def colour_for(changed: bool) -> str:
    """The overlay pick_colour shows at a step that `changed` (or not), as the address has it now."""
    default, options = _colour_options(changed)
    return address.read(address.COLOUR, default, options)


def _colour_options(changed: bool) -> tuple[str, list[str]]:
    return (CHANGE if changed else CATEGORY), (list(COLOURS) if changed else [FUSION, CATEGORY])


def _colour_moved() -> None:
    address.write(address.COLOUR, st.session_state.get(COLOUR_KEY))
