"""The indexed planners and the sweeping validator on random lifetimes: valid plans, the same choices as
the rival-by-rival rules they replaced (tests/memory/reference.py), and every planted overlap caught."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ge_core.ir import Graph
from ge_core.memory import MemoryPlan, MemoryPlanError, occupancy, plan_memory, validate_plan
from ge_core.memory.best_fit import best_fit
from ge_core.memory.blocks import Block
from ge_core.memory.lifetimes import compute_lifetimes
from ge_core.memory.placement import greedy_in_order
from ge_core.memory.planners import STRATEGIES
from ge_core.memory.validate import _holders, _shares_legally
from tests.memory import graphs, reference


@st.composite
def lifetimes(draw: st.DrawFn) -> list[Block]:
    """Up to 40 blocks over up to 12 steps; long lives are common, so many blocks are alive at once."""
    steps = draw(st.integers(1, 12))
    spans = draw(st.lists(st.tuples(st.integers(1, 6), st.integers(0, steps - 1), st.integers(0, steps - 1)),
                          min_size=1, max_size=40))
    return [Block(i, size, min(a, b), max(a, b)) for i, (size, a, b) in enumerate(spans)]


@settings(max_examples=150, deadline=None)
@given(lifetimes())
def test_every_planner_gives_a_valid_plan_on_random_lifetimes(blocks: list[Block]) -> None:
    for name, planner in STRATEGIES.items():
        offsets = planner(blocks)
        assert set(offsets) == {b.id for b in blocks} and min(offsets.values()) >= 0, name
        assert reference.collisions(blocks, offsets) == [], name


@settings(max_examples=150, deadline=None)
@given(lifetimes(), st.randoms(use_true_random=False))
def test_the_indexed_placements_choose_what_comparing_every_rival_chooses(blocks: list[Block],
                                                                          rng: random.Random) -> None:
    order = rng.sample(blocks, len(blocks))
    for lowest in (True, False):
        assert greedy_in_order(order, lowest=lowest) == reference.greedy_in_order(order, lowest=lowest)
    assert best_fit(blocks) == reference.best_fit(blocks)


@settings(max_examples=100, deadline=None)
@given(lifetimes(), st.integers(1, 4))
def test_a_walk_cut_short_by_its_budget_still_gives_a_valid_plan(blocks: list[Block], probes: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(occupancy, "PROBES", probes)
        for lowest in (True, False):
            assert reference.collisions(blocks, greedy_in_order(blocks, lowest=lowest)) == []


def random_graph(rng: random.Random, n: int) -> Graph:
    """Relu / Add / MatMul / Concat (no-copy candidates) / Reshape (views) over (1, k) rows."""
    specs: list[graphs.Spec] = []
    width, consts = {"x": 128}, {}
    for i in range(n):
        name, a, b = f"t{i}", rng.choice(list(width)), rng.choice(list(width))
        kind = rng.randrange(5)
        if kind == 1 and width[a] == width[b]:
            specs.append(("Add", [a, b], name))
        elif kind == 2:
            consts[f"w{i}"] = graphs.weights(width[a], rng.choice([128, 256]))
            specs.append(("MatMul", [a, f"w{i}"], name))
        elif kind == 3 and a != b and "x" not in (a, b):
            specs.append(("Concat", [a, b], name))
        elif kind == 4:
            consts[f"s{i}"] = np.array([1, width[a]], np.int64)
            specs.append(("Reshape", [a, f"s{i}"], name))
        else:
            specs.append(("Relu", [a], name))
        op, ins, _ = specs[-1]
        width[name] = sum(width[t] for t in ins) if op == "Concat" else \
            consts[ins[1]].shape[1] if op == "MatMul" else width[a]
    outputs = sorted({specs[-1][2], *rng.sample([s[2] for s in specs], min(n, 2))})
    return graphs.build(specs, outputs, consts, attrs={s[2]: {"axis": 1} for s in specs if s[0] == "Concat"})


def overlap_pairs(plan: MemoryPlan, graph: Graph) -> set[tuple[str, str]]:
    """Every pair alive at one step with overlapping bytes and no declared sharing, pair by pair."""
    lt = compute_lifetimes(graph)
    holder = _holders(plan, lt)
    inplace = {out: x for step in plan.steps for out, x in step.inplace.items()}
    names = [t for t in plan.allocations if t in lt.tensors]
    return {tuple(sorted((a, b))) for i, a in enumerate(names) for b in names[i + 1:]  # type: ignore[misc]
            if lt.tensors[a].start <= lt.tensors[b].end and lt.tensors[b].start <= lt.tensors[a].end
            and plan.allocations[a].offset < plan.allocations[b].end
            and plan.allocations[b].offset < plan.allocations[a].end
            and not _shares_legally(a, b, lt, inplace, holder)}


def reported_pairs(plan: MemoryPlan, graph: Graph) -> set[tuple[str, str]]:
    try:
        validate_plan(plan, graph)
    except MemoryPlanError as error:
        found = [p.split("'") for p in error.problems if "bytes overlap" in p]
        return {tuple(sorted((p[1], p[3]))) for p in found}  # type: ignore[misc]
    return set()


@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(1, 25))
def test_the_validator_reports_exactly_the_overlaps_a_pairwise_check_finds(rng: random.Random, n: int) -> None:
    graph = random_graph(rng, n)
    plan = plan_memory(graph, inplace=rng.random() < 0.5)
    assert reported_pairs(plan, graph) == set() == overlap_pairs(plan, graph)
    allocations = dict(plan.allocations)
    for t in rng.sample(sorted(allocations), rng.randint(1, min(3, len(allocations)))):  # plant overlaps
        allocations[t] = dataclasses.replace(allocations[t], offset=rng.choice([0, 512, 1024, 2048]))
    steps = plan.steps if rng.random() < 0.5 else [dataclasses.replace(s, inplace={}) for s in plan.steps]
    bad = dataclasses.replace(plan, allocations=allocations, steps=steps)
    assert reported_pairs(bad, graph) == overlap_pairs(bad, graph)


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 300), st.data())
def test_an_overlap_planted_among_hundreds_of_live_tensors_is_caught(n: int, data: st.DataObject) -> None:
    consts = {f"s{i}": np.array([1, 128], np.int64) for i in range(n)}
    graph = graphs.build([("Reshape", ["x", f"s{i}"], f"v{i}") for i in range(n)],
                         [f"v{i}" for i in range(n)], consts)  # n tensors of their own, all alive at the end
    plan = plan_memory(graph)
    validate_plan(plan, graph)
    i, j = data.draw(st.permutations(range(n)))[:2]
    moved = dataclasses.replace(plan.allocations[f"v{j}"], offset=plan.allocations[f"v{i}"].offset)
    with pytest.raises(MemoryPlanError) as info:
        validate_plan(dataclasses.replace(plan, allocations={**plan.allocations, f"v{j}": moved}), graph)
    assert len(info.value.problems) == 1
    assert f"'v{i}'" in info.value.problems[0] and f"'v{j}'" in info.value.problems[0]
