"""The arena executor: every activation lives at its planned offset in one arena, so it checks the plan.

It matches the CPU Executor and ONNX Runtime on real models compiled at O3, and a deliberately wrong plan
(two live tensors at the same offset) gives wrong numbers: the arena really holds the activations.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import onnxruntime as ort
import pytest

import ge_core
from ge_core.compiler import CompiledModel
from ge_core.errors import ExecutionError, ModelError, UsageError
from ge_core.ir import Graph, TensorDesc
from ge_core.memory.lifetimes import compute_lifetimes
from ge_core.memory.plan import Allocation, MemoryPlan, PlanStep
from ge_core.runtime import ArenaExecutor, Executor, relative_error
from ge_core.samples.registry import get_sample, sample_bytes

F32 = "float32"
ALIGN = 512


def _aligned(n: int) -> int:
    return max(ALIGN, -(-n // ALIGN) * ALIGN)


def no_reuse_plan(graph: Graph) -> MemoryPlan:
    """Every activation its own aligned range; views at their root's offset (a plan that is right by design)."""
    lt = compute_lifetimes(graph)
    allocations: dict[str, Allocation] = {}
    offset = 0
    for t, life in lt.tensors.items():
        if t in lt.aliases:
            continue
        allocations[t] = Allocation(t, offset, _aligned(life.nbytes), life.shape, life.dtype)
        offset += _aligned(life.nbytes)
    for view in lt.aliases:
        root = allocations[lt.root(view)]
        life = lt.tensors[view]
        allocations[view] = Allocation(view, root.offset, root.size, life.shape, life.dtype)
    steps = [PlanStep(n.name, tuple(n.inputs), tuple(n.outputs)) for n in graph.nodes]
    return MemoryPlan(ALIGN, "no_reuse", offset, offset, offset, list(graph.outputs), steps, allocations,
                      dict(lt.aliases), {"no_reuse": offset})


def plan_of(compiled: CompiledModel) -> MemoryPlan:
    """The compiler's own plan: these models have static shapes, so a missing plan is a failure."""
    assert compiled.memory is not None, f"no memory plan: {compiled.memory_skipped}"
    return compiled.memory


def ort_outputs(data: bytes, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))


