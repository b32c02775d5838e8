"""The interpreter: the one node loop. Its hooks apply inside fused bodies; the executor, the arena and
calibration all go through it and give what they gave before."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import pytest

import ge_core
from ge_core.errors import GEError
from ge_core.ir import Graph, Node
from ge_core.ir.fusion import fuse
from ge_core.ops import REGISTRY, OpDef, OpRegistry, blas
from ge_core.runtime import ArenaExecutor, Executor, Interpreter
from ge_core.runtime.interpreter import Env
from ge_core.samples import calibrate
from ge_core.samples.registry import SAMPLE_DIR, sample_bytes
from tests.ir.graphs import diamond


def nested_fused() -> Graph:
    """diamond with (sig, tanh, add) fused, and that group fused again with mul: a body inside a body."""
    g = diamond()
    inner = fuse(g, [g.node("sig"), g.node("tanh"), g.node("add")], "UbFused", name="inner")
    fuse(g, [inner, g.node("mul")], "UbFused", name="outer")
    assert [n.name for n in g.nodes] == ["relu", "outer", "exp"]
    return g


FEEDS = {"x": np.linspace(-2.0, 2.0, 8, dtype=np.float32).reshape(2, 4)}


class NoTanh(Interpreter):
    """Records every kernel call and replaces Tanh by zeros."""

    def __init__(self, graph: Graph, registry: OpRegistry = REGISTRY) -> None:
        super().__init__(graph, registry)
        self.calls: list[str] = []

    def call_kernel(self, node: Node, op: OpDef, args: list[np.ndarray | None]) -> Sequence[np.ndarray]:
        self.calls.append(node.name)
        if node.op_type == "Tanh":
            x = args[0]
            assert x is not None
            return [np.zeros_like(x)]
        return super().call_kernel(node, op, args)


def no_tanh_reference() -> np.ndarray:
    a = np.maximum(FEEDS["x"], 0)
    return np.exp((1 / (1 + np.exp(-a))) * np.float32(0.5))


def test_a_call_kernel_override_applies_inside_fused_bodies_nested_too() -> None:
    graph = nested_fused()
    interpreter = NoTanh(graph)
    result = interpreter.run(FEEDS)
    # every kernel, top level and inside both bodies, went through the override; fused nodes are no kernel
    assert interpreter.calls == ["relu", "sig", "tanh", "add", "mul", "exp"]
    np.testing.assert_allclose(result.outputs["y"], no_tanh_reference(), rtol=1e-6)
    assert [t.node for t in result.timings] == ["relu", "outer", "exp"]  # one timing per top-level node
    plain = ge_core.execute(graph, FEEDS)["y"]
    np.testing.assert_array_equal(plain, ge_core.execute(diamond(), FEEDS)["y"])


def test_executor_runs_through_a_given_interpreter() -> None:
    out = Executor(nested_fused(), interpreter=NoTanh).run(FEEDS).outputs["y"]
    np.testing.assert_allclose(out, no_tanh_reference(), rtol=1e-6)


def test_before_node_and_store_outputs_hooks_see_every_top_level_node() -> None:
    seen: list[tuple[str, str]] = []

    class Watching(Interpreter):
        def before_node(self, node: Node, env: Env) -> None:
            seen.append(("before", node.name))

        def store_outputs(self, node: Node, values: list[np.ndarray], env: Env) -> None:
            seen.append(("store", node.name))
            super().store_outputs(node, values, env)

    Watching(nested_fused()).run(FEEDS)
    assert seen == [(hook, n) for n in ("relu", "outer", "exp") for hook in ("before", "store")]


def test_a_fused_opdef_has_no_kernel_of_its_own() -> None:
    graph = nested_fused()
    node = graph.node("outer")
    op = REGISTRY.lookup(node)
    assert REGISTRY.runs_body(node) and op.category is not None
    with pytest.raises(GEError, match="runs through the interpreter"):
        op.kernel(node, [FEEDS["x"], np.full((4,), 0.5, np.float32)])


def test_a_fused_body_with_unknown_dims_is_specialised_to_the_fed_shapes() -> None:
    compiled = ge_core.compile(sample_bytes("mlp"), opt_level="O3")  # batch left symbolic, bodies too
    reference = ge_core.compile(sample_bytes("mlp"), opt_level="O0")
    assert any(REGISTRY.runs_body(n) and not n.body.desc(n.body.inputs[0]).is_static
               for n in compiled.graph.nodes if n.body is not None)
    executor = Executor(compiled.graph)
    for batch in (1, 5, 1):
        feeds = {"x": np.random.default_rng(batch).standard_normal((batch, 64)).astype(np.float32)}
        got, want = executor.run(feeds).outputs, Executor(reference.graph).run(feeds).outputs
        for t, value in want.items():
            np.testing.assert_allclose(got[t], value, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["conv_bn_relu", "residual_block", "mlp"])
def test_the_arena_and_the_plain_executor_agree_bit_for_bit(name: str) -> None:
    shapes = "x:4,64" if name == "mlp" else None
    compiled = ge_core.compile(sample_bytes(name), opt_level="O3", input_shapes=shapes)
    assert compiled.memory is not None and any(REGISTRY.runs_body(n) for n in compiled.graph.nodes)
    feeds = ge_core.random_feeds(compiled.graph, seed=1)
    arena = ArenaExecutor(compiled.graph, compiled.memory).run(feeds)
    plain = Executor(compiled.graph).run(feeds)
    assert set(arena.outputs) == set(plain.outputs)
    for t, value in plain.outputs.items():
        np.testing.assert_array_equal(arena.outputs[t], value)
    assert [t.node for t in arena.timings] == [s.node for s in compiled.memory.steps]


def kernel_by_kernel_stats(graph: Graph, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The calibration statistics as the loop before the interpreter computed them: each registry kernel
    called in turn, each calibratable BN's mean/var replaced just before it runs (numpy's BLAS on one thread,
    as calibration runs it: OpenBLAS's last bits may differ between thread counts)."""
    env: dict[str, np.ndarray] = {**graph.constants, **feeds}
    stats: dict[str, np.ndarray] = {}
    with np.errstate(all="ignore"), blas.one_thread():
        for node in graph.nodes:
            if node.op_type == "BatchNormalization" and calibrate._calibratable(graph, node):
                stats.update(calibrate._calibrate(node, env))
            outputs = REGISTRY.lookup(node).kernel(node, [env[t] if t else None for t in node.inputs])
            env.update((t, np.asarray(v)) for t, v in zip(node.outputs, outputs, strict=False) if t)
    return stats


def test_calibration_through_the_interpreter_gives_the_same_bytes_as_a_kernel_by_kernel_loop() -> None:
    model = onnx.load(str(SAMPLE_DIR / "conv_bn_relu.onnx"))
    graph = ge_core.load_onnx(model.SerializeToString())
    feeds = calibrate.calibration_feeds(graph, seed=0)
    want = kernel_by_kernel_stats(graph, feeds)
    assert set(want) == {"bn1.running_mean", "bn1.running_var", "bn2.running_mean", "bn2.running_var"}
    got = calibrate._forward(graph, feeds)
    assert set(got) == set(want)
    for name, value in want.items():
        assert got[name].dtype == value.dtype and got[name].tobytes() == value.tobytes(), name
    calibrated = {t.name: t for t in calibrate.calibrate_batch_norms(model, seed=0).graph.initializer}
    for name, value in want.items():
        assert onnx.numpy_helper.to_array(calibrated[name]).tobytes() == value.tobytes(), name
