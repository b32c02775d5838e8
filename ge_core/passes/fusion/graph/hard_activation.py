"""HardActivationFusionPass: HardSigmoid and HardSwish written in primitives -> HardSigmoid / HardSwish ops."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ge_core.ir.graph import Graph
from ge_core.passes.fusion.graph.driver import PatternFusionPass
from ge_core.passes.fusion.graph.pattern import FusedOp, Match, Pattern, PNode, clip_bounds, near, op, scalar

CLIP = op("clip", "Clip", "shift", rest=True)  # rest: its bounds, checked as constants
# Dividing by d, spelled Div(t, d) or Mul(t, 1/d): the last node of several forms.
DIVIDE = {"Div": lambda src: op("out", "Div", src, "#divisor"),
          "Mul": lambda src: op("out", "Mul", src, "#scale", commutative=True)}


def _values(graph: Graph, match: Match) -> dict[str, float] | str:
    """The pattern's constants as numbers ('divisor' also from a Mul by its reciprocal), or why not."""
    values: dict[str, float] = {}
    for name, tensor in match.values.items():
        if name == "x":
            continue
        value = scalar(graph, tensor)
        if value is None:
            return f"'{tensor}' is not a scalar constant"
        values[name] = value
    if "scale" in values:
        values["divisor"] = 1.0 / values["scale"] if values["scale"] else float("inf")
    if "slope_div" in values:
        values["slope"] = 1.0 / values["slope_div"] if values["slope_div"] else float("inf")
    return values


def _values_and_bounds(graph: Graph, match: Match) -> tuple[dict[str, float], tuple[float, float]] | str:
    """The pattern's constants (_values) and the Clip's bounds, or why not."""
    values = _values(graph, match)
    if isinstance(values, str):
        return values
    bounds = clip_bounds(graph, match.node("clip"))
    return bounds if isinstance(bounds, str) else (values, bounds)


def _hard_sigmoid_ok(graph: Graph, match: Match) -> str | None:
    """Clip(x * a + b, 0, 1), or Clip(x + b, 0, u) / u: both are HardSigmoid."""
    found = _values_and_bounds(graph, match)
    if isinstance(found, str):
        return found
    values, bounds = found
    if "divisor" not in values:
        return None if bounds == (0.0, 1.0) else f"Clip bounds [{bounds[0]:g}, {bounds[1]:g}] are not [0, 1]"
    if bounds[0] != 0.0 or not 0.0 < bounds[1] < float("inf"):
        return f"Clip bounds [{bounds[0]:g}, {bounds[1]:g}] are not [0, u] for a positive u"
    if not near(values["divisor"], bounds[1]):
        return f"divisor {values['divisor']:g} is not the Clip's upper bound {bounds[1]:g}"
    return None


def _hard_sigmoid(graph: Graph, match: Match) -> FusedOp:
    values = _values(graph, match)
    assert isinstance(values, dict)
    if "divisor" in values:
        alpha, beta = 1.0 / values["divisor"], values["offset"] / values["divisor"]
    else:
        alpha, beta = values["slope"], values["beta"]
    return FusedOp("HardSigmoid", f"Clip of a linear function into HardSigmoid(alpha={alpha:g}, beta={beta:g})",
                   domain="", attrs={"alpha": alpha, "beta": beta}, inputs=(match.tensor("x"),))


def _hard_swish_ok(graph: Graph, match: Match) -> str | None:
    """x * Clip(x + 3, 0, 6) / 6, or x * HardSigmoid(x) with HardSwish's alpha 1/6 and beta 0.5."""
    if match.has("hsig"):
        hsig = match.node("hsig")
        alpha, beta = float(hsig.attr("alpha", 0.2)), float(hsig.attr("beta", 0.5))
        if not (near(alpha, 1 / 6) and near(beta, 0.5)):
            return f"HardSigmoid alpha={alpha:g} beta={beta:g} are not HardSwish's 1/6 and 0.5"
        return None
    found = _values_and_bounds(graph, match)
    if isinstance(found, str):
        return found
    values, bounds = found
    if values["three"] != 3.0 or bounds != (0.0, 6.0) or not near(values["divisor"], 6.0):
        return (f"x * Clip(x + {values['three']:g}, {bounds[0]:g}, {bounds[1]:g}) / {values['divisor']:g} is not "
                "x * Clip(x + 3, 0, 6) / 6")
    return None


