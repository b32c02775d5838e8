"""ScaleFoldPass: per-channel Mul/Add/Sub/Div by constants fold into the Conv/Gemm/MatMul weights before them."""

from __future__ import annotations

import numpy as np
import pytest

import ge_core
from ge_core.ir import Graph
from ge_core.ops import REGISTRY
from ge_core.passes.cleanup.constant_folding import ConstantFoldingPass
from ge_core.passes.cleanup.dead_code import PrunePass
from ge_core.passes.cleanup.fold_batchnorm import BatchNormFoldPass
from ge_core.passes.cleanup.fold_scale import ScaleFoldPass
from ge_core.passes.cleanup.noop_elimination import NoOpEliminationPass
from ge_core.passes.infra.base import PassResult
from ge_core.passes.infra.instruments import relative_error
from ge_core.samples.registry import get_sample, sample_bytes
from tests.passes.fusion_cases import FOLDED_CONV_RELU, build, conv_then, node, run_fold_checked

RNG = np.random.default_rng(0)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def run_checked(graph: Graph, tol: float = 1e-5) -> PassResult:
    return run_fold_checked(ScaleFoldPass(), graph, tol)


def test_conv_mul_add_chain_golden_and_weights() -> None:
    g = conv_then([node("Mul", ["conv", "k"], "scaled"), node("Add", ["t", "scaled"], "shifted"),
                   node("Relu", ["shifted"], "y")], {"k": rand(1, 4, 1, 1), "t": rand(4, 1, 1)})
    w, b, k, t = (g.constants[n].astype(np.float64) for n in ("w", "b", "k", "t"))
    result = run_checked(g)
    assert g.to_text() == FOLDED_CONV_RELU
    np.testing.assert_allclose(g.constants["conv.weight"], w * k.reshape(4, 1, 1, 1), rtol=1e-6)
    np.testing.assert_allclose(g.constants["conv.bias"], b * k.reshape(4) + t.reshape(4), rtol=1e-6)
    assert result.notes == ("folded 2 constant scale/shift op(s) into the weights before them "
                            "(1 Add into Conv, 1 Mul into Conv)",)


def test_add_creates_a_bias_and_keeps_the_output_name() -> None:
    g = conv_then([node("Add", ["conv", "t"], "y")], {"t": np.array(0.5, np.float32)}, bias=False)
    run_checked(g)
    assert g.to_text() == (
        "graph g (%x: f32[1,3,5,5]) {\n"
        "  const %w: f32[4,3,3,3]\n"
        "  const %conv.bias: f32[4]\n"
        "  %y = Conv(%x, %w, %conv.bias) {pads=[1, 1, 1, 1]} : f32[1,4,5,5]  # conv\n"
        "  return %y\n"
        "}")
    assert g.constants["conv.bias"].tolist() == [0.5] * 4


def test_mul_without_bias_creates_none() -> None:
    g = conv_then([node("Mul", ["conv", "k"], "y")], {"k": rand(1)}, bias=False)
    run_checked(g)
    assert g.nodes[0].inputs == ("x", "conv.weight")


@pytest.mark.parametrize(("op", "conv_first"), [("Sub", True), ("Sub", False), ("Div", True), ("Mul", False)])
def test_sub_div_and_either_operand_order(op: str, conv_first: bool) -> None:
    inputs = ["conv", "k"] if conv_first else ["k", "conv"]
    g = conv_then([node(op, inputs, "r"), node("Relu", ["r"], "y")], {"k": rand(4, 1, 1) + 3})
    assert run_checked(g).changed and [n.op_type for n in g.nodes] == ["Conv", "Relu"]


@pytest.mark.parametrize("group", [1, 2])
def test_conv_transpose(group: int) -> None:
    g = build([node("ConvTranspose", ["x", "w"], "ct", group=group), node("Mul", ["ct", "k"], "m"),
               node("Add", ["m", "t"], "y")], {"x": [1, 4, 3, 3]}, ["y"],
              {"w": rand(4, 3, 2, 2), "k": rand(1, 3 * group, 1, 1), "t": rand(3 * group, 1, 1)})
    assert run_checked(g).changed and [n.op_type for n in g.nodes] == ["ConvTranspose"]


