"""Numeric bisection: which pass first moved the model's outputs?

The graph as imported is run once for the reference outputs; then the snapshot kept after every pass is
run on the same feeds and compared output by output (ge_core.runtime.relative_error: max |got - want| /
max |want|). Every snapshot is checked, not a binary search: an error one pass introduces can be hidden
by a later one, and the learner sees the whole curve. Unchanged passes share their snapshot, so it runs
once. Last comes the compiled plan itself (on its memory arena, where a wrong plan gives wrong numbers).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ge_core.compiler import CompiledModel
from ge_core.debugging.failures import Failure, error_failure, nodes_of
from ge_core.errors import GEError, quote
from ge_core.ir.graph import Graph
from ge_core.runtime import execute, relative_error

DEFAULT_TOLERANCE = 1e-4
PLAN_ROW = "compiled plan (memory arena)"

Progress = Callable[[int, int], None]  # (done, total): lets a UI draw a progress bar


@dataclass(frozen=True)
class StepNumerics:
    """One step's outputs against the reference: relative error per graph output, or why it did not run."""

    index: int  # the pass's index (1-based); len(records) + 1 for the compiled plan
    name: str
    stage: str
    changed: bool
    errors: dict[str, float]
    error: str = ""  # set when running this step's graph failed
    nodes: tuple[str, ...] = ()  # the nodes that error names
    graph: Graph | None = field(default=None, repr=False, compare=False)  # the graph this step ran

    @property
    def worst(self) -> float:
        if self.error:
            return math.inf
        return max(self.errors.values(), default=0.0)

    def diverges(self, tolerance: float) -> bool:
        return bool(self.error) or self.worst > tolerance


@dataclass(frozen=True)
class BisectResult:
    tolerance: float
    outputs: tuple[str, ...]
    steps: tuple[StepNumerics, ...]

    @property
    def first_bad(self) -> StepNumerics | None:
        """The first step whose outputs moved beyond the tolerance (or failed to run); None if all agree."""
        return next((s for s in self.steps if s.diverges(self.tolerance)), None)

    def finding(self) -> str | None:
        """The first step beyond the tolerance in one sentence (the Debug page, a reproducer's README and the
        CLI's `bisect` say it alike); None when every step agrees."""
        bad = self.first_bad
        if bad is None:
            return None
        where = f"{bad.name} (step {bad.index}, stage {bad.stage})"
        if bad.error:
            return f"the graph after {where} failed to run: {bad.error}"
        output, error = max(bad.errors.items(), key=lambda kv: kv[1])
        return (f"the outputs first drift after {where}: output {quote(output)} moved by {error:.3g} (relative), "
                f"over the tolerance {self.tolerance:.1e}.")

    def to_json(self) -> dict[str, object]:
        """What a reproducer's config.json keeps of it: the tolerance, the finding, the worst error per step."""
        bad = self.first_bad
        return {"tolerance": self.tolerance, "finding": self.finding(),
                "first_bad": None if bad is None else {"step": bad.index, "pass": bad.name, "stage": bad.stage},
                "steps": [{"step": s.index, "pass": s.name, "max_error": s.worst if math.isfinite(s.worst) else None}
                          for s in self.steps]}

    def failure(self) -> Failure | None:
        """The first step that failed to run, as a run-phase Failure naming its node; None if all ran."""
        step = next((s for s in self.steps if s.error), None)
        if step is None:
            return None
        where = "the compiled plan" if step.name == PLAN_ROW else f"the graph after pass {step.name}"
        on = f" at node '{step.nodes[0]}'" if step.nodes else ""
        return Failure("run", f"Running {where} failed{on}: {step.error}", step.error,
                       "The graph before this step ran: compare the two on the Graph page, or switch the pass "
                       "off in the sidebar.", pass_name=None if step.name == PLAN_ROW else step.name,
                       stage=step.stage, nodes=step.nodes, graph=step.graph)

    def table(self) -> pd.DataFrame:
        """One row per step: #, stage, pass, changed, worst error, per-output errors, over tolerance."""
        rows = []
        for s in self.steps:
            row: dict[str, object] = {"#": s.index, "stage": s.stage, "pass": s.name, "changed": s.changed,
                                      "max error": s.worst}
            row.update({f"error {t}": s.errors.get(t, math.inf) for t in self.outputs})
            row["over tolerance"] = s.diverges(self.tolerance)
            row["problem"] = s.error
            rows.append(row)
        return pd.DataFrame(rows)


def bisect_numerics(compiled: CompiledModel, feeds: Mapping[str, np.ndarray],
                    tolerance: float = DEFAULT_TOLERANCE, progress: Progress | None = None) -> BisectResult:
    """Run the graph after every pass on `feeds` and compare with the graph as imported.

    Raises the GEError of the reference run itself (bad feeds, a kernel failing on the imported graph):
    without a reference there is nothing to compare with (`reference_failure` words it).
    """
    reference = execute(compiled.input_graph, feeds)
    outputs = tuple(reference)
    total = len(compiled.records) + 1
    done: dict[int, StepNumerics] = {}  # by id(snapshot): unchanged passes share one
    steps = []
    for i, record in enumerate(compiled.records):
        graph = record.snapshot if record.snapshot is not None else compiled.graph
        if id(graph) not in done:
            done[id(graph)] = _compare(functools.partial(execute, graph, feeds), reference, graph)
        base = done[id(graph)]
        steps.append(StepNumerics(record.index, record.name, str(record.stage), record.changed, base.errors,
                                  base.error, base.nodes, graph))
        if progress is not None:
            progress(i + 1, total)
    plan = _compare(functools.partial(compiled.run, feeds), reference, compiled.graph)
    steps.append(StepNumerics(len(compiled.records) + 1, PLAN_ROW, "Build", False, plan.errors, plan.error,
                              plan.nodes, compiled.graph))
    if progress is not None:
        progress(total, total)
    return BisectResult(tolerance, outputs, tuple(steps))


def _compare(run: Callable[[], dict[str, np.ndarray]], reference: dict[str, np.ndarray],
             graph: Graph) -> StepNumerics:
    try:
        got = run()
    except GEError as err:
        return StepNumerics(0, "", "", False, {}, str(err), tuple(nodes_of(err, graph)))
    errors = {t: relative_error(got[t], want) if t in got else math.inf for t, want in reference.items()}
    return StepNumerics(0, "", "", False, errors)



def reference_failure(err: BaseException, compiled: CompiledModel) -> Failure:
    """The imported graph itself failed to run on the feeds: a run-phase failure in that graph."""
    return error_failure(err, "run", compiled.input_graph)
