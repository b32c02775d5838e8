"""Fused bodies without an epilogue or gate plan run as a plain list of their kernels
(runtime/body_chain.py): bit for bit the body loop, outputs owned as the loop makes them, and a failing
kernel still reported by the loop with its node named."""

from __future__ import annotations

import os

import numpy as np
import pytest

import ge_core
from ge_core.errors import GEError
from ge_core.ir import Graph
from ge_core.kernels import reduce as reduce_jit
from ge_core.ops import REGISTRY
from ge_core.runtime import interpreter
from ge_core.runtime.body_chain import plan_body_chain
from ge_core.runtime.executor import Executor
from tests.kernels.test_body_epilogue import OpByOp
from tests.passes.fusion_cases import build, node, rand, scalar

pytestmark = pytest.mark.skipif(os.environ.get("GE_NO_JIT") == "1", reason="GE_NO_JIT=1 changes the kernels")


def _attention(masked: bool = True) -> Graph:
    """Softmax(Q K^T * s + mask) V at O3: one FusedAttention node running its body."""
    nodes = [node("MatMul", ["q", "kt"], "qk"), node("Mul", ["qk", "s"], "scores")]
    inputs = {"q": [1, 2, 6, 4], "kt": [1, 2, 4, 6], "v": [1, 2, 6, 4]}
    last = "scores"
    if masked:
        nodes.append(node("Add", [last, "mask"], "masked"))
        inputs["mask"] = [1, 1, 6, 6]
        last = "masked"
    nodes += [node("Softmax", [last], "probs", axis=-1), node("MatMul", ["probs", "v"], "y")]
    graph = build(nodes, inputs, ["y"], {"s": scalar(0.5)})
    return ge_core.compile(graph, opt_level="O3").graph


def _fused(graph: Graph) -> list[str]:
    return [n.op_type for n in graph.nodes if n.body is not None]


def _feeds(graph: Graph, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {t: rng.standard_normal(graph.desc(t).shape).astype(np.float32) for t in graph.inputs}


@pytest.mark.parametrize("masked", [True, False])
def test_an_attention_body_bit_for_bit_the_loop(masked: bool) -> None:
    graph = _attention(masked)
    assert _fused(graph) == ["FusedAttention"]
    (fused,) = graph.nodes
    assert fused.body is not None and plan_body_chain(fused.body, REGISTRY, interpreter._owned) is not None
    feeds = _feeds(graph, seed=21)
    OpByOp.calls = []
    want = Executor(graph, interpreter=OpByOp).run(feeds).outputs["y"]
    assert OpByOp.calls == [n.op_type for n in fused.body.nodes]
    got = Executor(graph).run(feeds).outputs["y"]
    np.testing.assert_array_equal(got, want)


def test_a_body_of_views_returns_an_owned_array() -> None:
    """Slice + Squeeze + Transpose gives a view of the body's input: the output is a copy, as the loop's."""
    graph = build([node("Slice", ["x", "starts", "ends", "axes"], "sl"), node("Squeeze", ["sl", "axes"], "sq"),
                   node("Transpose", ["sq"], "y", perm=[0, 2, 1])], {"x": [3, 2, 5, 4]}, ["y"],
                  {"starts": np.array([1]), "ends": np.array([2]), "axes": np.array([0])})
    compiled = ge_core.compile(graph, opt_level="O3").graph
    (fused,) = [n for n in compiled.nodes if n.body is not None]  # UB fusion groups the three
    assert fused.body is not None
    plan = plan_body_chain(fused.body, REGISTRY, interpreter._owned)
    assert plan is not None
    x = _feeds(compiled, seed=22)["x"]
    got = plan.run(fused.body, [x if t == "x" else compiled.constants[t] for t in fused.inputs])
    assert got is not None
    (out,) = got
    assert out.base is None and out.flags.writeable and not np.shares_memory(out, x)
    np.testing.assert_array_equal(out, x[1].transpose(0, 2, 1))


def test_a_failing_kernel_is_reported_by_the_loop_with_its_node(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = _attention()

    def broken(x: np.ndarray) -> np.ndarray:
        raise ValueError("planted")

    monkeypatch.setattr(reduce_jit, "softmax_last_axis", broken)  # inside the Softmax kernel
    with pytest.raises(GEError, match="planted") as caught:
        Executor(graph).run(_feeds(graph, seed=23))
    assert "Softmax" in str(caught.value)


def test_bodies_with_a_fused_node_inside_are_left_to_the_loop() -> None:
    inits = {"w": rand(8, 6, scale=0.3), "b": rand(6)}
    graph = build([node("MatMul", ["x", "w"], "mm"), node("Add", ["mm", "b"], "biased"),
                   node("Add", ["biased", "z"], "y")], {"x": [2, 5, 8], "z": [2, 5, 6]}, ["y"], inits)
    compiled = ge_core.compile(graph, opt_level="O3").graph
    (group,) = [n for n in compiled.nodes if n.body is not None]
    assert group.body is not None and plan_body_chain(group.body, REGISTRY, interpreter._owned) is None
