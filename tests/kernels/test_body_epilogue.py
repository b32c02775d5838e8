"""A fused Conv (ConvTranspose, MatMul, BatchNormalization) body run as one kernel with a compiled epilogue
(kernels/body_epilogue.py): bit for bit what the body gives op by op, for every activation with an epilogue
form or ending the body as its own kernel, bias as the Conv's B or as an Add, with a residual; bodies it does
not cover run op by op; an interpreter overriding call_kernel sees every body op."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from onnx import helper

import ge_core
from ge_core.ir import Graph
from ge_core.ir.node import Node
from ge_core.kernels import body_epilogue
from ge_core.ops import REGISTRY
from ge_core.ops.registry import OpDef
from ge_core.passes.fusion.graph import ConvActivationFusionPass
from ge_core.runtime.executor import Executor
from ge_core.runtime.interpreter import Interpreter
from tests.passes.fusion_cases import build, node, rand, scalar

pytestmark = pytest.mark.skipif(os.environ.get("GE_NO_JIT") == "1", reason="GE_NO_JIT=1 turns the kernel off")


class OpByOp(Interpreter):
    """Overrides the kernel-call hook (as precision modes do): fused bodies run op by op, every call seen."""

    calls: list[str]

    def call_kernel(self, node: Node, op: OpDef, args: list[np.ndarray | None]) -> Sequence[np.ndarray]:
        type(self).calls.append(node.op_type)
        return super().call_kernel(node, op, args)


def kernel_calls(monkeypatch: pytest.MonkeyPatch, graph: Graph, feeds: dict[str, np.ndarray]) -> list[str]:
    """The op types whose kernels a plain Executor run calls through the base class's own hook (so fast
    paths stay allowed): a fused body taken by a plan calls none of its ops."""
    seen: list[str] = []
    original = Interpreter.call_kernel

    def spy(self: Interpreter, node: Node, op: OpDef, args: list[np.ndarray | None]) -> Sequence[np.ndarray]:
        seen.append(node.op_type)
        return original(self, node, op, args)

    monkeypatch.setattr(Interpreter, "call_kernel", spy)  # still the base class's own hook: fast path allowed
    Executor(graph).run(feeds)
    return seen


def _graph(act: str | None, *act_inputs: str, bias: str = "conv", residual: bool = False, depthwise: bool = False,
           dtype: str = "float32", **attrs: Any) -> Graph:
    """Conv (bias as its B, or as an Add of a per-channel constant) (+ residual Add) (+ activation), fused."""
    channels = 6
    group = channels if depthwise else 1
    inits = {"w": rand(channels, channels // group, 3, 3, scale=0.3, dtype=dtype), "b": rand(channels, dtype=dtype),
             "bc": rand(1, channels, 1, 1, dtype=dtype), "lo": scalar(-0.2, dtype), "hi": scalar(0.4, dtype)}
    conv_inputs = ["x", "w", "b"] if bias == "conv" else ["x", "w"]
    nodes = [node("Conv", conv_inputs, "conv", pads=[1, 1, 1, 1], group=group)]
    last = "conv"
    if bias == "add":
        nodes.append(node("Add", ["bc", last], "biased"))
        last = "biased"
    inputs = {"x": [2, channels, 9, 9]}
    if residual:
        nodes.append(node("Add", [last, "z"], "summed"))
        inputs["z"] = [2, channels, 9, 9]
        last = "summed"
    if act is not None:
        nodes.append(node(act, [last, *act_inputs], "y", **attrs))
        last = "y"
    graph = build(nodes, inputs, [last], inits, dtype=helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))
    assert ConvActivationFusionPass().run(graph).changed
    (fused,) = graph.nodes
    assert fused.op_type == "FusedConv", graph.to_text()
    return graph


def _feeds(graph: Graph, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for t in graph.inputs:
        desc = graph.desc(t)
        value = rng.standard_normal(desc.shape).astype(desc.dtype)
        value.flat[::17] = np.nan  # NaN passes through every epilogue as through the numpy kernels
        feeds[t] = value
    return feeds


ACTIVATIONS = [
    ("Relu", (), {}), ("LeakyRelu", (), {"alpha": 0.1}), ("HardSigmoid", (), {"alpha": 0.3, "beta": 0.4}),
    ("HardSwish", (), {}), ("Clip", ("lo", "hi"), {}), ("Clip", ("", "hi"), {}), ("Clip", ("hi", "lo"), {}),
]
# What ConvActivationFusionPass fuses: an activation after the Conv's own bias, after a bias Add, or after a
# residual Add; a residual Add alone.
CASES: list[tuple[str | None, tuple[str, ...], dict[str, Any], str, bool]] = [
    (*a, bias, residual) for a in ACTIVATIONS for bias, residual in (("conv", False), ("add", False), ("conv", True))]
CASES.append((None, (), {}, "conv", True))


@pytest.mark.parametrize(("act", "act_inputs", "attrs", "bias", "residual"), CASES)
def test_bit_for_bit_the_body_op_by_op(act: str | None, act_inputs: tuple[str, ...], attrs: dict[str, Any],
                                        bias: str, residual: bool) -> None:
    graph = _graph(act, *act_inputs, bias=bias, residual=residual, **attrs)
    (fused,) = graph.nodes
    assert fused.body is not None and body_epilogue.plan_body_epilogue(fused.body, REGISTRY) is not None
    feeds = _feeds(graph, seed=len(CASES))
    OpByOp.calls = []
    want = Executor(graph, interpreter=OpByOp).run(feeds).outputs
    assert OpByOp.calls == [n.op_type for n in fused.body.nodes]
    got = Executor(graph).run(feeds).outputs
    for t in graph.outputs:
        np.testing.assert_array_equal(got[t], want[t])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("depthwise", [False, True])
def test_depthwise_and_float64(depthwise: bool, dtype: str) -> None:
    graph = _graph("Relu", bias="conv", residual=True, depthwise=depthwise, dtype=dtype)
    feeds = _feeds(graph, seed=1)
    OpByOp.calls = []
    want = Executor(graph, interpreter=OpByOp).run(feeds).outputs
    got = Executor(graph).run(feeds).outputs
    for t in graph.outputs:
        assert got[t].dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got[t], want[t])


def test_the_fast_path_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """A registered-kernel interpreter runs the body as one Conv call, not Conv then Relu."""
    graph = _graph("Relu")
    seen = kernel_calls(monkeypatch, graph, _feeds(graph, seed=2))
    assert seen == []  # the Conv ran inside the plan, through conv_with_epilogue, not as body kernel calls


@pytest.mark.parametrize(("act", "act_inputs"), [("Sigmoid", ()), ("Tanh", ()), ("Elu", ()), ("PRelu", ("s",))])
def test_activations_without_an_epilogue_end_the_plan_as_their_own_kernel(act: str, act_inputs: tuple[str, ...]
                                                                          ) -> None:
    """Transcendental activations keep their own kernels: the plan runs the Conv with its epilogue, then the
    activation's kernel on the result, bit for bit the body loop."""
    inits = {"w": rand(4, 3, 3, 3, scale=0.3), "b": rand(4), "s": rand(4, 1, 1)}
    body = build([node("Conv", ["x", "w", "b"], "conv"), node(act, ["conv", *act_inputs], "y")],
                 {"x": [1, 3, 6, 6]}, ["y"], inits)
    plan = _plan_matches_the_body_loop(body, "Conv", act, seed=6)
    assert plan.tail is not None and plan.tail.op_type == act


