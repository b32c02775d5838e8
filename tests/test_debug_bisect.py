"""ge_core.debugging.bisect: the first pass whose outputs drift beyond a tolerance."""

from __future__ import annotations

import math

import ge_core
from ge_core.debugging import bisect_numerics
from ge_core.debugging.bisect import PLAN_ROW
from ge_core.samples.registry import sample_bytes
from tests.debugging.broken_passes import BreakingPass, DriftPass, with_step


def compiled_sample(name: str, shapes: str | None = None, **kwargs: object) -> ge_core.CompiledModel:
    return ge_core.compile(ge_core.load_onnx(sample_bytes(name), shapes), **kwargs)  # type: ignore[arg-type]


def test_a_correct_pipeline_has_no_divergence() -> None:
    compiled = compiled_sample("residual_block")
    seen: list[tuple[int, int]] = []
    result = bisect_numerics(compiled, ge_core.random_feeds(compiled.input_graph, 0), 1e-4,
                             progress=lambda done, total: seen.append((done, total)))
    assert result.first_bad is None and result.failure() is None
    assert [s.name for s in result.steps] == [r.name for r in compiled.records] + [PLAN_ROW]
    assert all(s.worst <= 1e-4 for s in result.steps)
    assert seen[-1] == (len(compiled.records) + 1,) * 2
    table = result.table()
    assert len(table) == len(compiled.records) + 1 and not table["over tolerance"].any()


def test_the_first_drifting_pass_is_found_and_later_passes_carry_the_drift() -> None:
    compiled = compiled_sample("conv_bn_relu", pipeline=with_step(DriftPass(), after=2))
    result = bisect_numerics(compiled, ge_core.random_feeds(compiled.input_graph, 0), 1e-4)
    bad = result.first_bad
    assert bad is not None and bad.name == "DriftPass" and bad.index == 3
    assert all(s.worst == 0.0 for s in result.steps[:2])
    assert result.steps[-1].name == PLAN_ROW and result.steps[-1].diverges(1e-4)
    assert bisect_numerics(compiled, ge_core.random_feeds(compiled.input_graph, 0), 1.0).first_bad is None


def test_a_step_that_fails_to_run_is_a_run_failure() -> None:
    compiled = compiled_sample("mlp", "x:2,64", pipeline=with_step(BreakingPass(), after=1))
    result = bisect_numerics(compiled, ge_core.random_feeds(compiled.input_graph, 0))
    failed = [s for s in result.steps if s.error]
    assert failed[0].name == "BreakingPass" and math.isinf(failed[0].worst)
    assert result.first_bad is failed[0]
    failure = result.failure()
    assert failure is not None and failure.phase == "run" and failure.pass_name == "BreakingPass"
    assert failure.nodes and failure.graph is not None and failure.graph.has_node(failure.nodes[0])
    assert f"'{failure.nodes[0]}'" in failure.headline
