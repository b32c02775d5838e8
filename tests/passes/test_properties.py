"""Property tests of the compile passes over seeded random graphs (tests/passes/random_graphs.py).

For every seed the generator builds a valid graph and feeds. Every pass alone (after InferShapePass) and
the whole O3 pipeline must keep the graph valid (verify()), keep its interface (input and output names),
keep outputs within 1e-4 relative of the unoptimized graph, leave the text untouched when they report
changed=False, and change nothing when run a second time on their own output. The generator must also
make each pass fire on a fair share of graphs: a property that never triggers the rewrite proves nothing.

Replay one failure with its seed: `pytest tests/passes/test_properties.py -k seed123`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest

import ge_core
from ge_core.ir.graph import Graph
from ge_core.ops import REGISTRY
from ge_core.passes.cleanup.infer_shapes import InferShapePass
from ge_core.passes.infra.base import GraphPass, Stage
from ge_core.passes.infra.instruments import Instrument, PassStep, VerifyInstrument, relative_error
from ge_core.passes.infra.manager import PassManager, PipelineStep
from ge_core.passes.infra.pipeline import all_passes, default_pipeline
from ge_core.passes.npu import LOWERING_PASSES
from ge_core.runtime import execute
from tests.passes.random_graphs import random_graph

TOLERANCE = 1e-4
MIN_TRIGGER_RATE = 0.10  # each pass must rewrite more than this share of the random graphs
SCALE = float(os.environ.get("GE_PROPERTY_SCALE", "1"))  # e.g. 10 for a longer hunt; 1 in CI
# Seeds always run, re-hunted after the fusion moves (random_graphs/fusion.py) changed every seed's graph:
# 178 and 421 put an Add pinned by a control edge between a Conv and its BatchNormalization
# (BatchNormFoldPass once erased such an Add, breaking verify()); 21706 (the only one in 0..39999) has a
# Transpose whose identity pair, once removed, leaves an earlier Transpose pair to merge in a second sweep
# (TransposeChainPass once needed to run twice; before, 4737 and 5433 were such seeds). Seeds belong to
# this generator: a change to random_graphs/ changes every seed's graph, so hunt again.
REGRESSION_SEEDS = [178, 421, 21706]
PIPELINE_SEEDS = list(range(int(400 * SCALE))) + REGRESSION_SEEDS
PASS_SEEDS = list(range(1000, 1000 + int(200 * SCALE)))  # per pass
BIG_SEEDS = list(range(10000, 10000 + int(50 * SCALE)))  # graphs of up to 80 nodes: longer chains
GENERATOR_SEEDS = list(range(40))

# (test, pass name, seed) -> what goes wrong; these run as xfail(strict=True) until the pass is fixed.
# A pass whose first run fails ("semantics") fails its idempotence test too.
# Empty now: the TransposeChainPass second-sweep bug (once seeds 4737, 5433) was fixed by a fixpoint sweep.
KNOWN_BUGS: dict[tuple[str, str, int], str] = {}
# pass name -> why a second run may still find work by design (idempotence is then reported, not asserted).
NOT_IDEMPOTENT: dict[str, str] = {}


# The target-independent passes (the NPU lowering's have their own properties: test_lowering_properties).
# A pass module that fails to import fails the collection of this file, loudly.
PASSES: dict[str, GraphPass] = {p.name: p for p in all_passes() if p.name not in LOWERING_PASSES}


def seed_id(seed: int) -> str:
    return f"seed{seed}"


def known_bug(test: str, name: str, seed: int) -> list[pytest.MarkDecorator]:
    bug = KNOWN_BUGS.get((test, name, seed)) or KNOWN_BUGS.get(("semantics", name, seed))
    return [pytest.mark.xfail(strict=True, reason=bug)] if bug else []


def pass_cases(test: str, seeds: Iterable[int]) -> list[object]:
    """(pass name, seed) params; known bugs marked xfail(strict=True) with their reason."""
    return [pytest.param(name, seed, marks=known_bug(test, name, seed), id=f"{name}-{seed_id(seed)}")
            for name in PASSES for seed in dict.fromkeys([*seeds, *REGRESSION_SEEDS])]


def pipeline_cases(seeds: Iterable[int]) -> list[object]:
    return [pytest.param(seed, marks=known_bug("pipeline", "O3", seed), id=seed_id(seed))
            for seed in dict.fromkeys(seeds)]


@cache
def case(seed: int, max_nodes: int = 40) -> tuple[Graph, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The seed's graph, feeds, and the unoptimized graph's outputs on them (never modified by callers)."""
    graph, feeds = random_graph(seed, max_nodes)
    return graph, feeds, execute(graph, feeds)


