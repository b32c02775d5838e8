"""The Passes page's table: one row per pass record (pure; pandas only)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ge_core.passes.infra.base import FusionDecision
from ge_core.passes.infra.instruments import PassRecord

PASS_COLUMNS = ["#", "stage", "pass", "changed", "nodes before", "nodes after", "Δ nodes", "ms", "fusions",
                "notes"]


def pass_table(records: Sequence[PassRecord]) -> pd.DataFrame:
    """#, stage, pass, changed, nodes before/after and their difference, wall time, fusions made/considered
    (fusion passes only) and the pass's own notes, in pipeline order."""
    rows = []
    for r in records:
        fused = sum(d.accepted for d in r.decisions)
        rows.append({"#": r.index, "stage": str(r.stage), "pass": r.name, "changed": r.changed,
                     "nodes before": r.nodes_before, "nodes after": r.nodes_after,
                     "Δ nodes": r.nodes_after - r.nodes_before, "ms": round(r.seconds * 1e3, 3),
                     "fusions": f"{fused} of {len(r.decisions)}" if r.decisions else "",
                     "notes": "; ".join(r.notes)})
    return pd.DataFrame(rows, columns=PASS_COLUMNS)


def decision_table(decisions: Sequence[FusionDecision]) -> pd.DataFrame:
    """A fusion pass's candidates: pattern, fused or not, why, the nodes involved and the node made."""
    rows = [{"pattern": d.pattern, "fused": d.accepted, "reason": d.reason, "nodes": ", ".join(d.nodes),
             "fused node": d.fused_node or ""} for d in decisions]
    return pd.DataFrame(rows, columns=["pattern", "fused", "reason", "nodes", "fused node"])
