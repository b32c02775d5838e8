"""GeluFusionPass: GELU written in primitives (erf or tanh form) -> one Gelu op."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import ClassVar

from ge_core.ir.graph import Graph
from ge_core.passes.fusion.graph.driver import PatternFusionPass
from ge_core.passes.fusion.graph.pattern import FusedOp, Match, Pattern, PNode, near, op, scalar

# The inside of 0.5 * x * (1 + f(x)), ending in the node "one_plus" = 1 + f(x).
ERF_FORMS = {
    # 1 + Erf(x / sqrt(2))
    "erf(x/sqrt2)": (op("scaled", "Div", "$x", "#sqrt2"), op("erf", "Erf", "scaled"),
                     op("one_plus", "Add", "erf", "#one", commutative=True)),
    # 1 + Erf(x * (1/sqrt(2)))
    "erf(x*rsqrt2)": (op("scaled", "Mul", "$x", "#rsqrt2", commutative=True), op("erf", "Erf", "scaled"),
                      op("one_plus", "Add", "erf", "#one", commutative=True)),
}
_TANH_TAIL = (op("cube_c", "Mul", "cube", "#c", commutative=True), op("inner", "Add", "$x", "cube_c", commutative=True),
              op("scaled", "Mul", "inner", "#k", commutative=True), op("tanh", "Tanh", "scaled"),
              op("one_plus", "Add", "tanh", "#one", commutative=True))
TANH_FORMS = {
    # 1 + Tanh(sqrt(2/pi) * (x + 0.044715 * Pow(x, 3)))
    "tanh(pow)": (op("cube", "Pow", "$x", "#three"), *_TANH_TAIL),
    # 1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x * x * x))
    "tanh(x*x*x)": (op("x2", "Mul", "$x", "$x"), op("cube", "Mul", "x2", "$x", commutative=True), *_TANH_TAIL),
}
OUTER = {
    # (x * (1 + f)) * 0.5: TorchScript, Paddle
    "x*f*0.5": (op("xf", "Mul", "$x", "one_plus", commutative=True), op("out", "Mul", "xf", "#half", commutative=True)),
    # x * (0.5 * (1 + f)): torch.export (dynamo)
    "x*(0.5*f)": (op("hf", "Mul", "one_plus", "#half", commutative=True),
                  op("out", "Mul", "$x", "hf", commutative=True)),
    # (0.5 * x) * (1 + f)
    "(0.5*x)*f": (op("hx", "Mul", "$x", "#half", commutative=True),
                  op("out", "Mul", "hx", "one_plus", commutative=True)),
    # (x * (1 + f)) / 2
    "x*f/2": (op("xf", "Mul", "$x", "one_plus", commutative=True), op("out", "Div", "xf", "#two")),
}
# constant name -> (value, what it is, how it is shown in a rejection)
CONSTANTS = {
    "sqrt2": (math.sqrt(2.0), "Div constant", "sqrt(2)"), "rsqrt2": (math.sqrt(0.5), "Mul constant", "1/sqrt(2)"),
    "one": (1.0, "Add constant", "1"), "half": (0.5, "Mul constant", "0.5"), "two": (2.0, "Div constant", "2"),
    "three": (3.0, "Pow exponent", "3"), "c": (0.044715, "cubic coefficient", "0.044715"),
    "k": (math.sqrt(2.0 / math.pi), "Mul constant", "sqrt(2/pi)"),
}


def _constants_ok(graph: Graph, match: Match) -> str | None:
    """Every constant of the formula has its textbook value (to 1e-4 relative: exporters round them)."""
    for name, tensor in match.values.items():
        if name not in CONSTANTS:
            continue
        target, label, shown = CONSTANTS[name]
        value = scalar(graph, tensor)
        if value is None:
            return f"{label} '{tensor}' is not a scalar constant"
        if not near(value, target):
            return f"{label} {value:g} is not {shown}"
    return None


def _gelu(graph: Graph, match: Match) -> FusedOp:
    if match.has("tanh"):
        return FusedOp("Gelu", "0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) into Gelu(tanh)",
                       domain="", attrs={"approximate": "tanh"}, inputs=(match.tensor("x"),))
    return FusedOp("Gelu", "0.5 * x * (1 + Erf(x / sqrt(2))) into Gelu", domain="", inputs=(match.tensor("x"),))


def _patterns() -> tuple[Pattern, ...]:
    inner = {**ERF_FORMS, **TANH_FORMS}
    patterns = []
    for (inner_name, inside), (outer_name, outside) in itertools.product(inner.items(), OUTER.items()):
        nodes: tuple[PNode, ...] = (*inside, *outside)
        formula = outer_name.replace("f", inner_name)  # "x*f*0.5" -> "x*erf(x/sqrt2)*0.5"
        patterns.append(Pattern(f"Gelu({formula})", nodes, _gelu, (_constants_ok,)))
    return tuple(patterns)


# every inner form (erf: Div or Mul; tanh: Pow or x*x*x) with every way exporters multiply by x and 0.5
PATTERNS = _patterns()


@dataclass(frozen=True)
class GeluFusionPass(PatternFusionPass):
    """Recognise GELU written in primitives and replace it by one Gelu op.

    Exporters spell GELU out: x * 0.5 * (1 + Erf(x / sqrt(2))), or the tanh approximation
    0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), in several orders (Div by 1.4142 or Mul by
    0.7071, the 0.5 before or after). That is five to nine elementwise kernels, each a full pass over
    memory; one Gelu kernel does it in one. The constants must be the textbook ones (to 1e-4).
    The fused node is `Gelu` of the default domain (approximate='tanh' for the tanh form). ONNX defines
    Gelu only since opset 20: in an older graph the node still runs the workbench's Gelu kernel, its body
    keeps the ONNX-standard primitives, and the graph's ONNX dump is not written while it is there.
    """

    name: ClassVar[str] = "GeluFusionPass"
    rounds: ClassVar[tuple[tuple[Pattern, ...], ...]] = (PATTERNS,)
