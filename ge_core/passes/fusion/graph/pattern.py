"""Patterns declared as data, and the matcher that finds them (GE's PatternFusionBasePass, in miniature).

A pattern is a few pattern nodes. Each has an id, the op types it accepts and its input edges, written as
strings:

    "mean"    the output of the pattern node with id "mean" (matched recursively)
    "$x"      any tensor, bound to the name x: every "$x" in the pattern must be the same tensor
    "#eps"    a constant (initializer), bound to the name eps
    "@y"      an activation (a graph input or node output, not a constant), bound to the name y
              ("$", "#" and "@" alone bind nothing)

Binary Add/Mul nodes are `commutative` (both operand orders are tried); `rest=True` lets a node have more
inputs than listed (Clip's bounds, Conv's bias), which conditions then look at. The last pattern node is
the anchor: the pattern's output. Matching starts there and walks producers (graph.producer), so it costs
O(pattern size) per anchor, never a scan of the graph. Conditions are predicates returning None (holds) or
the reason, in plain words, why the candidate is rejected.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.passes.infra.rewrite import is_onnx


@dataclass(frozen=True)
class PNode:
    """One pattern node: an id, the op types it accepts, and its input edges (see the module docstring)."""

    id: str
    ops: tuple[str, ...]
    inputs: tuple[str, ...]
    commutative: bool = False  # a binary op whose operands may come in either order
    rest: bool = False  # more inputs than listed are allowed (and not matched)

    def orders(self) -> tuple[tuple[int, ...], ...]:
        straight = tuple(range(len(self.inputs)))
        return (straight, straight[::-1]) if self.commutative and len(self.inputs) == 2 else (straight,)


def op(pid: str, ops: str | Sequence[str], *inputs: str, commutative: bool = False, rest: bool = False) -> PNode:
    """Shorthand: op("sub", "Sub", "$x", "mean")."""
    return PNode(pid, (ops,) if isinstance(ops, str) else tuple(ops), inputs, commutative, rest)


@dataclass
class Match:
    """A structural match: pattern ids to nodes, names to tensors."""

    pattern: Pattern
    nodes: dict[str, Node]
    values: dict[str, str]

    @property
    def anchor(self) -> Node:
        return self.nodes[self.pattern.anchor.id]

    def node(self, pid: str) -> Node:
        return self.nodes[pid]

    def has(self, pid: str) -> bool:
        return pid in self.nodes

    def tensor(self, name: str) -> str:
        return self.values[name]

    def group(self, graph: Graph) -> list[Node]:
        """The matched nodes in graph order."""
        return sorted(self.nodes.values(), key=graph.index_key)


Check = Callable[[Graph, Match], "str | None"]  # None when the condition holds, else why not


@dataclass(frozen=True)
class FusedOp:
    """What a rewrite makes of an accepted match: the fused node's op, attrs and operand order."""

    op_type: str
    reason: str  # the accepted decision's reason ("Conv + Relu into one kernel")
    domain: str = "ge"
    attrs: dict[str, Any] = field(default_factory=dict)
    inputs: tuple[str, ...] | None = None  # the op's operand order; None: the group's inputs, first use first
    extra: tuple[Node, ...] = ()  # nodes the rewrite added to the graph that belong to the group


Rewrite = Callable[[Graph, Match], FusedOp]


@dataclass(frozen=True)
class Pattern:
    """A fusion pattern: its nodes as data, the conditions a match must meet, and the rewrite naming the op."""

    name: str  # the decision's `pattern` ("Conv+Add+Relu")
    nodes: tuple[PNode, ...]  # the last one is the anchor
    rewrite: Rewrite
    checks: tuple[Check, ...] = ()

    def __post_init__(self) -> None:
        """Catch a mistyped id when the pattern is declared, not as a pattern that silently never matches."""
        ids = [p.id for p in self.nodes]
        refs = {r for p in self.nodes for r in p.inputs if r[0] not in "$#@"}
        reached: set[str] = set()
        todo = [self.anchor.id] if refs <= set(ids) else []
        while todo:
            pid = todo.pop()
            if pid not in reached:
                reached.add(pid)
                todo += [r for r in self.spec(pid).inputs if r[0] not in "$#@"]
        if len(set(ids)) != len(ids) or reached != set(ids):
            raise ValueError(f"pattern '{self.name}': ids {ids}, references {sorted(refs)}, reachable "
                             f"from the anchor {sorted(reached)}")

    @property
    def anchor(self) -> PNode:
        return self.nodes[-1]

    def spec(self, pid: str) -> PNode:
        for p in self.nodes:
            if p.id == pid:
                return p
        raise KeyError(f"pattern '{self.name}' has no node '{pid}'")