def _hard_swish(graph: Graph, match: Match) -> FusedOp:
    form = "x * HardSigmoid(x)" if match.has("hsig") else "x * Clip(x + 3, 0, 6) / 6"
    return FusedOp("HardSwish", f"{form} into HardSwish", domain="", inputs=(match.tensor("x"),))


def _hard_sigmoid_patterns() -> tuple[Pattern, ...]:
    linear: dict[str, PNode] = {"Mul": op("lin", "Mul", "$x", "#slope", commutative=True),
                                "Div": op("lin", "Div", "$x", "#slope_div")}
    patterns = [
        # Clip(x * a + b, 0, 1) (or x / d + b)
        Pattern(f"HardSigmoid(Clip(x {'*' if k == 'Mul' else '/'} a + b, 0, 1))",
                (lin, op("shift", "Add", "lin", "#beta", commutative=True), CLIP), _hard_sigmoid, (_hard_sigmoid_ok,))
        for k, lin in linear.items()]
    patterns += [
        # Clip(x + b, 0, u) / u (or * 1/u): Relu6(x + 3) / 6 is the common one
        Pattern(f"HardSigmoid(Clip(x + b, 0, u) {'/ u' if k == 'Div' else '* 1/u'})",
                (op("shift", "Add", "$x", "#offset", commutative=True), CLIP, divide("clip")), _hard_sigmoid,
                (_hard_sigmoid_ok,))
        for k, divide in DIVIDE.items()]
    return tuple(patterns)


def _hard_swish_patterns() -> tuple[Pattern, ...]:
    patterns = [
        # x * Clip(x + 3, 0, 6) / 6 (Relu6 is Clip(0, 6)); the / 6 may be a Mul by 1/6
        Pattern(f"HardSwish(x * Clip(x + 3, 0, 6) {'/ 6' if k == 'Div' else '* 1/6'})",
                (op("shift", "Add", "$x", "#three", commutative=True), CLIP,
                 op("xc", "Mul", "$x", "clip", commutative=True), divide("xc")), _hard_swish, (_hard_swish_ok,))
        for k, divide in DIVIDE.items()]
    # x * HardSigmoid(x, 1/6, 0.5): Paddle's hardswish at opset 11, and what round 1 makes of x * (Relu6(x+3)/6)
    patterns.append(Pattern("HardSwish(x * HardSigmoid(x))", (op("hsig", "HardSigmoid", "$x"),
                                                               op("out", "Mul", "$x", "hsig", commutative=True)),
                            _hard_swish, (_hard_swish_ok,)))
    return tuple(patterns)


@dataclass(frozen=True)
class HardActivationFusionPass(PatternFusionPass):
    """Recognise HardSigmoid and HardSwish written in primitives and replace them by one op each.

    MobileNetV3-style networks use hard activations: HardSigmoid(x) = clip(x/6 + 0.5, 0, 1) and
    HardSwish(x) = x * HardSigmoid(x). Exporters often spell them out (x * Relu6(x + 3) / 6, or Paddle's
    x * HardSigmoid(x) at opset 11): three or four elementwise kernels where one will do, and a form the
    later Conv + activation fusion would not recognise. HardSigmoid forms are fused first, so
    x * (Relu6(x + 3) / 6) becomes x * HardSigmoid(x) and then HardSwish. The constants must be the exact
    ones (the Clip bounds, 3, 6); the fused ops are the standard ONNX HardSigmoid and HardSwish.
    """

    name: ClassVar[str] = "HardActivationFusionPass"
    rounds: ClassVar[tuple[tuple[Pattern, ...], ...]] = (_hard_sigmoid_patterns(), _hard_swish_patterns())
