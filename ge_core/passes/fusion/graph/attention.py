"""AttentionFusionPass: Softmax(Q K^T * scale + mask) V -> one FusedAttention kernel."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import ClassVar

from ge_core.ir.graph import Graph
from ge_core.passes.fusion.graph.driver import PatternFusionPass
from ge_core.passes.fusion.graph.pattern import FusedOp, Match, Pattern, PNode, op, scalar

# How the scores get their 1/sqrt(d) scale: nodes up to the scores ("scores" is the last one's id).
SCALINGS: dict[str, tuple[PNode, ...]] = {
    # no scale (or folded into the weights upstream)
    "unscaled": (op("scores", "MatMul", "$q", "$kt"),),
    # (Q K^T) * s: BERT exports
    "scores*s": (op("qk", "MatMul", "$q", "$kt"), op("scores", "Mul", "qk", "#scale", commutative=True)),
    # (Q K^T) / s
    "scores/s": (op("qk", "MatMul", "$q", "$kt"), op("scores", "Div", "qk", "#scale")),
    # (Q * s) K^T: the scale applied to the query first (Paddle, timm)
    "(q*s)K": (op("qs", "Mul", "$q", "#scale", commutative=True), op("scores", "MatMul", "qs", "$kt")),
    # (Q / s) K^T
    "(q/s)K": (op("qs", "Div", "$q", "#scale"), op("scores", "MatMul", "qs", "$kt")),
}
MASKS: dict[str, tuple[PNode, ...]] = {
    "mask": (op("masked", "Add", "scores", "$mask", commutative=True),),  # an additive mask (0 or -inf-ish)
    "": (),
}


def _softmax_ok(graph: Graph, match: Match) -> str | None:
    """Softmax over the last axis (the keys), on scores of rank 2 or more, with a scalar scale and a mask
    that broadcasts into the scores without enlarging them."""
    softmax = match.node("probs")
    rank = graph.desc(softmax.outputs[0]).rank
    axis = int(softmax.attr("axis", -1 if softmax.opset >= 13 else 1))
    if rank < 2 or axis % rank != rank - 1:
        return f"Softmax '{softmax.name}' is over axis {axis}, not the last axis of rank-{rank} scores"
    if "scale" in match.values and scalar(graph, match.tensor("scale")) is None:
        return f"scale '{match.tensor('scale')}' is not a scalar constant"
    if match.has("masked"):
        scores = graph.desc(match.node("scores").outputs[0]).shape
        masked = graph.desc(match.node("masked").outputs[0]).shape
        if masked != scores:
            return f"mask shape {list(graph.desc(match.tensor('mask')).shape)} enlarges the scores {list(scores)}"
    return None


def _attention(graph: Graph, match: Match) -> FusedOp:
    scale = 1.0
    if "scale" in match.values:
        value = scalar(graph, match.tensor("scale"))
        assert value is not None
        divides = any(match.has(p) and match.node(p).op_type == "Div" for p in ("scores", "qs"))
        scale = 1.0 / value if divides else value
    masked = match.has("masked")
    operands = [match.tensor(n) for n in ("q", "kt", "v", "mask") if n in match.values]
    reason = "MatMul(Q, K^T), scale" + (", mask Add" if masked else "") + ", Softmax, MatMul(., V) into one kernel"
    return FusedOp("FusedAttention", reason, attrs={"scale": scale, "masked": int(masked)},
                   inputs=tuple(dict.fromkeys(operands)))


def _patterns() -> tuple[Pattern, ...]:
    patterns = []
    for (scaling, front), (mask, masking) in itertools.product(SCALINGS.items(), MASKS.items()):
        last = "masked" if masking else "scores"
        nodes = (*front, *masking, op("probs", "Softmax", last), op("out", "MatMul", "probs", "$v"))
        label = f"Softmax({scaling}{' + mask' if mask else ''}) V"
        patterns.append(Pattern(f"Attention({label})", nodes, _attention, (_softmax_ok,)))
    return tuple(patterns)


# every scaling (none, after or before the Q K^T MatMul, Mul or Div) with and without an additive mask
PATTERNS = _patterns()


@dataclass(frozen=True)
class AttentionFusionPass(PatternFusionPass):
    """Fuse scaled dot-product attention, Softmax(Q K^T * scale + mask) V, into one kernel.

    Written as separate ops, attention writes the full [heads, seq, seq] score matrix to memory three or
    four times (scores, scaled, masked, probabilities) and reads it back each time; a fused attention
    kernel (FlashAttention, GE's FlashAttentionScore) keeps each block of scores on chip and never
    writes them at all. The pass recognises the forms exporters write: the scale as Mul or Div, after
    the first MatMul or on Q before it, an optional additive mask, Softmax over the last axis. The
    transposes that make K^T and the heads stay outside. The fused node is a `ge.FusedAttention` with
    operands (Q, K^T, V[, mask]) and attrs scale (a multiplier) and masked; it runs its body.
    """

    name: ClassVar[str] = "AttentionFusionPass"
    rounds: ClassVar[tuple[tuple[Pattern, ...], ...]] = (PATTERNS,)
