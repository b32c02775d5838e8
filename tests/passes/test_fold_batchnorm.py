"""BatchNormFoldPass: inference BatchNormalization folds into the Conv/ConvTranspose/Gemm before it."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto

import ge_core
from ge_core.ir import Graph
from ge_core.passes.cleanup.constant_folding import ConstantFoldingPass
from ge_core.passes.cleanup.fold_batchnorm import BatchNormFoldPass
from ge_core.passes.cleanup.noop_elimination import NoOpEliminationPass
from ge_core.passes.infra.base import PassResult
from ge_core.samples.registry import get_sample, sample_bytes
from tests.passes.fusion_cases import FOLDED_CONV_RELU, build, conv_then, node, run_fold_checked

RNG = np.random.default_rng(0)


def rand(*shape: int, dtype: str = "float32") -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def bn_params(prefix: str, c: int, dtype: str = "float32") -> dict[str, np.ndarray]:
    return {f"{prefix}.s": rand(c, dtype=dtype), f"{prefix}.b": rand(c, dtype=dtype),
            f"{prefix}.m": rand(c, dtype=dtype), f"{prefix}.v": RNG.uniform(0.5, 2, c).astype(dtype)}


def bn(x: str, out: str, prefix: str = "bn", **attrs: Any) -> onnx.NodeProto:
    return node("BatchNormalization", [x, f"{prefix}.s", f"{prefix}.b", f"{prefix}.m", f"{prefix}.v"], out, **attrs)


def run_checked(graph: Graph, tol: float = 1e-5) -> PassResult:
    return run_fold_checked(BatchNormFoldPass(), graph, tol)


def test_conv_bn_golden_and_weights() -> None:
    g = conv_then([bn("conv", "bn"), node("Relu", ["bn"], "y")], bn_params("bn", 4))
    w, b = g.constants["w"], g.constants["b"]
    s_, b_, m_, v_ = (g.constants[f"bn.{k}"].astype(np.float64) for k in "sbmv")
    result = run_checked(g)
    assert g.to_text() == FOLDED_CONV_RELU
    s = s_ / np.sqrt(v_ + 1e-5)
    np.testing.assert_allclose(g.constants["conv.weight"], w * s[:, None, None, None], rtol=1e-6)
    np.testing.assert_allclose(g.constants["conv.bias"], (b - m_) * s + b_, rtol=1e-6, atol=1e-6)
    assert result.notes == ("folded 1 BatchNormalization node(s) into the op before them (1 into Conv)",)


def test_conv_without_bias_gets_one_and_bn_output_name_survives() -> None:
    g = build([node("Conv", ["x", "w"], "conv"), bn("conv", "y")], {"x": [1, 3, 4, 4]}, ["y"],
              {"w": rand(2, 3, 1, 1), **bn_params("bn", 2)})
    run_checked(g)
    assert g.to_text() == (
        "graph g (%x: f32[1,3,4,4]) {\n"
        "  const %conv.weight: f32[2,3,1,1]\n"
        "  const %conv.bias: f32[2]\n"
        "  %y = Conv(%x, %conv.weight, %conv.bias) : f32[1,2,4,4]  # conv\n"
        "  return %y\n"
        "}")


@pytest.mark.parametrize(("x_shape", "w_shape", "group"), [
    ([1, 4, 6], [6, 2, 3], 2),              # 1-D, grouped
    ([1, 4, 5, 5], [4, 1, 3, 3], 4),        # depthwise
    ([1, 2, 3, 4, 4], [4, 2, 1, 2, 2], 1),  # 3-D
])
def test_conv_any_rank_and_group(x_shape: list[int], w_shape: list[int], group: int) -> None:
    cout = w_shape[0]
    g = build([node("Conv", ["x", "w", "b"], "conv", group=group), bn("conv", "bn"), node("Relu", ["bn"], "y")],
              {"x": x_shape}, ["y"], {"w": rand(*w_shape), "b": rand(cout), **bn_params("bn", cout)})
    assert run_checked(g).changed and "BatchNormalization" not in {n.op_type for n in g.nodes}


@pytest.mark.parametrize("group", [1, 2])
def test_conv_transpose_output_channels_per_group(group: int) -> None:
    g = build([node("ConvTranspose", ["x", "w", "b"], "ct", group=group, strides=[2, 2]), bn("ct", "bn"),
               node("Relu", ["bn"], "y")], {"x": [1, 4, 3, 3]}, ["y"],
              {"w": rand(4, 3, 2, 2), "b": rand(3 * group), **bn_params("bn", 3 * group)})
    assert run_checked(g).notes == ("folded 1 BatchNormalization node(s) into the op before them "
                                    "(1 into ConvTranspose)",)


@pytest.mark.parametrize(("trans_b", "c_shape", "alpha", "beta"), [
    (0, [5], 1.0, 1.0), (1, [1, 5], 0.5, 2.0), (0, [3, 5], 1.0, 0.5), (1, None, 2.0, 1.0), (0, [], 1.0, 0.0),
    (1, [3, 1], 1.0, 3.0),
])
def test_gemm_bn_per_column(trans_b: int, c_shape: list[int] | None, alpha: float, beta: float) -> None:
    inits = {"B": rand(5, 4) if trans_b else rand(4, 5), **bn_params("bn", 5)}
    if c_shape is not None:
        inits["C"] = rand(*c_shape)
    gemm = node("Gemm", ["a", "B", "C"] if c_shape is not None else ["a", "B"], "gemm", transB=trans_b,
                alpha=alpha, beta=beta)
    g = build([gemm, bn("gemm", "y")], {"a": [3, 4]}, ["y"], inits)
    assert run_checked(g).changed
    (gemm_node,) = g.nodes
    assert gemm_node.op_type == "Gemm" and "beta" not in gemm_node.attrs


def test_gemm_golden() -> None:
    g = build([node("Gemm", ["a", "B", "C"], "gemm", transB=1), bn("gemm", "bn"), node("Relu", ["bn"], "y")],
              {"a": [2, 4]}, ["y"], {"B": rand(3, 4), "C": rand(3), **bn_params("bn", 3)})
    run_checked(g)
    assert g.to_text() == (
        "graph g (%a: f32[2,4]) {\n"
        "  const %gemm.weight: f32[3,4]\n"
        "  const %gemm.bias: f32[3]\n"
        "  %gemm = Gemm(%a, %gemm.weight, %gemm.bias) {transB=1} : f32[2,3]\n"
        "  %y = Relu(%gemm) : f32[2,3]\n"
        "  return %y\n"
        "}")


def test_bias_add_between_conv_and_bn_folds_along() -> None:
    g = build([node("Conv", ["x", "w"], "conv"), node("Add", ["conv", "bias"], "biased"), bn("biased", "bn"),
               node("Relu", ["bn"], "y")], {"x": [1, 3, 4, 4]}, ["y"],
              {"w": rand(2, 3, 1, 1), "bias": rand(1, 2, 1, 1), **bn_params("bn", 2)})
    result = run_checked(g)
    assert [n.op_type for n in g.nodes] == ["Conv", "Relu"]
    assert result.notes[0].endswith("; 1 per-channel Add/Mul between them folded along")


@pytest.mark.parametrize("pinned", ["biased", "bn"])
def test_control_edges_keep_the_bn(pinned: str) -> None:
    """A node at either end of a control edge is never erased, also when it sits between Conv and BN."""
    g = build([node("Conv", ["x", "w"], "conv"), node("Add", ["conv", "bias"], "biased"), bn("biased", "bn"),
               node("Relu", ["bn"], "y")], {"x": [1, 3, 4, 4]}, ["y"],
              {"w": rand(2, 3, 1, 1), "bias": rand(1, 2, 1, 1), **bn_params("bn", 2)})
    g.add_node("Identity", ["x"], ["side"], name="side", descs=[g.desc("x")], control_inputs=[pinned])
    g.set_outputs(["y", "side"])
    assert not run_checked(g).changed


def test_float64_conv() -> None:
    g = build([node("Conv", ["x", "w", "b"], "conv"), bn("conv", "y")], {"x": [1, 2, 3, 3]}, ["y"],
              {"w": rand(3, 2, 1, 1, dtype="float64"), "b": rand(3, dtype="float64"),
               **bn_params("bn", 3, "float64")}, dtype=TensorProto.DOUBLE)
    run_checked(g, tol=1e-12)
    assert g.constants["conv.weight"].dtype == np.float64


def test_shared_weight_is_copied_not_mutated() -> None:
    g = build([node("Conv", ["x", "w"], "c1"), bn("c1", "b1"), node("Conv", ["x", "w"], "c2"),
               node("Add", ["b1", "c2"], "y")], {"x": [1, 3, 4, 4]}, ["y"], {"w": rand(2, 3, 1, 1),
                                                                           **bn_params("bn", 2)})
    w = g.constants["w"].copy()
    assert run_checked(g).changed
    assert g.node("c2").inputs[1] == "w" and np.array_equal(g.constants["w"], w)


NOT_FOLDED = {
    "conv output read elsewhere": ([node("Conv", ["x", "w"], "conv"), bn("conv", "bn"),
                                    node("Add", ["bn", "conv"], "y")], ["y"]),
    "conv output is a graph output": ([node("Conv", ["x", "w"], "conv"), bn("conv", "y")], ["y", "conv"]),
    "weight is not a constant": ([node("Relu", ["w"], "w2"), node("Conv", ["x", "w2"], "conv"), bn("conv", "y")],
                                 ["y"]),
    "BN after Relu": ([node("Relu", ["x"], "r"), bn("r", "y")], ["y"]),
    "BN scale computed at run time": ([node("Conv", ["x", "w"], "conv"), node("Relu", ["bn.s"], "s2"),
                                      node("BatchNormalization", ["conv", "s2", "bn.b", "bn.m", "bn.v"], "y")],
                                      ["y"]),
}


@pytest.mark.parametrize("case", NOT_FOLDED)
def test_not_folded(case: str) -> None:
    nodes, outputs = NOT_FOLDED[case]
    g = build(nodes, {"x": [1, 2, 3, 3]}, outputs, {"w": rand(2, 2, 1, 1), **bn_params("bn", 2)})
    assert not run_checked(g).changed


def test_bn_after_matmul_is_not_folded() -> None:
    g = build([node("MatMul", ["a", "B"], "mm"), bn("mm", "y")], {"a": [2, 4]}, ["y"],
              {"B": rand(4, 3), **bn_params("bn", 3)})
    assert not run_checked(g).changed


@pytest.mark.parametrize(("name", "folded", "prepare"), [
    ("conv_bn_relu", 2, False), ("resnet50", 53, False), ("shufflenet", 49, False),
    ("ocr_det_db_paddle", 28, True),
])
def test_samples(name: str, folded: int, prepare: bool) -> None:
    g = ge_core.load_onnx(sample_bytes(name), get_sample(name).input_shapes)
    if prepare:  # Paddle's weights come through Casts, and one BN reads its Conv through an Identity
        ConstantFoldingPass().run(g)
        NoOpEliminationPass().run(g)
    before = len(g)
    result = run_checked(g, tol=1e-4)
    assert before - len(g) >= folded and result.notes[0].startswith(f"folded {folded} BatchNormalization")
    assert not [n for n in g.nodes if n.op_type == "BatchNormalization" and g.producer(n.input(0))
                and g.producer(n.input(0)).op_type == "Conv"]
