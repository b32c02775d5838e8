"""The Session API on static shapes: add, build, run, stats, remove; its refusals name what to do."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import ge_core
from ge_core.errors import UsageError
from tests.session.conftest import Feeds, static_outputs

STATS_KEYS = {"compiles", "compile_seconds", "cache_hits", "runs", "run_seconds"}


def test_a_static_graph_compiles_once_and_runs_like_compile(encoder: ge_core.Graph,
                                                           feeds: Callable[[int], Feeds]) -> None:
    session = ge_core.Session({"ge.oo.level": "O3", "ge.inputShape": "hidden:1,24,64;mask:1,24"})
    session.add_graph(7, encoder)
    session.build_graph(7)
    for seed in range(3):
        outputs = session.run_graph(7, feeds(24) | {"hidden": feeds(24)["hidden"] + seed})
    expected = static_outputs(24, feeds(24) | {"hidden": feeds(24)["hidden"] + 2})
    assert outputs.keys() == expected.keys()
    assert all(np.array_equal(outputs[k], expected[k]) for k in expected)
    stats = session.stats(7)
    assert set(stats) >= STATS_KEYS
    assert (stats["compiles"], stats["runs"]) == (1, 3)
    assert stats["compile_seconds"] > 0 and stats["run_seconds"] > 0


def test_another_shape_on_a_static_graph_is_refused(encoder: ge_core.Graph, feeds: Callable[[int], Feeds]) -> None:
    session = ge_core.Session({"ge.inputShape": "hidden:1,24,64;mask:1,24"})
    session.add_graph(1, encoder)
    with pytest.raises(UsageError, match=r"static shapes hidden:1,24,64;mask:1,24.*ge.inputShape"):
        session.run_graph(1, feeds(32))


def test_graph_ids_are_checked(encoder: ge_core.Graph) -> None:
    session = ge_core.Session()
    session.add_graph(1, encoder)
    with pytest.raises(UsageError, match="in the session already"):
        session.add_graph(1, encoder)
    with pytest.raises(UsageError, match=r"graph 2 is not in the session.*Graphs added: 1"):
        session.stats(2)
    session.remove_graph(1)
    assert session.graph_ids == []
    with pytest.raises(UsageError):
        session.run_graph(1, {})


def test_input_shapes_naming_no_input_or_a_fixed_dim_are_refused(encoder: ge_core.Graph) -> None:
    with pytest.raises(UsageError, match=r"'tokens'.*hidden, mask"):
        ge_core.Session({"ge.inputShape": "tokens:1,-1"}).add_graph(1, encoder)
    session = ge_core.Session({"ge.inputShape": "hidden:1,8,32;mask:1,8"})
    session.add_graph(1, encoder)
    with pytest.raises(UsageError, match="fixed dim 64 at axis 2"):
        session.build_graph(1)


def test_per_graph_options_override_the_sessions(encoder: ge_core.Graph) -> None:
    session = ge_core.Session({"ge.oo.level": "O1"})
    session.add_graph(1, encoder, {"ge.oo.level": "O3", "ge.inputShape": "hidden:1,8,64;mask:1,8"})
    assert str(session.options_of(1).config.opt_level) == "O3"