def find_matches(graph: Graph, pattern: Pattern, anchor: Node) -> Iterator[Match]:
    """Every structural match of `pattern` whose output is `anchor` (usually none or one)."""
    matcher = _Matcher(graph, pattern)
    for _ in matcher.node(pattern.anchor.id, anchor):
        match = Match(pattern, dict(matcher.nodes), dict(matcher.values))
        if _values_outside(graph, match):
            yield match


class _Matcher:
    """Backtracking over producers; the bindings live in two dicts, undone on the way back."""

    def __init__(self, graph: Graph, pattern: Pattern) -> None:
        self.graph = graph
        self.pattern = pattern
        self.nodes: dict[str, Node] = {}
        self.values: dict[str, str] = {}

    def node(self, pid: str, node: Node) -> Iterator[None]:
        bound = self.nodes.get(pid)
        if bound is not None:
            if bound is node:
                yield
            return
        spec = self.pattern.spec(pid)
        if node.op_type not in spec.ops or not is_onnx(node) or any(n is node for n in self.nodes.values()):
            return
        present = len([t for t in node.inputs if t])
        if len(node.inputs) < len(spec.inputs) or (not spec.rest and present != len(spec.inputs)):
            return
        self.nodes[pid] = node
        for order in spec.orders():
            refs = [spec.inputs[i] for i in order]
            yield from self.inputs(refs, list(node.inputs[:len(refs)]), 0)
        del self.nodes[pid]

    def inputs(self, refs: list[str], tensors: list[str], k: int) -> Iterator[None]:
        if k == len(refs):
            yield
            return
        for _ in self.ref(refs[k], tensors[k]):
            yield from self.inputs(refs, tensors, k + 1)

    def ref(self, ref: str, tensor: str) -> Iterator[None]:
        if not tensor:
            return
        if ref[0] not in "$#@":
            producer = self.graph.producer(tensor)
            if producer is not None and producer.outputs[0] == tensor:
                yield from self.node(ref, producer)
            return
        constant = self.graph.is_constant(tensor)
        if (ref[0] == "#" and not constant) or (ref[0] == "@" and constant):
            return
        name = ref[1:]
        if not name:
            yield
        elif name in self.values:
            if self.values[name] == tensor:
                yield
        else:
            self.values[name] = tensor
            yield
            del self.values[name]


def _values_outside(graph: Graph, match: Match) -> bool:
    """A bound operand must come from outside the group (else "$x" named one of the group's own values)."""
    members = {id(n) for n in match.nodes.values()}
    for t in match.values.values():
        producer = graph.producer(t)
        if producer is not None and id(producer) in members:
            return False
    return True


# ---- helpers for conditions -------------------------------------------------------------------------

FLOAT_DTYPES = frozenset({"float16", "float32", "float64", "bfloat16"})


def constant(graph: Graph, tensor: str) -> np.ndarray | None:
    return graph.constants.get(tensor) if tensor else None


def scalar(graph: Graph, tensor: str) -> float | None:
    """The value of a one-element constant, else None."""
    array = constant(graph, tensor)
    if array is None or array.size != 1 or array.dtype.kind not in "fiu":
        return None
    return float(array.reshape(-1)[0])


def near(value: float, target: float, rel: float = 1e-4) -> bool:
    return abs(value - target) <= rel * max(abs(target), 1e-12)


def distinct(*names: str) -> Check:
    """Condition: operands that become separate inputs of the fused op are different tensors."""
    def check(graph: Graph, match: Match) -> str | None:
        tensors = [match.tensor(n) for n in names if n in match.values]
        for i, t in enumerate(tensors):
            if t in tensors[:i]:
                return f"'{t}' is passed twice ({' and '.join(names)}): the fused op needs separate operands"
        return None
    return check


def clip_bounds(graph: Graph, node: Node) -> tuple[float, float] | str:
    """A Clip's (min, max) as numbers, or why they are not known constants (inputs since opset 11)."""
    if node.opset < 11:
        return float(node.attr("min", -np.inf)), float(node.attr("max", np.inf))
    bounds = []
    for index, label, default in ((1, "min", -np.inf), (2, "max", np.inf)):
        tensor = node.input(index)
        if not tensor:
            bounds.append(default)
            continue
        value = scalar(graph, tensor)
        if value is None:
            return f"Clip {label} '{tensor}' is not a constant"
        bounds.append(value)
    return bounds[0], bounds[1]
