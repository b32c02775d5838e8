"""GeluFusionPass: GELU in primitives (erf and tanh forms, in exporters' orders) -> Gelu."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest

from ge_core.ir import Graph
from ge_core.passes.fusion.graph import GeluFusionPass
from tests.passes.fusion_cases import build, node, only, run_checked, scalar

PASS = GeluFusionPass()
CONSTS = {"sqrt2": scalar(1.4142135), "rsqrt2": scalar(0.70710677), "one": scalar(1.0), "half": scalar(0.5),
          "two": scalar(2.0), "three": scalar(3.0), "c": scalar(0.044715), "k": scalar(math.sqrt(2 / math.pi))}


def inner(form: str) -> list[onnx.NodeProto]:
    """1 + f(x), ending in the tensor "one_plus"."""
    if form == "erf/div":
        return [node("Div", ["x", "sqrt2"], "scaled"), node("Erf", ["scaled"], "erf"),
                node("Add", ["erf", "one"], "one_plus")]
    if form == "erf/mul":
        return [node("Mul", ["rsqrt2", "x"], "scaled"), node("Erf", ["scaled"], "erf"),
                node("Add", ["one", "erf"], "one_plus")]
    cube = ([node("Pow", ["x", "three"], "cube")] if form == "tanh/pow"
            else [node("Mul", ["x", "x"], "x2"), node("Mul", ["x2", "x"], "cube")])
    return [*cube, node("Mul", ["cube", "c"], "cube_c"), node("Add", ["x", "cube_c"], "inner"),
            node("Mul", ["k", "inner"], "scaled"), node("Tanh", ["scaled"], "tanh"),
            node("Add", ["tanh", "one"], "one_plus")]


def outer(form: str) -> list[onnx.NodeProto]:
    return {
        "x*f*0.5": [node("Mul", ["x", "one_plus"], "xf"), node("Mul", ["xf", "half"], "y")],
        "x*(0.5*f)": [node("Mul", ["half", "one_plus"], "hf"), node("Mul", ["x", "hf"], "y")],
        "(0.5*x)*f": [node("Mul", ["x", "half"], "hx"), node("Mul", ["hx", "one_plus"], "y")],
        "x*f/2": [node("Mul", ["one_plus", "x"], "xf"), node("Div", ["xf", "two"], "y")],
    }[form]


def gelu(inner_form: str = "erf/div", outer_form: str = "x*f*0.5", *, opset: int = 17,
         extra: list[onnx.NodeProto] | None = None, outputs: tuple[str, ...] = ("y",),
         consts: dict[str, np.ndarray] | None = None) -> Graph:
    nodes = [*inner(inner_form), *outer(outer_form), *(extra or [])]
    used = {t for n in nodes for t in n.input}
    inits = {k: v for k, v in {**CONSTS, **(consts or {})}.items() if k in used}
    return build(nodes, {"x": [2, 16]}, list(outputs), inits, opset=opset)


def test_torchscript_form_golden() -> None:
    g = gelu()
    decision = only(run_checked(PASS, g))
    assert g.to_text() == (
        "graph g (%x: f32[2,16]) {\n"
        "  const %sqrt2: f32[]\n"
        "  const %one: f32[]\n"
        "  const %half: f32[]\n"
        "  %y = Gelu(%x) : f32[2,16] {\n"
        "      %scaled = Div(%x, %sqrt2) : f32[2,16]\n"
        "      %erf = Erf(%scaled) : f32[2,16]\n"
        "      %one_plus = Add(%erf, %one) : f32[2,16]\n"
        "      %xf = Mul(%x, %one_plus) : f32[2,16]\n"
        "      %y = Mul(%xf, %half) : f32[2,16]\n"
        "  }\n"
        "  return %y\n"
        "}")
    assert (decision.pattern, decision.nodes, decision.fused_node) == (
        "Gelu(x*erf(x/sqrt2)*0.5)", ("scaled", "erf", "one_plus", "xf", "y"), "y")
    assert decision.reason == "0.5 * x * (1 + Erf(x / sqrt(2))) into Gelu"


@pytest.mark.parametrize("inner_form", ["erf/div", "erf/mul", "tanh/pow", "tanh/x*x*x"])
@pytest.mark.parametrize("outer_form", ["x*f*0.5", "x*(0.5*f)", "(0.5*x)*f", "x*f/2"])
def test_every_spelling_fuses(inner_form: str, outer_form: str) -> None:
    g = gelu(inner_form, outer_form)
    decision = only(run_checked(PASS, g))
    assert decision.accepted and [n.op_type for n in g.nodes] == ["Gelu"]
    assert g.node("y").attrs == ({"approximate": "tanh"} if inner_form.startswith("tanh") else {})


def test_before_opset_20_the_node_still_runs_our_kernel() -> None:
    g = gelu(opset=13)
    assert only(run_checked(PASS, g)).accepted
    assert (g.node("y").domain, g.node("y").opset) == ("", 13)


# ---- rejections ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("consts", "reason"), [
    ({"sqrt2": scalar(2.0)}, "Div constant 2 is not sqrt(2)"),
    ({"half": scalar(0.6)}, "Mul constant 0.6 is not 0.5"),
    ({"one": np.ones((1, 16), np.float32)}, "Add constant 'one' is not a scalar constant"),
])
def test_wrong_constants(consts: dict[str, np.ndarray], reason: str) -> None:
    decision = only(run_checked(PASS, gelu(consts=consts)))
    assert (decision.accepted, decision.reason) == (False, reason)


def test_tanh_form_wrong_coefficient() -> None:
    decision = only(run_checked(PASS, gelu("tanh/pow", consts={"c": scalar(0.05)})))
    assert decision.reason == "cubic coefficient 0.05 is not 0.044715"


def test_erf_read_elsewhere() -> None:
    g = gelu(extra=[node("Neg", ["erf"], "side")], outputs=("y", "side"))
    assert only(run_checked(PASS, g)).reason == "Erf output also feeds node 'side' outside the group"


def test_dry_run() -> None:
    decision = only(run_checked(GeluFusionPass(dry_run=True), gelu()))
    assert (decision.accepted, decision.reason) == (False, "disabled by switch file")
