"""What a pass is: graph passes (one call over the whole graph) and node passes (a worklist, as GE's GEPass).

A pass is a small frozen dataclass with a `name` (GE style, e.g. "ConstantFoldingPass") and
`run(graph) -> PassResult`. Its class docstring is what the workbench shows the user: what it does and why.
Passes transform; instruments (timing, snapshots, verification, numerics) observe them from outside.
"""

from __future__ import annotations

import inspect
import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Protocol, runtime_checkable

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node


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


@dataclass
class Worklist:
    """The node pass driver's queue: topological order first, then nodes asked to be re-passed."""

    queue: deque[Node] = field(default_factory=deque)
    queued: set[int] = field(default_factory=set)

    def push(self, node: Node) -> None:
        if id(node) not in self.queued:
            self.queued.add(id(node))
            self.queue.append(node)

    def pop(self) -> Node:
        node = self.queue.popleft()
        self.queued.discard(id(node))
        return node


class NodeRewrite:
    """Handed to a node pass's `visit`: lets it ask for nodes to be visited again (GE's re-pass)."""

    def __init__(self, graph: Graph, worklist: Worklist) -> None:
        self.graph = graph
        self._worklist = worklist

    def repass(self, nodes: Iterable[Node]) -> None:
        for node in nodes:
            if self.graph.has_node(node.name) and self.graph.node(node.name) is node:
                self._worklist.push(node)

    def repass_users(self, tensors: Iterable[str]) -> None:
        for t in tensors:
            self.repass(self.graph.users(t))


class NodePass:
    """Visit every node in topological order; a node whose rewrite changed something re-queues the nodes
    it names (by default the readers of its outputs), until nothing changes. Subclasses define `visit`."""

    name: ClassVar[str] = "NodePass"
    max_visits_per_node: ClassVar[int] = 8  # a rewrite that keeps firing is a bug; stop instead of spinning

    def visit(self, graph: Graph, node: Node, rewrite: NodeRewrite) -> bool:
        raise NotImplementedError

    def run(self, graph: Graph) -> PassResult:
        worklist = Worklist()
        for node in graph.nodes:
            worklist.push(node)
        rewrite = NodeRewrite(graph, worklist)
        visits: dict[int, int] = {}
        changes = 0
        while worklist.queue:
            node = worklist.pop()
            if not graph.has_node(node.name) or graph.node(node.name) is not node:
                continue  # erased by an earlier rewrite
            visits[id(node)] = visits.get(id(node), 0) + 1
            if visits[id(node)] > self.max_visits_per_node:
                continue
            outputs = node.outputs
            if self.visit(graph, node, rewrite):
                changes += 1
                rewrite.repass_users(outputs)
        return PassResult(changes > 0, (f"{changes} rewrite(s)",) if changes else ())
