"""If, Loop and Scan run by the interpreter match ONNX Runtime: as imported, compiled at O3, on the memory
plan's arena, saved as .gem and through the CLI; errors inside name the node, the subgraph and the iteration;
a kernel-call override (precision modes) applies inside subgraphs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import ge_core
from ge_core.cli.main import main
from ge_core.errors import ExecutionError
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY, OpDef, OpRegistry
from ge_core.runtime import Executor, Interpreter
from tests.control_models import feeds_for, loop_rnn, scan_rnn, vad_if

MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "vad_if": vad_if, "loop_rnn": loop_rnn, "loop_zero_trips": lambda: loop_rnn(0), "scan_rnn": scan_rnn,
    "scan_reverse_axis1": lambda: scan_rnn(axis=1, reverse=True, out_axis=1),
}
FEEDS = [(0, 0.2), (1, 3.0)]  # quiet and loud: the VAD takes each branch once


def ort_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))


def assert_same(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert set(got) == set(want)
    for name, value in want.items():
        assert got[name].shape == value.shape, name
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("name", MODELS)
def test_matches_onnxruntime_imported_compiled_and_on_the_arena(name: str, tmp_path: Path) -> None:
    model = MODELS[name]()
    graph = ge_core.load_onnx(model.SerializeToString())
    compiled = ge_core.compile(graph, opt_level="O3")
    compiled.graph.verify(REGISTRY)
    assert compiled.memory is not None  # static shapes: the node's outputs are planned in the arena
    loaded = ge_core.load_compiled(compiled.save(tmp_path / "m.gem"))
    assert loaded.graph.to_text() == compiled.graph.to_text()
    for seed, scale in FEEDS:
        feeds = feeds_for(model, seed, scale)
        want = ort_outputs(model, feeds)
        assert_same(ge_core.execute(graph, feeds), want)
        assert_same(compiled.run(feeds), want)
        assert_same(compiled.run_on_arena(feeds), want)
        assert_same(loaded.run(feeds), want)


def test_the_vad_takes_both_branches() -> None:
    """Quiet input: the silence head (a tenth of the mean, plus the bias); loud: a sigmoid score."""
    graph = ge_core.load_onnx(vad_if().SerializeToString())
    quiet = feeds_for(vad_if(), 0, 0.2)
    np.testing.assert_allclose(ge_core.execute(graph, quiet)["y"], quiet["x"].mean() * 0.1 + 0.25, rtol=1e-5)
    loud = ge_core.execute(graph, feeds_for(vad_if(), 1, 3.0))["y"]
    assert 0.25 < float(loud[0, 0]) < 1.25


@pytest.mark.parametrize("name", ["vad_if", "loop_rnn"])
def test_cli_run_and_compile(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = MODELS[name]()
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    feeds = feeds_for(model, 1, 3.0)
    np.savez(tmp_path / "in.npz", **feeds)  # type: ignore[arg-type]
    out = tmp_path / "out.npz"
    code = main(["run", str(path), "--opt-level", "O3", "--inputs", str(tmp_path / "in.npz"), "--outputs", str(out)])
    assert code == 0, capsys.readouterr().err
    with np.load(out) as got:
        assert_same({k: got[k] for k in got.files}, ort_outputs(model, feeds))
    code = main(["compile", str(path), "--opt-level", "O3", "--verify", "--report", str(tmp_path / "r.json")])
    assert code == 0, capsys.readouterr().err


def test_an_error_inside_names_the_node_the_subgraph_and_the_iteration() -> None:
    model = loop_rnn(7)  # frames has 5: Gather fails in iteration 5
    graph = ge_core.load_onnx(model.SerializeToString())
    with pytest.raises(ExecutionError, match=r"running node 'Loop_0' \(Loop\).* in body, iteration 5: running node "
                                             r"'Gather_0' \(Gather\)"):
        ge_core.execute(graph, feeds_for(model))


class _Counting(Interpreter):
    """Counts kernel calls by op type (what a precision mode's override sees)."""

    calls: dict[str, int]

    def __init__(self, graph: Graph, registry: OpRegistry = REGISTRY) -> None:
        super().__init__(graph, registry)
        self.calls = {}

    def call_kernel(self, node: Node, op: OpDef, args: list[np.ndarray | None]) -> Sequence[np.ndarray]:
        self.calls[node.op_type] = self.calls.get(node.op_type, 0) + 1
        return super().call_kernel(node, op, args)


def test_kernel_call_overrides_apply_inside_subgraphs() -> None:
    graph = ge_core.load_onnx(loop_rnn().SerializeToString())
    made: list[_Counting] = []

    def factory(g: Graph, registry: OpRegistry) -> Interpreter:
        made.append(_Counting(g, registry))
        return made[-1]

    Executor(graph, interpreter=factory).run(feeds_for(loop_rnn()))
    calls = made[0].calls
    assert calls["Gather"] == calls["Tanh"] == 5  # once per iteration
    assert calls.get("Mul", 0) + calls.get("Neg", 0) == 5  # the nested If's branch, once per iteration


def test_precision_mode_rounds_inside_the_scan_body() -> None:
    compiled = ge_core.compile(ge_core.load_onnx(scan_rnn().SerializeToString()), opt_level="O3")
    result = ge_core.simulate(compiled, feeds=feeds_for(scan_rnn(), 1, 3.0), precision="force_fp16")
    assert 0 < max(result.precision_errors.values()) < 1e-2
    row = next(r for r in result.ops if r.op_type == "Scan")
    assert row.tiling.startswith("Scan: 5 iteration(s) x body") and row.latency_us > 0
