"""Memory page tables on a hand-made plan: live bytes per step, planner rectangles, tensors alive at the peak."""

from __future__ import annotations

import ge_core
from ge_core.memory.plan import Allocation, MemoryPlan, PlanStep
from ge_core.samples.registry import sample_bytes
from ge_core.viz.memory import alive_at_peak, allocation_rectangles, live_bytes_timeline


def hand_plan() -> MemoryPlan:
    """x -> relu -> a ; a -> reshape -> v (view of a) ; v -> neg -> b ; (a, b) -> add -> c (in place on b) ;
    c -> exp -> y (graph output) ; also `s` from relu's second output, never read."""
    steps = [
        PlanStep("relu", ("x",), ("a", "s")),
        PlanStep("reshape", ("a", "shape"), ("v",)),
        PlanStep("neg", ("v",), ("b",)),
        PlanStep("add", ("a", "b"), ("c",), {"c": "b"}),
        PlanStep("exp", ("c",), ("y",)),
    ]
    allocations = {
        "a": Allocation("a", 0, 1024, (16, 16), "float32"),
        "s": Allocation("s", 1024, 512, (4,), "float32"),
        "v": Allocation("v", 0, 1024, (256,), "float32"),
        "b": Allocation("b", 1024, 1024, (256,), "float32"),
        "c": Allocation("c", 1024, 1024, (256,), "float32"),
        "y": Allocation("y", 0, 1024, (256,), "float32"),
    }
    return MemoryPlan(512, "hand", 2048, 2048, 4608, ["y"], steps, allocations, {"v": "a"}, {"hand": 2048})


def test_rectangles_extend_a_base_over_its_views_and_outputs_to_the_end() -> None:
    frame = allocation_rectangles(hand_plan())
    assert list(frame.columns) == ["tensor", "offset", "size", "first_step", "last_step", "inside"]
    assert frame.drop(columns="inside").to_dict("records") == [
        {"tensor": "a", "offset": 0, "size": 1024, "first_step": 0, "last_step": 3},  # read by add (and v by neg)
        {"tensor": "s", "offset": 1024, "size": 512, "first_step": 0, "last_step": 0},  # never read
        {"tensor": "b", "offset": 1024, "size": 1024, "first_step": 2, "last_step": 3},
        {"tensor": "c", "offset": 1024, "size": 1024, "first_step": 3, "last_step": 4},
        {"tensor": "y", "offset": 0, "size": 1024, "first_step": 4, "last_step": 4},  # a graph output
    ]


def test_live_bytes_count_views_and_inplace_outputs_once() -> None:
    frame = live_bytes_timeline(hand_plan())
    assert list(frame.columns) == ["step", "node", "live_bytes"]
    assert frame.to_dict("records") == [
        {"step": 0, "node": "relu", "live_bytes": 1536},  # a + s
        {"step": 1, "node": "reshape", "live_bytes": 1024},  # a (v is a's bytes)
        {"step": 2, "node": "neg", "live_bytes": 2048},  # a + b
        {"step": 3, "node": "add", "live_bytes": 2048},  # a + b (c is b's bytes, in place)
        {"step": 4, "node": "exp", "live_bytes": 2048},  # c + y
    ]


def test_alive_at_peak_is_the_first_peak_step() -> None:
    assert alive_at_peak(hand_plan()) == ["a", "b"]


def test_empty_plan_gives_empty_tables() -> None:
    plan = MemoryPlan(512, "hand", 0, 0, 0, [], [], {}, {}, {})
    assert live_bytes_timeline(plan).empty and allocation_rectangles(plan).empty
    assert alive_at_peak(plan) == []


def test_real_plan_peak_fits_the_arena_and_matches_the_theory_minimum() -> None:
    from ge_core.memory.planners import plan_memory

    compiled = ge_core.compile(sample_bytes("residual_block"), opt_level="O3")
    plan = plan_memory(compiled.graph)
    timeline = live_bytes_timeline(plan)
    assert len(timeline) == len(plan.steps)
    assert int(timeline["live_bytes"].max()) <= plan.theory_min_bytes <= plan.arena_bytes
    rects = allocation_rectangles(plan)
    for r in rects.itertuples():  # live rectangles never overlap: the planner chart has no collisions
        for o in rects.itertuples():
            if r.Index < o.Index and r.first_step <= o.last_step and o.first_step <= r.last_step:
                inplace = any(s.inplace.get(o.tensor) == r.tensor for s in plan.steps)
                assert inplace or r.offset + r.size <= o.offset or o.offset + o.size <= r.offset


def test_no_copy_concat_parts_count_once_and_sit_inside_their_output() -> None:
    from ge_core.memory.planners import plan_memory
    from tests.memory.test_continuous import concat_graph

    plan = plan_memory(concat_graph())
    assert plan.no_copy_concats == ["c"]
    assert int(live_bytes_timeline(plan)["live_bytes"].max()) == plan.theory_min_bytes
    rects = allocation_rectangles(plan).set_index("tensor")
    assert rects.loc["a", "inside"] == rects.loc["b", "inside"] == "c" and rects.loc["c", "inside"] == ""
    assert set(alive_at_peak(plan)) <= {"a", "b", "c", "d"}
