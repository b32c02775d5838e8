"""UbFusionPass: groups, the reasons it refuses, the UB working-set model, and the real samples."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge_core
from ge_core.compiler import CompiledModel
from ge_core.debugging.dump import fusion_result
from ge_core.hardware.ub_working_set import WorkingSet, working_set
from ge_core.ir import Graph, TensorDesc
from ge_core.ops import REGISTRY
from ge_core.passes.fusion.ub.ub_fusion import UbFusionPass
from ge_core.passes.infra.base import FusionDecision, PassResult
from ge_core.passes.infra.instruments import relative_error
from ge_core.passes.infra.manager import PipelineStep
from ge_core.passes.infra.pipeline import default_pipeline
from ge_core.samples.registry import get_sample, sample_bytes
from tests.passes.fusion_cases import node, run_observed

RNG = np.random.default_rng(0)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def build(nodes: list[onnx.NodeProto], inputs: Mapping[str, list[int | str]], outputs: list[str],
          inits: Mapping[str, np.ndarray] | None = None, dtype: int = TensorProto.FLOAT) -> Graph:
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(k, dtype, v) for k, v in inputs.items()],
                              [helper.make_tensor_value_info(o, dtype, None) for o in outputs],
                              initializer=[numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return ge_core.load_onnx(model.SerializeToString())


def run_checked(graph: Graph, pass_: UbFusionPass | None = None) -> PassResult:
    """Run the pass; check verify(), the interface, numerics (1e-4 relative) and the changed flag."""
    pass_ = pass_ or UbFusionPass()
    result, text, want, got = run_observed(pass_, graph)
    assert max(relative_error(got[t], want[t]) for t in want) <= 1e-4
    assert (graph.to_text() != text) == result.changed
    again = pass_.run(graph)  # idempotent: a UB-fused kernel is final
    assert not again.changed
    return result


def only(decisions: tuple[FusionDecision, ...], accepted: bool) -> list[FusionDecision]:
    return [d for d in decisions if d.accepted == accepted]


# ---- what it fuses ------------------------------------------------------------------------------------

def test_conv_add_relu() -> None:
    g = build([node("Conv", ["x", "w"], "conv", pads=[1, 1, 1, 1]), node("Add", ["conv", "b"], "add"),
               node("Relu", ["add"], "y")], {"x": [1, 3, 8, 8]}, ["y"], {"w": rand(4, 3, 3, 3), "b": rand(1, 4, 1, 1)})
    result = run_checked(g)
    assert g.to_text() == """\
graph g (%x: f32[1,3,8,8]) {
  const %w: f32[4,3,3,3]
  const %b: f32[1,4,1,1]
  %y = ge.UbFused(%x, %w, %b) {anchor='Conv', anchor_node='conv', ops=['Conv', 'Add', 'Relu'], tile_elems=256, \
ub_bytes=262144, working_set_bytes=6208} : f32[1,4,8,8]  # conv+add+y {
      %conv = Conv(%x, %w) {pads=[1, 1, 1, 1]} : f32[1,4,8,8]
      %add = Add(%conv, %b) : f32[1,4,8,8]
      %y = Relu(%add) : f32[1,4,8,8]
  }
  return %y
}"""
    (decision,) = result.decisions
    assert decision.accepted and decision.pattern == "Conv+Add+Relu" and decision.nodes == ("conv", "add", "y")
    assert decision.fused_node == "conv+add+y"
    assert decision.reason.startswith("grouped cube op 'conv' (Conv) with 2 elementwise/broadcast op(s)")
    assert result.notes[0] == "1 UB kernel(s) fused: 3 -> 1 kernels"


def test_matmul_add_tanh() -> None:
    g = build([node("MatMul", ["x", "w"], "mm"), node("Add", ["mm", "b"], "add"), node("Tanh", ["add"], "y")],
              {"x": [2, 16]}, ["y"], {"w": rand(16, 8), "b": rand(8)})
    result = run_checked(g)
    (fused,) = g.nodes
    assert (fused.op_type, fused.domain, fused.attr("ops")) == ("UbFused", "ge", ["MatMul", "Add", "Tanh"])
    assert fused.body is not None and [n.name for n in fused.body.nodes] == ["mm", "add", "y"]
    assert result.decisions[0].pattern == "MatMul+Add+Tanh"


def diamond() -> Graph:
    """h = Neg(x); a = Exp(h), b = Sigmoid(h); y = Mul(a, b): the readers of h meet again at y."""
    return build([node("Neg", ["x"], "h"), node("Exp", ["h"], "a"), node("Sigmoid", ["h"], "b"),
                  node("Mul", ["a", "b"], "y")], {"x": [2, 8]}, ["y"])


def test_elementwise_diamond_fuses_whole() -> None:
    g = diamond()
    result = run_checked(g)
    assert g.to_text() == """\
