"""Post-dominator tree of a dataflow DAG: where every path from a node meets again.

Node `d` post-dominates node `n` when every path from `n` to the graph's end passes through `d`. The
immediate post-dominator (ipdom) is the closest such node; linking each node to its ipdom gives a tree
rooted at a virtual exit (ROOT), which every graph output and every node nobody reads flows into.

UB fusion uses it as TVM's FuseOps does: a node may join the group of its ipdom, because that is the
first place all of its readers meet again, so fusing everything in between (when it is all fusable) can
never leave a path that goes out of the group and comes back in (a cycle).

Built in one sweep in reverse topological order: a node's ipdom is the lowest common ancestor (LCA) of
its successors in the tree built so far. LCA uses binary lifting (ancestor tables of 2**k steps), so the
whole tree costs O(E log N) for N nodes and E edges, even on long chains where naive climbing is O(N^2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node

ROOT = -1  # the virtual exit: post-dominates every node


@dataclass(frozen=True)
class PostDomTree:
    """ipdom and depth per node index (topological order); ROOT at depth 0."""

    parent: tuple[int, ...]  # immediate post-dominator, ROOT when a node's paths only meet at the exit
    depth: tuple[int, ...]  # 1 + the parent's depth (ROOT has depth 0)
    _up: tuple[tuple[int, ...], ...]  # _up[k][i]: the ancestor 2**k steps above i (ROOT past the top)

    def ipdom(self, i: int) -> int:
        return self.parent[i]

    def lca(self, a: int, b: int) -> int:
        """The closest node post-dominating both `a` and `b` (ROOT when only the exit does)."""
        return _lca(a, b, self.depth, self.parent, self._up)

    def post_dominates(self, d: int, n: int) -> bool:
        """True when `d` is `n` or lies on every path from `n` to the exit."""
        if d == ROOT:
            return True
        if n == ROOT or self.depth[n] < self.depth[d]:
            return False
        return _climb(n, self.depth[n] - self.depth[d], self._up) == d


def post_dominator_tree(succs: Sequence[Sequence[int]], exits: Sequence[bool]) -> PostDomTree:
    """The tree of a DAG whose node indices are in topological order (every successor index is larger).

    `succs[i]` lists node i's successors; `exits[i]` says node i also flows into the exit (a graph output).
    A node with no successors flows into the exit too.
    """
    n = len(succs)
    parent = [ROOT] * n
    depth = [0] * n
    up: list[list[int]] = [[ROOT] * n]
    for i in range(n - 1, -1, -1):
        if exits[i] or not succs[i]:
            p = ROOT
        else:
            p = succs[i][0]
            for s in succs[i][1:]:
                p = _lca(p, s, depth, parent, up)
                if p == ROOT:
                    break
        parent[i] = p
        depth[i] = 1 if p == ROOT else depth[p] + 1
        _extend(up, i, p, depth[i])
    return PostDomTree(tuple(parent), tuple(depth), tuple(tuple(level) for level in up))


def _extend(up: list[list[int]], i: int, p: int, depth: int) -> None:
    """Fill node i's ancestor table (its ancestors' tables are complete: they come later in the order)."""
    up[0][i] = p
    k = 1
    while (1 << k) < depth:
        if k == len(up):
            up.append([ROOT] * len(up[0]))
        mid = up[k - 1][i]
        up[k][i] = ROOT if mid == ROOT else up[k - 1][mid]
        k += 1


def _lca(a: int, b: int, depth: Sequence[int], parent: Sequence[int], up: Sequence[Sequence[int]]) -> int:
    if a == ROOT or b == ROOT:
        return ROOT
    if depth[a] < depth[b]:
        a, b = b, a
    a = _climb(a, depth[a] - depth[b], up)
    if a == b:
        return a
    for level in reversed(up):
        if level[a] != level[b]:
            a, b = level[a], level[b]
    return parent[a]


def _climb(i: int, steps: int, up: Sequence[Sequence[int]]) -> int:
    """The ancestor `steps` levels above i (one table jump per set bit of `steps`)."""
    k = 0
    while steps and i != ROOT:
        if steps & 1:
            i = up[k][i]
        steps >>= 1
        k += 1
    return i


@dataclass(frozen=True)
class GraphPostDom:
    """The tree over a Graph's nodes: `nodes[i]` is index i; `index` maps a node's id back."""

    nodes: tuple[Node, ...]
    index: dict[int, int]
    succs: tuple[tuple[int, ...], ...]
    tree: PostDomTree

    def ipdom(self, node: Node) -> Node | None:
        p = self.tree.ipdom(self.index[id(node)])
        return None if p == ROOT else self.nodes[p]


def graph_post_dominators(graph: Graph) -> GraphPostDom:
    """The post-dominator tree of `graph`'s data edges (control edges only order; they are not paths)."""
    nodes = tuple(graph.nodes)
    index = {id(n): i for i, n in enumerate(nodes)}
    succs: list[tuple[int, ...]] = []
    exits: list[bool] = []
    for node in nodes:
        readers = {index[id(u)] for t in node.outputs for u in graph.users(t)}
        succs.append(tuple(sorted(readers)))
        exits.append(any(graph.is_output(t) for t in node.outputs))
    return GraphPostDom(nodes, index, tuple(succs), post_dominator_tree(succs, exits))
