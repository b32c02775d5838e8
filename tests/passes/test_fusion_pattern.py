"""The pattern engine (ge_core/passes/fusion/pattern.py, driver.py): matching rules, the decision log,
dry runs and the pipeline's switch file, and that the passes stay linear on 10k-node graphs."""

from __future__ import annotations

import pytest

import ge_core
from ge_core.ops import REGISTRY
from ge_core.passes.fusion.graph import ConvActivationFusionPass, GeluFusionPass, LayerNormFusionPass
from ge_core.passes.fusion.graph.pattern import FusedOp, Pattern, find_matches, op
from ge_core.passes.infra.base import Stage
from ge_core.passes.infra.instruments import relative_error
from ge_core.passes.infra.manager import PipelineStep
from ge_core.passes.infra.pipeline import all_passes, default_pipeline, without
from ge_core.samples.registry import get_sample, sample_bytes
from tests.passes.fusion_cases import build, node, rand, run_checked, scalar

FUSION_PASSES = ["LayerNormFusionPass", "GeluFusionPass", "HardActivationFusionPass", "MatMulAddFusionPass",
                 "ConvActivationFusionPass", "AttentionFusionPass"]


def _noop_rewrite(graph: object, match: object) -> FusedOp:
    return FusedOp("X", "")


SQUARE_PLUS = Pattern("x*x+c", (op("sq", "Mul", "$x", "$x"), op("out", "Add", "sq", "#c", commutative=True)),
                      _noop_rewrite)


def test_bound_names_must_agree_and_operands_commute() -> None:
    g = build([node("Mul", ["x", "x"], "sq"), node("Add", ["c", "sq"], "y"), node("Mul", ["x", "z"], "xz"),
               node("Add", ["xz", "c"], "w")], {"x": [3], "z": [3]}, ["y", "w"], {"c": rand(3)})
    (match,) = find_matches(g, SQUARE_PLUS, g.node("y"))  # Add(c, sq): the commuted order
    assert (match.values, [n.name for n in match.group(g)]) == ({"x": "x", "c": "c"}, ["sq", "y"])
    assert list(find_matches(g, SQUARE_PLUS, g.node("w"))) == []  # Mul(x, z): "$x" cannot be both


def test_constant_and_activation_operands() -> None:
    g = build([node("Mul", ["x", "x"], "sq"), node("Add", ["sq", "z"], "y")], {"x": [3], "z": [3]}, ["y"], {})
    assert list(find_matches(g, SQUARE_PLUS, g.node("y"))) == []  # "#c" needs a constant
    residual = Pattern("r", (op("sq", "Mul", "$x", "$x"), op("out", "Add", "sq", "@other")), _noop_rewrite)
    assert len(list(find_matches(g, residual, g.node("y")))) == 1
    g2 = build([node("Mul", ["x", "x"], "sq"), node("Add", ["sq", "c"], "y")], {"x": [3]}, ["y"], {"c": rand(3)})
    assert list(find_matches(g2, residual, g2.node("y"))) == []  # "@other" refuses a constant


def test_a_mistyped_pattern_is_refused_when_declared() -> None:
    with pytest.raises(ValueError, match="pattern 'bad'"):
        Pattern("bad", (op("sq", "Mul", "$x", "$x"), op("out", "Add", "sqr", "#c")), _noop_rewrite)
    with pytest.raises(ValueError, match="reachable"):
        Pattern("bad", (op("lone", "Neg", "$x"), op("out", "Relu", "$x")), _noop_rewrite)


def test_structural_misses_are_not_logged() -> None:
    """Only candidates that match a pattern's shape are decisions: a lone Relu or Mul is no candidate."""
    g = build([node("Relu", ["x"], "r"), node("Mul", ["r", "x"], "y")], {"x": [1, 4, 3, 3]}, ["y"], {})
    for name in FUSION_PASSES:
        pass_ = next(p for p in all_passes() if p.name == name)
        assert run_checked(pass_, g).decisions == ()


def test_dry_run_claims_nodes_like_the_real_run() -> None:
    """Conv+Add(bias)+Relu switched off is one decision, not also Conv+Add at the Add's own anchor."""
    g = build([node("Conv", ["x", "w"], "conv"), node("Add", ["conv", "b"], "biased"), node("Relu", ["biased"], "y")],
              {"x": [1, 3, 5, 5]}, ["y"], {"w": rand(4, 3, 1, 1), "b": rand(4, 1, 1)})
    real = run_checked(ConvActivationFusionPass(), g.copy()).decisions
    dry = run_checked(ConvActivationFusionPass(dry_run=True), g).decisions
    assert [d.nodes for d in dry] == [d.nodes for d in real] == [("conv", "biased", "y")]
    assert [(d.accepted, d.reason) for d in dry] == [(False, "disabled by switch file")]


