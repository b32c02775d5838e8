"""What a pass is: one call over the whole graph that says whether it changed anything.

A pass is a small frozen dataclass with a `name` (GE style, e.g. "ConstantFoldingPass") and
`run(graph) -> PassResult`. Its class docstring is what the workbench shows the user: what it does and why.
Passes transform; instruments (timing, snapshots, verification, numerics) observe them from outside.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Protocol, runtime_checkable

from ge_core.ir.graph import Graph


class Stage(StrEnum):
    """GE's compile stages, in order; dumps and pass records carry these names."""

    PRE_RUN_BEGIN = "PreRunBegin"
    AFTER_INFERSHAPE = "AfterInfershape"
    OPTIMIZE_ORIGINAL_GRAPH = "OptimizeOriginalGraph"
    OPTIMIZE_STAGE1 = "OptimizeStage1"
    PRE_RUN_AFTER_OPTIMIZE2 = "PreRunAfterOptimize2"
    BUILD = "Build"


@dataclass(frozen=True)
class FusionDecision:
    """One fusion candidate a pass considered: the compile report's `fusion.decisions` entry."""

    pass_name: str
    pattern: str
    nodes: tuple[str, ...]  # original node names
    accepted: bool
    reason: str  # in plain words: why fused, or why not
    fused_node: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"pass": self.pass_name, "pattern": self.pattern, "nodes": list(self.nodes),
                "accepted": self.accepted, "reason": self.reason, "fused_node": self.fused_node}


@dataclass(frozen=True)
class PassResult:
    changed: bool
    notes: tuple[str, ...] = ()  # what the pass did, in words ("folded 12 nodes into constants")
    decisions: tuple[FusionDecision, ...] = ()  # fusion passes: every candidate, accepted or not
    # Sections the pass adds to the compile report, one JSON-ready entry per item (the NPU lowering's
    # {"formats": [...]} per op, {"tiling": [...]} per kernel); sections of several passes are concatenated.
    report: Mapping[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)


@runtime_checkable
class GraphPass(Protocol):
    name: ClassVar[str]

    def run(self, graph: Graph) -> PassResult: ...


def describe(p: GraphPass) -> str:
    """The pass's explanation for users: its class docstring, dedented."""
    return inspect.cleandoc(type(p).__doc__ or "")


def snake_name(name: str) -> str:
    """'ConstantFoldingPass' -> 'constant_folding' (dump file names)."""
    base = name.removesuffix("Pass")
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", base).lower()
