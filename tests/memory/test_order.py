"""The memory-aware execution order: a topological order with a lower peak, reported or adopted."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

import ge_core
from ge_core.errors import UsageError
from ge_core.ir import Graph
from ge_core.memory.order import depth_first_order, greedy_order, memory_aware_order, order_peak_bytes
from ge_core.runtime import Executor, random_feeds
from tests.memory import graphs


def two_branches() -> Graph:
    """Two branches x -> big (2048 B) -> small (512 B), added; imported breadth first (both bigs first)."""
    consts = {"wa": graphs.weights(128, 512), "wb": graphs.weights(128, 512), "va": graphs.weights(512, 128),
              "vb": graphs.weights(512, 128)}
    return graphs.build([("MatMul", ["x", "wa"], "a_big"), ("MatMul", ["x", "wb"], "b_big"),
                         ("MatMul", ["a_big", "va"], "a_small"), ("MatMul", ["b_big", "vb"], "b_small"),
                         ("Add", ["a_small", "b_small"], "out")], ["out"], consts)


def names(order: Sequence[ge_core.Node]) -> list[str]:
    return [n.name for n in order]


def test_finishing_a_branch_first_lowers_the_peak() -> None:
    g = two_branches()
    assert order_peak_bytes(g, list(g.nodes)) == 2048 + 2048 + 512  # at a_small: both bigs still alive
    assert names(depth_first_order(g)) == ["a_big", "a_small", "b_big", "b_small", "out"]
    order, peak = memory_aware_order(g)
    assert peak == 512 + 2048 + 512 and order_peak_bytes(g, order) == peak
    assert set(names(greedy_order(g))) == set(names(g.nodes))


def test_the_graphs_order_is_kept_when_nothing_beats_it() -> None:
    g = graphs.chain()
    order, peak = memory_aware_order(g)
    assert names(order) == names(g.nodes) and peak == order_peak_bytes(g, list(g.nodes))


def test_compile_reports_it_and_adopts_it_on_request() -> None:
    g = two_branches()
    plain = ge_core.compile(g, opt_level="O0")
    memory = plain.report["memory"]
    assert (memory["execution_order"], memory["graph_order_min_bytes"], memory["memory_aware_min_bytes"]) == \
        ("graph", 4608, 3072)
    assert [s["node"] for s in memory["steps"]] == names(g.nodes)
    aware = ge_core.compile(g, opt_level="O0", memory_order="memory_aware")
    assert aware.memory is not None and aware.memory.execution_order == "memory_aware"
    assert [s.node for s in aware.memory.steps] == ["a_big", "a_small", "b_big", "b_small", "out"]
    assert aware.memory.theory_min_bytes == 3072 < plain.memory.theory_min_bytes  # type: ignore[union-attr]
    feeds = random_feeds(g, seed=1)
    np.testing.assert_allclose(aware.run(feeds)["out"], Executor(g).run(feeds).outputs["out"], rtol=1e-6)


def test_unknown_order_is_refused() -> None:
    with pytest.raises(UsageError, match="memory_aware"):
        ge_core.compile(graphs.chain(), memory_order="fastest")
