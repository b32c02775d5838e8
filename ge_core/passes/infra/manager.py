"""PassManager: runs an ordered pipeline of (stage, pass) steps with instruments around every pass.

A failing pass becomes a PassError naming the pass, its stage and the passes before it, and carrying
the graph as it was before the failing pass, so the UI can show where things went wrong.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from ge_core.errors import GEError
from ge_core.ir.graph import Graph
from ge_core.passes.infra.base import GraphPass, Stage, describe
from ge_core.passes.infra.instruments import Instrument, PassRecord, PassStep, SnapshotInstrument


@dataclass(frozen=True)
class PipelineStep:
    stage: Stage
    pass_: GraphPass

    @property
    def name(self) -> str:
        return self.pass_.name


class PassError(GEError):
    """A pass failed: names the pass, its stage and what ran before; keeps the graph from before it."""

    def __init__(self, pass_name: str, stage: Stage, before: Sequence[str], cause: BaseException,
                 graph_before: Graph | None, records: list[PassRecord]) -> None:
        self.pass_name = pass_name
        self.stage = stage
        self.passes_before = list(before)
        self.cause = cause
        self.graph_before = graph_before
        self.records = records
        ran = ", ".join(self.passes_before[-5:]) or "none"
        more = f" (and {len(self.passes_before) - 5} earlier)" if len(self.passes_before) > 5 else ""
        inner = cause if isinstance(cause, GEError) else None  # its problems stay one per line
        advice = (f"Passes before it: {ran}{more}. The graph before {pass_name} is kept for inspection; turn the "
                  f"pass off (--fusion-switch-file with '{pass_name}:off') to compile without it.")
        super().__init__(f"pass {pass_name} (stage {stage}) failed: {inner.message if inner else cause}",
                         problems=inner.problems if inner else (),
                         hint=f"{inner.hint} {advice}" if inner and inner.hint else advice)


class PassManager:
    def __init__(self, steps: Sequence[PipelineStep], instruments: Sequence[Instrument] = ()) -> None:
        self.steps = list(steps)
        self.instruments = list(instruments)

    def run(self, graph: Graph) -> list[PassRecord]:
        """Run every step on `graph` in place; returns one record per pass."""
        records: list[PassRecord] = []
        snapshots = next((i for i in self.instruments if isinstance(i, SnapshotInstrument)), None)
        for index, step in enumerate(self.steps):
            record = PassRecord(index + 1, step.name, step.stage, describe(step.pass_))
            context = PassStep(graph, step.pass_, step.stage, record)
            before = snapshots.last if snapshots and snapshots.last is not None else None
            try:
                self._run_step(context)
            except Exception as exc:
                if before is None and snapshots is not None:
                    before = snapshots.last
                raise PassError(step.name, step.stage, [s.name for s in self.steps[:index]], exc,
                                before, records) from exc
            records.append(record)
        return records

    def _run_step(self, step: PassStep) -> None:
        record = step.record
        for instrument in self.instruments:
            instrument.before_pass(step)
        record.nodes_before = len(step.graph)
        start = time.perf_counter()
        step.result = step.pass_.run(step.graph)
        record.seconds = time.perf_counter() - start
        record.nodes_after = len(step.graph)
        record.changed = step.result.changed
        record.notes = step.result.notes
        record.decisions = step.result.decisions
        record.report = step.result.report
        for instrument in self.instruments:
            instrument.after_pass(step)
