"""MatMulAddFusionPass: MatMul + bias Add (+ activation) -> Gemm, or ge.FullyConnection."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

from ge_core.passes.fusion.graph import MatMulAddFusionPass
from tests.passes.fusion_cases import build, node, only, rand, run_checked

PASS = MatMulAddFusionPass()


def test_2d_matmul_add_is_a_gemm() -> None:
    g = build([node("MatMul", ["x", "w"], "mm"), node("Add", ["mm", "b"], "y")], {"x": [3, 8]}, ["y"],
              {"w": rand(8, 4), "b": rand(4)})
    decision = only(run_checked(PASS, g))
    assert g.to_text() == (
        "graph g (%x: f32[3,8]) {\n"
        "  const %w: f32[8,4]\n"
        "  const %b: f32[4]\n"
        "  %y = Gemm(%x, %w, %b) {transA=0, transB=0} : f32[3,4] {\n"
        "      %mm = MatMul(%x, %w) : f32[3,4]\n"
        "      %y = Add(%mm, %b) : f32[3,4]\n"
        "  }\n"
        "  return %y\n"
        "}")
    assert (decision.pattern, decision.nodes, decision.reason, decision.fused_node) == (
        "MatMul+Add", ("mm", "y"), "MatMul + Add into Gemm (C = bias)", "y")
    assert g.node("y").domain == ""


@pytest.mark.parametrize("bias_shape", [(1, 4), (), (1,)])
def test_bias_first_and_broadcast_shapes(bias_shape: tuple[int, ...]) -> None:
    g = build([node("MatMul", ["x", "w"], "mm"), node("Add", ["b", "mm"], "y")], {"x": [3, 8]}, ["y"],
              {"w": rand(8, 4), "b": rand(*bias_shape)})
    assert only(run_checked(PASS, g)).accepted and g.node("y").op_type == "Gemm"


def test_nd_matmul_with_activation_is_fully_connection() -> None:
    g = build([node("MatMul", ["x", "w"], "mm"), node("Add", ["b", "mm"], "h"), node("Tanh", ["h"], "y")],
              {"x": [2, 3, 8]}, ["y"], {"w": rand(8, 4), "b": rand(1, 1, 4)})
    decision = only(run_checked(PASS, g))
    assert g.to_text().splitlines()[3:9] == [
        "  %y = ge.FullyConnection(%x, %w, %b) {activation='Tanh'} : f32[2,3,4] {",
        "      %mm = MatMul(%x, %w) : f32[2,3,4]",
        "      %h = Add(%b, %mm) : f32[2,3,4]",
        "      %y = Tanh(%h) : f32[2,3,4]",
        "  }",
        "  return %y"]
    assert decision.reason == "MatMul + Add + Tanh into one FullyConnection kernel"


def test_2d_with_activation_is_fully_connection() -> None:
    g = build([node("MatMul", ["x", "w"], "mm"), node("Add", ["mm", "b"], "h"), node("Relu", ["h"], "y")],
              {"x": [3, 8], "w": [8, 4]}, ["y"], {"b": rand(4)})
    assert only(run_checked(PASS, g)).reason == "MatMul + Add + Relu into one FullyConnection kernel"
    assert g.node("y").inputs == ("x", "w", "b")


def test_activation_rejected_falls_back_to_gemm() -> None:
    """The Add output is also read elsewhere: the longer candidate is refused, MatMul + Add still fuses."""
    g = build([node("MatMul", ["x", "w"], "mm"), node("Add", ["mm", "b"], "h"), node("Relu", ["h"], "y"),
               node("Neg", ["h"], "side")], {"x": [3, 8]}, ["y", "side"], {"w": rand(8, 4), "b": rand(4)})
    decisions = run_checked(PASS, g).decisions
    assert [(d.pattern, d.accepted, d.reason) for d in decisions] == [
        ("MatMul+Add+Activation", False, "Add output also feeds node 'side' outside the group"),
        ("MatMul+Add", True, "MatMul + Add into Gemm (C = bias)"),
    ]


# ---- rejections ------------------------------------------------------------------------------------

def test_bias_along_rows_is_refused() -> None:
    g = build([node("MatMul", ["x", "w"], "mm"), node("Add", ["mm", "b"], "y")], {"x": [3, 8]}, ["y"],
              {"w": rand(8, 4), "b": rand(3, 1)})
    decision = only(run_checked(PASS, g))
    assert decision.reason == "bias shape [3, 1] does not broadcast along the last dim of the MatMul output [3, 4]"


def test_nd_matmul_of_two_activations_is_refused() -> None:
    g = build([node("MatMul", ["x", "v"], "mm"), node("Add", ["mm", "b"], "y")], {"x": [2, 3, 8], "v": [2, 8, 4]},
              ["y"], {"b": rand(4)})
    assert only(run_checked(PASS, g)).reason == "N-D MatMul: weight 'v' is not a constant 2-D matrix"


def test_one_d_operand_is_refused() -> None:
    g = build([node("MatMul", ["x", "w"], "mm"), node("Add", ["mm", "b"], "y")], {"x": [8]}, ["y"],
              {"w": rand(8, 4), "b": rand(4)})
    assert only(run_checked(PASS, g)).reason == "MatMul 'mm' has a 1-D operand"


def test_same_tensor_twice_is_refused() -> None:
    g = build([node("MatMul", ["x", "x"], "mm"), node("Add", ["mm", "b"], "y")], {"x": [4, 4]}, ["y"], {"b": rand(4)})
    assert only(run_checked(PASS, g)).reason == (
        "'x' is passed twice (a and w and bias): the fused op needs separate operands")


def test_matmul_output_read_elsewhere() -> None:
    g = build([node("MatMul", ["x", "w"], "mm"), node("Add", ["mm", "b"], "y"), node("Relu", ["mm"], "side")],
              {"x": [3, 8]}, ["y", "side"], {"w": rand(8, 4), "b": rand(4)})
    assert only(run_checked(PASS, g)).reason == "MatMul output also feeds node 'side' outside the group"


def test_integer_matmul_is_refused() -> None:
    g = build([node("MatMul", ["x", "w"], "mm"), node("Add", ["mm", "b"], "y")], {"x": [3, 8]}, ["y"],
              {"w": np.ones((8, 4), np.int64), "b": np.arange(4, dtype=np.int64)}, dtype=TensorProto.INT64)
    assert only(run_checked(PASS, g)).reason == "dtype int64 not fusable"