def test_float16_falls_back_to_the_body() -> None:
    """The compiled pass is float32/float64: a float16 Conv body runs op by op, with numpy's result."""
    graph = _graph("Relu", dtype="float16")
    feeds = _feeds(graph, seed=3)
    OpByOp.calls = []
    want = Executor(graph, interpreter=OpByOp).run(feeds).outputs
    got = Executor(graph).run(feeds).outputs
    for t in graph.outputs:
        np.testing.assert_array_equal(got[t], want[t])


@pytest.mark.parametrize(("act", "act_inputs", "attrs"), ACTIVATIONS)
def test_batch_norm_bodies_bit_for_bit(act: str, act_inputs: tuple[str, ...], attrs: dict[str, Any]) -> None:
    """A UB group BatchNormalization + activation (DenseNet's pre-activations) as one pass x * k + shift (the
    graph itself stands for the body: one input, constants, a chain, one output)."""
    channels = 5
    inits = {"s": rand(channels), "b": rand(channels), "m": rand(channels),
             "v": np.abs(rand(channels)) + 0.1, "lo": scalar(-0.2), "hi": scalar(0.4)}
    body = build([node("BatchNormalization", ["x", "s", "b", "m", "v"], "bn"),
                  node(act, ["bn", *act_inputs], "y", **attrs)], {"x": [2, channels, 7, 7]}, ["y"], inits)
    _plan_matches_the_body_loop(body, "BatchNormalization", act, seed=4)


@pytest.mark.parametrize(("act", "act_inputs", "attrs"), ACTIVATIONS)
@pytest.mark.parametrize("kernel", [(2, 2), (3, 3)])
def test_conv_transpose_bodies_bit_for_bit(act: str, act_inputs: tuple[str, ...], attrs: dict[str, Any],
                                           kernel: tuple[int, int]) -> None:
    """A ConvTranspose (+ bias) + activation body (the upsampling heads of DB text detectors), both the
    kernel = stride interleave and the overlapping scatter: one pass after the ConvTranspose."""
    channels, out = 4, 3
    inits = {"w": rand(channels, out, *kernel, scale=0.3), "b": rand(out), "lo": scalar(-0.2), "hi": scalar(0.4)}
    body = build([node("ConvTranspose", ["x", "w", "b"], "up", strides=[2, 2]),
                  node(act, ["up", *act_inputs], "y", **attrs)], {"x": [2, channels, 7, 6]}, ["y"], inits)
    _plan_matches_the_body_loop(body, "ConvTranspose", act, seed=5)


