"""AttentionFusionPass: Softmax(Q K^T * scale + mask) V -> ge.FusedAttention (body kept)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest

from ge_core.ir import Graph
from ge_core.passes.fusion.graph import AttentionFusionPass
from tests.passes.fusion_cases import build, node, only, rand, run_checked, scalar

PASS = AttentionFusionPass()
SHAPES = {"q": [1, 2, 4, 8], "kt": [1, 2, 8, 4], "v": [1, 2, 4, 8], "mask": [1, 1, 1, 4]}


def scaled_scores(scaling: str) -> list[onnx.NodeProto]:
    """The nodes up to the scores tensor "scores"."""
    return {
        "unscaled": [node("MatMul", ["q", "kt"], "scores")],
        "scores*s": [node("MatMul", ["q", "kt"], "qk"), node("Mul", ["qk", "s"], "scores")],
        "scores/s": [node("MatMul", ["q", "kt"], "qk"), node("Div", ["qk", "d"], "scores")],
        "(q*s)K": [node("Mul", ["s", "q"], "qs"), node("MatMul", ["qs", "kt"], "scores")],
        "(q/s)K": [node("Div", ["q", "d"], "qs"), node("MatMul", ["qs", "kt"], "scores")],
    }[scaling]


def attention(scaling: str = "scores*s", masked: bool = True, axis: int | None = -1, opset: int = 17,
              shapes: dict[str, list[int]] | None = None, extra: list[onnx.NodeProto] | None = None,
              outputs: tuple[str, ...] = ("y",), **consts: np.ndarray) -> Graph:
    nodes = scaled_scores(scaling)
    if masked:
        nodes.append(node("Add", ["scores", "mask"], "masked"))
    softmax_attrs: dict[str, Any] = {} if axis is None else {"axis": axis}
    nodes += [node("Softmax", ["masked" if masked else "scores"], "probs", **softmax_attrs),
              node("MatMul", ["probs", "v"], "y"), *(extra or [])]
    used = {t for n in nodes for t in n.input}
    inputs = {k: v for k, v in {**SHAPES, **(shapes or {})}.items() if k in used}
    inits = {k: v for k, v in {"s": scalar(0.35), "d": scalar(2.83), **consts}.items() if k in used}
    return build(nodes, inputs, list(outputs), inits, opset=opset)


def test_bert_form_golden() -> None:
    g = attention()
    decision = only(run_checked(PASS, g))
    assert g.to_text() == (
        "graph g (%q: f32[1,2,4,8], %kt: f32[1,2,8,4], %v: f32[1,2,4,8], %mask: f32[1,1,1,4]) {\n"
        "  const %s: f32[]\n"
        "  %y = ge.FusedAttention(%q, %kt, %v, %mask) {masked=1, scale=0.35} : f32[1,2,4,8] {\n"
        "      %qk = MatMul(%q, %kt) : f32[1,2,4,4]\n"
        "      %scores = Mul(%qk, %s) : f32[1,2,4,4]\n"
        "      %masked = Add(%scores, %mask) : f32[1,2,4,4]\n"
        "      %probs = Softmax(%masked) {axis=-1} : f32[1,2,4,4]\n"
        "      %y = MatMul(%probs, %v) : f32[1,2,4,8]\n"
        "  }\n"
        "  return %y\n"
        "}")
    assert (decision.pattern, decision.nodes, decision.fused_node) == (
        "Attention(Softmax(scores*s + mask) V)", ("qk", "scores", "masked", "probs", "y"), "y")
    assert decision.reason == "MatMul(Q, K^T), scale, mask Add, Softmax, MatMul(., V) into one kernel"


@pytest.mark.parametrize("scaling", ["unscaled", "scores*s", "scores/s", "(q*s)K", "(q/s)K"])
@pytest.mark.parametrize("masked", [True, False])
def test_every_variant_fuses(scaling: str, masked: bool) -> None:
    g = attention(scaling, masked)
    assert only(run_checked(PASS, g)).accepted
    attrs = g.node("y").attrs
    want = {"unscaled": 1.0, "scores*s": 0.35, "scores/s": 1 / 2.83, "(q*s)K": 0.35, "(q/s)K": 1 / 2.83}[scaling]
    assert attrs == {"scale": pytest.approx(want), "masked": int(masked)}
    assert g.node("y").inputs == ("q", "kt", "v", "mask")[:4 if masked else 3]


def test_softmax_axis_3_at_opset_11() -> None:
    assert only(run_checked(PASS, attention(axis=3, opset=11))).accepted


def test_self_attention_reading_one_tensor_twice() -> None:
    """Q and V are the same tensor: the fused op reads it once."""
    g = build([node("MatMul", ["x", "xt"], "scores"), node("Softmax", ["scores"], "probs", axis=-1),
               node("MatMul", ["probs", "x"], "y")], {"x": [2, 4, 8], "xt": [2, 8, 4]}, ["y"], {})
    assert only(run_checked(PASS, g)).accepted and g.node("y").inputs == ("x", "xt")


# ---- rejections ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "reason"), [
    ({"axis": 2}, "Softmax 'probs' is over axis 2, not the last axis of rank-4 scores"),
    ({"axis": None, "opset": 11}, "Softmax 'probs' is over axis 1, not the last axis of rank-4 scores"),
    ({"s": rand(1, 2, 1, 1)}, "scale 's' is not a scalar constant"),
    ({"shapes": {"mask": [2, 2, 4, 4]}}, "mask shape [2, 2, 4, 4] enlarges the scores [1, 2, 4, 4]"),
])
def test_conditions(kwargs: dict[str, Any], reason: str) -> None:
    decision = only(run_checked(PASS, attention(**kwargs)))
    assert (decision.accepted, decision.reason) == (False, reason)


def test_probabilities_read_elsewhere() -> None:
    """Models that return their attention maps keep them: the fused kernel never writes them."""
    g = attention(outputs=("y", "probs"))
    assert only(run_checked(PASS, g)).reason == "Softmax output 'probs' is a graph output"
    g = attention(extra=[node("ReduceMean", ["probs"], "side", axes=[1])], outputs=("y", "side"))
    assert only(run_checked(PASS, g)).reason == "Softmax output also feeds node 'side' outside the group"
