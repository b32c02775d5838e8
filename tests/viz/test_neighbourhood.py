"""neighbourhood: nodes within a depth of edges, up, down or both; body references count as their parent."""

from __future__ import annotations

import pytest

from ge_core.viz.neighbourhood import consumers, neighbourhood, producers
from ge_core.viz.node_index import SEP
from tests.viz.graphs import chain, conv_net, fused_net


def test_depth_grows_the_region_edge_by_edge() -> None:
    g = chain(6)
    assert neighbourhood(g, "relu3", 0) == {"relu3"}
    assert neighbourhood(g, "relu3", 1) == {"relu2", "relu3", "relu4"}
    assert neighbourhood(g, "relu3", 2) == {"relu1", "relu2", "relu3", "relu4", "relu5"}
    assert neighbourhood(g, "relu3", 50) == {f"relu{i}" for i in range(6)}


def test_directions_and_several_seeds() -> None:
    g = conv_net()
    assert neighbourhood(g, "relu1", 1, "up") == {"relu1", "bn1"}
    assert neighbourhood(g, "relu1", 1, "down") == {"relu1", "pool", "sig"}
    assert neighbourhood(g, ["conv1", "sig"], 1) == {"conv1", "bn1", "sig", "relu1"}


def test_a_body_reference_is_its_fused_node() -> None:
    g = fused_net()
    assert neighbourhood(g, f"relu1{SEP}conv1", 1) == {"relu1", "pool", "sig"}


def test_control_edges_count_and_bad_depth_is_refused() -> None:
    g = chain(3)
    g.add_node("Relu", ["t0"], ["late"], name="late", descs=[g.desc("t0")], control_inputs=["relu2"])
    assert "late" in neighbourhood(g, "relu2", 1, "down")
    assert [n.name for n in producers(g, g.node("late"))] == ["relu2"]  # t0 is a graph input
    assert {n.name for n in consumers(g, g.node("relu2"))} == {"late"}
    with pytest.raises(ValueError, match="depth"):
        neighbourhood(g, "relu0", -1)
