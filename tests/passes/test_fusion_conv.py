"""ConvActivationFusionPass: Conv (+ bias Add) (+ residual Add) + activation -> ge.FusedConv."""

from __future__ import annotations

from typing import Any

import pytest

from ge_core.ir import Graph
from ge_core.passes.fusion.graph import ConvActivationFusionPass
from tests.passes.fusion_cases import build, node, only, rand, run_checked, scalar

PASS = ConvActivationFusionPass()


def conv_act(act: str, *act_inputs: str, **attrs: Any) -> Graph:
    inits = {"w": rand(4, 3, 3, 3, scale=0.3), "b": rand(4), "lo": scalar(-0.5), "hi": scalar(0.7),
             "slope": rand(4, 1, 1)}
    inputs = {"x": [1, 3, 5, 5], **{t: ([] if act == "Clip" else [1, 4, 5, 5]) for t in act_inputs if t == "z"}}
    return build([node("Conv", ["x", "w", "b"], "conv", pads=[1, 1, 1, 1]),
                  node(act, ["conv", *act_inputs], "y", **attrs)], inputs, ["y"], inits)


def test_conv_relu_golden() -> None:
    g = conv_act("Relu")
    decision = only(run_checked(PASS, g))
    assert g.to_text() == (
        "graph g (%x: f32[1,3,5,5]) {\n"
        "  const %w: f32[4,3,3,3]\n"
        "  const %b: f32[4]\n"
        "  const %lo: f32[]\n"
        "  const %hi: f32[]\n"
        "  const %slope: f32[4,1,1]\n"
        "  %y = ge.FusedConv(%x, %w, %b) {activation='Relu', residual=0} : f32[1,4,5,5] {\n"
        "      %conv = Conv(%x, %w, %b) {pads=[1, 1, 1, 1]} : f32[1,4,5,5]\n"
        "      %y = Relu(%conv) : f32[1,4,5,5]\n"
        "  }\n"
        "  return %y\n"
        "}")
    assert (decision.accepted, decision.pattern, decision.nodes) == (True, "Conv+Activation", ("conv", "y"))
    assert (decision.reason, decision.fused_node) == ("Conv + Relu into one kernel", "y")


@pytest.mark.parametrize(("act", "inputs", "attrs", "name"), [
    ("LeakyRelu", (), {"alpha": 0.1}, "LeakyRelu"), ("Sigmoid", (), {}, "Sigmoid"), ("Tanh", (), {}, "Tanh"),
    ("HardSigmoid", (), {"alpha": 0.2}, "HardSigmoid"), ("HardSwish", (), {}, "HardSwish"), ("Mish", (), {}, "Mish"),
    ("Elu", (), {"alpha": 0.5}, "Elu"), ("Softplus", (), {}, "Softplus"), ("Clip", ("lo", "hi"), {}, "Clip"),
    ("Clip", ("", "hi"), {}, "Clip"), ("PRelu", ("slope",), {}, "PRelu"),
])
def test_each_activation_fuses(act: str, inputs: tuple[str, ...], attrs: dict[str, Any], name: str) -> None:
    g = conv_act(act, *inputs, **attrs)
    decision = only(run_checked(PASS, g))
    assert decision.accepted and decision.reason == f"Conv + {name} into one kernel"
    assert g.node("y").attrs == {"activation": name, "residual": 0}


def test_bias_add_and_relu6() -> None:
    """A Conv without bias, its bias as an Add of a per-channel constant, then Clip(0, 6)."""
    g = build([node("Conv", ["x", "w"], "conv"), node("Add", ["b", "conv"], "biased"),
               node("Clip", ["biased", "lo", "hi"], "y")], {"x": [1, 3, 5, 5]}, ["y"],
              {"w": rand(4, 3, 1, 1), "b": rand(1, 4, 1, 1), "lo": scalar(0), "hi": scalar(6)})
    decision = only(run_checked(PASS, g))
    assert decision.reason == "Conv + bias Add + Relu6 into one kernel"
    assert decision.nodes == ("conv", "biased", "y")
    assert g.to_text().splitlines()[5] == (
        "  %y = ge.FusedConv(%x, %w, %b) {activation='Relu6', residual=0} : f32[1,4,5,5] {")


@pytest.mark.parametrize("order", [["conv", "z"], ["z", "conv"]])
def test_residual_add_relu(order: list[str]) -> None:
    g = build([node("Conv", ["x", "w", "b"], "conv", pads=[1, 1, 1, 1]), node("Add", order, "sum"),
               node("Relu", ["sum"], "y")], {"x": [1, 3, 5, 5], "z": [1, 4, 5, 5]}, ["y"],
              {"w": rand(4, 3, 3, 3), "b": rand(4)})
    decision = only(run_checked(PASS, g))
    assert (decision.pattern, decision.reason) == (
        "Conv+Add(residual)+Activation", "Conv + residual Add + Relu into one kernel")
    fused = g.node("y")
    assert fused.inputs == ("x", "w", "b", "z") and fused.attrs == {"activation": "Relu", "residual": 1}


def test_identity_shortcut_and_sum() -> None:
    """ResNet's identity block: Relu(Sum(Conv(h), h)) where the shortcut is the Conv's own input."""
    g = build([node("Conv", ["x", "w"], "conv", pads=[1, 1, 1, 1]), node("Sum", ["conv", "x"], "sum"),
               node("Relu", ["sum"], "y")], {"x": [1, 4, 5, 5]}, ["y"], {"w": rand(4, 4, 3, 3, scale=0.2)})
    assert only(run_checked(PASS, g)).accepted
    assert g.node("y").inputs == ("x", "w")


