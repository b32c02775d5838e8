"""The Graph page's stepper: one step per pass record, with the graphs before and after it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ge_core.ir.graph import Graph
from ge_core.passes.infra.instruments import PassRecord


@dataclass(frozen=True)
class PassStep:
    index: int  # position in the compiled model's records
    name: str
    stage: str
    changed: bool
    nodes_before: int
    nodes_after: int
    seconds: float
    description: str

    @property
    def label(self) -> str:
        """`4 · BatchNormFoldPass: 176 → 123 nodes` (or `unchanged`)."""
        what = f"{self.nodes_before:,} → {self.nodes_after:,} nodes" if self.changed else "unchanged"
        return f"{self.index + 1} · {self.name}: {what}"


def pass_steps(records: Sequence[PassRecord], *, changed_only: bool = False) -> list[PassStep]:
    """One step per record (only those that changed the graph with `changed_only`)."""
    return [PassStep(i, r.name, str(r.stage), r.changed, r.nodes_before, r.nodes_after,
                     r.seconds, r.description)
            for i, r in enumerate(records) if r.changed or not changed_only]


def graphs_around(input_graph: Graph, records: Sequence[PassRecord], index: int) -> tuple[Graph, Graph]:
    """(before, after) of pass `index`: the previous record's snapshot (or the input graph) and its own."""
    before = input_graph if index == 0 else _snapshot(records, index - 1, input_graph)
    return before, _snapshot(records, index, before)


def _snapshot(records: Sequence[PassRecord], index: int, fallback: Graph) -> Graph:
    snapshot = records[index].snapshot
    return snapshot if snapshot is not None else fallback
