"""One memory budget in bytes for the server's caches (issue 41): entries sized when stored, the least recently
used of any cache evicted first, an entry alone over the budget not kept; the sidebar shows the budget, and a
page whose compile was evicted compiles again and says so."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import streamlit as st

from ge_core import Graph
from tests.app.apptest import open_app
from workbench_ui.memory_budget import NODE_BYTES, MemoryBudget, size_of
from workbench_ui.shared_cache import SharedCache


def test_sizes_count_array_bytes_once_and_a_graph_by_its_constants_and_nodes() -> None:
    weights = np.zeros((1000, 250), np.float32)  # 1 MB
    assert 1_000_000 <= size_of({"w": weights, "again": weights, "view": weights[:10]}) < 1_010_000
    graph = Graph("g")
    graph.constants["w"] = weights
    assert size_of(graph) == 1_000_000 + NODE_BYTES * len(graph.nodes)
    assert size_of([graph, graph.constants]) < 1_010_000  # the snapshot's constants are the graph's


def test_the_least_recently_used_entry_of_any_cache_goes_first() -> None:
    budget = MemoryBudget(3_500_000)
    imports: SharedCache[str, np.ndarray] = SharedCache(10, budget)
    compiles: SharedCache[str, np.ndarray] = SharedCache(10, budget)
    imports.put("a", np.zeros(1_000_000, np.uint8))
    compiles.put("b", np.zeros(1_000_000, np.uint8))
    imports.put("c", np.zeros(1_000_000, np.uint8))
    assert imports.get("a") is not None  # used now: "b" is the least recently used
    compiles.put("d", np.zeros(1_000_000, np.uint8))
    assert compiles.get("b") is None and compiles.was_evicted("b") and not compiles.was_evicted("d")
    assert budget.used <= budget.capacity and budget.entries == 3
    imports.put("huge", np.zeros(4_000_000, np.uint8))  # over the whole budget: not kept, nothing evicted
    assert imports.get("huge") is None and budget.entries == 3
    small: SharedCache[str, np.ndarray] = SharedCache(1, budget)  # its own entry count still applies
    small.put("x", np.zeros(10, np.uint8))
    small.put("y", np.zeros(10, np.uint8))
    assert small.get("x") is None and not small.was_evicted("x")


@pytest.fixture
def tiny_budget(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A server started with a budget that holds one small model's import and compile, not two."""
    monkeypatch.setenv("GE_WORKBENCH_MEMORY_BUDGET", str(400_000))
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()  # the next tests get a server with the default budget again


def test_the_sidebar_shows_the_budget_and_an_evicted_compile_says_it_compiles_again(tiny_budget: None) -> None:
    at = open_app("conv_bn_relu").switch_page("app_pages/passes.py").run()
    assert not at.exception
    line = at.sidebar.get("progress")[0].proto.text
    assert "Server memory for results" in line and "of 390.6 KiB" in line
    assert not any("again" in c.value for c in at.caption)
    at.query_params["sample"] = "residual_block"
    at.sidebar.selectbox(key="sample").set_value("residual_block").run()
    at.sidebar.selectbox(key="sample").set_value("conv_bn_relu").run()
    assert not at.exception
    assert any("Compiled again: the result was dropped from the server's memory" in c.value for c in at.caption)