def test_pipeline_order_and_switch_file() -> None:
    names = [s.name for s in default_pipeline("O3")]
    assert [n for n in names if n in FUSION_PASSES] == FUSION_PASSES
    assert all(s.stage == Stage.OPTIMIZE_STAGE1 for s in default_pipeline("O3") if s.name in FUSION_PASSES)
    assert not any(n in FUSION_PASSES for n in (s.name for s in default_pipeline("O1")))
    steps = without(default_pipeline("O3"), ["GeluFusionPass"])
    gelu = next(s.pass_ for s in steps if s.name == "GeluFusionPass")
    assert isinstance(gelu, GeluFusionPass) and gelu.dry_run
    kinds = {p.name: getattr(p, "fusion_kind", None) for p in all_passes()}
    assert all(kinds[n] == "graph" for n in FUSION_PASSES)


def test_switched_off_pass_in_compile_report() -> None:
    compiled = ge_core.compile(sample_bytes("transformer_encoder"),
                               input_shapes=get_sample("transformer_encoder").input_shapes,
                               disabled=["GeluFusionPass"], verify=True)
    gelu = [d for d in compiled.report["fusion"]["decisions"] if d["pass"] == "GeluFusionPass"]
    assert [(d["accepted"], d["reason"]) for d in gelu] == [(False, "disabled by switch file")]
    assert "Gelu" not in {n.op_type for n in compiled.graph.nodes}


def test_passes_describe_themselves() -> None:
    for p in all_passes():
        if p.name in FUSION_PASSES:
            assert len((type(p).__doc__ or "").split()) > 40, p.name


def _ln_gelu_chain(blocks: int) -> ge_core.ir.Graph:
    """A residual chain of MatMul+Add, GELU and LayerNorm in primitives: 17 nodes and 3 fusions a block."""
    nodes, h = [], "x"
    for i in range(blocks):
        p = f"b{i}."
        nodes += [
            node("MatMul", [h, "w"], p + "mm"), node("Add", [p + "mm", "b"], p + "lin"),
            node("Div", [p + "lin", "sqrt2"], p + "d"), node("Erf", [p + "d"], p + "e"),
            node("Add", [p + "e", "one"], p + "op"),
            node("Mul", [p + "lin", p + "op"], p + "xm"), node("Mul", [p + "xm", "half"], p + "gelu"),
            node("ReduceMean", [p + "gelu"], p + "mean", axes=[-1]), node("Sub", [p + "gelu", p + "mean"], p + "sub"),
            node("Pow", [p + "sub", "two"], p + "sq"), node("ReduceMean", [p + "sq"], p + "var", axes=[-1]),
            node("Add", [p + "var", "eps"], p + "ae"), node("Sqrt", [p + "ae"], p + "std"),
            node("Div", [p + "sub", p + "std"], p + "n"), node("Mul", [p + "n", "g"], p + "sc"),
            node("Add", [p + "sc", "be"], p + "ln"), node("Add", [p + "ln", h], p + "res")]
        h = p + "res"
    inits = {"two": scalar(2.0), "eps": scalar(1e-5), "sqrt2": scalar(1.4142135), "one": scalar(1.0),
             "half": scalar(0.5), "w": rand(16, 16, scale=0.25), "b": rand(16), "g": rand(16), "be": rand(16)}
    return build(nodes, {"x": [4, 16]}, [h], inits)


def test_ten_thousand_nodes_fuse_every_block() -> None:
    """600 blocks (10.2k nodes, 1800 fusions) all fuse (time: bench/bench_compile.py, not a test)."""
    big = _ln_gelu_chain(600)
    assert len(big) == 10200
    for step in default_pipeline("O3"):
        if step.name in FUSION_PASSES:
            step.pass_.run(big)
    assert len(big) == 3 * 600
    big.verify(REGISTRY)


def test_synthetic_model_compiles_with_fusion() -> None:
    from bench.synthetic import synthetic_model

    compiled = ge_core.compile(synthetic_model(2_000, 0), opt_level="O3", verify=True)
    fused = [d for d in compiled.report["fusion"]["decisions"] if d["pass"] in FUSION_PASSES and d["accepted"]]
    assert {"MatMulAddFusionPass", "ConvActivationFusionPass"} <= {d["pass"] for d in fused}
    feeds = ge_core.random_feeds(compiled.input_graph, seed=0)
    want, got = ge_core.execute(compiled.input_graph, feeds), compiled.run(feeds)
    assert all(relative_error(got[t], want[t]) <= 1e-4 for t in want)


def test_layer_norm_pass_on_a_pipeline_of_its_own() -> None:
    """A fusion pass alone through ge_core.compile (InferShapePass first), verify() after each pass."""
    g = _ln_gelu_chain(2)
    steps = [PipelineStep(Stage.OPTIMIZE_STAGE1, LayerNormFusionPass())]
    compiled = ge_core.compile(g, pipeline=steps, verify=True)
    assert [n.op_type for n in compiled.graph.nodes].count("LayerNormalization") == 2