graph g (%x: f32[2,8]) {
  %y = ge.UbFused(%x) {anchor='Mul', anchor_node='y', ops=['Neg', 'Exp', 'Sigmoid', 'Mul'], tile_elems=16, \
ub_bytes=262144, working_set_bytes=640} : f32[2,8]  # h+a+b+... {
      %h = Neg(%x) : f32[2,8]
      %a = Exp(%h) : f32[2,8]
      %b = Sigmoid(%h) : f32[2,8]
      %y = Mul(%a, %b) : f32[2,8]
  }
  return %y
}"""
    assert result.decisions[0].reason.startswith("grouped 4 elementwise/broadcast/injective op(s) ('h', 'a', 'b', 'y')")


def test_elementwise_then_reduce_mean() -> None:
    g = build([node("Mul", ["x", "x"], "sq"), node("ReduceMean", ["sq"], "y", axes=[-1])], {"x": [4, 32]}, ["y"])
    result = run_checked(g)
    assert g.to_text() == """\
graph g (%x: f32[4,32]) {
  %y = ge.UbFused(%x) {anchor='ReduceMean', anchor_node='y', ops=['Mul', 'ReduceMean'], tile_elems=128, \
ub_bytes=262144, working_set_bytes=2112} : f32[4,1]  # sq+y {
      %sq = Mul(%x, %x) : f32[4,32]
      %y = ReduceMean(%sq) {axes=[-1]} : f32[4,1]
  }
  return %y
}"""
    assert result.decisions[0].reason.startswith("grouped 1 elementwise/broadcast/injective op(s) ('sq') into one "
                                                 "kernel, ending in reduce 'y' (ReduceMean)")


def test_views_ride_along_in_a_cube_group() -> None:
    """A Reshape between MatMul and Add launches no kernel: it joins the group instead of splitting it."""
    g = build([node("MatMul", ["x", "w"], "mm"), node("Reshape", ["mm", "shape"], "r"), node("Add", ["r", "b"], "y")],
              {"x": [2, 16]}, ["y"], {"w": rand(16, 8), "shape": np.array([2, 2, 4]), "b": rand(4)})
    result = run_checked(g)
    assert result.decisions[0].pattern == "MatMul+Reshape+Add" and result.decisions[0].accepted


# ---- why it refuses -------------------------------------------------------------------------------------

def test_opaque_op_in_between() -> None:
    g = build([node("Relu", ["x"], "a"), node("MaxPool", ["a"], "p", kernel_shape=[2, 2]), node("Relu", ["p"], "y")],
              {"x": [1, 2, 4, 4]}, ["y"])
    result = run_checked(g)
    assert not result.changed
    (decision,) = result.decisions
    assert (decision.nodes, decision.reason) == (("a", "p"), "MaxPool 'p' is opaque: never fused through")


def test_intermediate_read_outside_where_fusing_would_create_a_cycle() -> None:
    """h's readers meet again at y, but one way there passes the opaque MaxPool: fusing h with y would make
    the path h -> p -> y leave the group and come back."""
    g = build([node("Neg", ["x"], "h"), node("MaxPool", ["h"], "p", kernel_shape=[1, 1]), node("Relu", ["h"], "r"),
               node("Add", ["p", "r"], "y")], {"x": [1, 2, 4, 4]}, ["y"])
    result = run_checked(g)
    assert [d.reason for d in only(result.decisions, False)] == [
        "Neg output also feeds node 'p' outside the group (MaxPool 'p' is opaque: never fused through); its readers "
        "meet again only at 'y', so fusing it there would create a cycle through 'p'"]
    assert only(result.decisions, False)[0].nodes == ("h", "p")
    assert [d.nodes for d in only(result.decisions, True)] == [("r", "y")]
    assert [n.op_type for n in g.nodes] == ["Neg", "MaxPool", "UbFused"]  # Relu + Add still fuse


def test_output_also_read_by_another_group() -> None:
    """a's readers (Relu and the graph output) never meet in a node: a ends its group."""
    g = build([node("Add", ["x", "x"], "a"), node("Relu", ["a"], "r"), node("Exp", ["a"], "e")],
              {"x": [2, 4]}, ["r", "e"])
    result = run_checked(g)
    assert result.decisions[0].reason == ("Add output also feeds node 'e' outside the group: its readers 'r' and 'e' "
                                          "never meet again")


