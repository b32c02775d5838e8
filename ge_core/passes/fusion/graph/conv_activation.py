"""ConvActivationFusionPass: Conv (+ bias Add) (+ residual Add) + activation -> one FusedConv kernel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ge_core.ir.graph import Graph
from ge_core.passes.fusion.graph.activations import ACTIVATIONS, activation_name, activation_ok
from ge_core.passes.fusion.graph.driver import PatternFusionPass
from ge_core.passes.fusion.graph.pattern import FusedOp, Match, Pattern, PNode, constant, op

CONV = op("conv", "Conv", "$x", "$w", rest=True)  # the optional bias input is looked at by _bias_ok
BIAS = op("bias", "Add", "conv", "#bias", commutative=True)
RESIDUAL = op("add", ("Add", "Sum"), "conv", "@other", commutative=True)


def _act(source: str) -> PNode:
    return op("act", ACTIVATIONS, source, rest=True)


def _bias_ok(graph: Graph, match: Match) -> str | None:
    """The Add is a per-channel constant bias, and the Conv has none of its own."""
    conv = match.node("conv")
    if conv.input(2):
        return f"Conv '{conv.name}' already has a bias; the Add is not its bias"
    out = graph.desc(conv.outputs[0]).shape
    bias = constant(graph, match.tensor("bias"))
    assert bias is not None
    shape = list(bias.shape)
    if len(shape) == len(out):
        shape = shape[1:] if shape[0] == 1 else [-1]
    if len(out) < 3 or shape != [out[1], *[1] * (len(out) - 2)]:
        return f"Add constant shape {list(bias.shape)} is not per-channel for Conv output {list(out)}"
    return None


def _residual_ok(graph: Graph, match: Match) -> str | None:
    """The other Add operand is an activation of exactly the Conv output's shape (no broadcasting)."""
    other, conv_out = match.tensor("other"), match.node("conv").outputs[0]
    shape, want = graph.desc(other).shape, graph.desc(conv_out).shape
    if shape != want or graph.desc(match.node("add").outputs[0]).shape != want:
        return f"residual operand shape {list(shape)} differs from the Conv output {list(want)}"
    return None


def _fused_conv(graph: Graph, match: Match) -> FusedOp:
    act = activation_name(graph, match)
    parts = ["Conv", *(["bias Add"] if match.has("bias") else []), *(["residual Add"] if match.has("add") else []),
             *([act] if act else [])]
    attrs: dict[str, object] = {"activation": act} if act else {}
    attrs["residual"] = int(match.has("add"))
    # Data and weights are the kernel's operands; an activation's constants (Clip bounds) stay in the body.
    operands = [t for t in match.node("conv").inputs if t] + [match.tensor(v) for v in ("bias", "other")
                                                                if v in match.values]
    return FusedOp("FusedConv", " + ".join(parts) + " into one kernel", attrs=attrs,
                   inputs=tuple(dict.fromkeys(operands)))


PATTERNS = (
    # Conv, its bias written as its own Add (exporters without a Conv bias), then an activation
    Pattern("Conv+Add+Activation", (CONV, BIAS, _act("bias")), _fused_conv, (activation_ok, _bias_ok)),
    # Conv + residual Add (the block's shortcut) + activation: ResNet/MobileNet block tails
    Pattern("Conv+Add(residual)+Activation", (CONV, RESIDUAL, _act("add")), _fused_conv,
            (activation_ok, _residual_ok)),
    # Conv + activation
    Pattern("Conv+Activation", (CONV, _act("conv")), _fused_conv, (activation_ok,)),
    # Conv + residual Add, no activation after it
    Pattern("Conv+Add(residual)", (CONV, RESIDUAL), _fused_conv, (_residual_ok,)),
)


@dataclass(frozen=True)
class ConvActivationFusionPass(PatternFusionPass):
    """Fuse a Conv with what follows it elementwise: a bias Add, a residual Add, an activation.

    A convolution's result leaves the cube unit through a small epilogue before it is written to memory.
    Applying the bias, adding the shortcut tensor of a residual block and applying Relu (or Relu6,
    LeakyRelu, Sigmoid, HardSwish, ...) in that epilogue means the Conv output is written once instead of
    being written, read back by an Add, written, read back by a Relu and written again. GE's
    ConvAddFusionPass / ConvReluFusionPass family does this; every NPU compiler has its version.
    The fused node is a `ge.FusedConv` that runs its body; attrs name the activation and whether a
    residual was added. Not fused: a Conv whose output is also read elsewhere, an activation whose
    parameters are not constants, a residual of another shape.
    """

    name: ClassVar[str] = "ConvActivationFusionPass"
    rounds: ClassVar[tuple[tuple[Pattern, ...], ...]] = (PATTERNS,)
