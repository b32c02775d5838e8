"""Instruments observe passes from outside (TVM's PassInstrument): snapshots, verification, numerics.

Each gets `before_pass(step)` and `after_pass(step)` with the step's record to fill in; none changes the
graph. The UI and the compile report only read what they recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ge_core.errors import GEError
from ge_core.ir.graph import Graph
from ge_core.ops import REGISTRY
from ge_core.passes.infra.base import FusionDecision, GraphPass, PassResult, Stage
from ge_core.runtime import execute, relative_error


@dataclass
class PassRecord:
    """What one pass did: the compile report's `passes` entry plus what the UI needs to step through it."""

    index: int
    name: str
    stage: str  # a Stage of ours, or a GE dump's stage name (ge_core/debugging/ge_records.py)
    description: str
    changed: bool = False
    nodes_before: int = 0
    nodes_after: int = 0
    seconds: float = 0.0
    notes: tuple[str, ...] = ()
    snapshot: Graph | None = None  # the graph after the pass (shared with the previous record if unchanged)
    verified: bool | None = None
    max_error: dict[str, float] | None = None  # per graph output, relative to its magnitude
    decisions: tuple[FusionDecision, ...] = ()  # fusion passes only
    report: Mapping[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)  # PassResult.report

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "stage": str(self.stage), "changed": self.changed,
                               "nodes_before": self.nodes_before, "nodes_after": self.nodes_after,
                               "seconds": round(self.seconds, 6)}
        if self.notes:
            out["notes"] = list(self.notes)
        if self.verified is not None:
            out["verified"] = self.verified
        if self.max_error is not None:
            out["max_error"] = self.max_error
        return out


@dataclass
class PassStep:
    """What an instrument sees: the pass, its stage, the graph, and the record being written."""

    graph: Graph
    pass_: GraphPass
    stage: Stage
    record: PassRecord
    result: PassResult | None = None


class Instrument:
    def before_pass(self, step: PassStep) -> None:
        """Called before the pass runs."""

    def after_pass(self, step: PassStep) -> None:
        """Called after the pass ran (step.result is set); may raise to fail the pass."""


@dataclass
class SnapshotInstrument(Instrument):
    """Keep a copy of the graph after every pass (graph copies share descs, attributes and weights)."""

    last: Graph | None = None

    def before_pass(self, step: PassStep) -> None:
        if self.last is None:
            self.last = step.graph.copy()

    def after_pass(self, step: PassStep) -> None:
        if step.record.changed or self.last is None:
            self.last = step.graph.copy()
        step.record.snapshot = self.last


@dataclass
class ProgressInstrument(Instrument):
    """Tell `report(done, total, pass name)` before each pass runs, so a UI can draw a progress bar."""

    report: Callable[[int, int, str], None]
    total: int

    def before_pass(self, step: PassStep) -> None:
        self.report(step.record.index - 1, self.total, step.record.name)


class VerifyInstrument(Instrument):
    """Run graph.verify(REGISTRY) after every pass: structure, order, and every desc against its op's
    inference."""

    def after_pass(self, step: PassStep) -> None:
        step.graph.verify(REGISTRY)
        step.record.verified = True


@dataclass
class NumericsInstrument(Instrument):
    """Run the graph (through the interpreter) before and after each pass on the same feeds; record the max
    error per output (ge_core.runtime.relative_error).

    With `tolerance` set, a pass whose outputs move by more than that (relative to the output's magnitude)
    fails, naming the pass: the numeric debugging a bad rewrite needs.
    """

    feeds: Mapping[str, np.ndarray]
    tolerance: float | None = None
    reference: dict[str, np.ndarray] = field(default_factory=dict)

    def before_pass(self, step: PassStep) -> None:
        if not self.reference:
            self.reference = execute(step.graph, self.feeds)

    def after_pass(self, step: PassStep) -> None:
        if not step.record.changed:
            step.record.max_error = {t: 0.0 for t in self.reference}
            return
        outputs = execute(step.graph, self.feeds)
        errors = {t: relative_error(outputs[t], ref) for t, ref in self.reference.items()}
        step.record.max_error = errors
        worst = max(errors.items(), key=lambda kv: kv[1], default=("", 0.0))
        if self.tolerance is not None and worst[1] > self.tolerance:
            raise GEError(f"output '{worst[0]}' moved by {worst[1]:.3g} (relative) after this pass, over the "
                          f"tolerance {self.tolerance:g}.")
        self.reference = outputs
