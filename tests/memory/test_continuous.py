"""No-copy Concat: inputs written straight into their slices of the output (GE's continuous memory)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import ge_core
from ge_core.ir import Graph
from ge_core.memory import plan_memory, validate_plan
from ge_core.memory.blocks import find_inplace
from ge_core.memory.continuous import find_no_copy_concats
from ge_core.memory.lifetimes import compute_lifetimes
from ge_core.memory.validate import MemoryPlanError
from ge_core.runtime import ArenaExecutor, Executor, random_feeds
from tests.memory import graphs

AXIS1 = {"c": {"axis": 1}, "f": {"axis": 1}}


def concat_graph(extra: list[graphs.Spec] | None = None, outputs: tuple[str, ...] = ("d",),
                 x_shape: tuple[int, ...] = (1, 128), inputs: tuple[str, ...] = ("a", "b")) -> Graph:
    """a = Relu(x), b = Sigmoid(x), c = Concat(inputs, axis=1), d = Tanh(c), then `extra`."""
    nodes: list[graphs.Spec] = [("Relu", ["x"], "a"), ("Sigmoid", ["x"], "b"), ("Concat", list(inputs), "c"),
                                ("Tanh", ["c"], "d"), *(extra or [])]
    return graphs.build(nodes, list(outputs), x_shape=x_shape, attrs=AXIS1)


def parts_of(graph: Graph, alignment: int = 512) -> dict[str, tuple[str, int]]:
    return find_no_copy_concats(graph, compute_lifetimes(graph), alignment)


def check_runs_right(graph: Graph, **options: object) -> None:
    """The plan validates and the arena (Concat launching nothing) gives the plain executor's numbers."""
    plan = plan_memory(graph, **options)  # type: ignore[arg-type]
    validate_plan(plan, graph)
    feeds = random_feeds(graph, seed=3)
    want = Executor(graph).run(feeds).outputs
    got = ArenaExecutor(graph, plan).run(feeds).outputs
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-6)


def test_inputs_are_pinned_to_their_slices_and_the_concat_launches_nothing() -> None:
    g = concat_graph()
    assert parts_of(g) == {"a": ("c", 0), "b": ("c", 512)}
    plan = plan_memory(g)
    assert [s.node for s in plan.steps if s.no_task] == ["c"] == plan.no_copy_concats
    c = plan.allocations["c"].offset
    assert (plan.allocations["a"].offset, plan.allocations["b"].offset) == (c, c + 512)
    assert plan.strategy.endswith(", no-copy concat")
    assert plan.to_json()["steps"][2]["no_task"] is True
    check_runs_right(g)
    assert ge_core.compile(g, opt_level="O0").plan.kernels == 3  # Relu, Sigmoid, Tanh


def test_copy_concat_switch_turns_it_off() -> None:
    plan = plan_memory(concat_graph(), no_copy_concat=False)
    assert not plan.no_copy_concats and "no-copy" not in plan.strategy
    assert not plan_memory(concat_graph(), reuse=False).no_copy_concats
    model = ge_core.compile(concat_graph(), opt_level="O0", memory_no_copy_concat=False)
    assert model.memory is not None and not model.memory.no_copy_concats and model.plan.kernels == 4


@pytest.mark.parametrize(("why", "graph", "alignment"), [
    ("strided: batch 2 interleaves the slices", lambda: concat_graph(x_shape=(2, 128)), 512),
    ("a graph input lives outside the arena", lambda: concat_graph(inputs=("a", "x")), 512),
    ("the same tensor twice", lambda: concat_graph(inputs=("a", "a")), 512),
    ("b's slice would start at byte 12, not on the alignment", lambda: concat_graph(x_shape=(1, 3)), 512),
])
def test_concats_that_cannot_be_pinned_copy(why: str, graph: object, alignment: int) -> None:
    g = graph()  # type: ignore[operator]
    assert parts_of(g, alignment) == {}, why
    check_runs_right(g)


def test_a_part_read_after_the_concat_is_never_overwritten_in_place() -> None:
    """a dies at e = Relu(a), after the Concat: in place, e would overwrite c's first half."""
    g = concat_graph([("Relu", ["a"], "e")], outputs=("d", "e"))
    lt = compute_lifetimes(g)
    assert find_inplace(g, lt)["e"] == {"e": "a"}  # fine while the Concat copies
    assert "e" not in find_inplace(g, lt, parts_of(g))
    check_runs_right(g)  # here copying wins: e in place over a beats the no-copy Concat


def test_nested_concats_and_in_place_parts_share_one_block() -> None:
    """f = Concat(c, e) holds c, which holds a and b; e = Relu(t) was written in place over t."""
    g = concat_graph([("Sigmoid", ["x"], "t"), ("Relu", ["t"], "e"), ("Concat", ["c", "e"], "f"),
                      ("Tanh", ["f"], "h")], outputs=("d", "h"))
    plan = plan_memory(g)
    assert plan.no_copy_concats == ["c", "f"]
    f = plan.allocations["f"].offset
    assert plan.allocations["c"].offset == plan.allocations["a"].offset == f
    assert plan.allocations["e"].offset == plan.allocations["t"].offset == f + 1024
    check_runs_right(g)


def test_validator_rejects_a_part_outside_its_slice() -> None:
    g = concat_graph()
    plan = plan_memory(g)
    moved = dict(plan.allocations)
    moved["b"] = dataclasses.replace(moved["b"], offset=plan.arena_bytes)
    bad = dataclasses.replace(plan, allocations=moved, arena_bytes=plan.arena_bytes + 512)
    with pytest.raises(MemoryPlanError, match=r"no-copy Concat 'c': input 'b' must be written at offset"):
        validate_plan(bad, g)