def steps_for(pass_: GraphPass) -> list[PipelineStep]:
    return [PipelineStep(Stage.AFTER_INFERSHAPE, InferShapePass()), PipelineStep(Stage.OPTIMIZE_STAGE1, pass_)]


@dataclass(frozen=True)
class PassRun:
    graph: Graph  # after the pass
    changed: bool
    notes: tuple[str, ...]


def compile_with(graph: Graph, pass_: GraphPass) -> PassRun:
    """One pass alone through ge_core.compile (verify() after every pass), after InferShapePass."""
    compiled = ge_core.compile(graph, pipeline=steps_for(pass_), verify=True)
    return PassRun(compiled.graph, compiled.records[-1].changed, compiled.records[-1].notes)


@cache
def run_pass(name: str, seed: int) -> PassRun:
    """The pass on the seed's graph (cached: the idempotence and trigger-rate tests reuse it)."""
    return compile_with(case(seed)[0], PASSES[name])


def check_result(seed: int, after: Graph, outputs: dict[str, np.ndarray], max_nodes: int = 40) -> None:
    """verify(), the interface kept, and every output within TOLERANCE of the unoptimized graph."""
    before, _, reference = case(seed, max_nodes)
    after.verify(REGISTRY)
    assert after.inputs == before.inputs, "graph input names changed"
    assert after.outputs == before.outputs, "graph output names changed"
    errors = {t: relative_error(outputs[t], reference[t]) for t in before.outputs}
    worst = max(errors, key=lambda t: errors[t])
    assert errors[worst] <= TOLERANCE, f"output '{worst}' moved by {errors[worst]:.3g} (relative): {errors}"


# ---- the lists above ----------------------------------------------------------------------------------

def test_every_target_independent_pass_is_tested() -> None:
    """An empty or shrunken PASSES would make the parametrized tests below vanish rather than fail."""
    pipeline = {step.name for step in default_pipeline("O3")} - set(LOWERING_PASSES)
    assert pipeline and set(PASSES) == pipeline


def test_known_bugs_and_exemptions_name_real_passes_and_seeds() -> None:
    """A stale entry (renamed pass, seed no longer run) would silently stop applying."""
    tests = {"semantics", "idempotent", "pipeline"}
    seeds = {"pipeline": set(PIPELINE_SEEDS)} | dict.fromkeys(("semantics", "idempotent"),
                                                              set(PASS_SEEDS) | set(REGRESSION_SEEDS))
    stale = [key for key in KNOWN_BUGS if key[0] not in tests or key[2] not in seeds[key[0]]
             or (key[1] not in PASSES if key[0] != "pipeline" else key[1] != "O3")]
    assert stale == []
    assert sorted(set(NOT_IDEMPOTENT) - set(PASSES)) == []


# ---- every pass alone -------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "seed"), pass_cases("semantics", PASS_SEEDS))
def test_pass_keeps_semantics(name: str, seed: int) -> None:
    run = run_pass(name, seed)
    check_result(seed, run.graph, execute(run.graph, case(seed)[1]))
    if not run.changed:
        assert run.graph.to_text() == case(seed)[0].to_text(), "changed=False but the graph changed"


@pytest.mark.parametrize(("name", "seed"), pass_cases("idempotent", PASS_SEEDS))
def test_pass_is_idempotent(name: str, seed: int) -> None:
    first = run_pass(name, seed).graph
    again = compile_with(first, PASSES[name])
    if name in NOT_IDEMPOTENT:  # the second run must still be right: only "changed nothing" is waived
        check_result(seed, again.graph, execute(again.graph, case(seed)[1]))
        pytest.skip(f"{name} is not idempotent by design: {NOT_IDEMPOTENT[name]}")
    assert not again.changed, f"a second {name} still changed the graph: {again.notes}"
    assert again.graph.to_text() == first.to_text()


@pytest.mark.parametrize("name", [n for n in PASSES if n != "InferShapePass"])  # descs are inferred already
def test_pass_fires_on_enough_graphs(name: str) -> None:
    fired = [seed for seed in PASS_SEEDS if _fired(name, seed)]
    rate = len(fired) / len(PASS_SEEDS)
    assert rate > MIN_TRIGGER_RATE, f"{name} rewrote only {rate:.0%} of the random graphs"


