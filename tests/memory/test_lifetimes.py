"""Lifetimes in execution order: from the producing step to the last reader; views extend their base."""

from __future__ import annotations

import pytest

from ge_core.errors import GEError
from ge_core.memory import compute_lifetimes
from ge_core.memory.lifetimes import Lifetimes
from tests.memory import graphs


def spans(lt: Lifetimes) -> dict[str, tuple[int, int]]:
    return {t: (life.start, life.end) for t, life in lt.tensors.items()}


def test_chain_lives_from_producer_to_last_reader() -> None:
    lt = compute_lifetimes(graphs.chain())
    assert spans(lt) == {"a": (0, 1), "b": (1, 2), "c": (2, 2)}
    assert "x" not in lt.tensors and "w1" not in lt.tensors  # graph inputs and constants are not activations
    assert lt.tensors["a"].nbytes == 1024 and lt.tensors["a"].shape == (1, 256)


def test_diamond_and_residual() -> None:
    assert spans(compute_lifetimes(graphs.diamond())) == {"a": (0, 2), "b": (1, 3), "c": (2, 3), "d": (3, 3)}
    assert spans(compute_lifetimes(graphs.residual())) == {"a": (0, 3), "b": (1, 2), "c": (2, 3), "d": (3, 3)}


def test_views_chain_to_their_root_and_extend_it() -> None:
    lt = compute_lifetimes(graphs.views())
    assert lt.aliases == {"v": "a", "v2": "v"}
    assert lt.root("v2") == "a" and lt.root("a") == "a"
    assert spans(lt) == {"a": (0, 4), "v": (1, 4), "c": (2, 4), "v2": (3, 4), "d": (4, 4)}


def test_graph_outputs_live_to_the_end() -> None:
    lt = compute_lifetimes(graphs.output_mid_graph())
    assert spans(lt) == {"a": (0, 2), "b": (1, 2), "c": (2, 2)}
    assert lt.alive_at(2) == ["a", "b", "c"]


def test_a_view_of_a_graph_input_is_not_an_alias() -> None:
    lt = compute_lifetimes(graphs.view_of_input())
    assert lt.aliases == {}
    assert spans(lt) == {"v": (0, 1), "r": (1, 1)}


def test_unknown_sizes_are_refused_naming_the_tensor() -> None:
    with pytest.raises(GEError, match=r"tensor 'r'.*static shapes|static shapes.*tensor 'r'"):
        compute_lifetimes(graphs.dynamic())
