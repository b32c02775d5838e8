"""A squeeze-and-excitation tail (UB group of the gate's FusedConv and the Mul scaling the map) run as the
gate's plan and one multiply (kernels/body_gate.py): bit for bit the nested body loop, the plan taken, and
bodies of another form left to the loop."""

from __future__ import annotations

import os

import numpy as np
import pytest
from onnx import helper

import ge_core
from ge_core.ir import Graph
from ge_core.ir.node import Node
from ge_core.kernels.body_gate import plan_body_gate
from ge_core.ops import REGISTRY
from ge_core.runtime.executor import Executor
from tests.kernels.test_body_epilogue import OpByOp, kernel_calls
from tests.passes.fusion_cases import build, node, rand

pytestmark = pytest.mark.skipif(os.environ.get("GE_NO_JIT") == "1", reason="GE_NO_JIT=1 turns the kernel off")


def _se_block(gate_act: str, dtype: str = "float32", gate_first: bool = False) -> Graph:
    """x * act(Conv1x1(GlobalAveragePool(x))), compiled at O3 (the DB detector's and the CRNN's blocks)."""
    inits = {"w": rand(8, 8, 1, 1, scale=0.3, dtype=dtype), "b": rand(8, dtype=dtype)}
    attrs = {"alpha": 0.2, "beta": 0.5} if gate_act == "HardSigmoid" else {}
    graph = build([node("GlobalAveragePool", ["x"], "pooled"), node("Conv", ["pooled", "w", "b"], "squeezed"),
                   node(gate_act, ["squeezed"], "gate", **attrs),
                   node("Mul", ["gate", "x"] if gate_first else ["x", "gate"], "y")],
                  {"x": [2, 8, 7, 5]}, ["y"], inits, dtype=helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))
    return ge_core.compile(graph, opt_level="O3").graph


def _group(graph: Graph) -> Node:
    (group,) = [n for n in graph.nodes if n.body is not None]
    assert group.body is not None and [n.op_type for n in group.body.nodes] == ["FusedConv", "Mul"]
    return group


def _feeds(graph: Graph, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    desc = graph.desc("x")
    x = rng.standard_normal(desc.shape).astype(desc.dtype)
    x.flat[::13] = np.nan
    return {"x": x}


@pytest.mark.parametrize("gate_act", ["HardSigmoid", "Sigmoid", "Relu"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])  # float16: the gate's plan declines, the loop runs
@pytest.mark.parametrize("gate_first", [False, True])
def test_bit_for_bit_the_nested_loop(gate_act: str, dtype: str, gate_first: bool) -> None:
    graph = _se_block(gate_act, dtype, gate_first)
    group = _group(graph)
    assert group.body is not None and plan_body_gate(group.body, REGISTRY) is not None
    feeds = _feeds(graph, seed=11)
    OpByOp.calls = []
    want = Executor(graph, interpreter=OpByOp).run(feeds).outputs["y"]
    assert OpByOp.calls == ["GlobalAveragePool", "Conv", gate_act, "Mul"]
    got = Executor(graph).run(feeds).outputs["y"]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_the_plan_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = _se_block("HardSigmoid")
    # the Conv, its activation and the Mul ran inside the plan
    assert kernel_calls(monkeypatch, graph, _feeds(graph, seed=12)) == ["GlobalAveragePool"]


def test_a_gate_that_does_not_broadcast_per_channel_is_left_to_the_loop() -> None:
    """A Mul of two maps of one shape is no gate: no plan."""
    inits = {"w": rand(8, 8, 3, 3, scale=0.3), "b": rand(8)}
    graph = build([node("Conv", ["x", "w", "b"], "c", pads=[1, 1, 1, 1]), node("Sigmoid", ["c"], "s"),
                   node("Mul", ["x", "s"], "y")], {"x": [1, 8, 6, 6]}, ["y"], inits)
    compiled = ge_core.compile(graph, opt_level="O3").graph
    for fused in (n for n in compiled.nodes if n.body is not None):
        assert fused.body is not None and plan_body_gate(fused.body, REGISTRY) is None