def test_ub_exceeded_splits_the_group() -> None:
    """A reduce keeps a whole slab (8192 floats) on chip: with a 64 KB UB only Neg+Exp fuse."""
    g = build([node("Neg", ["x"], "n"), node("Exp", ["n"], "e"), node("ReduceSum", ["e", "axes"], "y")],
              {"x": [4, 8192]}, ["y"], {"axes": np.array([-1])})
    result = run_checked(g, UbFusionPass(ub_bytes=64 * 1024))
    rejected, accepted = only(result.decisions, False), only(result.decisions, True)
    assert [d.nodes for d in accepted] == [("n", "e")]
    assert rejected[0].reason.startswith("working set 192.1 KB exceeds UB 64 KB: ")
    assert [n.op_type for n in g.nodes] == ["UbFused", "ReduceSum"]
    assert run_checked(build([node("Exp", ["x"], "e"), node("ReduceSum", ["e", "axes"], "y")], {"x": [4, 8192]},
                             ["y"], {"axes": np.array([-1])})).changed  # 256 KB holds it


def test_max_length_splits_a_long_chain() -> None:
    ops = ["Relu", "Neg"] * 10
    nodes = [node(op, [f"t{i}"], f"t{i + 1}") for i, op in enumerate(ops)]
    g = build(nodes, {"t0": [2, 4]}, ["t20"])
    result = run_checked(g, UbFusionPass(max_group_ops=16))
    assert [len(d.nodes) for d in only(result.decisions, True)] == [16, 4]
    (rejected,) = only(result.decisions, False)
    assert rejected.reason == ("group reached the maximum length 16: adding 't16' to the group of 't17' would make "
                               "17 ops")


def test_int64_is_not_fusable() -> None:
    g = build([node("Add", ["x", "x"], "a"), node("Mul", ["a", "a"], "y")], {"x": [2, 4]}, ["y"],
              dtype=TensorProto.INT64)
    result = run_checked(g)
    assert not result.changed
    assert [d.reason for d in result.decisions] == ["dtype int64 not fusable: Add 'a' produces 'a'"]


def test_control_edge_pins() -> None:
    g = Graph("g")
    d = TensorDesc((2, 4), "float32")
    g.add_input("x", d)
    g.add_node("Relu", ["x"], ["a"], name="a", descs=[d])
    g.add_node("Neg", ["a"], ["b"], name="b", descs=[d], control_inputs=["side"])
    g.add_node("Exp", ["b"], ["y"], name="y", descs=[d])
    g.add_node("Abs", ["x"], ["side"], name="side", descs=[d], before=g.node("a"))
    g.set_outputs(["y", "side"])
    result = run_checked(g)
    assert not result.changed
    assert [d.reason for d in result.decisions] == ["Neg 'b' is pinned by a control edge: never fused",
                                                    "Neg 'b' is pinned by a control edge: never fused"]


