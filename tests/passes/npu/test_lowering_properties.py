"""Property tests of the NPU lowering over the seeded random graphs of tests/passes/random_graphs.

For every seed, compiling with a hardware target (O3, and O1 where nothing is fused yet) must keep the
graph valid after every pass (verify()), its interface and its outputs (within 1e-4 of the unoptimized
graph), put every tensor in the format its reader needs (format_problems), leave no back-to-back inverse
TransData pair nor two identical TransData on one tensor, tile every kernel, report changed=False only
when nothing changed, and find nothing more to do when the lowering runs again.
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import pytest

import ge_core
from ge_core.compiler import CompiledModel
from ge_core.ir.graph import Graph
from ge_core.ops import REGISTRY
from ge_core.passes.infra.instruments import VerifyInstrument
from ge_core.passes.infra.manager import PassManager
from ge_core.passes.infra.pipeline import default_pipeline
from ge_core.passes.npu import LOWERING_PASSES, lowering_steps
from ge_core.passes.npu.check import format_problems
from ge_core.passes.npu.edits import formats_of, is_transdata
from tests.passes.test_properties import (
    BIG_SEEDS,
    PIPELINE_SEEDS,
    SCALE,
    ChangeFlagInstrument,
    case,
    check_result,
    seed_id,
)

HARDWARE = "ascend910"
SEEDS = PIPELINE_SEEDS[: int(150 * SCALE)]
O1_SEEDS = SEEDS[: int(60 * SCALE)]
LARGE = BIG_SEEDS[: int(15 * SCALE)]


@cache
def lowered(seed: int, level: str = "O3", max_nodes: int = 40) -> CompiledModel:
    return ge_core.compile(case(seed, max_nodes)[0], opt_level=level, hardware=HARDWARE, verify=True)


def leftovers(graph: Graph) -> list[str]:
    """TransData that are not at a format boundary: inverse pairs, and duplicates on one tensor."""
    problems, seen = [], Counter[tuple[str, str, str]]()
    for node in graph.nodes:
        if not is_transdata(node):
            continue
        producer = graph.producer(node.input(0))
        if producer is not None and is_transdata(producer) and formats_of(producer) == formats_of(node)[::-1]:
            problems.append(f"inverse pair {producer.name} -> {node.name}")
        if not graph.is_output(node.outputs[0]):
            seen[(node.input(0), *formats_of(node))] += 1
    return problems + [f"{n} identical TransData on '{key[0]}'" for key, n in seen.items() if n > 1]


def check_lowered(seed: int, compiled: CompiledModel, max_nodes: int = 40) -> None:
    check_result(seed, compiled.graph, compiled.run(case(seed, max_nodes)[1]), max_nodes)
    for record in compiled.records:  # after every lowering pass, not only at the end
        if record.name in LOWERING_PASSES and record.snapshot is not None:
            assert format_problems(record.snapshot) == [], record.name
    assert leftovers(compiled.graph) == []
    kernels = {n.name for n in compiled.graph.nodes if not REGISTRY.lookup(n).view}
    assert {t["node"] for t in compiled.report["tiling"]} == kernels
    assert compiled.report["hardware"] == HARDWARE


@pytest.mark.parametrize("seed", SEEDS, ids=seed_id)
def test_o3_lowering_keeps_semantics_and_formats(seed: int) -> None:
    check_lowered(seed, lowered(seed))


@pytest.mark.parametrize("seed", O1_SEEDS, ids=seed_id)
def test_o1_lowering_keeps_semantics_and_formats(seed: int) -> None:
    """At O1 nothing is fused: the lowering meets every op on its own (BatchNorm, Concat, elementwise...)."""
    check_lowered(seed, lowered(seed, "O1"))


@pytest.mark.parametrize("seed", LARGE, ids=seed_id)
def test_lowering_on_bigger_graphs(seed: int) -> None:
    check_lowered(seed, lowered(seed, "O3", 80), 80)


@pytest.mark.parametrize("seed", O1_SEEDS, ids=seed_id)
def test_lowering_again_changes_nothing(seed: int) -> None:
    first = lowered(seed, "O1").graph
    graph = first.copy()
    records = PassManager(lowering_steps(HARDWARE), [VerifyInstrument()]).run(graph)
    assert [r.name for r in records if r.changed] == []
    assert graph.to_text() == first.to_text()


@pytest.mark.parametrize("seed", SEEDS[:60], ids=seed_id)
def test_lowering_change_flags_are_honest(seed: int) -> None:
    flags = ChangeFlagInstrument()
    PassManager(default_pipeline("O3", HARDWARE), [flags, VerifyInstrument()]).run(case(seed)[0].copy())
    assert flags.liars == [], f"changed=False but the graph text changed: {flags.liars}"


def test_lowering_passes_fire_on_enough_graphs() -> None:
    """Format selection and pair elimination rewrite a fair share of the graphs; the breadth merge some."""
    fired: Counter[str] = Counter()
    for seed in O1_SEEDS:
        for record in lowered(seed, "O1").records:
            fired[record.name] += record.changed
    share = {name: fired[name] / len(O1_SEEDS) for name in LOWERING_PASSES}
    assert share["FormatSelectionPass"] > 0.3 and share["TransDataSymmetryEliminationPass"] > 0.1, share
    assert fired["TransDataBreadthFusionPass"] > 0, share
