"""validate_plan rejects bad plans, listing every problem with the tensors, their ranges and the step."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from ge_core.memory import MemoryPlan, MemoryPlanError, PlanStep, plan_memory, validate_plan
from tests.memory import graphs


def moved(plan: MemoryPlan, **changes: dict[str, Any]) -> MemoryPlan:
    """A copy of `plan` with some allocations' fields changed: moved(p, b={"offset": 0})."""
    allocations = dict(plan.allocations)
    for tensor, fields in changes.items():
        allocations[tensor] = dataclasses.replace(allocations[tensor], **fields)
    return dataclasses.replace(plan, allocations=allocations)


def problems(plan: MemoryPlan, graph_name: str) -> list[str]:
    with pytest.raises(MemoryPlanError) as info:
        validate_plan(plan, getattr(graphs, graph_name)())
    return info.value.problems


def test_good_plans_pass() -> None:
    for name in ("chain", "diamond", "residual", "views", "output_mid_graph", "relu_chain", "view_of_input"):
        g = getattr(graphs, name)()
        for strategy in ("greedy_by_size", "best_fit", "no_reuse"):
            validate_plan(plan_memory(g, strategy=strategy), g)


def test_overlap_names_both_tensors_their_ranges_and_the_step() -> None:
    plan = plan_memory(graphs.residual(), strategy="greedy_by_size", inplace=False)
    bad = moved(plan, c={"offset": 2048})  # onto a, which is alive at c's step
    [message] = problems(bad, "residual")
    assert "'a' [2048, 3072)" in message and "'c' [2048, 3072)" in message
    assert "step 2" in message and "'c'" in message


def test_inplace_must_be_declared() -> None:
    declared = plan_memory(graphs.relu_chain())
    validate_plan(declared, graphs.relu_chain())
    undeclared = dataclasses.replace(declared, steps=[dataclasses.replace(s, inplace={}) for s in declared.steps])
    found = problems(undeclared, "relu_chain")
    assert len(found) == 3
    assert any("'a'" in p and "'r1'" in p and "step 1" in p for p in found)


def test_inplace_into_a_tensor_still_alive_is_an_overlap() -> None:
    plan = plan_memory(graphs.output_mid_graph(), inplace=False)
    steps = list(plan.steps)
    steps[1] = PlanStep("b", ("a",), ("b",), {"b": "a"})  # a is a graph output: it must survive b
    bad = moved(dataclasses.replace(plan, steps=steps), b={"offset": 0})
    [message] = problems(bad, "output_mid_graph")
    assert "'a' [0, 1024)" in message and "'b' [0, 1024)" in message and "step 1" in message


def test_too_small_unaligned_outside_and_missing_all_at_once() -> None:
    plan = plan_memory(graphs.chain(), strategy="no_reuse")
    bad = moved(plan, a={"size": 512}, b={"offset": 2600})
    del bad.allocations["c"]
    found = problems(bad, "chain")
    assert any("'a' needs 1024 bytes" in p and "[0, 512)" in p for p in found)
    assert any("'b' at offset 2600 is not aligned to 512" in p for p in found)
    assert any("'b' at [2600, 3624) lies outside the arena of 3072 bytes" in p for p in found)
    assert any("'c'" in p and "no allocation" in p for p in found)
    assert len(found) == 4
    assert "4 problem(s)" in str(MemoryPlanError(found))