def test_matmul_mul_scales_columns() -> None:
    g = build([node("MatMul", ["a", "W"], "mm"), node("Mul", ["mm", "k"], "m"), node("Tanh", ["m"], "y")],
              {"a": [2, 3, 4]}, ["y"], {"W": rand(4, 5), "k": rand(1, 5)})
    w, k = g.constants["W"], g.constants["k"]
    run_checked(g)
    assert g.to_text() == (
        "graph g (%a: f32[2,3,4]) {\n"
        "  const %mm.weight: f32[4,5]\n"
        "  %mm = MatMul(%a, %mm.weight) : f32[2,3,5]\n"
        "  %y = Tanh(%mm) : f32[2,3,5]\n"
        "  return %y\n"
        "}")
    np.testing.assert_allclose(g.constants["mm.weight"], w * k, rtol=1e-6)


@pytest.mark.parametrize(("trans_b", "c_shape", "beta"), [(0, [5], 1.0), (1, [1, 5], 2.0), (0, None, 1.0),
                                                          (1, [3, 5], 0.5), (0, [1], 0.0)])
def test_gemm_mul_then_add_per_column(trans_b: int, c_shape: list[int] | None, beta: float) -> None:
    inits = {"B": rand(5, 4) if trans_b else rand(4, 5), "k": rand(5), "t": rand(1, 5)}
    if c_shape is not None:
        inits["C"] = rand(*c_shape)
    gemm = node("Gemm", ["a", "B", "C"] if c_shape is not None else ["a", "B"], "gemm", transB=trans_b, alpha=0.5,
                beta=beta)
    g = build([gemm, node("Mul", ["gemm", "k"], "m"), node("Add", ["m", "t"], "y")], {"a": [3, 4]}, ["y"], inits)
    assert run_checked(g).changed and [n.op_type for n in g.nodes] == ["Gemm"]


NOT_FOLDED: dict[str, tuple[str, np.ndarray | None]] = {
    "varies along width": ("Mul", rand(1, 1, 1, 5)),
    "varies along height and channel": ("Add", rand(4, 5, 1)),
    "varies along batch": ("Mul", rand(2, 1, 1, 1)),             # also broadcasts the output to batch 2
    "adds a leading dim": ("Mul", rand(1, 1, 4, 1, 1)),          # output would become 5-D
    "1-D constant aligns with width": ("Mul", rand(4)[:1].repeat(5)),
    "divides by zero": ("Div", np.array([1, 0, 1, 1], np.float32).reshape(4, 1, 1)),
    "infinite scale": ("Mul", np.array(np.inf, np.float32)),
    "non-constant operand": ("Mul", None),
}


@pytest.mark.parametrize("case", NOT_FOLDED)
def test_not_folded(case: str) -> None:
    op, k = NOT_FOLDED[case]
    inputs = {"x": [1, 3, 5, 5]} if k is not None else {"x": [1, 3, 5, 5], "k": [1, 4, 1, 1]}
    g = build([node("Conv", ["x", "w"], "conv", pads=[1, 1, 1, 1]), node(op, ["conv", "k"], "y")], inputs, ["y"],
              {"w": rand(4, 3, 3, 3), **({"k": k} if k is not None else {})})
    assert not run_checked(g).changed


@pytest.mark.parametrize("case", ["read elsewhere", "graph output", "weight computed", "divided by conv",
                                  "matmul add", "matmul row scale"])
def test_structure_not_folded(case: str) -> None:
    inits = {"w": rand(4, 3, 3, 3), "k": rand(4, 1, 1), "W": rand(5, 4), "r": rand(3, 1)}
    nodes = {
        "read elsewhere": [node("Conv", ["x", "w"], "conv"), node("Mul", ["conv", "k"], "m"),
                           node("Add", ["m", "conv"], "y")],
        "graph output": [node("Conv", ["x", "w"], "conv"), node("Mul", ["conv", "k"], "y")],
        "weight computed": [node("Relu", ["w"], "w2"), node("Conv", ["x", "w2"], "conv"),
                            node("Mul", ["conv", "k"], "y")],
        "divided by conv": [node("Conv", ["x", "w"], "conv"), node("Div", ["k", "conv"], "y")],
        "matmul add": [node("Flatten", ["x"], "f"), node("MatMul", ["f", "W"], "mm"), node("Add", ["mm", "r"], "y")],
        "matmul row scale": [node("Flatten", ["x"], "f"), node("MatMul", ["f", "W"], "mm"),
                             node("Mul", ["mm", "r"], "y")],
    }[case]
    x = [3, 5] if case.startswith("matmul") else [1, 3, 5, 5]
    outputs = ["y", "conv"] if case == "graph output" else ["y"]
    g = build(nodes, {"x": x}, outputs, {k: v for k, v in inits.items() if any(k in n.input for n in nodes)})
    assert not run_checked(g).changed


