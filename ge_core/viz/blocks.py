"""Structural blocks of a graph whose names carry no scopes (onnx's zoo models name nodes n0, n1, ...).

A residual block, a dense block or an inception module is a *biconnected* piece of the graph (taken
undirected): removing any one node leaves it connected, so paths between its parts form cycles. Between
blocks sit articulation nodes (the Add after a residual block, the Concat closing an inception module),
where the graph would fall apart. The graph canvas makes each block's interior (its nodes that are not
articulation nodes) a layer: every edge in and out of the layer ends on a node outside it, drawn.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence


def biconnected_blocks(vertices: Sequence[str], edges: Iterable[tuple[str, str]]) -> list[set[str]]:
    """The biconnected components (Tarjan, iterative: no recursion limit on deep graphs), as vertex sets.

    A bridge (an edge on no cycle) is a block of two vertices; isolated vertices are in no block.
    """
    adj: dict[str, set[str]] = {v: set() for v in vertices}
    for a, b in edges:
        if a != b and a in adj and b in adj:
            adj[a].add(b)
            adj[b].add(a)
    disc: dict[str, int] = {}
    low: dict[str, int] = {}
    blocks: list[set[str]] = []
    for root in vertices:
        if root not in disc:
            _dfs(root, adj, disc, low, blocks)
    return blocks


def _dfs(root: str, adj: dict[str, set[str]], disc: dict[str, int], low: dict[str, int],
         blocks: list[set[str]]) -> None:
    disc[root] = low[root] = len(disc)
    stack = [(root, "", iter(sorted(adj[root])))]
    edge_stack: list[tuple[str, str]] = []
    while stack:
        v, parent, neighbours = stack[-1]
        descended = False
        for w in neighbours:
            if w == parent:
                continue
            if w not in disc:
                disc[w] = low[w] = len(disc)
                edge_stack.append((v, w))
                stack.append((w, v, iter(sorted(adj[w]))))
                descended = True
                break
            if disc[w] < disc[v]:  # a back edge to an ancestor
                low[v] = min(low[v], disc[w])
                edge_stack.append((v, w))
        if descended:
            continue
        stack.pop()
        if not stack:
            continue
        u = stack[-1][0]
        low[u] = min(low[u], low[v])
        if low[v] >= disc[u]:  # nothing below v reaches above u: the edges down to (u, v) form a block
            block: set[str] = set()
            while edge_stack:
                edge = edge_stack.pop()
                block.update(edge)
                if edge == (u, v):
                    break
            blocks.append(block)


def block_interiors(vertices: Sequence[str], edges: Iterable[tuple[str, str]], min_size: int = 1) -> list[list[str]]:
    """Each block's vertices that belong to no other block, in `vertices` order, the blocks ordered by their
    first vertex; interiors of fewer than `min_size` vertices are left out."""
    blocks = biconnected_blocks(vertices, edges)
    seen = Counter(v for b in blocks for v in b)
    position = {v: i for i, v in enumerate(vertices)}
    interiors = [sorted((v for v in b if seen[v] == 1), key=position.__getitem__) for b in blocks]
    return sorted((i for i in interiors if i and len(i) >= min_size), key=lambda i: position[i[0]])
