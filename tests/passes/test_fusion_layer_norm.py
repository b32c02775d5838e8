"""LayerNormFusionPass: LayerNorm written in primitives -> LayerNormalization (axis=-1, epsilon, X/Scale/B)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest

from ge_core.ir import Graph
from ge_core.passes.fusion.graph import LayerNormFusionPass
from tests.passes.fusion_cases import build, node, only, rand, run_checked, scalar

PASS = LayerNormFusionPass()


def layer_norm(*, square: str = "Pow", normalize: str = "Div", affine: str = "both", axes: Any = (-1,),
               opset: int = 17, keepdims: int = 1, extra: list[onnx.NodeProto] | None = None,
               outputs: tuple[str, ...] = ("y",), **inits: np.ndarray) -> Graph:
    """y = LayerNorm(x) over the last axis of x: f32[2,3,8], spelled in primitives as exporters write it."""
    reduce: dict[str, Any] = {"keepdims": keepdims}
    axes_input: list[str] = []
    if opset >= 18:
        axes_input = ["axes"]
        inits.setdefault("axes", np.array(axes, np.int64))
    else:
        reduce["axes"] = list(axes)
    nodes = [node("ReduceMean", ["x", *axes_input], "mean", **reduce), node("Sub", ["x", "mean"], "sub"),
             node("Pow", ["sub", "two"], "sq") if square == "Pow" else node("Mul", ["sub", "sub"], "sq"),
             node("ReduceMean", ["sq", *axes_input], "var", **reduce), node("Add", ["var", "eps"], "add_eps"),
             node("Sqrt", ["add_eps"], "std")]
    last = {"both": "norm", "scale": "norm", "none": "y"}[affine]
    if normalize == "Div":
        nodes.append(node("Div", ["sub", "std"], last))
    else:
        nodes += [node("Reciprocal", ["std"], "inv"), node("Mul", ["inv", "sub"], last)]
    if affine in ("both", "scale"):
        nodes.append(node("Mul", ["norm", "gamma"], "scaled" if affine == "both" else "y"))
    if affine == "both":
        nodes.append(node("Add", ["beta", "scaled"], "y"))
    defaults = {"two": scalar(2.0), "eps": scalar(1e-5), "gamma": rand(8), "beta": rand(8)}
    used = {t for n in nodes for t in n.input}
    consts = {k: v for k, v in {**defaults, **inits}.items() if k in used}
    return build(nodes + (extra or []), {"x": [2, 3, 8]}, list(outputs), consts, opset=opset)


def test_full_layer_norm_golden() -> None:
    g = layer_norm()
    decision = only(run_checked(PASS, g))
    assert g.to_text() == (
        "graph g (%x: f32[2,3,8]) {\n"
        "  const %two: f32[]\n"
        "  const %eps: f32[]\n"
        "  const %gamma: f32[8]\n"
        "  const %beta: f32[8]\n"
        "  %y = LayerNormalization(%x, %gamma, %beta) {axis=-1, epsilon=1e-05} : f32[2,3,8] {\n"
        "      %mean = ReduceMean(%x) {axes=[-1], keepdims=1} : f32[2,3,1]\n"
        "      %sub = Sub(%x, %mean) : f32[2,3,8]\n"
        "      %sq = Pow(%sub, %two) : f32[2,3,8]\n"
        "      %var = ReduceMean(%sq) {axes=[-1], keepdims=1} : f32[2,3,1]\n"
        "      %add_eps = Add(%var, %eps) : f32[2,3,1]\n"
        "      %std = Sqrt(%add_eps) : f32[2,3,1]\n"
        "      %norm = Div(%sub, %std) : f32[2,3,8]\n"
        "      %scaled = Mul(%norm, %gamma) : f32[2,3,8]\n"
        "      %y = Add(%beta, %scaled) : f32[2,3,8]\n"
        "  }\n"
        "  return %y\n"
        "}")
    assert decision.pattern == "LayerNorm(Pow, Div, affine)"
    assert decision.nodes == ("mean", "sub", "sq", "var", "add_eps", "std", "norm", "scaled", "y")
    assert (decision.reason, decision.fused_node) == ("LayerNorm primitives into LayerNormalization", "y")
    assert g.node("y").attrs["epsilon"] == pytest.approx(1e-5)


@pytest.mark.parametrize("square", ["Pow", "Mul"])
@pytest.mark.parametrize("normalize", ["Div", "Reciprocal"])
@pytest.mark.parametrize("affine", ["both", "scale", "none"])
def test_every_spelling_fuses(square: str, normalize: str, affine: str) -> None:
    g = layer_norm(square=square, normalize=normalize, affine=affine)
    decision = only(run_checked(PASS, g))
    assert decision.accepted and [n.op_type for n in g.nodes] == ["LayerNormalization"]


@pytest.mark.parametrize("axes", [(-1,), (2,)])
def test_axes_as_input_since_opset_18(axes: tuple[int, ...]) -> None:
    g = layer_norm(opset=18, axes=axes)
    assert only(run_checked(PASS, g)).accepted


def test_without_gamma_and_beta_gets_scale_one_and_bias_zero() -> None:
    """The fused op needs Scale and B: ones and zeros are made, and the body spells them out."""
    g = layer_norm(affine="none", outputs=("y", "z"), extra=[node("Relu", ["y"], "z")])
    decision = only(run_checked(PASS, g))
    assert decision.reason == "LayerNorm primitives into LayerNormalization (scale 1 and bias 0 made explicit)"
    assert decision.nodes == ("mean", "sub", "sq", "var", "add_eps", "std", "y")
    text = g.to_text().splitlines()
    assert text[3:6] + text[12:18] == [
        "  const %y.scale: f32[8]",
        "  const %y.bias: f32[8]",
        "  %y = LayerNormalization(%x, %y.scale, %y.bias) {axis=-1, epsilon=1e-05} : f32[2,3,8] {",
        "      %y.raw = Div(%sub, %std) : f32[2,3,8]  # y",
        "      %y.scaled = Mul(%y.raw, %y.scale) : f32[2,3,8]",
        "      %y = Add(%y.scaled, %y.bias) : f32[2,3,8]  # y.shifted",
        "  }",
        "  %z = Relu(%y) : f32[2,3,8]",
        "  return %y, %z"]
    np.testing.assert_array_equal(g.constants["y.scale"], np.ones(8, np.float32))
    np.testing.assert_array_equal(g.constants["y.bias"], np.zeros(8, np.float32))


# ---- rejections ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "reason"), [
    ({"axes": (1,)}, "ReduceMean 'mean' reduces axes [1], not the last axis"),
    ({"axes": (1, 2)}, "ReduceMean 'mean' reduces axes [1, 2], not the last axis"),
    ({"two": scalar(3.0)}, "Pow exponent 3 is not 2"),
    ({"eps": rand(3, 1) ** 2}, "epsilon 'eps' is not a non-negative scalar constant"),
    ({"eps": scalar(-1e-5)}, "epsilon 'eps' is not a non-negative scalar constant"),
])
def test_conditions(kwargs: dict[str, Any], reason: str) -> None:
    decisions = run_checked(PASS, layer_norm(**kwargs)).decisions
    assert decisions and decisions[0].reason == reason and not any(d.accepted for d in decisions)


def test_keepdims_0_is_refused() -> None:
    g = build([node("ReduceMean", ["x"], "mean", axes=[-1], keepdims=0), node("Sub", ["x", "mean"], "sub"),
               node("Mul", ["sub", "sub"], "sq"), node("ReduceMean", ["sq"], "var", axes=[-1], keepdims=0),
               node("Add", ["var", "eps"], "add_eps"), node("Sqrt", ["add_eps"], "std"),
               node("Div", ["sub", "std"], "y")],
              {"x": [4, 4]}, ["y"], {"eps": scalar(1e-5)})
    assert only(run_checked(PASS, g)).reason == "ReduceMean 'mean' has keepdims=0"


def test_centered_value_read_elsewhere() -> None:
    """Sub's output also feeds a node outside: no candidate can hide it (each anchor says so)."""
    g = layer_norm(extra=[node("Neg", ["sub"], "side")], outputs=("y", "side"))
    decisions = run_checked(PASS, g).decisions
    assert [d.pattern for d in decisions] == ["LayerNorm(Pow, Div, affine)", "LayerNorm(Pow, Div, scale only)",
                                             "LayerNorm(Pow, Div, no affine)"]
    assert {d.reason for d in decisions} == {"Sub output also feeds node 'side' outside the group"}


