"""A Split with 10,000 outputs (issue 12): every output alive at once used to make planning quadratic."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper

import ge_core
from ge_core.memory import validate_plan


def wide_split(n: int, relus: bool) -> bytes:
    """x (1, n) split into n outputs; with `relus` each is read by its own Relu, the Relus being the graph's
    outputs (the Relus then write in place: n blocks alive over the whole graph), else the Split's outputs
    are the graph's outputs (n blocks alive at its one step)."""
    outs = [f"o{i}" for i in range(n)]
    nodes = [helper.make_node("Split", ["x"], outs, name="split", axis=1, num_outputs=n)]
    finals = outs
    if relus:
        finals = [f"r{i}" for i in range(n)]
        nodes += [helper.make_node("Relu", [f"o{i}"], [f"r{i}"], name=f"relu{i}") for i in range(n)]
    graph = helper.make_graph(nodes, "split", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
                              [helper.make_tensor_value_info(t, TensorProto.FLOAT, None) for t in finals])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("relus", [True, False], ids=["read_by_relus", "split_outputs_are_graph_outputs"])
def test_a_10k_output_split_plans_validly_at_the_lower_bound(relus: bool) -> None:
    compiled = ge_core.compile(wide_split(10_000, relus), opt_level="O0")
    plan = compiled.memory
    assert plan is not None
    validate_plan(plan, compiled.graph)
    assert plan.theory_min_bytes == 10_000 * 512  # one aligned float each, all alive at once
    assert plan.arena_bytes == plan.theory_min_bytes
    assert all(arena == plan.theory_min_bytes for name, arena in plan.strategies.items() if name != "no_reuse")


@pytest.mark.timeout(120)
def test_the_memory_aware_order_of_a_wide_split_is_found_without_rescoring_every_node() -> None:
    compiled = ge_core.compile(wide_split(10_000, True), opt_level="O0", memory_order="memory_aware")
    plan = compiled.memory
    assert plan is not None and plan.memory_aware_min_bytes == plan.graph_order_min_bytes
    assert plan.arena_bytes == plan.theory_min_bytes

