"""MatMulAddFusionPass: MatMul + bias Add (+ activation) -> Gemm, or a FullyConnection kernel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ge_core.ir.graph import Graph
from ge_core.passes.fusion.graph.activations import ACTIVATIONS, activation_name, activation_ok
from ge_core.passes.fusion.graph.driver import PatternFusionPass
from ge_core.passes.fusion.graph.pattern import FusedOp, Match, Pattern, constant, distinct, op

MATMUL = op("mm", "MatMul", "$a", "$w")
BIAS = op("add", "Add", "mm", "#bias", commutative=True)
ACT = op("act", ACTIVATIONS, "add", rest=True)


def _plain_2d(graph: Graph, match: Match) -> bool:
    return graph.desc(match.tensor("a")).rank == 2 and graph.desc(match.tensor("w")).rank == 2


def _shapes_ok(graph: Graph, match: Match) -> str | None:
    """2-D or higher operands, and a bias that varies along the last (output feature) axis only."""
    mm = match.node("mm")
    if any(graph.desc(t).rank < 2 for t in mm.inputs):
        return f"MatMul '{mm.name}' has a 1-D operand"
    out = graph.desc(mm.outputs[0]).shape
    bias = constant(graph, match.tensor("bias"))
    assert bias is not None
    shape = bias.shape
    along_last = len(shape) <= len(out) and all(d == 1 for d in shape[:-1]) and (not shape or shape[-1] in (1, out[-1]))
    if not along_last or graph.desc(match.node("add").outputs[0]).shape != out:
        return f"bias shape {list(shape)} does not broadcast along the last dim of the MatMul output {list(out)}"
    return None


def _weight_ok(graph: Graph, match: Match) -> str | None:
    """Beyond 2-D, the kernel is a fully connected layer: its weight must be one constant matrix."""
    w = match.tensor("w")
    if _plain_2d(graph, match):
        return None
    array = constant(graph, w)
    if array is None or array.ndim != 2:
        return f"N-D MatMul: weight '{w}' is not a constant 2-D matrix"
    return None


def _fully_connected(graph: Graph, match: Match) -> FusedOp:
    act = activation_name(graph, match)
    if _plain_2d(graph, match) and not act:
        return FusedOp("Gemm", "MatMul + Add into Gemm (C = bias)", domain="", attrs={"transA": 0, "transB": 0},
                       inputs=(match.tensor("a"), match.tensor("w"), match.tensor("bias")))
    attrs = {"activation": act} if act else {}
    reason = "MatMul + Add" + (f" + {act}" if act else "") + " into one FullyConnection kernel"
    operands = (match.tensor("a"), match.tensor("w"), match.tensor("bias"))  # activation constants: in the body
    return FusedOp("FullyConnection", reason, attrs=attrs, inputs=operands)


CHECKS = (_shapes_ok, _weight_ok, distinct("a", "w", "bias"))
PATTERNS = (
    # a linear layer with its activation: x @ W + b, then Relu/Gelu/Tanh/...
    Pattern("MatMul+Add+Activation", (MATMUL, BIAS, ACT), _fully_connected, (*CHECKS, activation_ok)),
    # a linear layer: x @ W + b (2-D: exactly ONNX's Gemm)
    Pattern("MatMul+Add", (MATMUL, BIAS), _fully_connected, CHECKS),
)


@dataclass(frozen=True)
class MatMulAddFusionPass(PatternFusionPass):
    """Fuse a MatMul with the bias Add after it (and an activation after that) into one kernel.

    Exporters write a linear layer as MatMul then Add(bias). On an NPU the bias add belongs in the matrix
    unit's epilogue, like a Conv's bias: fused, the product is written once instead of written, read back
    and written again. For 2-D operands the pair is exactly ONNX's Gemm (transB=0, C = bias), a real op
    with its own kernel; for N-D inputs with a constant 2-D weight (a linear layer over a sequence), or
    with an activation folded in, the result is a `ge.FullyConnection` kernel that runs its body.
    Not fused: a bias that varies along other axes than the last, a MatMul output read elsewhere.
    """

    name: ClassVar[str] = "MatMulAddFusionPass"
    rounds: ClassVar[tuple[tuple[Pattern, ...], ...]] = (PATTERNS,)