def test_scaled_value_read_elsewhere_falls_back_to_scale_only() -> None:
    """The Mul by gamma is also a graph output: the full form is refused, LayerNorm with gamma still fuses."""
    g = layer_norm(outputs=("y", "scaled"))
    decisions = run_checked(PASS, g).decisions
    assert [(d.pattern, d.accepted, d.reason) for d in decisions] == [
        ("LayerNorm(Pow, Div, affine)", False, "Mul output 'scaled' is a graph output"),
        ("LayerNorm(Pow, Div, scale only)", True,
         "LayerNorm primitives into LayerNormalization (bias 0 made explicit)"),
    ]
    assert g.node("scaled").op_type == "LayerNormalization" and g.node("y").op_type == "Add"
    assert g.node("scaled").inputs == ("x", "gamma", "scaled.bias")


def test_gamma_of_another_shape_leaves_the_affine_outside() -> None:
    """gamma [1, 1, 8] is not a LayerNormalization Scale: the LayerNorm fuses without it (Mul, Add stay)."""
    g = layer_norm(gamma=rand(1, 1, 8))
    decisions = run_checked(PASS, g).decisions
    assert [(d.accepted, d.reason) for d in decisions] == [
        (False, "scale shape [1, 1, 8] is not [8]"), (False, "scale shape [1, 1, 8] is not [8]"),
        (True, "LayerNorm primitives into LayerNormalization (scale 1 and bias 0 made explicit)")]
    assert [n.op_type for n in g.nodes] == ["LayerNormalization", "Mul", "Add"]
