"""What counts as an activation that a Conv or MatMul kernel can apply on its way out, and its conditions."""

from __future__ import annotations

from ge_core.ir.graph import Graph
from ge_core.ops import REGISTRY
from ge_core.passes.fusion.graph.pattern import Match, clip_bounds

# The ops a pattern's activation node accepts: those the registry marks as OpDef.activation (one input,
# applied elementwise to the accumulator before it is written: cheap to do in the cube's epilogue).
ACTIVATIONS = tuple(op.op_type for op in REGISTRY if op.activation and not op.domain)


def activation_ok(graph: Graph, match: Match) -> str | None:
    """Clip's bounds and PRelu's slope must be constants: the fused kernel bakes them in (conditions on the
    two activations with parameter inputs, named here as the pattern's own checks)."""
    if not match.has("act"):
        return None
    act = match.node("act")
    if act.op_type == "Clip":
        bounds = clip_bounds(graph, act)
        return bounds if isinstance(bounds, str) else None
    if act.op_type == "PRelu" and not graph.is_constant(act.input(1)):
        return f"activation slope '{act.input(1)}' of PRelu '{act.name}' is not a constant"
    return None


def activation_name(graph: Graph, match: Match) -> str:
    """The activation's op type ('Relu6' for a Clip to [0, 6]), for attrs and reasons; "" when none."""
    if not match.has("act"):
        return ""
    act = match.node("act")
    if act.op_type == "Clip" and clip_bounds(graph, act) == (0.0, 6.0):
        return "Relu6"
    return act.op_type
