"""The ONNX Attention op is priced through its kernel body (OpDef.kernel_body) exactly as the FusedAttention
graph fusion's kernel is through its body: a cube kernel around Q K^T, P V on the same cores, the scale
and softmax on the vector unit; GQA stacks the query heads of a group into one matrix; an Attention inside
a UB group counts as its body; unknown dims fall back without failing."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import ge_core
from ge_core.hardware import load_profile, tile_node
from ge_core.hardware.tiling import kernel_body
from ge_core.ir import Graph
from ge_core.passes.fusion.graph import AttentionFusionPass
from ge_core.sim import kernel_cost
from ge_core.sim.precision import parse_precision
from tests.ops.conformance import all_cases
from tests.passes.fusion_cases import build, node, scalar

FP32 = parse_precision("force_fp32")


def _attention(shapes: dict[str, list[int]], *, extra: list[object] | None = None, outputs: tuple[str, ...] = ("y",),
               inits: dict[str, np.ndarray] | None = None, **attrs: object) -> Graph:
    nodes = [helper.make_node("Attention", list(shapes)[:3], ["y" if not extra else "att"], name="att", **attrs),
             *(extra or [])]
    return build(nodes, shapes, list(outputs), inits or {}, opset=23, dtype=TensorProto.FLOAT)


def _fused_attention(q: list[int], kt: list[int], v: list[int], scale: float) -> Graph:
    g = build([node("MatMul", ["q", "kt"], "qk"), node("Mul", ["qk", "s"], "scores"),
               node("Softmax", ["scores"], "probs", axis=-1), node("MatMul", ["probs", "v"], "y")],
              {"q": q, "kt": kt, "v": v}, ["y"], {"s": scalar(scale)}, opset=17)
    assert AttentionFusionPass().run(g).changed
    return g


@pytest.mark.parametrize("profile", ["ascend310", "ascend910", "ascend910b"])
def test_priced_as_the_fused_attention_kernel(profile: str) -> None:
    p = load_profile(profile)
    a = _attention({"q": [1, 8, 128, 64], "k": [1, 8, 128, 64], "v": [1, 8, 128, 64]})
    f = _fused_attention([1, 8, 128, 64], [1, 8, 64, 128], [1, 8, 128, 64], 0.125)
    (att,), (fused,) = a.nodes, f.nodes
    assert fused.op_type == "FusedAttention"
    ca, cf = kernel_cost(att, a, p, FP32), kernel_cost(fused, f, p, FP32)
    assert ca is not None and cf is not None
    assert (ca.unit, ca.flops) == (cf.unit, cf.flops) == ("cube", ca.flops)
    assert ca.busy["cube"] == cf.busy["cube"] and ca.busy["vector"] == pytest.approx(cf.busy["vector"])
    assert ca.busy["vector"] > 0 and ca.busy["fixpipe"] > 0
    assert ca.latency_us == pytest.approx(cf.latency_us, rel=1e-3)  # DDR bytes differ by the scale constant


def test_gqa_stacks_the_query_heads_of_a_group() -> None:
    """8 query heads over 2 kv heads: 2 batches of (4 * 128) x 64 x 128, K and V loaded once per group."""
    a = _attention({"q": [1, 8, 128, 64], "k": [1, 2, 128, 64], "v": [1, 2, 128, 64]}, is_causal=1)
    (att,) = a.nodes
    t = tile_node(att, a, load_profile("ascend910"))
    assert t.unit == "cube" and t.gemm is not None
    assert (t.gemm.batch, t.gemm.m, t.gemm.k, t.gemm.n) == (2, 512, 64, 128)
    assert "fused around MatMul" in t.reason


def test_attention_in_a_ub_group_counts_its_body() -> None:
    """UB fusion may put an elementwise op after Attention (a cube op) into one kernel: its cube work is still
    the two products, not a cube op priced as vector work."""
    shapes = {"q": [1, 4, 64, 32], "k": [1, 4, 64, 32], "v": [1, 4, 64, 32]}
    plain = _attention(shapes)
    grouped = _attention(shapes, extra=[node("Mul", ["att", "two"], "y")], inits={"two": scalar(2.0)})
    compiled = ge_core.compile(grouped, opt_level=3)
    kinds = {n.op_type for n in compiled.graph.nodes}
    assert kinds == {"UbFused"}, kinds
    p = load_profile("ascend910")
    (group,) = compiled.graph.nodes
    cg, cp = kernel_cost(group, compiled.graph, p, FP32), kernel_cost(plain.nodes[0], plain, p, FP32)
    assert cg is not None and cp is not None
    assert cg.unit == "cube" and cg.busy["cube"] == cp.busy["cube"] and cg.busy["vector"] > cp.busy["vector"]
    feeds = ge_core.random_feeds(grouped, seed=0)
    np.testing.assert_allclose(compiled.run(feeds)["y"], ge_core.execute(grouped, feeds)["y"], rtol=1e-6)


def test_unknown_dims_do_not_fail() -> None:
    g = build([helper.make_node("Attention", ["q", "k", "v"], ["y"], name="att")],
              {"q": ["b", 4, 16, 8], "k": ["b", 4, 16, 8], "v": ["b", 4, 16, 8]},
              ["y"], {}, opset=23)
    (att,) = g.nodes
    assert tile_node(att, g, load_profile("ascend910")).reason.startswith("unknown dims")


def test_simulated_profile_lists_it_as_a_cube_kernel() -> None:
    a = _attention({"q": [1, 8, 128, 64], "k": [1, 2, 128, 64], "v": [1, 2, 128, 64]}, is_causal=1)
    result = ge_core.simulate(ge_core.compile(a, opt_level=3), "ascend910b", run=False)
    (row,) = result.ops
    assert (row.op_type, row.unit) == ("Attention", "cube") and row.flops > 2 * 2 * 8 * 128 * 128 * 64
    assert row.busy_us["vector"] > 0


def test_flex_attention_modifiers_are_priced_inside_its_kernel() -> None:
    """FlexAttention's score_mod subgraph (a causal mask here) is vector work nested in its cube kernel, not
    a control-flow node priced by its subgraph alone."""
    case = next(c for c in all_cases() if c.name == "test_flexattention_causal_mask")
    compiled = ge_core.compile(case.model.SerializeToString(), opt_level=3, verify=True)
    (modded,) = ge_core.simulate(compiled, "ascend910", run=False).ops
    assert (modded.op_type, modded.unit) == ("FlexAttention", "cube") and "fused around MatMul" in modded.tiling
    graph = ge_core.load_onnx(case.model)
    body = kernel_body(graph.nodes[0], graph)
    assert body is not None and [n.op_type for n in body.nodes] == ["MatMul", "Mul", "score_mod", "Softmax", "MatMul"]