MODELS = [
    "conv_bn_relu",
    pytest.param("resnet50", marks=pytest.mark.slow),
    pytest.param("bert_encoder_torch", marks=pytest.mark.slow),
    pytest.param("ocr_det_db_paddle", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("name", MODELS)
def test_arena_matches_the_executor_and_onnxruntime_at_o3(name: str) -> None:
    sample = get_sample(name)
    data = sample_bytes(name)  # the exported samples are committed: a missing one fails here
    compiled = ge_core.compile(data, input_shapes=sample.input_shapes or None, opt_level="O3")
    feeds = ge_core.random_feeds(compiled.input_graph, seed=0)
    plan = plan_of(compiled)
    arena = ArenaExecutor(compiled.graph, plan)
    assert not arena.off_arena  # every activation of these models lives in the arena
    ours = arena.run(feeds)
    reference = Executor(compiled.graph).run(feeds).outputs
    theirs = ort_outputs(data, feeds)
    assert set(ours.outputs) == set(reference) == set(theirs)
    for t, want in theirs.items():
        np.testing.assert_allclose(ours.outputs[t], reference[t], rtol=1e-6, atol=1e-6 * float(np.abs(want).max()))
        assert relative_error(ours.outputs[t], want) <= 1e-4, t
    assert ours.peak_live_bytes == plan.arena_bytes
    assert [t.node for t in ours.timings] == [s.node for s in plan.steps]


def residual_graph() -> Graph:
    """a = relu(x); b = neg(a); c = tanh(b); y = a + c: `a` is alive while b and c are produced."""
    g = Graph("residual")
    d = TensorDesc((4, 8), F32)
    g.add_input("x", d)
    g.add_node("Relu", ["x"], ["a"], name="relu", descs=[d])
    g.add_node("Neg", ["a"], ["b"], name="neg", descs=[d])
    g.add_node("Tanh", ["b"], ["c"], name="tanh", descs=[d])
    g.add_node("Add", ["a", "c"], ["y"], name="add", descs=[d])
    g.set_outputs(["y"])
    return g


def hand_plan(offsets: dict[str, int], inplace: dict[str, dict[str, str]] | None = None) -> MemoryPlan:
    graph = residual_graph()
    allocations = {t: Allocation(t, off, ALIGN, (4, 8), F32) for t, off in offsets.items()}
    steps = [PlanStep(n.name, tuple(n.inputs), tuple(n.outputs), (inplace or {}).get(n.name, {}))
             for n in graph.nodes]
    arena = max(offsets.values()) + ALIGN
    return MemoryPlan(ALIGN, "hand", arena, arena, 4 * ALIGN, ["y"], steps, allocations, {}, {"hand": arena})


FEEDS = {"x": np.linspace(-1.0, 1.0, 32, dtype=np.float32).reshape(4, 8)}


def expected_y() -> np.ndarray:
    a = np.maximum(FEEDS["x"], 0)
    return a + np.tanh(-a)


def test_a_right_plan_with_reuse_and_inplace_gives_the_right_numbers() -> None:
    # b dies when c is made: c reuses b's bytes in place; y reuses them again after c is read.
    plan = hand_plan({"a": 0, "b": ALIGN, "c": ALIGN, "y": ALIGN}, {"tanh": {"c": "b"}, "add": {"y": "c"}})
    y = ArenaExecutor(residual_graph(), plan).run(FEEDS).outputs["y"]
    np.testing.assert_allclose(y, expected_y(), rtol=1e-6)
    assert y.base is None  # handed back as a copy, not a view into the arena


def test_a_wrong_plan_sharing_bytes_between_live_tensors_gives_wrong_numbers() -> None:
    # c overwrites a while a is still needed by add: y comes out 2*tanh(-relu(x)), not relu(x) + tanh(-relu(x)).
    plan = hand_plan({"a": 0, "b": ALIGN, "c": 0, "y": ALIGN})
    y = ArenaExecutor(residual_graph(), plan).run(FEEDS).outputs["y"]
    assert not np.allclose(y, expected_y())
    np.testing.assert_allclose(y, 2 * np.tanh(-np.maximum(FEEDS["x"], 0)), rtol=1e-6)


def overlapping_live_pair(plan: MemoryPlan) -> tuple[str, str]:
    """(a, b): b is produced while a is alive and a is read after that; neither is a view, b fits at a's offset."""
    first = {t: i for i, s in enumerate(plan.steps) for t in s.outputs}
    last = {t: i for i, s in enumerate(plan.steps) for t in s.inputs if t in first}
    for a, a_last in last.items():
        for b, b_first in first.items():
            if (first[a] < b_first < a_last and a not in plan.aliases and b not in plan.aliases
                    and plan.allocations[b].size <= plan.allocations[a].size
                    and not set(plan.aliases.values()) & {a, b}):
                return a, b
    raise AssertionError("no overlapping pair")


def test_a_corrupted_real_plan_gives_wrong_outputs() -> None:
    compiled = ge_core.compile(sample_bytes("residual_block"), opt_level="O0")  # the skip branch stays alive
    plan = plan_of(compiled)
    feeds = ge_core.random_feeds(compiled.input_graph, seed=0)
    good = ArenaExecutor(compiled.graph, plan).run(feeds).outputs
    a, b = overlapping_live_pair(plan)
    wrong = dataclasses.replace(plan, allocations={
        **plan.allocations, b: dataclasses.replace(plan.allocations[b], offset=plan.allocations[a].offset)})
    bad = ArenaExecutor(compiled.graph, wrong).run(feeds).outputs
    assert any(not np.allclose(bad[t], good[t]) for t in good)


def test_zero_copy_views_share_their_base_bytes() -> None:
    g = Graph("view")
    g.add_input("x", TensorDesc((2, 6), F32))
    g.add_constant("shape", np.array([3, 4], np.int64))
    g.add_node("Relu", ["x"], ["a"], name="relu", descs=[TensorDesc((2, 6), F32)])
    g.add_node("Reshape", ["a", "shape"], ["v"], name="reshape", descs=[TensorDesc((3, 4), F32)])
    g.add_node("Neg", ["v"], ["y"], name="neg", descs=[TensorDesc((3, 4), F32)])
    g.set_outputs(["y", "v"])
    plan = no_reuse_plan(g)
    assert plan.aliases == {"v": "a"} and plan.allocations["v"].offset == plan.allocations["a"].offset
    x = np.arange(-6, 6, dtype=np.float32).reshape(2, 6)
    out = ArenaExecutor(g, plan).run({"x": x}).outputs
    np.testing.assert_array_equal(out["v"], np.maximum(x, 0).reshape(3, 4))
    np.testing.assert_array_equal(out["y"], -np.maximum(x, 0).reshape(3, 4))


def test_a_failing_kernel_still_names_node_op_and_shapes() -> None:
    g = Graph("bad")
    g.add_input("x", TensorDesc((2, 3), F32))
    g.add_input("w", TensorDesc((4, 5), F32))
    g.add_node("MatMul", ["x", "w"], ["y"], name="mm", descs=[TensorDesc((2, 5), F32)])
    g.set_outputs(["y"])
    plan = MemoryPlan(ALIGN, "hand", ALIGN, ALIGN, ALIGN, ["y"], [PlanStep("mm", ("x", "w"), ("y",))],
                      {"y": Allocation("y", 0, ALIGN, (2, 5), F32)}, {}, {})
    with pytest.raises(ExecutionError) as info:
        ArenaExecutor(g, plan).run({"x": np.ones((2, 3), np.float32), "w": np.ones((4, 5), np.float32)})
    assert "'mm' (MatMul)" in str(info.value)


def test_an_allocation_outside_the_arena_is_refused() -> None:
    plan = hand_plan({"a": 0, "b": ALIGN, "c": 2 * ALIGN, "y": 3 * ALIGN})
    plan = dataclasses.replace(plan, arena_bytes=2 * ALIGN)
    with pytest.raises(ModelError, match="does not fit"):
        ArenaExecutor(residual_graph(), plan)


def test_compiled_model_runs_on_its_arena() -> None:
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"), opt_level="O3")
    feeds = ge_core.random_feeds(compiled.input_graph, seed=0)
    assert compiled.memory is not None
    got = compiled.run_on_arena(feeds)
    want = compiled.run(feeds)
    for t in want:
        np.testing.assert_allclose(got[t], want[t], rtol=1e-6)
    with pytest.raises(UsageError, match="no memory plan"):
        dataclasses.replace(compiled, memory=None).run_on_arena(feeds)