def test_dynamic_shape_leaves_the_working_set_unknown() -> None:
    g = build([node("Relu", ["x"], "a"), node("Neg", ["a"], "y")], {"x": ["batch", 8]}, ["y"])
    result = UbFusionPass().run(g)
    assert not result.changed
    assert [d.reason for d in result.decisions] == ["working set unknown: 'x' has a dynamic shape f32[?,8]"]


def test_dry_run_logs_and_changes_nothing() -> None:
    g = diamond()
    text = g.to_text()
    result = UbFusionPass(dry_run=True).run(g)
    assert g.to_text() == text and not result.changed
    assert [(d.nodes, d.accepted, d.reason) for d in result.decisions] == [
        (("h", "a", "b", "y"), False, "disabled by switch file")]


def test_switch_file_keeps_the_dry_run_log() -> None:
    compiled = ge_core.compile(diamond(), opt_level="O3", disabled=["UbFusionPass"])
    decisions = [d for d in compiled.report["fusion"]["decisions"] if d["pass"] == "UbFusionPass"]
    assert [d["reason"] for d in decisions] == ["disabled by switch file"]
    assert fusion_result(compiled.records)["session_and_graph_id_0_0"]["ub_fusion"]["UbFusionPass"] == {
        "match_times": "1", "effect_times": "0", "repository_hit_times": "0"}


def test_cycle_check_fires_as_a_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """The grouping never makes a non-convex group; if one slipped through, ir.fusion's check refuses it."""
    import ge_core.passes.fusion.ub.ub_fusion as module

    g = diamond()
    monkeypatch.setattr(module, "cycle_through", lambda graph, group: graph.node("a"))
    result = UbFusionPass().run(g)
    assert not result.changed
    assert result.decisions[0].reason.startswith("would create a cycle through 'a'")


def test_profiles() -> None:
    assert UbFusionPass.for_profile("ascend910b").ub_bytes == 192 * 1024
    assert UbFusionPass.for_profile("Ascend310", max_group_ops=8) == UbFusionPass(256 * 1024, 8)
    with pytest.raises(ge_core.errors.GEError, match="ascend910b"):
        UbFusionPass.for_profile("gpu")


@pytest.mark.parametrize(("hardware", "ub"), [(None, 256 * 1024), ("ascend910", 256 * 1024),
                                               ("ascend910b", 192 * 1024), ("ascend310", 256 * 1024)])
def test_the_pipeline_sizes_ub_groups_to_the_compiles_target(hardware: str | None, ub: int) -> None:
    """A compile for a target fuses to that target's UB: the decisions say which UB they were sized to."""
    (step,) = [s for s in default_pipeline("O3", hardware) if s.name == "UbFusionPass"]
    assert step.pass_.ub_bytes == ub  # type: ignore[attr-defined]
    sample = get_sample("transformer_encoder")
    graph = ge_core.load_onnx(sample_bytes(sample.name), sample.input_shapes)
    compiled = ge_core.compile(graph, opt_level="O3", hardware=hardware)
    sized = {n.attrs["ub_bytes"] for n in compiled.graph.nodes if "ub_bytes" in n.attrs}
    assert sized == {ub}


# ---- the working-set model -----------------------------------------------------------------------------

def test_working_set_counts_buffers_by_hand() -> None:
    """Conv [1,4,8,8] -> Add(per-channel bias [1,4,1,1]) -> Relu, fp32. Buffers at a tile of T elements:
    the Conv output (FixPipe result), the bias (4 floats: its own size), the Add result alive while Relu
    runs, the output; each rounded up to 32 bytes, all doubled."""
    g = build([node("Conv", ["x", "w"], "conv"), node("Add", ["conv", "b"], "add"), node("Relu", ["add"], "y")],
              {"x": [1, 3, 8, 8]}, ["y"], {"w": rand(4, 3, 1, 1), "b": rand(1, 4, 1, 1)})
    model = working_set(g, list(g.nodes))
    assert isinstance(model, WorkingSet)
    assert model.bytes_at(1) == 2 * 4 * 32  # one 32-byte block each
    assert model.bytes_at(256) == 2 * (1024 + 32 + 1024 + 1024)
    assert model.bytes_at(64) == 2 * (256 + 32 + 256 + 256)
    assert model.best_tile(2 * (256 + 32 + 256 + 256)) == 64
    assert model.best_tile(100) is None