@pytest.mark.parametrize("carries", [True, False])
def test_control_edges_keep_the_op(carries: bool) -> None:
    g = conv_then([node("Mul", ["conv", "k"], "m"), node("Relu", ["m"], "y")], {"k": rand(4, 1, 1)})
    if carries:  # the Mul waits for something
        g.node("m").control_inputs = ("conv",)
    else:  # something waits for the Mul
        g.add_node("Identity", ["x"], ["side"], name="side", descs=[g.desc("x")], control_inputs=["m"])
        g.set_outputs(["y", "side"])
    assert not run_checked(g).changed


def test_dead_branches_sample_mul_add_fold_into_the_conv() -> None:
    g = ge_core.load_onnx(sample_bytes("dead_branches_consts"))
    for p in (ConstantFoldingPass(), NoOpEliminationPass(), PrunePass()):
        p.run(g)  # the dead Sigmoid branch also reads the conv until pruned
    result = run_checked(g)
    assert result.notes[0].startswith("folded 2 constant scale/shift op(s)")
    assert g.users("conv")[0].op_type != "Mul"


@pytest.mark.parametrize("name", ["transformer_encoder", "bert_encoder_torch_dynamo", "mlp"])
def test_samples_without_weight_scales_are_untouched(name: str) -> None:
    g = ge_core.load_onnx(sample_bytes(name), get_sample(name).input_shapes)
    ConstantFoldingPass().run(g)
    assert not run_checked(g).changed  # MatMul + Add(bias) is not a scale; attention scales a Q @ K product


@pytest.mark.parametrize(("name", "scales"), [("inception_v2", 138), ("ocr_det_db_paddle", 13)])
def test_samples_after_batchnorm_fold(name: str, scales: int) -> None:
    """BN -> Mul -> Add with Unsqueeze'd constants: after constant folding and the BN fold, both fold.
    (densenet121 has the same pattern, 118 folds; left out to keep this file fast.)"""
    g = ge_core.load_onnx(sample_bytes(name), get_sample(name).input_shapes)
    feeds = ge_core.random_feeds(g, seed=0)
    want = ge_core.execute(g, feeds)
    for p in (ConstantFoldingPass(), NoOpEliminationPass(), BatchNormFoldPass()):
        p.run(g)
    before = len(g)
    result = ScaleFoldPass().run(g)
    g.verify(REGISTRY)
    assert before - len(g) == scales and result.notes[0].startswith(f"folded {scales} ")
    got = ge_core.execute(g, feeds)
    assert max(relative_error(got[t], want[t]) for t in want) <= 1e-4


def test_batchnorm_mul_add_fold_into_its_scale_and_bias() -> None:
    """x -> BN -> Mul -> Add -> Relu (DenseNet after each Concat): the Mul and Add go into BN's scale and B."""
    inits = {"s": rand(4), "b": rand(4), "m": rand(4), "v": np.abs(rand(4)) + 0.5, "k": rand(4, 1, 1),
             "t": rand(1, 4, 1, 1)}
    g = build([node("BatchNormalization", ["x", "s", "b", "m", "v"], "bn"), node("Mul", ["bn", "k"], "scaled"),
               node("Add", ["scaled", "t"], "shifted"), node("Relu", ["shifted"], "y")],
              {"x": [1, 4, 5, 5]}, ["y"], inits)
    s, b, k, t = (g.constants[n].astype(np.float64).reshape(4) for n in ("s", "b", "k", "t"))
    result = run_checked(g)
    assert g.to_text() == (
        "graph g (%x: f32[1,4,5,5]) {\n"
        "  const %m: f32[4]\n"
        "  const %v: f32[4]\n"
        "  const %bn.scale: f32[4]\n"
        "  const %bn.bias: f32[4]\n"
        "  %bn = BatchNormalization(%x, %bn.scale, %bn.bias, %m, %v) : f32[1,4,5,5]\n"
        "  %y = Relu(%bn) : f32[1,4,5,5]\n"
        "  return %y\n"
        "}")
    np.testing.assert_allclose(g.constants["bn.scale"], s * k, rtol=1e-6)
    np.testing.assert_allclose(g.constants["bn.bias"], b * k + t, rtol=1e-6)
    assert result.notes == ("folded 2 constant scale/shift op(s) into the weights before them "
                            "(1 Add into BatchNormalization, 1 Mul into BatchNormalization)",)