def _fired(name: str, seed: int) -> bool:
    try:
        return run_pass(name, seed).changed
    except Exception:  # a failing case is reported by the property tests; it does not count here
        return False


# ---- the whole pipeline -------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", pipeline_cases(PIPELINE_SEEDS))
def test_o3_pipeline_keeps_semantics(seed: int) -> None:
    graph, feeds, _ = case(seed)
    compiled = ge_core.compile(graph, opt_level="O3", verify=True)
    check_result(seed, compiled.graph, compiled.run(feeds))
    assert len(compiled.graph) <= len(graph), "O3 made the graph bigger"


@pytest.mark.parametrize("seed", BIG_SEEDS, ids=seed_id)
def test_o3_pipeline_keeps_semantics_on_bigger_graphs(seed: int) -> None:
    graph, feeds, _ = case(seed, 80)
    compiled = ge_core.compile(graph, opt_level="O3", verify=True)
    check_result(seed, compiled.graph, compiled.run(feeds), 80)


class ChangeFlagInstrument(Instrument):
    """Records, per pass, whether it reported changed=False although the graph text changed."""

    def __init__(self) -> None:
        self.text = ""
        self.liars: list[str] = []

    def before_pass(self, step: PassStep) -> None:
        self.text = step.graph.to_text()

    def after_pass(self, step: PassStep) -> None:
        if step.result is not None and not step.result.changed and step.graph.to_text() != self.text:
            self.liars.append(step.record.name)


@pytest.mark.parametrize("seed", PIPELINE_SEEDS[:100], ids=seed_id)
def test_o3_change_flags_are_honest_in_context(seed: int) -> None:
    """Inside the pipeline each pass sees what the passes before it left; changed=False must still hold."""
    flags = ChangeFlagInstrument()
    PassManager(default_pipeline("O3"), [flags, VerifyInstrument()]).run(case(seed)[0].copy())
    assert flags.liars == [], f"changed=False but the graph text changed: {flags.liars}"


def test_o3_pipeline_fires_every_pass() -> None:
    """Across the pipeline seeds, every pass of the O3 pipeline rewrites something somewhere."""
    fired: Counter[str] = Counter()
    for seed in PIPELINE_SEEDS[:100]:
        for record in ge_core.compile(case(seed)[0], opt_level="O3").records:
            fired[record.name] += record.changed
    idle = [name for name in PASSES if name != "InferShapePass" and not fired[name]]
    assert idle == []


# ---- the generator itself ---------------------------------------------------------------------------

@pytest.mark.parametrize("seed", GENERATOR_SEEDS[:10], ids=seed_id)
def test_generator_is_deterministic(seed: int) -> None:
    (g1, f1), (g2, f2) = random_graph(seed), random_graph(seed)
    assert g1.to_text() == g2.to_text()
    assert g1.constants.keys() == g2.constants.keys()
    assert all(np.array_equal(g1.constants[t], g2.constants[t]) for t in g1.constants)
    assert f1.keys() == f2.keys() and all(np.array_equal(f1[t], f2[t]) for t in f1)


@pytest.mark.parametrize("seed", GENERATOR_SEEDS, ids=seed_id)
@pytest.mark.parametrize("max_nodes", [10, 40])
def test_generated_graphs_are_valid_and_run(seed: int, max_nodes: int) -> None:
    graph, feeds = random_graph(seed, max_nodes=max_nodes)
    graph.verify(REGISTRY)
    assert 1 <= len(graph) <= max_nodes
    outputs = execute(graph, feeds)
    assert list(outputs) == graph.outputs
    assert all(np.all(np.isfinite(v)) for v in outputs.values() if v.dtype.kind == "f")


def test_generator_covers_the_patterns() -> None:
    ops: Counter[str] = Counter()
    for seed in GENERATOR_SEEDS:
        ops.update(n.op_type for n in random_graph(seed)[0].nodes)
    wanted = ("Conv", "BatchNormalization", "MatMul", "Gemm", "Transpose", "Reshape", "Identity", "Dropout",
              "Cast", "Shape", "Gather", "Concat", "Where", "Mul", "Add", "Div", "Sub", "ReduceMean")
    assert [op for op in wanted if not ops[op]] == []
