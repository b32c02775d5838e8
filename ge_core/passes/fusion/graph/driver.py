"""The pass driver shared by every graph-fusion pass: find candidates, judge them, fuse, log each decision.

Anchors are visited from the graph's end to its start, so at each anchor the longest pattern ending there
is seen first (Conv+Add+Relu at the Relu before Conv+Add at the Add); if it is rejected, the shorter one
still gets its own chance at its own anchor. Each anchor yields at most one decision: of all structural
matches there (longest first, then in declaration order), the first one that passes every check is fused;
if none passes, the first one's rejection is logged. A pass may have several rounds (HardSwish patterns read
the HardSigmoid a first round made).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from ge_core.ir.fusion import cycle_through, fuse
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.passes.fusion.graph.pattern import FLOAT_DTYPES, Match, Pattern, find_matches
from ge_core.passes.infra.base import FusionDecision, PassResult
from ge_core.passes.infra.rewrite import control_pinned

DISABLED = "disabled by switch file"


@dataclass(frozen=True)
class PatternFusionPass:
    """Base of the graph-fusion passes: subclasses set `name`, `rounds` and a docstring for learners."""

    name: ClassVar[str] = "PatternFusionPass"
    fusion_kind: ClassVar[str] = "graph"
    rounds: ClassVar[tuple[tuple[Pattern, ...], ...]] = ()
    dry_run: bool = False  # switched off: log every candidate as rejected, change nothing

    def run(self, graph: Graph) -> PassResult:
        pinned = control_pinned(graph)
        decisions: list[FusionDecision] = []
        for patterns in self.rounds:
            decisions += _run_round(self.name, patterns, graph, pinned, self.dry_run)
        fused = sum(d.accepted for d in decisions)
        notes = (f"fused {fused} of {len(decisions)} candidate(s)",) if decisions else ()
        return PassResult(fused > 0, notes, tuple(decisions))


def _run_round(pass_name: str, patterns: Sequence[Pattern], graph: Graph, pinned: set[str],
               dry_run: bool) -> list[FusionDecision]:
    by_op: dict[str, list[Pattern]] = {}
    for p in patterns:
        for op_type in p.anchor.ops:
            by_op.setdefault(op_type, []).append(p)
    claimed: set[int] = set()  # a dry run's would-be groups: a node joins one group at most
    decisions = []
    for anchor in reversed(graph.nodes):
        candidates = by_op.get(anchor.op_type)
        if not candidates or not _alive(graph, anchor) or id(anchor) in claimed:
            continue
        matches = [m for p in candidates for m in find_matches(graph, p, anchor)
                   if not any(id(n) in claimed for n in m.nodes.values())]
        matches.sort(key=lambda m: -len(m.nodes))  # the longest first: Mul(q, s) joins rather than stays out
        if matches:
            decisions.append(_decide(pass_name, graph, matches, pinned, dry_run, claimed))
    return decisions


def _decide(pass_name: str, graph: Graph, matches: list[Match], pinned: set[str], dry_run: bool,
            claimed: set[int]) -> FusionDecision:
    """Fuse the first match that passes every check; else log why the first one cannot be fused."""
    reasons = [rejection(graph, m, pinned) for m in matches]
    chosen = next((i for i, r in enumerate(reasons) if r is None), None)
    match = matches[0 if chosen is None else chosen]
    names = tuple(n.name for n in match.group(graph))
    pattern = match.pattern.name
    if chosen is None:
        return FusionDecision(pass_name, pattern, names, False, reasons[0] or "")
    if dry_run:
        claimed.update(id(n) for n in match.nodes.values())
        return FusionDecision(pass_name, pattern, names, False, DISABLED)
    anchor = match.anchor
    spec = match.pattern.rewrite(graph, match)
    group = sorted([*match.nodes.values(), *spec.extra], key=graph.index_key)
    node = fuse(graph, group, spec.op_type, name=anchor.name, domain=spec.domain, attrs=spec.attrs,
                inputs=spec.inputs)
    return FusionDecision(pass_name, pattern, names, True, spec.reason, node.name)


def rejection(graph: Graph, match: Match, pinned: set[str]) -> str | None:
    """Why `match` cannot be fused (None: it can). Generic rules first, then the pattern's conditions."""
    group = match.group(graph)
    for node in group:
        if node.name in pinned:
            return f"node '{node.name}' is pinned by a control edge"
    for node in group:
        for t in node.outputs:
            desc = graph.descs.get(t)
            if t and desc is not None and desc.dtype not in FLOAT_DTYPES:
                return f"dtype {desc.dtype} not fusable"
    reason = _escape(graph, match, group)
    if reason is not None:
        return reason
    for check in match.pattern.checks:
        reason = check(graph, match)
        if reason is not None:
            return reason
    return None


def _escape(graph: Graph, match: Match, group: list[Node]) -> str | None:
    """An intermediate value the fused node would have to hide but something outside still reads."""
    members = {id(n) for n in group}
    anchor = match.anchor
    for node in group:
        if node is anchor:
            continue
        for t in node.outputs:
            outside = [u for u in graph.users(t) if id(u) not in members]
            if outside:
                blocker = cycle_through(graph, group)
                if blocker is not None:
                    return f"would create a cycle through '{blocker.name}'"
                return f"{node.op_type} output also feeds node '{outside[0].name}' outside the group"
            if t and graph.is_output(t):
                return f"{node.op_type} output '{t}' is a graph output"
    return None


def _alive(graph: Graph, node: Node) -> bool:
    return graph.has_node(node.name) and graph.node(node.name) is node