MATMUL_ENDINGS = [None, ("Relu", ()), ("Clip", ("lo", "hi")), ("Gelu", ()), ("Sigmoid", ()), ("Tanh", ())]


@pytest.mark.parametrize("ending", MATMUL_ENDINGS)
@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_bodies_bit_for_bit(ending: tuple[str, tuple[str, ...]] | None, residual: bool, dtype: str) -> None:
    """A linear layer's body (FullyConnection; a transformer's MatMul + bias + residual UB group): the
    product, then the bias along the last axis, the residual and the activation in one pass (or the
    activation's own kernel)."""
    inits = {"w": rand(8, 6, scale=0.3, dtype=dtype), "b": rand(6, dtype=dtype), "lo": scalar(-0.2, dtype),
             "hi": scalar(0.4, dtype)}
    nodes = [node("MatMul", ["x", "w"], "mm"), node("Add", ["mm", "b"], "biased")]
    inputs, last = {"x": [2, 5, 8]}, "biased"
    if residual:
        nodes.append(node("Add", ["z", last], "summed"))
        inputs["z"] = [2, 5, 6]
        last = "summed"
    if ending is not None:
        nodes.append(node(ending[0], [last, *ending[1]], "y"))
        last = "y"
    body = build(nodes, inputs, [last], inits, opset=20, dtype=helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))
    plan = _plan_matches_the_body_loop(body, "MatMul", None, seed=7)
    assert (plan.tail is not None) == (ending is not None and ending[0] in ("Gelu", "Sigmoid", "Tanh"))


def test_a_bias_along_another_axis_is_not_a_matmul_epilogue() -> None:
    """A per-row constant after a MatMul broadcasts along the rows, not the features: the body loop runs."""
    body = build([node("MatMul", ["x", "w"], "mm"), node("Add", ["mm", "b"], "y")], {"x": [5, 8]}, ["y"],
                 {"w": rand(8, 6), "b": rand(5, 1)})
    assert body_epilogue.plan_body_epilogue(body, REGISTRY) is None


def _plan_matches_the_body_loop(body: Graph, head: str, act: str | None, seed: int) -> body_epilogue.EpiloguePlan:
    """`body` (the graph stands for a fused body: inputs, one output) is planned with `head` first, and the
    plan's output is bit for bit what running the body op by op gives (every op called: `act` after the
    head, or the body's own list when act is None)."""
    plan = body_epilogue.plan_body_epilogue(body, REGISTRY)
    assert plan is not None and plan.head.op_type == head
    feeds = _feeds(body, seed=seed)
    OpByOp.calls = []
    (out,) = body.outputs
    want = Executor(body, interpreter=OpByOp).run(feeds).outputs[out]
    assert OpByOp.calls == ([head, act] if act is not None else [n.op_type for n in body.nodes])
    got = plan.run(body, [feeds[t] for t in body.inputs])
    assert got is not None
    assert got[0].dtype == want.dtype
    np.testing.assert_array_equal(got[0], want)
    return plan


def test_a_fully_connection_grouped_with_its_residual_runs_as_one_matmul_and_pass() -> None:
    """BERT's block tails at O3: UB fusion groups a FullyConnection (MatMul + bias) with the residual Add. The
    plan reaches into the FullyConnection for its MatMul and bias: the product, then bias and residual in one
    pass, bit for bit the nested loop."""
    inits = {"w": rand(8, 6, scale=0.3), "b": rand(6)}
    graph = build([node("MatMul", ["x", "w"], "mm"), node("Add", ["mm", "b"], "biased"),
                   node("Add", ["biased", "z"], "y")], {"x": [2, 5, 8], "z": [2, 5, 6]}, ["y"], inits)
    compiled = ge_core.compile(graph, opt_level="O3").graph
    (group,) = [n for n in compiled.nodes if n.body is not None]
    assert group.body is not None and [n.op_type for n in group.body.nodes] == ["FullyConnection", "Add"]
    plan = body_epilogue.plan_body_epilogue(group.body, REGISTRY)
    assert plan is not None and plan.head.op_type == "MatMul" and plan.bias == "b" and plan.residual == "z"
    feeds = _feeds(compiled, seed=8)
    OpByOp.calls = []
    want = Executor(compiled, interpreter=OpByOp).run(feeds).outputs
    assert OpByOp.calls == ["MatMul", "Add", "Add"]
    got = Executor(compiled).run(feeds).outputs
    np.testing.assert_array_equal(got["y"], want["y"])


def test_the_matmul_fast_path_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """A registered-kernel interpreter runs a linear layer's body as the plan: no body op is called."""
    inits = {"w": rand(8, 6, scale=0.3), "b": rand(6)}
    graph = build([node("MatMul", ["x", "w"], "mm"), node("Add", ["mm", "b"], "biased"),
                   node("Add", ["biased", "z"], "y")], {"x": [2, 5, 8], "z": [2, 5, 6]}, ["y"], inits)
    compiled = ge_core.compile(graph, opt_level="O3").graph
    seen = kernel_calls(monkeypatch, compiled, _feeds(compiled, seed=9))
    assert "MatMul" not in seen and "Add" not in seen
