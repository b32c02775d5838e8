"""The post-dominator tree against its definition, checked by brute force on hand-built and random DAGs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ge_core.ir import Graph, TensorDesc
from ge_core.passes.fusion.ub.postdom import ROOT, graph_post_dominators, post_dominator_tree

EXIT = -1


def reaches_exit(succs: Sequence[Sequence[int]], exits: Sequence[bool], start: int, removed: int) -> bool:
    """Can `start` reach the exit without passing node `removed`?"""
    stack, seen = [start], set()
    while stack:
        n = stack.pop()
        if n == removed or n in seen:
            continue
        seen.add(n)
        if exits[n] or not succs[n]:
            return True
        stack.extend(succs[n])
    return False


def brute_pdoms(succs: Sequence[Sequence[int]], exits: Sequence[bool], n: int) -> set[int]:
    """Strict post-dominators of n by the definition: removing d cuts every path from n to the exit."""
    return {d for d in range(len(succs)) if d != n and not reaches_exit(succs, exits, n, d)} | {EXIT}


def brute_ipdom(succs: Sequence[Sequence[int]], exits: Sequence[bool], n: int) -> int:
    """The strict post-dominator that every other strict post-dominator of n post-dominates."""
    strict = brute_pdoms(succs, exits, n)
    closest = [d for d in strict if all(o in (d, EXIT) or o in brute_pdoms(succs, exits, d) for o in strict)]
    assert len(closest) == 1, (n, strict, closest)
    return closest[0]


def check_against_brute_force(succs: Sequence[Sequence[int]], exits: Sequence[bool] | None = None) -> list[int]:
    exits = exits if exits is not None else [False] * len(succs)
    tree = post_dominator_tree(succs, exits)
    want = [brute_ipdom(succs, exits, n) for n in range(len(succs))]
    assert list(tree.parent) == [ROOT if w == EXIT else w for w in want]
    for n in range(len(succs)):
        strict = brute_pdoms(succs, exits, n)
        for d in range(len(succs)):
            assert tree.post_dominates(d, n) == (d == n or d in strict), (d, n)
    return list(tree.parent)


def test_chain() -> None:
    assert check_against_brute_force([[1], [2], [3], []]) == [1, 2, 3, ROOT]


def test_diamond() -> None:
    #   0 -> 1 -> 3, 0 -> 2 -> 3: both branches meet at 3
    assert check_against_brute_force([[1, 2], [3], [3], []]) == [3, 3, 3, ROOT]


def test_nested_diamonds_and_a_skip_edge() -> None:
    #   0 -> {1, 4}; 1 -> {2, 3}; 2, 3 -> 4; 4 -> 5
    assert check_against_brute_force([[1, 4], [2, 3], [4], [4], [5], []]) == [4, 4, 4, 4, 5, ROOT]


def test_multiple_outputs_never_meet() -> None:
    #   0 feeds two branches that end in separate graph outputs: only the exit post-dominates it
    assert check_against_brute_force([[1, 2], [], []]) == [ROOT, ROOT, ROOT]


def test_graph_output_in_the_middle() -> None:
    #   1 is also a graph output: every path from 1 (and from 0 through it) may end there
    assert check_against_brute_force([[1], [2], []], exits=[False, True, False]) == [1, ROOT, ROOT]


def test_lca() -> None:
    tree = post_dominator_tree([[1, 4], [2, 3], [4], [4], [5], []], [False] * 6)
    assert tree.lca(2, 3) == 4
    assert tree.lca(1, 5) == 5
    assert tree.lca(2, ROOT) == ROOT


def test_long_chain() -> None:
    """Binary lifting: side nodes reading both ends of a 10k-node chain cost O(log N) each, not O(N) climbs."""
    m = 10_000
    # c_j = 2j + 1 is the chain; u_j = 2j reads c_j and the chain's last node, which is where they meet
    last = 2 * (m - 1) + 1
    succs = [[i + 1, last] if i % 2 == 0 else ([i + 2] if i < last else []) for i in range(2 * m)]
    succs = [sorted(set(s)) for s in succs]
    tree = post_dominator_tree(succs, [False] * (2 * m))
    assert tree.parent[0] == last and tree.parent[1] == 3 and tree.depth[1] == m


@st.composite
def dags(draw: st.DrawFn) -> tuple[list[list[int]], list[bool]]:
    n = draw(st.integers(1, 12))
    succs = [sorted(draw(st.sets(st.integers(i + 1, n - 1), max_size=3))) if i + 1 < n else [] for i in range(n)]
    exits = [draw(st.booleans()) and draw(st.booleans()) for _ in range(n)]  # a graph output now and then
    return succs, exits


@settings(max_examples=300, deadline=None)
@given(dags())
def test_random_dags_match_brute_force(dag: tuple[list[list[int]], list[bool]]) -> None:
    check_against_brute_force(*dag)


def test_on_a_graph() -> None:
    """The Graph adapter: data edges from the users map, graph outputs flow into the exit."""
    g = Graph("g")
    d = TensorDesc((2, 3), "float32")
    g.add_input("x", d)
    g.add_constant("c", np.ones((2, 3), np.float32))
    for op, ins, out in [("Neg", ["x"], "h"), ("Exp", ["h"], "a"), ("Relu", ["h"], "b"), ("Add", ["a", "b"], "s"),
                         ("Abs", ["s"], "y"), ("Mul", ["s", "c"], "z")]:
        g.add_node(op, ins, [out], name=out, descs=[d])
    g.set_outputs(["y", "z"])
    pd = graph_post_dominators(g)
    ipdom = {n.name: (p.name if (p := pd.ipdom(n)) else None) for n in g.nodes}
    assert ipdom == {"h": "s", "a": "s", "b": "s", "s": None, "y": None, "z": None}
