"""UB fusion's grouping: every node tries to join the group of its immediate post-dominator (TVM FuseOps).

One sweep in topological order over a union-find of groups. Node `v` may join the group of `s`, its
immediate post-dominator (where all of v's readers meet again), together with every node on the paths
between them, when all of those can be fused. Because `s` post-dominates `v`, no path from `v` leaves
that region and comes back, so no group made this way creates a cycle; diamonds (x -> a, x -> b, a + b)
are taken whole. Each refusal is recorded with its reason in plain words.

Cost: the tree is O(E log N); each candidate looks only at the region between `v` and `s`, cut off at
the maximum group length, and prices at most that many ops, so the sweep is O(N * max_group_ops).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ge_core.hardware.ub_working_set import working_set
from ge_core.ir.graph import Graph
from ge_core.ops.registry import Category
from ge_core.passes.fusion.ub.postdom import ROOT, graph_post_dominators
from ge_core.passes.fusion.ub.rules import AFTER_CUBE, STARTS, THROUGH, UB_FUSED_OP, kind_word, node_role


@dataclass(frozen=True)
class Rejection:
    nodes: tuple[int, ...]  # node indices: the group that tried to grow, then what stopped it
    reason: str


def kb(n: int) -> str:
    """Bytes as the reasons print them: '256 KB', '1.5 KB', '96 B'."""
    if n < 1024:
        return f"{n} B"
    if n % 1024 == 0:
        return f"{n // 1024} KB"
    return f"{-(-n * 10 // 1024) / 10:.1f} KB"  # rounded up: 64 KB + 1 B prints as 64.1 KB, never 64.0


class Grouper:
    """Groups `graph`'s nodes; `run()` returns the groups (node indices, graph order) of two ops or more."""

    def __init__(self, graph: Graph, ub_bytes: int, max_group_ops: int, pinned: set[str]) -> None:
        self.graph = graph
        self.ub_bytes = ub_bytes
        self.limit = max_group_ops
        self.pd = graph_post_dominators(graph)
        self.nodes = self.pd.nodes
        self.roles = [node_role(graph, n, pinned) for n in self.nodes]
        self._uf = list(range(len(self.nodes)))
        self._members: dict[int, list[int]] = {}  # group root -> members (absent: a group of one)
        self.rejections: list[Rejection] = []

    def run(self) -> list[list[int]]:
        for v in range(len(self.nodes)):
            self._consider(v)
        groups = [sorted(m) for m in self._members.values() if len(m) > 1]
        return sorted(groups, key=lambda g: g[0])

    def members(self, i: int) -> list[int]:
        """The members of i's group, in graph order."""
        root = self._find(i)
        return sorted(self._members.get(root, [root]))

    def _find(self, i: int) -> int:
        uf = self._uf
        while uf[i] != i:
            uf[i] = uf[uf[i]]  # path halving
            i = uf[i]
        return i

    def _consider(self, v: int) -> None:
        """Try to put v's group into the group of v's immediate post-dominator; record why not."""
        node, role = self.nodes[v], self.roles[v]
        if role.category not in STARTS or not self.pd.succs[v] or node.op_type == UB_FUSED_OP:
            return  # opaque, reduces (they only end groups), dead ends, kernels already fused
        s = self.pd.tree.ipdom(v)
        if role.block:
            self._reject([v], role.block)
        elif s == ROOT:
            self._reject_at_exit(v)
        elif self._find(v) != self._find(s):  # else v lay between an earlier node and its post-dominator
            self._join(v, s)

    def _join(self, v: int, s: int) -> None:
        reason = self._sink_problem(s)
        if reason:
            self._reject([*self.members(v), s], reason)
            return
        region, blocker, reason = self._region(v, s)
        if reason:
            self._reject([*self.members(v), blocker if blocker is not None else s], reason)
            return
        roots = list(dict.fromkeys(self._find(x) for x in (v, *region, s)))
        reason = self._merge_problem(v, s, roots)
        if reason:
            self._reject([*self.members(v), s], reason)
        else:
            self._commit(roots, self._find(s))

    def _reject(self, nodes: Iterable[int], reason: str) -> None:
        self.rejections.append(Rejection(tuple(dict.fromkeys(nodes)), reason))

    def _reject_at_exit(self, v: int) -> None:
        """v's readers never meet again (or v's output is a graph output): v ends its group."""
        node = self.nodes[v]
        out = next((t for t in node.outputs if self.graph.is_output(t)), None)
        if out is not None:
            self._reject(self.members(v), f"{node.op_type} output '{out}' is a graph output: it must leave the "
                                          f"kernel, so '{node.name}' ends its group")
            return
        succs, tree = self.pd.succs[v], self.pd.tree
        meet, other = succs[0], succs[-1]
        for s in succs[1:]:
            meet = tree.lca(meet, s)
            if meet == ROOT:
                other = s
                break
        a, b = self.nodes[succs[0]].name, self.nodes[other].name
        self._reject([*self.members(v), other], f"{node.op_type} output also feeds node '{b}' outside the group: "
                                                f"its readers '{a}' and '{b}' never meet again")

    def _sink_problem(self, s: int) -> str | None:
        node, role = self.nodes[s], self.roles[s]
        if role.block:
            return role.block
        if role.category == Category.CUBE:
            return f"{node.op_type} '{node.name}' is a cube op: it starts its own kernel"
        return None

    def _through_problem(self, w: int) -> str | None:
        node, role = self.nodes[w], self.roles[w]
        if role.block:
            return role.block
        if role.category not in THROUGH:
            why = "it starts its own kernel" if role.category == Category.CUBE else "a reduce only ends a group"
            return f"{node.op_type} '{node.name}' is {kind_word(role.category)}: {why}"
        return None

    def _region(self, v: int, s: int) -> tuple[list[int], int | None, str | None]:
        """The nodes on the paths from v to s (both excluded), or the node that cannot be fused and why."""
        succs, region, seen = self.pd.succs, [], set()
        stack = [x for x in reversed(succs[v]) if x != s]
        while stack:
            w = stack.pop()
            if w in seen:
                continue
            seen.add(w)
            problem = self._through_problem(w)
            if problem:
                return [], w, self._cycle_reason(v, w, s, problem)
            region.append(w)
            if len(region) + 2 > self.limit:  # v and s come on top: stop looking, it is too long already
                return [], None, (f"group reached the maximum length {self.limit}: '{self.nodes[v].name}' meets "
                                  f"'{self.nodes[s].name}' only after {len(region)} ops or more")
            stack.extend(x for x in reversed(succs[w]) if x != s)
        return region, None, None

    def _cycle_reason(self, v: int, w: int, s: int, problem: str) -> str:
        node, out, sink = self.nodes[v], self.nodes[w].name, self.nodes[s].name
        if w in self.pd.succs[v]:
            return (f"{node.op_type} output also feeds node '{out}' outside the group ({problem}); its readers meet "
                    f"again only at '{sink}', so fusing it there would create a cycle through '{out}'")
        return (f"the paths from '{node.name}' meet again only at '{sink}', after '{out}' ({problem}): fusing it "
                f"there would create a cycle through '{out}'")

    def _merge_problem(self, v: int, s: int, roots: Sequence[int]) -> str | None:
        """Why the merged group breaks a rule (length, one cube op, what follows it, UB), or None."""
        members = sorted(m for r in roots for m in self._members.get(r, [r]))
        name, sink = self.nodes[v].name, self.nodes[s].name
        if len(members) > self.limit:
            return (f"group reached the maximum length {self.limit}: adding '{name}' to the group of '{sink}' "
                    f"would make {len(members)} ops")
        cubes = [m for m in members if self.roles[m].category == Category.CUBE]
        if len(cubes) > 1:
            a, b = (self.nodes[c].name for c in cubes[:2])
            return f"group would hold two cube ops, '{a}' and '{b}': one cube op per kernel"
        if cubes:
            other = next((m for m in members if m != cubes[0] and not self.roles[m].view
                          and self.roles[m].category not in AFTER_CUBE), None)
            if other is not None:
                o = self.nodes[other]
                return (f"cube op '{self.nodes[cubes[0]].name}' fuses only with the elementwise/broadcast ops after "
                        f"it, and {o.op_type} '{o.name}' is {kind_word(self.roles[other].category)}")
        model = working_set(self.graph, [self.nodes[m] for m in members])
        if isinstance(model, str):
            return model
        if model.min_bytes > self.ub_bytes:
            return (f"working set {kb(model.min_bytes)} exceeds UB {kb(self.ub_bytes)}: '{name}' with the group of "
                    f"'{sink}' ({len(members)} ops) at its smallest tile of {model.min_tile} element(s)")
        return None

    def _commit(self, roots: Sequence[int], target: int) -> None:
        merged = self._members.pop(target, [target])
        for r in roots:
            if r != target:
                merged += self._members.pop(r, [r])
                self._uf[r] = target
        self._members[target] = merged
