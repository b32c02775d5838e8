"""The O3 pipeline at size: a ~2k-node synthetic model (bench/synthetic.py) compiles with verify() after every
pass and computes what the graph as imported computes. Timings belong in bench/bench_compile.py, not here."""

from __future__ import annotations

import gc
from functools import cache

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import ge_core
from bench.synthetic import BLOCK_NODES, synthetic_model
from ge_core.compiler import CompiledModel, gc_paused
from ge_core.errors import GEError
from ge_core.frontend import to_onnx
from ge_core.passes.infra.instruments import PassRecord, relative_error

NODES = 2000
TOLERANCE = 1e-4


@cache
def model_bytes() -> bytes:
    return synthetic_model(NODES, seed=0).SerializeToString()


@cache
def compiled_o3() -> CompiledModel:
    return ge_core.compile(model_bytes(), opt_level="O3", verify=True)


def test_the_generator_is_seeded_and_exact() -> None:
    model = synthetic_model(NODES, seed=0)
    assert len(model.graph.node) == NODES
    assert model.SerializeToString() == model_bytes()
    assert synthetic_model(NODES, seed=1).SerializeToString() != model_bytes()
    assert len(synthetic_model(BLOCK_NODES + 3).graph.node) == BLOCK_NODES + 3
    onnx.checker.check_model(model, full_check=True)


def test_o3_at_2k_nodes_verifies_after_every_pass_and_matches_o0() -> None:
    compiled = compiled_o3()
    assert all(r.verified for r in compiled.records)
    assert len(compiled.graph) < NODES // 2  # the passes found the work the generator put in
    o0 = ge_core.compile(model_bytes(), opt_level="O0")
    assert len(o0.graph) == NODES
    feeds = ge_core.random_feeds(o0.graph, seed=0)
    want, got = o0.run(feeds), compiled.run(feeds)
    assert list(got) == list(want)
    for name, ref in want.items():
        assert float(np.std(ref)) > 0, "a constant output would prove nothing"
        assert relative_error(got[name], ref) <= TOLERANCE, name


def test_every_o3_pass_has_work_on_the_synthetic_model() -> None:
    first_runs: dict[str, PassRecord] = {}
    for record in compiled_o3().records:
        first_runs.setdefault(record.name, record)
    idle = [name for name, r in first_runs.items() if not r.changed and name != "InferShapePass"]
    assert idle == [], f"passes with nothing to do: {idle}"


def test_the_o3_graph_runs_in_onnxruntime_like_the_original() -> None:
    compiled = compiled_o3()
    feeds = ge_core.random_feeds(compiled.graph, seed=1)
    want = ge_core.execute(compiled.input_graph, feeds)
    session = ort.InferenceSession(to_onnx(compiled.graph).SerializeToString(), providers=["CPUExecutionProvider"])
    got = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))
    for name, ref in want.items():
        assert relative_error(got[name], ref) <= TOLERANCE, name


def test_compile_leaves_the_garbage_collector_as_it_found_it() -> None:
    """compile pauses the cyclic GC while it runs (see compiler.gc_paused) and must restore it, even on error."""
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # nested (or concurrent) compiles keep it paused until the last one ends
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(GEError):
        ge_core.compile(b"not a model")
    assert gc.isenabled()
    gc.disable()
    try:
        ge_core.compile(model_bytes(), opt_level="O0")
        assert not gc.isenabled()  # a caller who turned it off keeps it off
    finally:
        gc.enable()
