"""Passes that go wrong on purpose, for the debugging tests (compile with `pipeline=`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ge_core.errors import ShapeError
from ge_core.ir.graph import Graph
from ge_core.passes.infra.base import PassResult, Stage
from ge_core.passes.infra.manager import PipelineStep
from ge_core.passes.infra.pipeline import default_pipeline


@dataclass(frozen=True)
class DriftPass:
    """Scales the first float weight by 1.01: the graph stays valid, the numbers drift."""

    name: ClassVar[str] = "DriftPass"

    def run(self, graph: Graph) -> PassResult:
        name = next(t for t, v in graph.constants.items() if v.dtype.kind == "f" and v.size > 1)
        graph.constants[name] = graph.constants[name] * 1.01  # a new array: earlier snapshots keep theirs
        return PassResult(True, (f"scaled '{name}' by 1.01",))


@dataclass(frozen=True)
class RefusingPass:
    """Refuses the graph's second node with a ShapeError naming it."""

    name: ClassVar[str] = "RefusingPass"

    def run(self, graph: Graph) -> PassResult:
        node = graph.nodes[1]
        raise ShapeError(node.name, node.op_type, [], "refused on purpose by the test")


@dataclass(frozen=True)
class CrashingPass:
    """A pass with a bug: a KeyError, not a GEError."""

    name: ClassVar[str] = "CrashingPass"

    def run(self, graph: Graph) -> PassResult:
        return {}["missing"]  # type: ignore[no-any-return]


def with_step(pass_: object, after: int = 3) -> list[PipelineStep]:
    """The O3 pipeline with `pass_` inserted after its first `after` steps."""
    steps = default_pipeline("O3")
    return [*steps[:after], PipelineStep(Stage.OPTIMIZE_STAGE1, pass_), *steps[after:]]  # type: ignore[arg-type]


@dataclass(frozen=True)
class BreakingPass:
    """Swaps the first weight matrix for its transpose's first row: the graph no longer runs."""

    name: ClassVar[str] = "BreakingPass"

    def run(self, graph: Graph) -> PassResult:
        name = next(t for t, v in graph.constants.items() if v.dtype.kind == "f" and v.ndim == 2)
        graph.constants[name] = graph.constants[name][:1, :1].copy()  # a new array: snapshots keep theirs
        return PassResult(True)
