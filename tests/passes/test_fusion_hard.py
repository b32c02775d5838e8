"""HardActivationFusionPass: HardSigmoid and HardSwish in primitives -> HardSigmoid / HardSwish ops."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from ge_core.ir import Graph
from ge_core.passes.fusion.graph import HardActivationFusionPass
from tests.passes.fusion_cases import build, node, only, run_checked, scalar

PASS = HardActivationFusionPass()
CONSTS = {"three": scalar(3), "zero": scalar(0), "one": scalar(1), "six": scalar(6), "sixth": scalar(1 / 6),
          "half": scalar(0.5), "fifth": scalar(0.2)}


def graph(nodes: list[onnx.NodeProto], outputs: tuple[str, ...] = ("y",), opset: int = 17,
          **consts: np.ndarray) -> Graph:
    used = {t for n in nodes for t in n.input}
    inits = {k: v for k, v in {**CONSTS, **consts}.items() if k in used}
    return build(nodes, {"x": [2, 3, 4, 4]}, list(outputs), inits, opset=opset)


def relu6_swish(last: str = "Div", high: str = "six") -> list[onnx.NodeProto]:
    """x * Relu6(x + 3) / 6 (or * 1/6)."""
    return [node("Add", ["x", "three"], "shift"), node("Clip", ["shift", "zero", high], "clip"),
            node("Mul", ["x", "clip"], "xc"),
            node("Div", ["xc", "six"], "y") if last == "Div" else node("Mul", ["sixth", "xc"], "y")]


def test_relu6_hardswish_golden() -> None:
    g = graph(relu6_swish())
    decision = only(run_checked(PASS, g))
    assert g.to_text() == (
        "graph g (%x: f32[2,3,4,4]) {\n"
        "  const %three: f32[]\n"
        "  const %zero: f32[]\n"
        "  const %six: f32[]\n"
        "  %y = HardSwish(%x) : f32[2,3,4,4] {\n"
        "      %shift = Add(%x, %three) : f32[2,3,4,4]\n"
        "      %clip = Clip(%shift, %zero, %six) : f32[2,3,4,4]\n"
        "      %xc = Mul(%x, %clip) : f32[2,3,4,4]\n"
        "      %y = Div(%xc, %six) : f32[2,3,4,4]\n"
        "  }\n"
        "  return %y\n"
        "}")
    assert (decision.pattern, decision.reason, decision.fused_node) == (
        "HardSwish(x * Clip(x + 3, 0, 6) / 6)", "x * Clip(x + 3, 0, 6) / 6 into HardSwish", "y")


def test_times_a_sixth() -> None:
    g = graph(relu6_swish("Mul"))
    assert only(run_checked(PASS, g)).pattern == "HardSwish(x * Clip(x + 3, 0, 6) * 1/6)"


def test_clip_with_attributes_before_opset_11() -> None:
    nodes = [node("Add", ["x", "three"], "shift"), node("Clip", ["shift"], "clip", min=0.0, max=6.0),
             node("Mul", ["x", "clip"], "xc"), node("Div", ["xc", "six"], "y")]
    assert only(run_checked(PASS, graph(nodes, opset=9))).accepted


def test_paddle_x_times_hardsigmoid() -> None:
    """Paddle at opset 11 writes hardswish as Mul(HardSigmoid(x, alpha=1/6, beta=0.5), x)."""
    g = graph([node("HardSigmoid", ["x"], "hsig", alpha=1 / 6, beta=0.5), node("Mul", ["hsig", "x"], "y")])
    decision = only(run_checked(PASS, g))
    assert (decision.pattern, decision.nodes) == ("HardSwish(x * HardSigmoid(x))", ("hsig", "y"))
    assert [n.op_type for n in g.nodes] == ["HardSwish"]


def test_x_times_relu6_over_6_goes_through_hardsigmoid() -> None:
    """x * (Relu6(x + 3) / 6): round one makes the HardSigmoid, round two the HardSwish around it."""
    g = graph([node("Add", ["x", "three"], "shift"), node("Clip", ["shift", "zero", "six"], "clip"),
               node("Div", ["clip", "six"], "hs"), node("Mul", ["x", "hs"], "y")])
    decisions = run_checked(PASS, g).decisions
    assert [(d.pattern, d.fused_node) for d in decisions] == [
        ("HardSigmoid(Clip(x + b, 0, u) / u)", "hs"), ("HardSwish(x * HardSigmoid(x))", "y")]
    assert g.to_text().splitlines()[4:8] == [
        "  %y = HardSwish(%x) : f32[2,3,4,4] {",
        "      %hs = HardSigmoid(%x) {alpha=0.166667, beta=0.5} : f32[2,3,4,4] {",
        "          %shift = Add(%x, %three) : f32[2,3,4,4]",
        "          %clip = Clip(%shift, %zero, %six) : f32[2,3,4,4]"]


@pytest.mark.parametrize(("nodes", "alpha"), [
    ([node("Div", ["x", "six"], "lin"), node("Add", ["lin", "half"], "shift"),
      node("Clip", ["shift", "zero", "one"], "y")], 1 / 6),
    ([node("Mul", ["fifth", "x"], "lin"), node("Add", ["half", "lin"], "shift"),
      node("Clip", ["shift", "zero", "one"], "y")], 0.2),
    ([node("Add", ["x", "three"], "shift"), node("Clip", ["shift", "zero", "six"], "clip"),
      node("Mul", ["clip", "sixth"], "y")], 1 / 6),
])
def test_hardsigmoid_forms(nodes: list[onnx.NodeProto], alpha: float) -> None:
    g = graph(nodes)
    decision = only(run_checked(PASS, g))
    assert decision.accepted and g.node("y").op_type == "HardSigmoid"
    assert g.node("y").attrs == pytest.approx({"alpha": alpha, "beta": 0.5})


# ---- rejections ------------------------------------------------------------------------------------

def test_hardsigmoid_with_other_alpha_is_not_hardswish() -> None:
    g = graph([node("HardSigmoid", ["x"], "hsig", alpha=0.2, beta=0.5), node("Mul", ["x", "hsig"], "y")])
    assert only(run_checked(PASS, g)).reason == "HardSigmoid alpha=0.2 beta=0.5 are not HardSwish's 1/6 and 0.5"


def test_relu5_is_not_hardswish() -> None:
    g = graph(relu6_swish(high="five"), five=scalar(5))
    assert only(run_checked(PASS, g)).reason == "x * Clip(x + 3, 0, 5) / 6 is not x * Clip(x + 3, 0, 6) / 6"


def test_clip_to_0_2_is_not_hardsigmoid() -> None:
    g = graph([node("Div", ["x", "six"], "lin"), node("Add", ["lin", "half"], "shift"),
               node("Clip", ["shift", "zero", "two"], "y")], two=scalar(2))
    assert only(run_checked(PASS, g)).reason == "Clip bounds [0, 2] are not [0, 1]"


def test_clip_bound_from_an_input_is_refused() -> None:
    g = build([node("Add", ["x", "three"], "shift"), node("Clip", ["shift", "zero", "m"], "clip"),
               node("Mul", ["x", "clip"], "xc"), node("Div", ["xc", "six"], "y")], {"x": [2, 8], "m": []}, ["y"],
              {k: CONSTS[k] for k in ("three", "zero", "six")})
    assert only(run_checked(PASS, g)).reason == "Clip max 'm' is not a constant"


def test_shifted_value_read_elsewhere() -> None:
    g = graph([*relu6_swish(), node("Neg", ["shift"], "side")], outputs=("y", "side"))
    assert only(run_checked(PASS, g)).reason == "Add output also feeds node 'side' outside the group"
