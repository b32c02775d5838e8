"""The Fusion page's data: every fusion decision as a row, the per-pattern counts of GE's fusion_result.json,
and, for one node, the fusions that took it or refused it (pure; pandas only).

A decision names the nodes as they were when the pass ran, so a UB fusion of a FusedConv names the FusedConv,
not the Conv inside it. `originals` expands such names, in pipeline order, into the nodes they were made
of, so "which fusions touched conv1?" also finds the ones that touched the FusedConv holding it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pandas as pd

from ge_core.passes.infra.base import FusionDecision
from ge_core.passes.infra.instruments import PassRecord
from ge_core.passes.infra.pipeline import all_passes

DECISION_COLUMNS = ["#", "step", "stage", "pass", "kind", "pattern", "accepted", "reason", "nodes", "fused_node",
                    "originals", "node_count"]
SUMMARY_COLUMNS = ["kind", "pass", "pattern", "matched", "applied", "rejected"]


@dataclass(frozen=True)
class Decision:
    """A decision with where it was made: `step` is the record's position (the pass stepper's index)."""

    number: int  # position in the compile's decision log
    step: int
    stage: str
    decision: FusionDecision
    originals: tuple[str, ...]  # `decision.nodes` with fused nodes expanded into what they were made of


@dataclass(frozen=True)
class NodeFusion:
    """One fusion decision as seen from a node: `role` says how the node took part.

    made: the decision made this (fused) node; member: the node was one of the candidate's nodes;
    inside: the node was inside `via`, a fused node that was a candidate."""

    number: int
    step: int
    pass_name: str
    pattern: str
    accepted: bool
    reason: str
    role: str
    via: str
    nodes: tuple[str, ...]
    fused_node: str
    originals: tuple[str, ...]


def fusion_kind(pass_name: str) -> str:
    """"graph" or "ub" (fusion_result.json's section for the pass)."""
    return _kinds().get(pass_name, "graph")


@functools.cache
def _kinds() -> dict[str, str]:
    return {p.name: getattr(p, "fusion_kind", "graph") for p in all_passes()}


def decisions_of(records: Sequence[PassRecord]) -> list[Decision]:
    """Every decision in pipeline order, with its pass step and its nodes expanded into originals."""
    made_of: dict[str, tuple[str, ...]] = {}  # fused node -> the original nodes it holds
    out: list[Decision] = []
    for step, record in enumerate(records):
        for d in record.decisions:
            originals = tuple(dict.fromkeys(o for n in d.nodes for o in made_of.get(n, (n,))))
            out.append(Decision(len(out), step, str(record.stage), d, originals))
            if d.accepted and d.fused_node:
                made_of[d.fused_node] = originals
    return out


def fusion_decisions(records: Sequence[PassRecord]) -> pd.DataFrame:
    """One row per decision (columns DECISION_COLUMNS): the reason in full, nodes joined by ", "."""
    rows = [{"#": x.number, "step": x.step, "stage": x.stage, "pass": x.decision.pass_name,
             "kind": fusion_kind(x.decision.pass_name), "pattern": x.decision.pattern,
             "accepted": x.decision.accepted, "reason": x.decision.reason, "nodes": ", ".join(x.decision.nodes),
             "fused_node": x.decision.fused_node or "", "originals": ", ".join(x.originals),
             "node_count": len(x.originals)} for x in decisions_of(records)]
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def filter_decisions(frame: pd.DataFrame, *, accepted: bool | None = None, passes: Sequence[str] = (),
                     patterns: Sequence[str] = (), text: str = "") -> pd.DataFrame:
    """The rows of a fusion_decisions frame that match every filter given (text: in reason or node names)."""
    keep = pd.Series(True, index=frame.index)
    if accepted is not None:
        keep &= frame["accepted"] == accepted
    if passes:
        keep &= frame["pass"].isin(list(passes))
    if patterns:
        keep &= frame["pattern"].isin(list(patterns))
    if text:
        needle = text.lower()
        keep &= (frame["reason"].str.lower().str.contains(needle, regex=False)
                 | frame["originals"].str.lower().str.contains(needle, regex=False)
                 | frame["fused_node"].str.lower().str.contains(needle, regex=False))
    return frame[keep].reset_index(drop=True)


def fusion_summary(records: Sequence[PassRecord]) -> pd.DataFrame:
    """Per pass and pattern, in first-seen order: candidates matched, applied and rejected. Summed per pass
    these are fusion_result.json's match_times and effect_times."""
    counts: dict[tuple[str, str], list[int]] = {}
    for record in records:
        for d in record.decisions:
            entry = counts.setdefault((d.pass_name, d.pattern), [0, 0])
            entry[0] += 1
            entry[1] += d.accepted
    rows = [{"kind": fusion_kind(p), "pass": p, "pattern": pattern, "matched": m, "applied": a, "rejected": m - a}
            for (p, pattern), (m, a) in counts.items()]
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def fusions_of_node(records: Sequence[PassRecord], node: str) -> list[NodeFusion]:
    """The decisions that made `node` (a fused node), took it or refused it, directly or inside a fused
    node, in pipeline order. For a fused node, `originals` of its last `made` entry are the nodes it holds
    (a fused node fused again may keep its name, so a name can be made more than once)."""
    return list(_of_node(decisions_of(records), node))


def _of_node(decisions: Sequence[Decision], node: str) -> Iterator[NodeFusion]:
    holders = {node}  # `node` and the fused nodes made from it so far
    for x in decisions:
        d = x.decision
        made = d.accepted and d.fused_node == node
        direct = node in d.nodes
        via = next((n for n in d.nodes if n in holders and n != node), "")
        if made or direct or via:
            role = "made" if made else "member" if direct else "inside"
            yield NodeFusion(x.number, x.step, d.pass_name, d.pattern, d.accepted, d.reason, role,
                             "" if role != "inside" else via, d.nodes, d.fused_node or "", x.originals)
        if d.accepted and d.fused_node and (direct or via) and not made:
            holders.add(d.fused_node)