def test_reduce_needs_a_whole_slab() -> None:
    g = build([node("Exp", ["x"], "e"), node("Softmax", ["e"], "y", axis=1)], {"x": [3, 100, 7]}, ["y"])
    model = working_set(g, list(g.nodes))
    assert isinstance(model, WorkingSet) and model.min_tile == 100


# ---- real samples and scale ------------------------------------------------------------------------------

SAMPLES = ["conv_bn_relu", "residual_block", "mlp", "transformer_encoder", "resnet50", "densenet121", "inception_v2",
           "squeezenet", "shufflenet", "vgg19", "bert_encoder_torch", "ocr_det_db_paddle", "ocr_rec_crnn_paddle"]


def no_graph_fusion() -> list[PipelineStep]:
    """O3 without the graph-fusion patterns: what UB fusion does on its own."""
    return [s for s in default_pipeline("O3") if getattr(s.pass_, "fusion_kind", "") != "graph"]


def kernels_before_and_after(name: str, pipeline: list[PipelineStep] | None = None) -> tuple[int, CompiledModel]:
    """Kernels with UbFusionPass switched off, and the compile with it on (verify() after every pass)."""
    sample, data = get_sample(name), sample_bytes(name)
    shapes = sample.input_shapes or None
    compiled = ge_core.compile(data, opt_level="O3", input_shapes=shapes, pipeline=pipeline, verify=True)
    without = ge_core.compile(data, opt_level="O3", input_shapes=shapes, pipeline=pipeline, disabled=["UbFusionPass"])
    return without.plan.kernels, compiled


def check_outputs(name: str, compiled: CompiledModel) -> None:
    graph = ge_core.load_onnx(sample_bytes(name), get_sample(name).input_shapes or None)
    feeds = ge_core.random_feeds(graph, seed=0)
    want, got = ge_core.execute(graph, feeds), compiled.run(feeds)
    assert max(relative_error(got[t], want[t]) for t in want) <= 1e-4


@pytest.mark.slow
@pytest.mark.parametrize("name", SAMPLES)
def test_real_samples_after_graph_fusion(name: str) -> None:
    """The default O3 pipeline: UB fusion takes what graph fusion left; outputs unchanged."""
    before, compiled = kernels_before_and_after(name)
    check_outputs(name, compiled)
    assert compiled.plan.kernels <= before
    ub = [d for d in compiled.report["fusion"]["decisions"] if d["pass"] == "UbFusionPass"]
    assert ub and all(d["reason"] for d in ub)


@pytest.mark.slow
@pytest.mark.parametrize("name", SAMPLES)
def test_real_samples_ub_fusion_alone(name: str) -> None:
    """Without graph fusion, UB fusion alone cuts the kernel count of every sample; outputs unchanged."""
    before, compiled = kernels_before_and_after(name, no_graph_fusion())
    check_outputs(name, compiled)
    assert compiled.plan.kernels < before


def test_residual_block_log() -> None:
    before, compiled = kernels_before_and_after("residual_block", no_graph_fusion())
    assert (before, compiled.plan.kernels) == (11, 5)
    reasons = [d["reason"] for d in compiled.report["fusion"]["decisions"]
               if d["pass"] == "UbFusionPass" and not d["accepted"]]
    assert "Conv 'block1.conv2' is a cube op: it starts its own kernel" in reasons
    assert "group would hold two cube ops, 'block2.conv2' and 'block2.shortcut': one cube op per kernel" in reasons


def test_ten_thousand_nodes_fuse() -> None:
    """The whole 10k-node synthetic model as imported (time: bench/bench_compile.py, not a test)."""
    from bench.synthetic import synthetic_model

    graph = ge_core.compile(synthetic_model(10_000, 0), pipeline=default_pipeline("O3")[:1]).graph
    assert len(graph) == 10_000
    result = UbFusionPass().run(graph)
    assert result.changed and len(graph) < 5_000
    graph.verify(REGISTRY)