def test_residual_without_activation() -> None:
    g = build([node("Conv", ["x", "w"], "conv"), node("Add", ["z", "conv"], "y")],
              {"x": [1, 3, 5, 5], "z": [1, 4, 5, 5]}, ["y"], {"w": rand(4, 3, 1, 1)})
    decision = only(run_checked(PASS, g))
    assert (decision.pattern, decision.reason) == ("Conv+Add(residual)", "Conv + residual Add into one kernel")
    assert g.node("y").attrs == {"residual": 1}


# ---- rejections ------------------------------------------------------------------------------------

def test_conv_output_read_elsewhere() -> None:
    g = build([node("Conv", ["x", "w"], "conv"), node("Relu", ["conv"], "y"), node("Sigmoid", ["conv"], "side")],
              {"x": [1, 3, 5, 5]}, ["y", "side"], {"w": rand(4, 3, 1, 1)})
    decisions = run_checked(PASS, g).decisions
    assert [(d.nodes, d.reason) for d in decisions] == [
        (("conv", "side"), "Conv output also feeds node 'y' outside the group"),
        (("conv", "y"), "Conv output also feeds node 'side' outside the group"),
    ]


def test_conv_output_is_a_graph_output() -> None:
    g = build([node("Conv", ["x", "w"], "conv"), node("Relu", ["conv"], "y")], {"x": [1, 3, 5, 5]}, ["y", "conv"],
              {"w": rand(4, 3, 1, 1)})
    assert only(run_checked(PASS, g)).reason == "Conv output 'conv' is a graph output"


def test_residual_computed_from_the_conv_would_make_a_cycle() -> None:
    """Add(conv, Relu(conv)): fusing Conv and Add would hide conv from the Relu that the Add reads."""
    g = build([node("Conv", ["x", "w"], "conv"), node("Relu", ["conv"], "r"), node("Add", ["conv", "r"], "y")],
              {"x": [1, 3, 5, 5]}, ["y"], {"w": rand(4, 3, 1, 1)})
    decisions = run_checked(PASS, g).decisions
    assert [(d.pattern, d.reason) for d in decisions] == [
        ("Conv+Add(residual)", "would create a cycle through 'r'"),
        ("Conv+Activation", "Conv output also feeds node 'y' outside the group"),
    ]


@pytest.mark.parametrize(("act", "inputs", "reason"), [
    ("Clip", ("z", "hi"), "Clip min 'z' is not a constant"),
    ("PRelu", ("z",), "activation slope 'z' of PRelu 'y' is not a constant"),
])
def test_activation_parameters_must_be_constants(act: str, inputs: tuple[str, ...], reason: str) -> None:
    decision = only(run_checked(PASS, conv_act(act, *inputs)))
    assert (decision.accepted, decision.reason) == (False, reason)


def test_add_after_a_conv_with_bias_is_not_its_bias() -> None:
    g = build([node("Conv", ["x", "w", "b"], "conv"), node("Add", ["conv", "c"], "biased"),
               node("Relu", ["biased"], "y")],
              {"x": [1, 3, 5, 5]}, ["y"], {"w": rand(4, 3, 1, 1), "b": rand(4), "c": rand(4, 1, 1)})
    assert only(run_checked(PASS, g)).reason == "Conv 'conv' already has a bias; the Add is not its bias"


def test_bias_add_varying_over_space_is_not_a_bias() -> None:
    g = build([node("Conv", ["x", "w"], "conv"), node("Add", ["conv", "c"], "biased"), node("Relu", ["biased"], "y")],
              {"x": [1, 3, 5, 5]}, ["y"], {"w": rand(4, 3, 1, 1), "c": rand(4, 5, 5)})
    assert only(run_checked(PASS, g)).reason == (
        "Add constant shape [4, 5, 5] is not per-channel for Conv output [1, 4, 5, 5]")


def test_broadcast_residual_is_refused() -> None:
    g = build([node("Conv", ["x", "w"], "conv"), node("Add", ["conv", "z"], "y")],
              {"x": [1, 3, 5, 5], "z": [1, 4, 1, 1]}, ["y"], {"w": rand(4, 3, 1, 1)})
    assert only(run_checked(PASS, g)).reason == (
        "residual operand shape [1, 4, 1, 1] differs from the Conv output [1, 4, 5, 5]")


def test_control_edge_pins_the_activation() -> None:
    g = conv_act("Relu")
    g.add_node("Identity", ["x"], ["side"], name="side", descs=[g.desc("x")], control_inputs=["y"])
    g.set_outputs(["y", "side"])
    assert only(run_checked(PASS, g)).reason == "node 'y' is pinned by a control edge"


def test_dry_run_logs_and_changes_nothing() -> None:
    g = conv_act("Relu")
    decision = only(run_checked(ConvActivationFusionPass(dry_run=True), g))
    assert (decision.accepted, decision.reason, decision.fused_node) == (False, "disabled by switch file", None)


def test_second_run_finds_nothing() -> None:
    g = build([node("Conv", ["x", "w"], "c1", pads=[1, 1, 1, 1]), node("Relu", ["c1"], "r1"),
               node("Conv", ["r1", "w2"], "c2"), node("Add", ["c2", "r1"], "s"), node("Relu", ["s"], "y")],
              {"x": [1, 4, 5, 5]}, ["y"], {"w": rand(4, 4, 3, 3, scale=0.2), "w2": rand(4, 4, 1, 1)})
    assert [d.fused_node for d in run_checked(PASS, g).decisions] == ["y", "r1"]
    again = run_checked(PASS, g)
    assert not again.changed and again.decisions == ()
